/* version.h - opset conversion of the default domain (ai.onnx).
 *
 * The model is converted one opset step at a time (i -> i+1 or i -> i-1).
 * At each step a node whose op has a schema exactly at the version being
 * crossed is adapted: an op-specific adapter when the op changed in a way the
 * schemas alone do not show (attributes that became inputs, broadcasting,
 * Softmax's axis), then a generic pass that follows the two schemas
 * (defaults that changed, attributes and optional inputs/outputs that appear
 * or disappear, type restrictions). Subgraphs and model-local functions are
 * converted too; other domains are left untouched. A step that cannot keep
 * the model's meaning fails with an error naming the node, never a wrong
 * model. */
#ifndef OX_VERSION_H
#define OX_VERSION_H

#include "../ir/ir.h"

/* Converts m in place to import the default domain at `target` (new nodes,
 * attributes and tensors in m's arena). On failure m may be half converted:
 * the caller should discard it. */
int ox_convert_opset(ox_model *m, int64_t target, ox_err *e);

/* The lowest opset at which every default-domain op of m's graphs
 * (subgraphs included) exists: the highest first version among them (1 if
 * none). */
int64_t ox_version_min_opset(const ox_model *m);

#endif
