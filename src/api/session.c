/* session.c - the run part of include/onnxc.h: environments, sessions,
 * runs (with options, into caller buffers), logging, the version. An
 * onnxc_model is an ox_model, an onnxc_session an ox_session and an
 * onnxc_value an ox_value (the public handles are the internal structs). */
#include "../runtime/session.h"

#include <onnxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../ops/registry.h"
#include "api_impl.h"

_Static_assert(sizeof(onnxc_error) == sizeof(ox_err), "onnxc_error and ox_err must match");

/* from project(VERSION) in CMakeLists.txt */
#ifndef ONNXC_VERSION_TEXT
#error "ONNXC_VERSION_TEXT is set by the build"
#endif

const char *onnxc_version(void) { return ONNXC_VERSION_TEXT; }

static ox_err *E(onnxc_error *err) { return (ox_err *)err; }

/* ------------------------------------------------------------ environment */

onnxc_status onnxc_env_create(int threads, onnxc_env **out, onnxc_error *err) {
  if (!out) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "out is NULL");
  return (onnxc_status)ox_env_create(threads, (ox_env **)out, E(err));
}

void onnxc_env_free(onnxc_env *env) { ox_env_free((ox_env *)env); }

/* ------------------------------------------------------------ sessions */

ox_session_opts ox_api_session_opts(const onnxc_session_options *opts) {
  ox_session_opts o = {.kernels = &ox_registry_builtin};
  if (opts) {
    o.threads = opts->threads;
    o.optimization_level = opts->optimization_level;
    o.cancel = opts->cancel;
    o.cancel_user = opts->cancel_user;
    o.profile = opts->profile != 0;
    o.env = (ox_env *)opts->env;
    o.custom_ops = ox_api_custom_ops(opts->custom_ops);
    o.max_memory = opts->max_memory;
    o.quant_fusion_off = opts->no_quant_fusion != 0;
    o.low_bit_int8 = opts->low_bit_int8 != 0;
    o.disabled_passes = opts->disabled_passes;
    o.n_disabled_passes = opts->n_disabled_passes;
    o.spin_us = opts->thread_spin_us;
    o.pin_threads = opts->pin_threads != 0;
    o.parallel_branches = opts->parallel_branches != 0;
  }
  return o;
}

/* The public log callback behind the internal one (levels are the same numbers). */
typedef struct log_target {
  onnxc_log_fn fn;
  void *user;
} log_target;

static void log_bridge(void *user, int level, const char *msg) {
  const log_target *t = user;
  t->fn(t->user, (onnxc_log_level)level, msg);
}

/* The session handle: the runtime session plus what the API keeps for it
 * (the log target the runtime's callback points at). */
typedef struct api_session {
  ox_session *s;
  log_target log;
  int log_level;
} api_session;

static api_session *api_session_new(void) { return calloc(1, sizeof(api_session)); }

static void api_session_del(api_session *a) { free(a); }

static api_session *A(const onnxc_session *s) { return (api_session *)s; }
static ox_session *S(const onnxc_session *s) { return s ? A(s)->s : NULL; }

static void logf_(const api_session *a, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void logf_(const api_session *a, int level, const char *fmt, ...) {
  if (!a->log.fn || level < a->log_level) return;
  char msg[1300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  a->log.fn(a->log.user, (onnxc_log_level)level, msg);
}

onnxc_status onnxc_session_create(const onnxc_model *m, const onnxc_session_options *opts,
                                  onnxc_session **out, onnxc_error *err) {
  if (!out) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "out is NULL");
  *out = NULL;
  if (!m) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "model is NULL");
  api_session *a = api_session_new();
  if (!a) return (onnxc_status)ox_err_set(E(err), OX_ENOMEM, "out of memory");
  ox_session_opts o = ox_api_session_opts(opts);
  if (opts) {
    if (opts->log) {
      a->log = (log_target){opts->log, opts->log_user};
      a->log_level = (int)opts->log_level;
      o.log = log_bridge;
      o.log_user = &a->log;
      o.log_level = (int)opts->log_level;
    }
  }
  int rc = ox_session_create((const ox_model *)m, &o, &a->s, E(err));
  if (rc == OX_EUNSUPPORTED && err && ox_registry_left_out() &&
      strstr(err->msg, "no kernel for operator")) {
    /* a build without some operator families (ONNXC_WASM_EXCLUDE): say so,
     * the likely reason rather than a missing implementation */
    size_t len = strlen(err->msg);
    snprintf(err->msg + len, sizeof err->msg - len,
             ": operator not in this build (it leaves out the operator families %s)",
             ox_registry_left_out());
  }
  if (rc) {
    logf_(a, ONNXC_LOG_ERROR, "session creation failed: %s", err ? err->msg : "");
    api_session_del(a);
    return (onnxc_status)rc;
  }
  *out = (onnxc_session *)a;
  return ONNXC_OK;
}

ox_session *ox_api_session(const onnxc_session *s) { return S(s); }

void onnxc_session_free(onnxc_session *s) {
  if (!s) return;
  ox_session_free(A(s)->s);
  api_session_del(A(s));
}

char *onnxc_session_profile(const onnxc_session *s) {
  return s ? ox_session_profile(S(s), 20) : NULL;
}

void onnxc_session_profile_reset(onnxc_session *s) {
  if (s) ox_session_profile_reset(S(s));
}

char *onnxc_session_profile_top(const onnxc_session *s, size_t top_nodes) {
  return s ? ox_session_profile(S(s), top_nodes) : NULL;
}

int onnxc_session_threads(const onnxc_session *s) { return s ? ox_session_threads(S(s)) : 0; }

const onnxc_model *onnxc_session_model(const onnxc_session *s) {
  return s ? (const onnxc_model *)ox_session_model(S(s)) : NULL;
}

/* Public inputs are the graph inputs without an initializer. */
static size_t public_input(const ox_session *s, size_t i) {
  size_t n = ox_session_n_inputs(s), k = 0;
  for (size_t j = 0; j < n; j++)
    if (!ox_session_input_has_default(s, j) && k++ == i) return j;
  return n;
}

size_t onnxc_session_input_count(const onnxc_session *s) {
  if (!s) return 0;
  const ox_session *x = S(s);
  size_t n = ox_session_n_inputs(x), k = 0;
  for (size_t j = 0; j < n; j++) k += !ox_session_input_has_default(x, j);
  return k;
}

size_t onnxc_session_output_count(const onnxc_session *s) {
  return s ? ox_session_n_outputs(S(s)) : 0;
}

const char *onnxc_session_input_name(const onnxc_session *s, size_t i) {
  return s ? ox_session_input_name(S(s), public_input(S(s), i)) : NULL;
}

const char *onnxc_session_output_name(const onnxc_session *s, size_t i) {
  return s ? ox_session_output_name(S(s), i) : NULL;
}

const onnxc_type *onnxc_session_input_type(const onnxc_session *s, size_t i) {
  return s ? (const onnxc_type *)ox_session_input_type(S(s), public_input(S(s), i)) : NULL;
}

const onnxc_type *onnxc_session_output_type(const onnxc_session *s, size_t i) {
  return s ? (const onnxc_type *)ox_session_output_type(S(s), i) : NULL;
}

size_t onnxc_session_graph_input_count(const onnxc_session *s) {
  return s ? ox_session_n_inputs(S(s)) : 0;
}

const char *onnxc_session_graph_input_name(const onnxc_session *s, size_t i) {
  return s && i < ox_session_n_inputs(S(s)) ? ox_session_input_name(S(s), i) : NULL;
}

const onnxc_type *onnxc_session_graph_input_type(const onnxc_session *s, size_t i) {
  return s && i < ox_session_n_inputs(S(s)) ? (const onnxc_type *)ox_session_input_type(S(s), i)
                                            : NULL;
}

int onnxc_session_graph_input_has_default(const onnxc_session *s, size_t i) {
  return s && i < ox_session_n_inputs(S(s)) && ox_session_input_has_default(S(s), i);
}

/* ------------------------------------------------------------ runs */

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

onnxc_status onnxc_session_run_with(onnxc_session *s, const onnxc_run_options *ro,
                                    const char *const *input_names, onnxc_value *const *inputs,
                                    size_t n_inputs, const char *const *output_names,
                                    onnxc_value **outputs, size_t n_outputs, onnxc_error *err) {
  if (!s || (n_inputs && !inputs) || (n_outputs && !outputs))
    return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "NULL session or value array");
  for (size_t k = 0; k < n_outputs; k++) outputs[k] = NULL;
  for (size_t i = 0; i < n_inputs; i++)
    if (!inputs[i]) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "input %zu is NULL", i);
  if (n_outputs > 0 && output_names)
    for (size_t k = 0; k < n_outputs; k++)
      if (!output_names[k])
        return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "output name %zu is NULL", k);
  api_session *a = A(s);
  ox_session *x = a->s;
  /* without names, inputs bind to the public inputs in order */
  const char *stack_names[16];
  const char **names = NULL;
  if (!input_names && n_inputs) {
    if (n_inputs > onnxc_session_input_count(s))
      return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "%zu inputs given, the model takes %zu",
                                      n_inputs, onnxc_session_input_count(s));
    names = n_inputs <= 16 ? stack_names : calloc(n_inputs, sizeof *names);
    if (!names) return (onnxc_status)ox_err_set(E(err), OX_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_inputs; i++) names[i] = onnxc_session_input_name(s, i);
  }
  ox_run_opts o = {0};
  if (ro) {
    o.threads = ro->threads;
    o.terminate = ro->terminate;
    o.cancel = ro->cancel;
    o.cancel_user = ro->cancel_user;
    o.tag = ro->tag;
    o.out_bufs = (ox_value *const *)ro->output_buffers;
  }
  double t0 = a->log.fn ? now_ms() : 0;
  int rc = ox_session_run_opts(x, &o, names ? names : input_names, (ox_value *const *)inputs,
                               n_inputs, output_names, (ox_value **)outputs, n_outputs, E(err));
  if (names != stack_names) free(names);
  if (a->log.fn) {
    const char *tag = ro && ro->tag ? ro->tag : "";
    if (rc)
      logf_(a, ONNXC_LOG_ERROR, "run%s%s failed: %s", *tag ? " " : "", tag, err ? err->msg : "");
    else
      logf_(a, ONNXC_LOG_VERBOSE, "run%s%s: %.3f ms", *tag ? " " : "", tag, now_ms() - t0);
  }
  return (onnxc_status)rc;
}

onnxc_status onnxc_session_run(onnxc_session *s, const char *const *input_names,
                               onnxc_value *const *inputs, size_t n_inputs,
                               const char *const *output_names, onnxc_value **outputs,
                               size_t n_outputs, onnxc_error *err) {
  return onnxc_session_run_with(s, NULL, input_names, inputs, n_inputs, output_names, outputs,
                                n_outputs, err);
}

/* Checks that a caller's tensor can receive a result; names the output. */
static int fits(const ox_value *dst, const ox_value *got, const char *name, ox_err *e) {
  char want[200], have[200];
  if (!dst || dst->kind != OX_VAL_TENSOR)
    return ox_err_set(e, OX_EINVAL, "output '%s': the buffer given is not a tensor", name);
  if (!got || got->kind != OX_VAL_TENSOR)
    return ox_err_set(e, OX_EINVAL, "output '%s' is not a tensor: use onnxc_session_run", name);
  if (dst->dtype != got->dtype || !ox_shape_equal(dst->dims, dst->rank, got->dims, got->rank)) {
    ox_value_describe(dst, want, sizeof want);
    ox_value_describe(got, have, sizeof have);
    return ox_err_set(e, OX_EINVAL, "output '%s': the buffer given is %s, the result is %s", name,
                      want, have);
  }
  return OX_OK;
}

onnxc_status onnxc_session_run_into(onnxc_session *s, const onnxc_run_options *ro,
                                    const char *const *input_names, onnxc_value *const *inputs,
                                    size_t n_inputs, const char *const *output_names,
                                    onnxc_value *const *outputs, size_t n_outputs,
                                    onnxc_error *err) {
  if (!s || (n_outputs && !outputs))
    return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "NULL session or value array");
  for (size_t k = 0; k < n_outputs; k++)
    if (!outputs[k])
      return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "output buffer %zu is NULL", k);
  onnxc_value *stack_res[16];
  onnxc_value **res = n_outputs <= 16 ? stack_res : calloc(n_outputs, sizeof *res);
  if (!res) return (onnxc_status)ox_err_set(E(err), OX_ENOMEM, "out of memory");
  /* the kernels make what they can in the caller's tensors */
  onnxc_run_options placed = {0};
  if (ro) placed = *ro;
  placed.output_buffers = outputs;
  onnxc_status rc = onnxc_session_run_with(s, &placed, input_names, inputs, n_inputs, output_names,
                                           res, n_outputs, err);
  /* every buffer is checked before any is written */
  for (size_t k = 0; rc == ONNXC_OK && k < n_outputs; k++) {
    const char *name = output_names ? output_names[k] : onnxc_session_output_name(s, k);
    rc = (onnxc_status)fits((const ox_value *)outputs[k], (const ox_value *)res[k], name, E(err));
  }
  for (size_t k = 0; rc == ONNXC_OK && k < n_outputs; k++)
    if (onnxc_tensor_data_const(res[k]) != onnxc_tensor_data(outputs[k]))
      rc = (onnxc_status)ox_tensor_copy_data((ox_value *)outputs[k], (const ox_value *)res[k],
                                             E(err));
  for (size_t k = 0; k < n_outputs; k++) ox_value_unref((ox_value *)res[k]);
  if (res != stack_res) free(res);
  return rc;
}
