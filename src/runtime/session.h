/* session.h - a prepared model (session) and running it.
 *
 * A session binds every node of the (function-expanded) main graph and of
 * its subgraphs to a kernel and prepares it once. Each graph gets a table of
 * value slots (one per name); nodes read and write slots by index. A slot is
 * released right after its last use; released tensors go to a per-session
 * pool and are reused by size, so a steady-state run with static shapes
 * allocates no tensor storage.
 *
 * Runs may be concurrent: everything a run writes (value frames, buffer
 * pool, node scratch) belongs to that run (rt_run in rt.h); the prepared
 * session is read-only while runs are in flight. */
#ifndef OX_SESSION_H
#define OX_SESSION_H

#include "kernel.h"

typedef struct ox_session ox_session;

/* An environment: a thread pool shared by the sessions created with it (as
 * onnxruntime's global pool). It must outlive them. */
typedef struct ox_env ox_env;
int ox_env_create(int threads, ox_env **out, ox_err *e);
void ox_env_free(ox_env *env);
int ox_env_threads(const ox_env *env);
ox_thread_pool *ox_env_pool(const ox_env *env); /* NULL: one thread */

typedef struct ox_session_opts {
  int threads;            /* 0: one per physical core (ox_cores); 1: no worker threads */
  int optimization_level; /* 0: none; >= 1: fold nodes whose inputs are all constants */
  int (*cancel)(void *user);
  void *cancel_user;
  bool profile; /* time every node; see ox_session_profile */
  /* With optimization_level >= 1, graph inputs that have an initializer are
   * treated as constants until a run overrides one (that run then uses a
   * second plan, prepared on first need). Set to never assume it. */
  bool inputs_overridable;
  ox_env *env; /* non-NULL: use its pool (threads is then ignored) */
  /* log lines at or above log_level (0 verbose, 1 info, 2 warning, 3 error) */
  void (*log)(void *user, int level, const char *msg);
  void *log_user;
  int log_level;
  /* the most tensor storage one run (or the creation) may hold, in bytes;
   * 0: no limit (see ox_mem_budget) */
  size_t max_memory;
  /* kernels of the caller's domains, looked up before the built-in ones */
  const ox_custom_ops *custom_ops;
  /* the built-in kernels (src/api gives ox_registry_builtin of src/ops);
   * required: without it creation fails */
  const ox_kernel_registry *kernels;
  /* keep QDQ units in float (no integer fusion) */
  bool quant_fusion_off;
  /* weight-only quantized products of one or two rows in int8 (see
   * onnxc_session_options.low_bit_int8) */
  bool low_bit_int8;
  /* graph passes switched off by name (src/opt/passes.c); an unknown name
   * fails the creation with OX_EINVAL. Copied at creation. */
  const char *const *disabled_passes;
  size_t n_disabled_passes;
  /* how long idle workers watch for work before sleeping, in microseconds:
   * 0 the default (OX_POOL_SPIN_US_DEFAULT), < 0 none */
  int spin_us;
  bool pin_threads; /* pin workers to cores (ox_pool_opts.pin) */
  /* run nodes that do not depend on each other side by side, one thread
   * each (src/runtime/branches.c) */
  bool parallel_branches;
} ox_session_opts;

/* Sends a line to the session's log callback when level is high enough. */
void ox_session_log(const ox_session *s, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The main graph as the session runs it: functions expanded and the
 * optimisation passes applied (nodes of domain ai.onnxc where units were
 * fused). Lives as long as the session. */
const ox_graph *ox_session_graph(const ox_session *s);
/* The options the session was made with (its disabled passes copied into
 * it), for making another session like it (the generation loop's). */
const ox_session_opts *ox_session_options(const ox_session *s);

int ox_session_create(const ox_model *m, const ox_session_opts *opts, ox_session **out, ox_err *e);
void ox_session_free(ox_session *s);

/* With opts.profile: the time spent per operator type and in the slowest
 * nodes, summed over the runs so far, as text (malloc'd; NULL on OOM). */
char *ox_session_profile(const ox_session *s, size_t top_nodes);
/* Forgets the times so far (e.g. of warm-up runs, which also make lazily
 * prepared kernels); runs still going may leave part of theirs. */
void ox_session_profile_reset(ox_session *s);

/* The model the session was made from. */
const ox_model *ox_session_model(const ox_session *s);

/* Graph inputs (all, in order, including those with an initializer), as
 * the model has them: not the optional inputs passes added (a run may
 * still feed those by name). */
size_t ox_session_n_inputs(const ox_session *s);
const char *ox_session_input_name(const ox_session *s, size_t i);
const ox_type *ox_session_input_type(const ox_session *s, size_t i); /* may be NULL */
bool ox_session_input_has_default(const ox_session *s, size_t i);
size_t ox_session_n_outputs(const ox_session *s);
const char *ox_session_output_name(const ox_session *s, size_t i);
const ox_type *ox_session_output_type(const ox_session *s, size_t i);

/* Threads used by kernels (the caller included). */
int ox_session_threads(const ox_session *s);

/* Runs the model. Inputs are bound by name (an input with an initializer
 * may be left out). outputs[k] receives a new reference for out_names[k];
 * with out_names == NULL, n_out must be the output count and outputs come
 * in graph order. */
int ox_session_run(ox_session *s, const char *const *in_names, ox_value *const *inputs, size_t n_in,
                   const char *const *out_names, ox_value **outputs, size_t n_out, ox_err *e);

/* Options of one run. */
typedef struct ox_run_opts {
  int threads; /* 0: the session's pool; 1: this run on the caller's thread only; n > 1: a pool
                  of n threads kept by the session for such runs */
  int (*cancel)(void *user); /* polled between nodes and iterations, with the session's */
  void *cancel_user;
  const volatile int *terminate; /* another thread sets *terminate != 0 to stop the run */
  const char *tag;               /* prefixed to the run's error messages */
  /* per requested output (out_names' order), a tensor of the caller or NULL:
     a kernel that makes that graph output with the tensor's element type and
     shape makes it there (ox_rt_out_take), and the output returned is then
     that tensor; it may be one of the inputs (a KV cache a model updates in
     place) */
  ox_value *const *out_bufs;
} ox_run_opts;

/* ox_session_run with options (ro may be NULL). */
int ox_session_run_opts(ox_session *s, const ox_run_opts *ro, const char *const *in_names,
                        ox_value *const *inputs, size_t n_in, const char *const *out_names,
                        ox_value **outputs, size_t n_out, ox_err *e);


/* true when the value matches a declared type (kind, element type, rank and
 * fixed dims); otherwise writes a reason into why. */
bool ox_value_matches_type(const ox_value *v, const ox_type *t, char *why, size_t n);
/* "tensor(float)", "seq(tensor(int64))", ... */
int ox_type_describe(const ox_type *t, char *buf, size_t size);

#endif
