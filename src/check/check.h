/* check.h - the model checker: the IR rules and schema conformance of the
 * reference checker (notes §2.2-2.10), in its order, plus the rules it leaves
 * out (§2.11) under `strict`. Every error is reported, each on one line:
 *
 *   graph 'G' / node 'conv1' (Conv-11): attribute 'kernel_shape' must be INTS, got INT
 * [node-attr-type]
 *
 * i.e. a path, the message, and the rule in brackets. */
#ifndef OX_CHECK_H
#define OX_CHECK_H

#include "../ir/ir.h"

typedef struct ox_check_opts {
  bool strict; /* add the rules of notes §2.11 */
  bool full;   /* also run strict shape inference (when available) */
  /* Folder against which external-data locations are resolved; NULL: the
   * model's own folder (ox_model.dir), "" meaning the current directory. */
  const char *model_dir;
} ox_check_opts;

/* Checks a model. Appends one line per error (and "warning: ..." lines,
 * which do not count) to report (may be NULL). *n_errors (may be NULL)
 * receives the number of errors. Returns OX_OK when the model is valid,
 * OX_EMODEL when it is not (e names the first error), OX_ENOMEM on OOM. */
int ox_check_model(const ox_model *m, const ox_check_opts *opts, ox_buf *report, size_t *n_errors,
                   ox_err *e);

/* Checks a value of onnx-data.proto (notes §2.10) - kind OX_DATA_TENSOR
 * (ox_tensor), OX_DATA_SPARSE_TENSOR, OX_DATA_SEQUENCE (ox_sequence_data),
 * OX_DATA_MAP (ox_map_data) or OX_DATA_OPTIONAL (ox_optional_data) - with
 * the same reporting as ox_check_model. base_dir resolves external data
 * locations of tensors (NULL: current directory). */
int ox_check_data(int kind, const void *value, const char *base_dir, ox_buf *report,
                  size_t *n_errors, ox_err *e);

/* The rules, as reported in brackets, with the section of the reference
 * notes they come from and a one-line description. */
typedef struct ox_check_rule {
  const char *id, *section, *what;
} ox_check_rule;
size_t ox_check_rule_count(void);
const ox_check_rule *ox_check_rule_at(size_t i);
const ox_check_rule *ox_check_rule_find(const char *id);

/* Lexically normalises an external-data location ("a/./b/../c" -> "a/c")
 * into out (size cap). Returns false if it does not fit. */
bool ox_check_normalize_path(const char *p, char *out, size_t cap);

#endif
