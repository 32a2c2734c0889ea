/* training.c - the train part of include/onnxc.h (an onnxc_training is an
 * ox_training). */
#include "../runtime/training.h"

#include <onnxc.h>

#include "api_impl.h"

onnxc_status onnxc_training_create(const onnxc_model *m, const onnxc_session_options *opts,
                                   onnxc_training **out, onnxc_error *err) {
  if (!out || !m) return (onnxc_status)ox_err_set((ox_err *)err, OX_EINVAL, "bad arguments");
  ox_session_opts o = ox_api_session_opts(opts);
  ox_training *t = NULL;
  int rc = ox_training_new((const ox_model *)m, &o, &t, (ox_err *)err);
  *out = (onnxc_training *)t;
  return (onnxc_status)rc;
}

void onnxc_training_free(onnxc_training *t) { ox_training_free((ox_training *)t); }

size_t onnxc_training_state_count(const onnxc_training *t) {
  return t ? ox_training_n_state((const ox_training *)t) : 0;
}

const char *onnxc_training_state_name(const onnxc_training *t, size_t i) {
  return i < onnxc_training_state_count(t) ? ox_training_state_name((const ox_training *)t, i)
                                           : NULL;
}

onnxc_status onnxc_training_init(onnxc_training *t, onnxc_error *err) {
  if (!t) return (onnxc_status)ox_err_set((ox_err *)err, OX_EINVAL, "training is NULL");
  return (onnxc_status)ox_training_init((ox_training *)t, (ox_err *)err);
}

onnxc_status onnxc_training_step(onnxc_training *t, size_t algorithm,
                                 const char *const *input_names, onnxc_value *const *inputs,
                                 size_t n_inputs, const char *const *output_names,
                                 onnxc_value **outputs, size_t n_outputs, onnxc_error *err) {
  if (!t || (n_inputs && (!input_names || !inputs)) || (n_outputs && (!output_names || !outputs)))
    return (onnxc_status)ox_err_set((ox_err *)err, OX_EINVAL, "bad arguments");
  return (onnxc_status)ox_training_step((ox_training *)t, algorithm, input_names,
                                        (ox_value *const *)inputs, n_inputs, output_names,
                                        (ox_value **)outputs, n_outputs, (ox_err *)err);
}

onnxc_status onnxc_model_update_initializers(onnxc_model *m, const onnxc_training *t,
                                             onnxc_error *err) {
  if (!m || !t) return (onnxc_status)ox_err_set((ox_err *)err, OX_EINVAL, "bad arguments");
  return (onnxc_status)ox_training_write_back((const ox_training *)t, (ox_model *)m, (ox_err *)err);
}
