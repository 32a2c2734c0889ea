/* test_half_ops.c - float16 and bfloat16 tensors through the kernels that
 * widen them to float32 in bulk and round the float32 result once:
 * - Add, Sub, Mul, Div, Less and the variadic Sum and Mean (of two) with
 *   numpy broadcasting (same shapes, a bias row, a scalar, a column, either
 *   side broadcast), rows longer than the elementwise kernel's 256-value
 *   blocks;
 * - Softmax, LogSoftmax and Hardmax over the last axis (contiguous rows)
 *   and over a middle axis (strided);
 * - ReduceSum, ReduceMean, ReduceSumSquare and ReduceL2 over the last axis
 *   and over the first (rows added element by element).
 * The oracle is the operation in double on the same values decoded by the
 * formats' definitions: a result must be within half a unit of the 16-bit
 * type plus the float32 rounding (and exp's, for Softmax). */
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

/* runs the text model g on A (and B when sb is not NULL), one thread;
 * its output Y, NULL (message printed) on failure */
static onnxc_value *run_graph(const char *text, int32_t dtype, const shape *sa, void *a,
                              const shape *sb, void *b) {
  onnxc_error e;
  onnxc_model *m = NULL;
  onnxc_session *s = NULL;
  onnxc_value *in[2] = {NULL, NULL}, *out = NULL;
  const char *names[2] = {"A", "B"}, *outs[1] = {"Y"};
  size_t n_in = sb ? 2 : 1;
  in[0] = onnxc_tensor_wrap(dtype, sa->dims, sa->rank, a, &e);
  if (sb) in[1] = onnxc_tensor_wrap(dtype, sb->dims, sb->rank, b, &e);
  onnxc_session_options o = {0};
  o.threads = 1;
  if (onnxc_model_parse_text(text, strlen(text), "g", &m, &e) != ONNXC_OK ||
      onnxc_session_create(m, &o, &s, &e) != ONNXC_OK ||
      onnxc_session_run(s, names, in, n_in, outs, &out, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "%s\n", e.msg);
    out = NULL;
  }
  onnxc_value_free(in[0]);
  onnxc_value_free(in[1]);
  onnxc_session_free(s);
  onnxc_model_free(m);
  return out;
}

static double apply(const char *op, double a, double b) {
  if (strcmp(op, "Add") == 0) return a + b;
  if (strcmp(op, "Sub") == 0) return a - b;
  if (strcmp(op, "Mul") == 0) return a * b;
  if (strcmp(op, "Div") == 0) return a / b;
  if (strcmp(op, "Sum") == 0) return a + b;
  if (strcmp(op, "Mean") == 0) return (a + b) / 2; /* one rounding: the halving is exact */
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
  int32_t dtype = t == OX_HG_F16 ? 10 : 16; /* TensorProto FLOAT16, BFLOAT16 */
  onnxc_value *out = run_graph(text, dtype, sa, a, sb, b);
  if (!out) {
    fprintf(stderr, "%s %s: the run failed\n", op, tn);
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
  free(a);
  free(b);
}

/* runs a one-input model on a random A [2, 3, ROW] of type t (returned in
 * *a, to free); its output when it has numel values, else NULL (failure
 * counted) */
static onnxc_value *run_on_random(ox_hg_type t, const char *text, int64_t numel, uint16_t **a) {
  const shape sa = {{2, 3, ROW}, 3};
  *a = malloc(2 * 3 * ROW * 2);
  for (int64_t i = 0; i < 2 * 3 * ROW; i++) (*a)[i] = rand_half(t);
  onnxc_value *out = run_graph(text, t == OX_HG_F16 ? 10 : 16, &sa, *a, NULL, NULL);
  if (out && onnxc_tensor_numel(out) == numel) return out;
  fprintf(stderr, "the run of %s failed\n", text);
  fails++;
  onnxc_value_free(out);
  return NULL;
}

/* op over axis of A [2, 3, ROW] */
static void check_softmax(ox_hg_type t, const char *op, int axis) {
  const char *tn = t == OX_HG_F16 ? "float16" : "bfloat16";
  const shape sa = {{2, 3, ROW}, 3};
  int64_t n = 2 * 3 * ROW, len = sa.dims[axis], inner = axis == 2 ? 1 : ROW;
  char text[256];
  snprintf(text, sizeof text,
           "<ir_version: 8, opset_import: [\"\" : 13]>\n"
           "g (%s[2,3,%d] A) => (%s Y) { Y = %s <axis = %d> (A) }\n",
           tn, ROW, tn, op, axis);
  uint16_t *a;
  onnxc_value *out = run_on_random(t, text, n, &a);
  if (out) {
    const uint16_t *y = onnxc_tensor_data(out);
    int64_t bad = 0;
    for (int64_t g = 0; g < n / len; g++) {
      int64_t base = g / inner * len * inner + g % inner;
      double mx = -INFINITY, sum = 0;
      int64_t arg = 0;
      for (int64_t k = 0; k < len; k++) {
        double x = half_value(t, a[base + k * inner]);
        if (x > mx) mx = x, arg = k;
      }
      for (int64_t k = 0; k < len; k++) sum += exp(half_value(t, a[base + k * inner]) - mx);
      for (int64_t k = 0; k < len; k++) {
        double x = half_value(t, a[base + k * inner]), want, slack;
        if (op[0] == 'S') {
          want = exp(x - mx) / sum;
          slack = 1e-6 * want;
        } else if (op[0] == 'L') {
          want = x - mx - log(sum);
          slack = 1e-6 * (1 + fabs(want));
        } else {
          want = k == arg;
          slack = 0;
        }
        bad += !(fabs(half_value(t, y[base + k * inner]) - want) <= 0.5 * ulp_at(t, want) + slack);
      }
    }
    if (bad) fprintf(stderr, "%s %s axis %d: %lld values off\n", op, tn, axis, (long long)bad);
    CHECK(bad == 0);
  }
  onnxc_value_free(out);
  free(a);
}

/* op over one axis of A [2, 3, ROW], keepdims 0 (opset 13: axes attribute
 * for every op but ReduceSum, whose axes are an input) */
static void check_reduce(ox_hg_type t, const char *op, int axis) {
  const char *tn = t == OX_HG_F16 ? "float16" : "bfloat16";
  const shape sa = {{2, 3, ROW}, 3};
  int64_t n = 2 * 3 * ROW;
  char text[512];
  if (strcmp(op, "ReduceSum") == 0)
    snprintf(text, sizeof text,
             "<ir_version: 8, opset_import: [\"\" : 13]>\n"
             "g (%s[2,3,%d] A) => (%s Y) <int64[1] ax = {%d}> "
             "{ Y = ReduceSum <keepdims = 0> (A, ax) }\n",
             tn, ROW, tn, axis);
  else
    snprintf(text, sizeof text,
             "<ir_version: 8, opset_import: [\"\" : 13]>\n"
             "g (%s[2,3,%d] A) => (%s Y) { Y = %s <axes = [%d], keepdims = 0> (A) }\n",
             tn, ROW, tn, op, axis);
  int64_t len = sa.dims[axis], outs = n / len;
  uint16_t *a;
  onnxc_value *out = run_on_random(t, text, outs, &a);
  if (out) {
    const uint16_t *y = onnxc_tensor_data(out);
    int64_t bad = 0, inner = axis == 2 ? 1 : 3 * ROW;
    for (int64_t g = 0; g < outs; g++) {
      double sum = 0, sq = 0;
      for (int64_t k = 0; k < len; k++) {
        double x = half_value(t, a[g / inner * len * inner + g % inner + k * inner]);
        sum += x;
        sq += x * x;
      }
      double want = op[6] == 'M'   ? sum / (double)len
                    : op[6] == 'L' ? sqrt(sq)
                    : op[9] == 'S' ? sq
                                   : sum;
      bad += !(fabs(half_value(t, y[g]) - want) <= 0.5 * ulp_at(t, want) + 1e-6 * sq);
    }
    if (bad) fprintf(stderr, "%s %s axis %d: %lld values off\n", op, tn, axis, (long long)bad);
    CHECK(bad == 0);
  }
  onnxc_value_free(out);
  free(a);
}

int main(void) {
  const shape full = {{2, 3, ROW}, 3}, row = {{ROW}, 1}, scalar = {{1}, 1}, column = {{2, 3, 1}, 3},
              middle = {{3, 1}, 2};
  const shape *pairs[][2] = {{&full, &full},   {&full, &row},    {&row, &full},   {&full, &scalar},
                             {&scalar, &full}, {&full, &column}, {&column, &row}, {&middle, &full}};
  const char *ops[] = {"Add", "Sub", "Mul", "Div", "Less", "Sum", "Mean"};
  for (int t = 0; t < 2; t++)
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
      for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++)
        check(t ? OX_HG_BF16 : OX_HG_F16, ops[o], pairs[p][0], pairs[p][1]);
  const char *sm[] = {"Softmax", "LogSoftmax", "Hardmax"};
  for (int t = 0; t < 2; t++)
    for (size_t o = 0; o < 3; o++)
      for (int axis = 1; axis <= 2; axis++) check_softmax(t ? OX_HG_BF16 : OX_HG_F16, sm[o], axis);
  const char *rd[] = {"ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL2"};
  for (int t = 0; t < 2; t++)
    for (size_t o = 0; o < 4; o++)
      for (int axis = 0; axis <= 2; axis += 2)
        check_reduce(t ? OX_HG_BF16 : OX_HG_F16, rd[o], axis);
  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails != 0;
}
