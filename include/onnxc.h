/* onnxc.h - the public API of libonnxc: read, write, print, parse, check,
 * infer and run ONNX models.
 *
 * Handles are opaque. Every function that can fail returns an onnxc_status
 * and, when `err` is non-NULL, fills it with a message that says what and
 * where. The library keeps no global mutable state. */
#ifndef ONNXC_H
#define ONNXC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ONNXC_API marks the exported functions: the library is built with
 * -fvisibility=hidden and ONNXC_BUILDING, so only these are visible in
 * libonnxc.so; for callers it expands to nothing. */
#if defined(ONNXC_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#define ONNXC_API __attribute__((visibility("default")))
#else
#define ONNXC_API
#endif

typedef enum onnxc_status {
  ONNXC_OK = 0,
  ONNXC_ERR_INVALID_ARG = 1,
  ONNXC_ERR_NOMEM = 2,
  ONNXC_ERR_IO = 3,
  ONNXC_ERR_PARSE = 4,
  ONNXC_ERR_INVALID_MODEL = 5,
  ONNXC_ERR_UNSUPPORTED = 6,
  ONNXC_ERR_RUNTIME = 7,
  ONNXC_ERR_CANCELLED = 8,
} onnxc_status;

/* An error message buffer; same layout as the library's internal one. */
typedef struct onnxc_error {
  int code;
  char msg[1024];
} onnxc_error;

/* ---------------------------------------------------------------- models */

typedef struct onnxc_model onnxc_model;

typedef struct onnxc_load_options {
  int skip_checksum;         /* 1: do not verify external-data SHA-1 checksums */
  int no_external_data;      /* 1: leave external data unresolved */
} onnxc_load_options;

/* Loads a model from a file: binary protobuf, or ONNX text (by extension
 * .onnxtxt/.onnxtext/.txt or by content). The file is mapped, not read;
 * external data are mapped too. opts may be NULL. */
ONNXC_API onnxc_status onnxc_model_load(const char *path, const onnxc_load_options *opts,
                                        onnxc_model **out, onnxc_error *err);
/* Decodes a binary model from a caller buffer that must outlive the model
 * (raw data point into it). base_dir resolves external data (may be NULL). */
ONNXC_API onnxc_status onnxc_model_load_buffer(const void *data, size_t size, const char *base_dir,
                                               const onnxc_load_options *opts, onnxc_model **out,
                                               onnxc_error *err);
/* Parses a model from ONNX text. name is used in error messages. */
ONNXC_API onnxc_status onnxc_model_parse_text(const char *text, size_t size, const char *name,
                                              onnxc_model **out, onnxc_error *err);
ONNXC_API void onnxc_model_free(onnxc_model *m);

typedef struct onnxc_save_options {
  const char *external_data;  /* file name (relative to the model's folder) or NULL */
  size_t size_threshold;      /* tensors of at least this many bytes go external (default 1024) */
  size_t align;               /* alignment of each tensor in the external file (default 4096) */
  int all_inline;             /* 1: bring all external data back inline */
} onnxc_save_options;

/* Writes binary (or text, by extension) to path. opts may be NULL. */
ONNXC_API onnxc_status onnxc_model_save(const onnxc_model *m, const char *path,
                                        const onnxc_save_options *opts, onnxc_error *err);
/* Encodes to a malloc'd buffer (free with free()). */
ONNXC_API onnxc_status onnxc_model_encode(const onnxc_model *m, void **data, size_t *size,
                                          onnxc_error *err);
/* Prints as ONNX text into a malloc'd NUL-terminated string. */
ONNXC_API onnxc_status onnxc_model_print(const onnxc_model *m, char **text, onnxc_error *err);

/* ---------------------------------------------------------------- check */

typedef struct onnxc_check_options {
  int full;   /* also run strict shape inference */
  int strict; /* rules the reference leaves out */
} onnxc_check_options;

/* Checks a model. Returns ONNXC_OK if valid, ONNXC_ERR_INVALID_MODEL if not;
 * *report (if non-NULL) receives a malloc'd text listing every error, one
 * per line. */
ONNXC_API onnxc_status onnxc_check(const onnxc_model *m, const onnxc_check_options *opts,
                                   char **report, onnxc_error *err);

/* ---------------------------------------------------------------- infer */

typedef struct onnxc_infer_options {
  int strict;
  /* bind symbolic input dims: names[i] = "input", dims[i] with ranks[i] */
  size_t n_bindings;
  const char *const *binding_names;
  const int64_t *const *binding_dims;
  const size_t *binding_ranks;
} onnxc_infer_options;

/* Fills value_info of every value in place. */
ONNXC_API onnxc_status onnxc_infer_shapes(onnxc_model *m, const onnxc_infer_options *opts,
                                          char **warnings, onnxc_error *err);

/* ---------------------------------------------------------------- opset conversion */

/* Converts the model in place so that it imports the default domain
 * (ai.onnx) at target_opset, one opset step at a time, adapting every node
 * whose operator changed between the versions (attributes that became
 * inputs and back, legacy broadcasting, Softmax's axis, ...); subgraphs and
 * model-local functions included, other domains untouched. A step that
 * cannot keep the model's meaning (an op that does not exist at the target
 * opset, a type the older version lacks, a non-constant input that must
 * become an attribute) fails with ONNXC_ERR_UNSUPPORTED and a message naming
 * the node; the model should then be discarded. */
ONNXC_API onnxc_status onnxc_convert_opset(onnxc_model *m, int64_t target_opset, onnxc_error *err);

/* ---------------------------------------------------------------- run */

typedef struct onnxc_session onnxc_session;
typedef struct onnxc_value onnxc_value;

typedef struct onnxc_session_options {
  int threads;            /* 0: number of cores */
  int optimization_level; /* 0 none; 1 and up: nodes whose inputs are all constants are
                             computed once at creation and constant weights are packed
                             once. Graph inputs that have an initializer count as
                             constants while no run overrides them; the first run that
                             does prepares a second plan without that assumption. */
  /* Called between nodes and loop iterations; non-zero return cancels. */
  int (*cancel)(void *user);
  void *cancel_user;
  int profile; /* non-zero: time every node (see onnxc_session_profile) */
} onnxc_session_options;

/* Prepares a model for running. The model must outlive the session: its
 * weights and graph are used in place, not copied. opts may be NULL. */
ONNXC_API onnxc_status onnxc_session_create(const onnxc_model *m, const onnxc_session_options *opts,
                                            onnxc_session **out, onnxc_error *err);
ONNXC_API void onnxc_session_free(onnxc_session *s);

/* For a session created with `profile`: the time per operator type and of
 * the slowest nodes, per run, as text (free with free()); NULL on OOM. */
ONNXC_API char *onnxc_session_profile(const onnxc_session *s);

ONNXC_API size_t onnxc_session_input_count(const onnxc_session *s);
ONNXC_API size_t onnxc_session_output_count(const onnxc_session *s);
ONNXC_API const char *onnxc_session_input_name(const onnxc_session *s, size_t i);
ONNXC_API const char *onnxc_session_output_name(const onnxc_session *s, size_t i);

/* Tensors. dtype uses TensorProto.DataType numbers. */
ONNXC_API onnxc_value *onnxc_tensor_create(int32_t dtype, const int64_t *dims, size_t rank,
                                           onnxc_error *err);
/* Wraps caller memory (not copied, not freed). */
ONNXC_API onnxc_value *onnxc_tensor_wrap(int32_t dtype, const int64_t *dims, size_t rank,
                                         void *data, onnxc_error *err);
ONNXC_API void *onnxc_tensor_data(onnxc_value *v);
ONNXC_API int32_t onnxc_tensor_dtype(const onnxc_value *v);
ONNXC_API size_t onnxc_tensor_rank(const onnxc_value *v);
ONNXC_API const int64_t *onnxc_tensor_dims(const onnxc_value *v);
ONNXC_API void onnxc_value_free(onnxc_value *v);

/* Runs the model. inputs are bound by name; outputs[k] receives a new value
 * for output_names[k] (all graph outputs, in order, when output_names is
 * NULL and n_outputs equals the output count). */
ONNXC_API onnxc_status onnxc_session_run(onnxc_session *s, const char *const *input_names,
                                         onnxc_value *const *inputs, size_t n_inputs,
                                         const char *const *output_names, onnxc_value **outputs,
                                         size_t n_outputs, onnxc_error *err);

/* ---------------------------------------------------------------- train */

/* Training (TrainingInfoProto, IR.md "Training Related Information"). The
 * state variables are the initializers named as keys of the bindings; a
 * training context holds their current values, starting from the
 * initializers. The model must outlive the context. */
typedef struct onnxc_training onnxc_training;

/* Checks the binding rules and creates a context. opts may be NULL. */
ONNXC_API onnxc_status onnxc_training_create(const onnxc_model *m,
                                             const onnxc_session_options *opts,
                                             onnxc_training **out, onnxc_error *err);
ONNXC_API void onnxc_training_free(onnxc_training *t);
/* Initialization step: runs every `initialization` graph, in order, and
 * assigns its outputs by `initialization_binding`. */
ONNXC_API onnxc_status onnxc_training_init(onnxc_training *t, onnxc_error *err);
/* One training step with training_info[algorithm]: runs the inference graph
 * combined with the algorithm graph on the inputs (bound by name), assigns the
 * state by `update_binding`, and returns outputs[k] for output_names[k] (an
 * output of either graph; may be none). */
ONNXC_API onnxc_status onnxc_training_step(onnxc_training *t, size_t algorithm,
                                           const char *const *input_names,
                                           onnxc_value *const *inputs, size_t n_inputs,
                                           const char *const *output_names, onnxc_value **outputs,
                                           size_t n_outputs, onnxc_error *err);
/* Writes the current state into the initializers of m (a model with the
 * training model's structure, typically the same one), e.g. before
 * onnxc_model_save. */
ONNXC_API onnxc_status onnxc_model_update_initializers(onnxc_model *m, const onnxc_training *t,
                                                       onnxc_error *err);

#ifdef __cplusplus
}
#endif
#endif
