/* fuzz_session.c - libFuzzer target for session preparation (function
 * inlining, gradient rewriting, constant folding, the fusion passes, kernel
 * preparation) and runs, on models given in the text syntax.
 *
 * The input is a text model, optionally followed by a NUL byte and bytes
 * that choose the inputs: for each graph input, a dim that is not fixed
 * takes 1 + (byte % 4), and the elements are the following bytes read in
 * the element's own width, so that NaN, infinities, zeros, huge and
 * negative values all reach the kernels (a model with no NUL gets zero
 * inputs). The total stays under 4096 elements per input. Any model must
 * give a session and results or an error: never a crash, a leak or
 * undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "runtime/session.h"
#include "text/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct bytes {
  const uint8_t *p;
  size_t n;
} bytes;

static uint8_t take_byte(bytes *b) {
  if (!b->n) return 0;
  b->n--;
  return *b->p++;
}

static ox_value *make_input(const ox_type *t, bytes *b) {
  if (!t || t->kind != OX_TYPE_TENSOR || !t->shape || t->shape->n_dim > 8) return NULL;
  int64_t dims[8], n = 1;
  for (size_t i = 0; i < t->shape->n_dim; i++) {
    const ox_dim *d = &t->shape->dim[i];
    if (d->has_value && (d->value < 0 || d->value > 4096)) return NULL;
    dims[i] = d->has_value ? d->value : 1 + take_byte(b) % 4;
    if ((n *= dims[i] ? dims[i] : 1) > 4096) return NULL;
  }
  ox_err e = {0};
  ox_value *v = ox_tensor_new(t->elem_type, dims, t->shape->n_dim, &e);
  if (!v || t->elem_type == OX_STRING || !b->n) return v;
  /* element bytes from the input (sub-byte types are one element a byte) */
  size_t k = v->nbytes < b->n ? v->nbytes : b->n;
  memcpy(v->data, b->p, k);
  b->p += k;
  b->n -= k;
  if (t->elem_type == OX_BOOL) /* a bool byte is 0 or 1 */
    for (size_t i = 0; i < v->nbytes; i++) ((uint8_t *)v->data)[i] &= 1;
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t text_len = nul ? (size_t)(nul - data) : size;
  bytes rest = {nul ? nul + 1 : NULL, nul ? size - text_len - 1 : 0};
  ox_model *m = ox_model_new();
  if (!m) return 0;
  ox_err e = {0};
  if (ox_text_parse_model((const char *)data, text_len, "fuzz", m->arena, &m->proto, &e) == OX_OK) {
    ox_session *s = NULL;
    ox_session_opts o = {.kernels = &ox_registry_builtin};
    o.threads = 1;
    o.optimization_level = 1;
    /* a hostile model (a Loop without end, a huge shape) gets an error, soon */
    o.max_memory = (size_t)16 << 20;
    if (ox_session_create(m, &o, &s, &e) == OX_OK) {
      size_t n_in = ox_session_n_inputs(s), n_out = ox_session_n_outputs(s);
      ox_value **in = calloc(n_in + 1, sizeof *in), **out = calloc(n_out + 1, sizeof *out);
      const char **names = calloc(n_in + 1, sizeof *names);
      size_t k = 0;
      bool ok = in && out && names;
      for (size_t i = 0; ok && i < n_in; i++) {
        if (ox_session_input_has_default(s, i)) continue;
        names[k] = ox_session_input_name(s, i);
        if (!(in[k] = make_input(ox_session_input_type(s, i), &rest))) ok = false;
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
