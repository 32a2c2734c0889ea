/* kernel.h - the contract between the runtime and operator kernels.
 *
 * A kernel is registered for (domain, op_type, since_version range). At
 * session creation every node is bound to the schema with the highest
 * since_version <= the imported opset; the kernel whose range covers that
 * since_version is chosen, and its `prepare` runs once. `run` runs every
 * time the node executes. A kernel allocates its outputs through the
 * context (ox_kctx_output), so the runtime can plan and reuse memory.
 *
 * Families live in src/ops/<folder>/<family>.c, each exporting one table
 * `const ox_kernel_def ox_ops_<family>[]` ended by an entry with op == NULL,
 * listed in src/ops/registry.c. */
#ifndef OX_KERNEL_H
#define OX_KERNEL_H

#include "../base/threadpool.h"
#include "value.h"

typedef struct ox_kctx ox_kctx;

/* What a kernel sees when it is prepared (once per session). */
typedef struct ox_kinfo {
  const ox_node *node;   /* attributes are read from here */
  const char *domain;    /* normalised: "" for ai.onnx */
  int64_t opset;         /* imported opset version of the node's domain */
  int64_t since_version; /* since_version of the bound schema */
  size_t n_inputs, n_outputs;
  /* Element type per input/output if known from the model (value_info,
   * initializers, graph inputs), else OX_UNDEFINED; NULL when none known.
   * A kernel must check types again at run time when they are unknown here. */
  const int32_t *input_dtypes, *output_dtypes;
  /* Constant inputs (initializers, Constant outputs), else NULL entries. */
  ox_value *const *const_inputs;
  ox_arena *arena;                 /* session lifetime: put prepared state here */
  ox_thread_pool *pool;            /* may be NULL */
  void *session;                   /* opaque, for control-flow kernels (subgraphs) */
  const struct ox_kernel_def *def; /* the kernel being prepared (its `user` field) */
  /* One flag per input, all false: a kernel that has taken what it needs of
   * constant input i at prepare (packed weights) and will never read it at
   * run time sets consumed[i]; a constant that every reader consumed is
   * freed when the graph is prepared (its inputs are then NULL at run time). */
  bool *consumed;
  /* per input, an id of the constant it is (its defining graph and slot,
   * the same for every node reading it), else -1: the key of shared state */
  const int64_t *const_ids;
} ox_kinfo;

/* prepare: validate attributes (error names the node), pack weights, pick
 * the fast path; store private state in *state (arena or malloc; a malloc'd
 * state is released by `release`). May be NULL. */
typedef int (*ox_prepare_fn)(const ox_kinfo *info, void **state, ox_err *e);
typedef int (*ox_run_fn)(ox_kctx *ctx, void *state);
typedef void (*ox_release_fn)(void *state);

typedef struct ox_kernel_def {
  const char *domain; /* "" for ai.onnx, "ai.onnx.ml", "ai.onnx.preview.training", ... */
  const char *op;
  int since_min, since_max; /* covers schema versions since_min..since_max inclusive */
  ox_prepare_fn prepare;
  ox_run_fn run;
  ox_release_fn release;
  const void *user; /* for kernels added by a caller (custom operators) */
  /* bit i: constant input i is not made into a value for prepare (its
   * const_inputs entry is NULL, its const_ids entry set): the kernel reads
   * it only through state another node shares (ox_kinfo_shared) */
  unsigned lazy_consts;
  /* bit i: output i may be written into a buffer the caller gave for it
   * (onnxc_session_run_into) that is also one of the node's inputs: the
   * kernel writes over its input in place (GroupQueryAttention's present
   * over its past). Without it such a buffer is not used (a copy instead). */
  unsigned alias_outputs;
} ox_kernel_def;

/* The operator kernels a session binds nodes to. src/ops/registry.c fills one
 * (ox_registry_builtin) and src/api hands it to the session through
 * ox_session_opts.kernels: the runtime sits below src/ops and never includes
 * it, and a test can give a session its own table. */
typedef struct ox_kernel_registry {
  /* the kernel for (domain, op) whose since range covers since_version, or
   * NULL; domain "" and "ai.onnx" are the same */
  const ox_kernel_def *(*find)(const char *domain, const char *op, int64_t since_version);
  /* true if some kernel exists for (domain, op) at any version */
  bool (*has_op)(const char *domain, const char *op);
} ox_kernel_registry;

/* Kernels a caller adds for its own domains (custom operators), looked up
 * before the built-in tables. Read-only while sessions use it. */
typedef struct ox_custom_ops {
  const ox_kernel_def *const *defs; /* each def stays where it is while ops are added */
  size_t n;
} ox_custom_ops;

/* The kernel of `ops` for (domain, op) whose range covers since, or NULL. */
const ox_kernel_def *ox_custom_ops_find(const ox_custom_ops *ops, const char *domain,
                                        const char *op, int64_t since);

/* ---- used by kernels inside prepare: state shared between nodes ---- */
/* Nodes that read one constant may share what they make of it (a tied
 * embedding: the language model's head packs the [vocabulary, hidden]
 * matrix, and the Gather of token rows reads the same packed copy, so the
 * constant itself can go). Shared state is keyed by the constant that is
 * input i of the node (ox_kinfo.const_ids) and a kind naming the form; it
 * lives until the session is freed, also after the constant was.
 * ox_kinfo_shared gives the object made under that key, or NULL;
 * ox_kinfo_share hands obj (freed by release with the session) to the
 * session under the key: OX_OK, or OX_ENOMEM with obj already released.
 * Input i must be a constant of the node. */
void *ox_kinfo_shared(const ox_kinfo *info, size_t i, const char *kind);
int ox_kinfo_share(const ox_kinfo *info, size_t i, const char *kind, void *obj,
                   void (*release)(void *), ox_err *e);

/* A kernel with lazy_consts bit i set sees const_inputs[i] NULL when the
 * constant has not been made yet: ox_kinfo_const_proto gives its
 * initializer (its payload may be read as is, little-endian, unaligned),
 * ox_kinfo_const makes and gives the value (NULL with e set on error).
 * Both return NULL for inputs that are no constants. */
const ox_tensor *ox_kinfo_const_proto(const ox_kinfo *info, size_t i);
ox_value *ox_kinfo_const(const ox_kinfo *info, size_t i, ox_err *e);

/* ---- used by kernels inside run ---- */
size_t ox_kctx_n_inputs(const ox_kctx *c);
size_t ox_kctx_n_outputs(const ox_kctx *c);
/* Input i, or NULL when the optional input is missing ("" or beyond the end). */
ox_value *ox_kctx_input(ox_kctx *c, size_t i);
/* Allocates output i as a tensor (storage zeroed only if the kernel asks via
 * ox_kctx_output_zero). Returns NULL with the error set. */
ox_value *ox_kctx_output(ox_kctx *c, size_t i, int32_t dtype, const int64_t *dims, size_t rank);
ox_value *ox_kctx_output_zero(ox_kctx *c, size_t i, int32_t dtype, const int64_t *dims,
                              size_t rank);
/* Sets output i to an already built value (sequence, map, optional, or a
 * tensor the kernel made). Takes the reference. */
int ox_kctx_set_output(ox_kctx *c, size_t i, ox_value *v);
/* true when output i is wanted (present in the node and used). */
bool ox_kctx_output_wanted(const ox_kctx *c, size_t i);
const ox_node *ox_kctx_node(const ox_kctx *c);
const ox_kinfo *ox_kctx_info(const ox_kctx *c);
ox_thread_pool *ox_kctx_pool(const ox_kctx *c);
/* ox_kinfo_shared at run time: a node that consumed its constant at
 * prepare finds state another node shared later in the preparation. */
void *ox_kctx_shared(const ox_kctx *c, size_t i, const char *kind);
/* Sets the error with the node's path as prefix: "node 'conv1' (Conv): ..." */
int ox_kctx_fail(ox_kctx *c, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Runs a subgraph attribute of the current node (If/Loop/Scan/SequenceMap):
 * inputs bound positionally to the subgraph's inputs; outer-scope names
 * resolve to the enclosing graph's values. outputs receive new references. */
int ox_kctx_run_subgraph(ox_kctx *c, const ox_graph *g, ox_value *const *inputs, size_t n_inputs,
                         ox_value **outputs, size_t n_outputs);
/* The error code set so far in this run (OX_OK when none). */
int ox_kctx_error(const ox_kctx *c);
/* Polls the caller's cancellation callback; OX_ECANCELLED when it says stop. */
int ox_kctx_check_cancel(ox_kctx *c);

#endif
