/* test_half_elementwise.c - Add, Sub, Mul, Div and Less on float16 and
 * bfloat16 tensors with numpy broadcasting (same shapes, a bias row, a
 * scalar, a column, either side broadcast), rows longer than the kernel's
 * 256-value blocks. The elementwise kernel widens 16-bit operands to float32
 * in bulk (contiguous runs and broadcast values) and rounds the float32
 * result once; the oracle is the operation in double on the same values
 * decoded by the formats' definitions: a result must be the correctly
 * rounded float32 result rounded to the 16-bit type (within half a unit of
 * the type plus the float32 rounding). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half_values.h"
#include "onnxc.h"
#include "session_check.h"

enum { ROW = 300 };

typedef struct shape {
  int64_t dims[3];
  size_t rank;
} shape;

static double apply(const char *op, double a, double b) {
  if (strcmp(op, "Add") == 0) return a + b;
  if (strcmp(op, "Sub") == 0) return a - b;
  if (strcmp(op, "Mul") == 0) return a * b;
  if (strcmp(op, "Div") == 0) return a / b;
  return a < b;
}

/* index into an operand of shape s broadcast to [2, 3, ROW] */
static int64_t bcast_index(const shape *s, int64_t i, int64_t j, int64_t k) {
  int64_t idx[3] = {i, j, k}, at = 0;
  for (size_t d = 0; d < s->rank; d++) {
    int64_t dim = s->dims[d], pos = idx[3 - s->rank + d];
    at = at * dim + (dim == 1 ? 0 : pos);
  }
  return at;
}

static void check(ox_hg_type t, const char *op, const shape *sa, const shape *sb) {
  const char *tn = t == OX_HG_F16 ? "float16" : "bfloat16";
  bool cmp = strcmp(op, "Less") == 0;
  char text[512], da[32] = "", db[32] = "";
  for (size_t d = 0; d < sa->rank; d++)
    snprintf(da + strlen(da), sizeof da - strlen(da), "%s%lld", d ? "," : "",
             (long long)sa->dims[d]);
  for (size_t d = 0; d < sb->rank; d++)
    snprintf(db + strlen(db), sizeof db - strlen(db), "%s%lld", d ? "," : "",
             (long long)sb->dims[d]);
  snprintf(text, sizeof text,
           "<ir_version: 8, opset_import: [\"\" : 14]>\n"
           "g (%s[%s] A, %s[%s] B) => (%s Y) { Y = %s (A, B) }\n",
           tn, da, tn, db, cmp ? "bool" : tn, op);
  int64_t na = 1, nb = 1;
  for (size_t d = 0; d < sa->rank; d++) na *= sa->dims[d];
  for (size_t d = 0; d < sb->rank; d++) nb *= sb->dims[d];
  uint16_t *a = malloc((size_t)na * 2), *b = malloc((size_t)nb * 2);
  for (int64_t i = 0; i < na; i++) a[i] = rand_half(t);
  for (int64_t i = 0; i < nb; i++) b[i] = rand_half(t);
  onnxc_error e;
  onnxc_model *m = NULL;
  onnxc_session *s = NULL;
  onnxc_value *in[2] = {NULL, NULL}, *out = NULL;
  const char *names[2] = {"A", "B"}, *outs[1] = {"Y"};
  int32_t dtype = t == OX_HG_F16 ? 10 : 16; /* TensorProto FLOAT16, BFLOAT16 */
  in[0] = onnxc_tensor_wrap(dtype, sa->dims, sa->rank, a, &e);
  in[1] = onnxc_tensor_wrap(dtype, sb->dims, sb->rank, b, &e);
  onnxc_session_options o = {0};
  o.threads = 1;
  if (onnxc_model_parse_text(text, strlen(text), "g", &m, &e) != ONNXC_OK ||
      onnxc_session_create(m, &o, &s, &e) != ONNXC_OK ||
      onnxc_session_run(s, names, in, 2, outs, &out, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "%s %s: %s\n", op, tn, e.msg);
    fails++;
  } else if (onnxc_tensor_numel(out) != 2 * 3 * ROW) {
    fprintf(stderr, "%s %s: %lld outputs\n", op, tn, (long long)onnxc_tensor_numel(out));
    fails++;
  } else {
    const uint16_t *y = onnxc_tensor_data(out);
    const uint8_t *yb = onnxc_tensor_data(out);
    int64_t bad = 0;
    for (int64_t i = 0; i < 2; i++)
      for (int64_t j = 0; j < 3; j++)
        for (int64_t k = 0; k < ROW; k++) {
          int64_t at = (i * 3 + j) * ROW + k;
          double x = half_value(t, a[bcast_index(sa, i, j, k)]);
          double want = apply(op, x, half_value(t, b[bcast_index(sb, i, j, k)]));
          if (cmp) {
            bad += yb[at] != (want != 0);
            continue;
          }
          double got = half_value(t, y[at]);
          bool same = isnan(want) ? isnan(got)
                      : isinf(want)
                          ? got == want
                          : fabs(got - want) <= 0.5 * ulp_at(t, want) + ldexp(fabs(want), -23);
          bad += !same;
        }
    if (bad)
      fprintf(stderr, "%s %s [%s] and [%s]: %lld values off\n", op, tn, da, db, (long long)bad);
    CHECK(bad == 0);
  }
  onnxc_value_free(out);
  onnxc_value_free(in[0]);
  onnxc_value_free(in[1]);
  onnxc_session_free(s);
  onnxc_model_free(m);
  free(a);
  free(b);
}

int main(void) {
  const shape full = {{2, 3, ROW}, 3}, row = {{ROW}, 1}, scalar = {{1}, 1}, column = {{2, 3, 1}, 3},
              middle = {{3, 1}, 2};
  const shape *pairs[][2] = {{&full, &full},   {&full, &row},    {&row, &full},   {&full, &scalar},
                             {&scalar, &full}, {&full, &column}, {&column, &row}, {&middle, &full}};
  const char *ops[] = {"Add", "Sub", "Mul", "Div", "Less"};
  for (int t = 0; t < 2; t++)
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
      for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++)
        check(t ? OX_HG_BF16 : OX_HG_F16, ops[o], pairs[p][0], pairs[p][1]);
  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails != 0;
}
