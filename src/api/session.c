/* session.c - the run part of include/onnxc.h: sessions and values.
 * An onnxc_model is an ox_model, an onnxc_session an ox_session and an
 * onnxc_value an ox_value (the public handles are the internal structs). */
#include "../runtime/session.h"

#include <onnxc.h>
#include <stdlib.h>

_Static_assert(sizeof(onnxc_error) == sizeof(ox_err), "onnxc_error and ox_err must match");

onnxc_status onnxc_session_create(const onnxc_model *m, const onnxc_session_options *opts,
                                  onnxc_session **out, onnxc_error *err) {
  if (!out) return (onnxc_status)ox_err_set((ox_err *)err, OX_EINVAL, "out is NULL");
  ox_session_opts o = {0};
  if (opts) {
    o.threads = opts->threads;
    o.optimization_level = opts->optimization_level;
    o.cancel = opts->cancel;
    o.cancel_user = opts->cancel_user;
    o.profile = opts->profile != 0;
  }
  ox_session *s = NULL;
  int rc = ox_session_create((const ox_model *)m, &o, &s, (ox_err *)err);
  *out = (onnxc_session *)s;
  return (onnxc_status)rc;
}

void onnxc_session_free(onnxc_session *s) { ox_session_free((ox_session *)s); }

char *onnxc_session_profile(const onnxc_session *s) {
  return ox_session_profile((const ox_session *)s, 20);
}

/* Public inputs are the graph inputs without an initializer. */
static size_t public_input(const ox_session *s, size_t i) {
  size_t n = ox_session_n_inputs(s), k = 0;
  for (size_t j = 0; j < n; j++)
    if (!ox_session_input_has_default(s, j) && k++ == i) return j;
  return n;
}

size_t onnxc_session_input_count(const onnxc_session *s) {
  const ox_session *x = (const ox_session *)s;
  size_t n = ox_session_n_inputs(x), k = 0;
  for (size_t j = 0; j < n; j++) k += !ox_session_input_has_default(x, j);
  return k;
}

size_t onnxc_session_output_count(const onnxc_session *s) {
  return ox_session_n_outputs((const ox_session *)s);
}

const char *onnxc_session_input_name(const onnxc_session *s, size_t i) {
  const ox_session *x = (const ox_session *)s;
  return ox_session_input_name(x, public_input(x, i));
}

const char *onnxc_session_output_name(const onnxc_session *s, size_t i) {
  return ox_session_output_name((const ox_session *)s, i);
}

onnxc_value *onnxc_tensor_create(int32_t dtype, const int64_t *dims, size_t rank,
                                 onnxc_error *err) {
  return (onnxc_value *)ox_tensor_new(dtype, dims, rank, (ox_err *)err);
}

onnxc_value *onnxc_tensor_wrap(int32_t dtype, const int64_t *dims, size_t rank, void *data,
                               onnxc_error *err) {
  return (onnxc_value *)ox_tensor_wrap(dtype, dims, rank, data, (ox_err *)err);
}

void *onnxc_tensor_data(onnxc_value *v) {
  ox_value *x = (ox_value *)v;
  return x && x->kind == OX_VAL_TENSOR ? x->data : NULL;
}

int32_t onnxc_tensor_dtype(const onnxc_value *v) {
  const ox_value *x = (const ox_value *)v;
  return x && x->kind == OX_VAL_TENSOR ? x->dtype : 0;
}

size_t onnxc_tensor_rank(const onnxc_value *v) {
  const ox_value *x = (const ox_value *)v;
  return x && x->kind == OX_VAL_TENSOR ? x->rank : 0;
}

const int64_t *onnxc_tensor_dims(const onnxc_value *v) {
  const ox_value *x = (const ox_value *)v;
  return x && x->kind == OX_VAL_TENSOR ? x->dims : NULL;
}

void onnxc_value_free(onnxc_value *v) { ox_value_unref((ox_value *)v); }

onnxc_status onnxc_session_run(onnxc_session *s, const char *const *input_names,
                               onnxc_value *const *inputs, size_t n_inputs,
                               const char *const *output_names, onnxc_value **outputs,
                               size_t n_outputs, onnxc_error *err) {
  if (!s || (n_inputs && !inputs) || (n_outputs && !outputs))
    return (onnxc_status)ox_err_set((ox_err *)err, OX_EINVAL, "NULL session or value array");
  ox_session *x = (ox_session *)s;
  /* without names, inputs bind to the public inputs in order */
  const char **names = NULL;
  if (!input_names && n_inputs) {
    names = calloc(n_inputs, sizeof *names);
    if (!names) return (onnxc_status)ox_err_set((ox_err *)err, OX_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_inputs; i++) names[i] = onnxc_session_input_name(s, i);
  }
  int rc = ox_session_run(x, names ? names : input_names, (ox_value *const *)inputs, n_inputs,
                          output_names, (ox_value **)outputs, n_outputs, (ox_err *)err);
  free(names);
  return (onnxc_status)rc;
}
