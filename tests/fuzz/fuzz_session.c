/* fuzz_session.c - libFuzzer target for session preparation (function
 * inlining, gradient rewriting, constant folding, the fusion pass, kernel
 * preparation) and one run with made-up inputs, on models given in the
 * text syntax. Any model must give a session and a result or an error:
 * never a crash, a leak or undefined behaviour. Inputs are zero tensors of
 * the declared shape when every dim is known and the whole stays small. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/session.h"
#include "text/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ox_value *zero_input(const ox_type *t) {
  if (!t || t->kind != OX_TYPE_TENSOR || !t->shape || t->shape->n_dim > 8) return NULL;
  int64_t dims[8], n = 1;
  for (size_t i = 0; i < t->shape->n_dim; i++) {
    if (!t->shape->dim[i].has_value || t->shape->dim[i].value < 0) return NULL;
    dims[i] = t->shape->dim[i].value;
    if (dims[i] > 4096 || (n *= dims[i] ? dims[i] : 1) > 4096) return NULL;
  }
  ox_err e = {0};
  return ox_tensor_new(t->elem_type, dims, t->shape->n_dim, &e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ox_model *m = ox_model_new();
  if (!m) return 0;
  ox_err e = {0};
  if (ox_text_parse_model((const char *)data, size, "fuzz", m->arena, &m->proto, &e) == OX_OK) {
    ox_session *s = NULL;
    ox_session_opts o = {0};
    o.threads = 1;
    o.optimization_level = 1;
    if (ox_session_create(m, &o, &s, &e) == OX_OK) {
      size_t n_in = ox_session_n_inputs(s), n_out = ox_session_n_outputs(s);
      ox_value **in = calloc(n_in + 1, sizeof *in), **out = calloc(n_out + 1, sizeof *out);
      const char **names = calloc(n_in + 1, sizeof *names);
      size_t k = 0;
      bool ok = in && out && names;
      for (size_t i = 0; ok && i < n_in; i++) {
        if (ox_session_input_has_default(s, i)) continue;
        names[k] = ox_session_input_name(s, i);
        if (!(in[k] = zero_input(ox_session_input_type(s, i)))) ok = false;
        k++;
      }
      if (ok && ox_session_run(s, names, in, k, NULL, out, n_out, &e) == OX_OK)
        for (size_t i = 0; i < n_out; i++) ox_value_unref(out[i]);
      for (size_t i = 0; i < k; i++) ox_value_unref(in[i]);
      free(in);
      free(out);
      free(names);
      ox_session_free(s);
    }
  }
  ox_model_free(m);
  return 0;
}
