/* rules.c - the rules the checker reports, with where they come from. */
#include <string.h>

#include "check.h"

static const ox_check_rule rules[] = {
    /* notes §2.2 model */
    {"ir-version", "2.2", "ir_version is set, non-zero and known (1 to 14)"},
    {"metadata-duplicate", "2.2", "model metadata_props keys are unique"},
    {"opset-range", "2.2", "opset import versions fit in a 32-bit int"},
    {"opset-import", "2.2", "IR >= 3 imports an opset; IR < 3 imports none"},
    /* §2.3 graph */
    {"graph-name", "2.3", "a model has a graph, and every graph a non-empty name"},
    {"ssa", "2.3", "each name is assigned once (inputs, node outputs; no shadowing)"},
    {"initializer-name", "2.3", "initializers and sparse initializers have names"},
    {"initializer-duplicate", "2.3", "initializer names are unique"},
    {"initializer-not-input", "2.3", "IR <= 3: every initializer is also a graph input"},
    {"undefined-input", "2.3", "node inputs are graph inputs, initializers or earlier outputs"},
    {"use-before-def", "2.3", "nodes are topologically sorted (no use before the definition)"},
    {"graph-output", "2.3", "graph outputs are produced in their own graph"},
    /* §2.4 tensor */
    {"tensor-data-type", "2.4", "data_type is set, not UNDEFINED, and known"},
    {"tensor-dims", "2.4", "dims are non-negative and their product fits"},
    {"tensor-payload", "2.4", "exactly one value field, of the right kind and large enough"},
    {"tensor-external", "2.4", "external tensors have a location and no inline data"},
    /* §2.5 value info */
    {"value-info", "2.5", "value infos have names; main-graph ones full types"},
    /* §2.6 attribute and node */
    {"attr-name", "2.6", "attributes have names"},
    {"attr-type", "2.6", "attributes have a type that matches their value field"},
    {"attr-value", "2.6", "an attribute has at most one value field"},
    {"attr-ref", "2.6", "a subgraph attribute that refers to a parent one has no value"},
    {"node-op-type", "2.6", "nodes have an op_type"},
    {"node-io", "2.6", "a node has an input or an output"},
    {"node-domain", "2.6", "the node's domain is imported"},
    {"node-unknown-op", "2.6", "the operator exists in its (standard) domain"},
    {"node-opset", "2.6", "the operator exists at the imported opset version"},
    {"node-deprecated", "2.6", "the bound operator version is not deprecated"},
    {"node-arity", "2.6", "input/output counts in range; required ones not empty"},
    {"node-attr-duplicate", "2.6", "a node's attribute names are unique"},
    {"node-attr-unknown", "2.6", "attributes are declared by the schema"},
    {"node-attr-type", "2.6", "attribute types are the schema's"},
    {"node-attr-required", "2.6", "required attributes are present"},
    {"node-type", "2.6", "declared types of inputs/outputs meet the type constraints"},
    /* §2.7 functions */
    {"function-count", "2.7", "at most 10000 model-local functions"},
    {"function-duplicate", "2.7", "function ids (domain, name, overload) are unique"},
    {"function-cycle", "2.7", "functions do not call themselves, directly or not"},
    {"function-depth", "2.7", "function call chains are at most 100 deep"},
    {"function-name", "2.7", "functions have names"},
    {"function-domain", "2.7", "IR >= 8: functions have a domain field"},
    {"function-output-duplicate", "2.7", "function outputs are unique"},
    {"function-attr-duplicate", "2.7", "function attribute names are unique"},
    {"function-opset", "2.7", "body domains are imported, compatibly with the model"},
    /* §2.8 external data */
    {"external-path", "2.8", "external data is a regular file inside the model folder"},
    /* §2.9 sparse */
    {"sparse-tensor", "2.9", "values rank 1, positive dims, INT64 indices in range and sorted"},
    /* §2.10 data protos */
    {"data-sequence", "2.10", "sequences have a valid element type"},
    {"data-map", "2.10", "maps have integer/string keys, one keys field, as many values"},
    {"data-optional", "2.10", "optionals have a valid element type"},
    /* §2.11 strict */
    {"strict-training", "2.11", "training bindings name initializers and graph outputs"},
    {"strict-payload-size", "2.11", "payloads have exactly the size shape and type need"},
    {"strict-segment", "2.11", "tensor segments are ranges of the tensor"},
    {"strict-identifier", "2.11", "names are C90 identifiers (a warning: IR.md says SHOULD)"},
    {"strict-graph-name", "IR.md", "graph names are unique within the model"},
    {"strict-elem-type", "onnx.proto", "signature element types are DataType values, not UNDEFINED"},
    {"strict-map-key", "onnx.proto", "map key types are integral or string"},
    {"strict-shadow", "IR.md", "subgraph inputs and initializers shadow no outer value"},
    {"strict-ref-attr", "IR.md", "ref_attr_name appears only inside function bodies"},
    {"strict-function-call", "IR.md", "calls of local functions fit their declared signature"},
    {"strict-opset-range", "2.11", "imported versions of known domains exist"},
    {"strict-function-output", "2.11", "function outputs are produced"},
    {"strict-function-attr-ref", "2.11", "@references name declared function attributes"},
    {"strict-subgraph-initializer", "2.11", "subgraph initializers do not shadow its inputs"},
    {"strict-node-name", "2.11", "node names are unique in a graph"},
    {"strict-value-info", "2.11", "value_info entries are unique and name graph values"},
    {"strict-ir-feature", "2.11", "features exist in the declared IR version"},
    /* --full */
    {"full-inference", "2.2", "--full: strict shape inference succeeds"},
};

size_t ox_check_rule_count(void) { return sizeof rules / sizeof rules[0]; }

const ox_check_rule *ox_check_rule_at(size_t i) {
  return i < ox_check_rule_count() ? &rules[i] : NULL;
}

const ox_check_rule *ox_check_rule_find(const char *id) {
  for (size_t i = 0; id && i < ox_check_rule_count(); i++)
    if (strcmp(rules[i].id, id) == 0) return &rules[i];
  return NULL;
}
