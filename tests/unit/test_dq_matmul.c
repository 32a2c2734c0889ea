/* test_dq_matmul.c - weight-only quantized MatMul fused into one node
 * (src/opt/dq_matmul.c, MatMulDQFused in src/ops/matmul_dq.c), through the
 * public API. Each model is written in the text format as weight-only
 * quantizers lay it out (DequantizeLinear of a constant 8-, 4- or 2-bit
 * [K, N] matrix, blockwise or per column or per tensor, then MatMul) and run
 * twice: as written (no_quant_fusion: DequantizeLinear then the float
 * MatMul) and fused, at one and two threads, with one row (decode), two
 * and several (the slab path), and a batched A. The outputs agree within
 * float rounding (1e-5 of the output's largest magnitude); the profile
 * shows the pair ran as MatMulDQFused. Layouts the kernel does not
 * take (blocks along N, a block that splits a 32-bit unit of rows, a
 * float16 scale) keep their nodes and give the same bytes. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"
#include "session_check.h"

static uint32_t rng = 4242;
static uint32_t next(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}

typedef struct spec {
  const char *name;
  const char *qtype; /* int8 uint8 int4 uint4 int2 uint2 */
  int64_t K, N;
  int64_t rows; /* A is [batch, rows, K] */
  int64_t batch;
  int64_t block; /* 0: per column (axis 1) or per tensor */
  bool per_tensor, zero_point;
  int variant; /* 0 fusable; 1 blocks along N (axis 1); 2 float16 scale; 3 DQ output also a
                  graph output (fused, DequantizeLinear kept); 4 blocks down K that split
                  the 32-bit units of rows (not fused) */
} spec;

static size_t put(char *buf, size_t at, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + at, at < cap ? cap - at : 0, fmt, ap);
  va_end(ap);
  return at + (size_t)(n > 0 ? n : 0);
}

static void qrange(const char *t, int *lo, int *hi) {
  int bits = strstr(t, "8") ? 8 : strstr(t, "4") ? 4 : 2;
  bool sgn = t[0] == 'i';
  *lo = sgn ? -(1 << (bits - 1)) : 0;
  *hi = sgn ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
}

static char *model_text(const spec *s) {
  size_t cap = (size_t)1 << 22, at = 0;
  char *t = malloc(cap);
  int lo, hi;
  qrange(s->qtype, &lo, &hi);
  int64_t ns0 = 1, ns1 = 1; /* scale dims */
  if (s->variant == 1) {
    ns0 = s->K;
    ns1 = (s->N + s->block - 1) / s->block;
  } else if (s->block) {
    ns0 = (s->K + s->block - 1) / s->block;
    ns1 = s->N;
  } else if (!s->per_tensor) {
    ns1 = s->N;
  }
  const char *st = s->variant == 2 ? "float16" : "float";
  at = put(t, at, cap,
           "<ir_version: 10, opset_import: [\"\" : %d]>\nwq (float[%lld,%lld,%lld] A) => "
           "(float[%lld,%lld,%lld] Y%s) <%s[%lld,%lld] wq = {",
           strstr(s->qtype, "2") ? 25 : 21, (long long)s->batch, (long long)s->rows,
           (long long)s->K, (long long)s->batch, (long long)s->rows, (long long)s->N,
           s->variant == 3 ? ", float[K,N] w" : "", s->qtype, (long long)s->K, (long long)s->N);
  for (int64_t i = 0; i < s->K * s->N; i++)
    at = put(t, at, cap, "%s%d", i ? "," : "", lo + (int)(next() % (uint32_t)(hi - lo + 1)));
  /* the scale's (and zero point's) dims: [n0, n1] with blocks, [N] per
   * column, none per tensor */
  char sdims[64] = "";
  if (s->block)
    snprintf(sdims, sizeof sdims, "[%lld,%lld]", (long long)ns0, (long long)ns1);
  else if (!s->per_tensor)
    snprintf(sdims, sizeof sdims, "[%lld]", (long long)ns1);
  at = put(t, at, cap, "}, %s%s ws = {", st, sdims);
  for (int64_t i = 0; i < ns0 * ns1; i++)
    at = put(t, at, cap, "%s%g", i ? "," : "", 0.001 + 0.0003 * (double)(next() % 50));
  at = put(t, at, cap, "}");
  if (s->zero_point) {
    at = put(t, at, cap, ", %s%s wz = {", s->qtype, sdims);
    for (int64_t i = 0; i < ns0 * ns1; i++)
      at = put(t, at, cap, "%s%d", i ? "," : "", lo + (int)(next() % (uint32_t)(hi - lo + 1)));
    at = put(t, at, cap, "}");
  }
  at = put(t, at, cap, ">\n{\n");
  if (s->variant == 1)
    at = put(t, at, cap, "  w = DequantizeLinear <axis = 1, block_size = %lld> (wq, ws%s)\n",
             (long long)s->block, s->zero_point ? ", wz" : "");
  else if (s->block)
    at = put(t, at, cap, "  w = DequantizeLinear <axis = 0, block_size = %lld> (wq, ws%s)\n",
             (long long)s->block, s->zero_point ? ", wz" : "");
  else
    at = put(t, at, cap, "  w = DequantizeLinear <axis = 1> (wq, ws%s)\n",
             s->zero_point ? ", wz" : "");
  at = put(t, at, cap, "%s  Y = MatMul (A, %s)\n}\n",
           s->variant == 2 ? "  wf = Cast <to = 1> (w)\n" : "", s->variant == 2 ? "wf" : "w");
  if (at >= cap) {
    free(t);
    return NULL;
  }
  return t;
}

typedef struct outcome {
  float *y;
  int64_t n;
  bool fused; /* the profile names MatMulDQFused */
  bool ok;
} outcome;

static outcome run(const spec *s, const char *text, bool fuse, int threads, const float *a) {
  outcome r = {0};
  onnxc_error e;
  onnxc_model *m = NULL;
  onnxc_session *ss = open_text_session(s->name, text, fuse, threads, &m);
  if (!ss) return r;
  int64_t ad[3] = {s->batch, s->rows, s->K};
  onnxc_value *in = onnxc_tensor_wrap(1, ad, 3, (void *)a, &e);
  const char *names[1] = {"A"}, *outs[1] = {"Y"};
  onnxc_value *out = NULL;
  if (onnxc_session_run(ss, names, &in, 1, outs, &out, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "%s: run: %s\n", s->name, e.msg);
  } else {
    r.n = s->batch * s->rows * s->N;
    r.y = malloc((size_t)r.n * sizeof(float));
    memcpy(r.y, onnxc_tensor_data(out), (size_t)r.n * sizeof(float));
    char *prof = onnxc_session_profile(ss);
    r.fused = prof && strstr(prof, "MatMulDQFused");
    free(prof);
    r.ok = true;
  }
  onnxc_value_free(out);
  onnxc_value_free(in);
  onnxc_session_free(ss);
  onnxc_model_free(m);
  return r;
}

static void check(const spec *s) {
  char *text = model_text(s);
  CHECK(text != NULL);
  if (!text) return;
  int64_t na = s->batch * s->rows * s->K;
  float *a = malloc((size_t)na * sizeof(float));
  for (int64_t i = 0; i < na; i++) a[i] = (float)((double)(next() % 2001) / 1000.0 - 1.0);
  outcome ref = run(s, text, false, 1, a);
  CHECK(ref.ok);
  for (int threads = 1; threads <= 2 && ref.ok; threads++) {
    outcome b = run(s, text, true, threads, a);
    CHECK(b.ok);
    if (b.ok) {
      double big = 0, worst = 0;
      for (int64_t i = 0; i < ref.n; i++) big = fmax(big, fabs(ref.y[i]));
      for (int64_t i = 0; i < ref.n; i++) worst = fmax(worst, fabs(ref.y[i] - b.y[i]));
      bool fused = s->variant == 0 || s->variant == 3;
      if (fused ? worst > 1e-5 * big + 1e-7 : memcmp(ref.y, b.y, (size_t)ref.n * 4) != 0) {
        fprintf(stderr, "%s (%d threads): differs by %g (largest output %g)\n", s->name, threads,
                worst, big);
        fails++;
      }
      /* the MatMul ran as MatMulDQFused exactly when the layout is one the
       * kernel takes, and never with no_quant_fusion */
      if (b.fused != fused) fprintf(stderr, "%s: fused %d, want %d\n", s->name, b.fused, fused);
      CHECK(b.fused == fused);
      CHECK(!ref.fused);
    }
    free(b.y);
  }
  free(ref.y);
  free(a);
  free(text);
}

int main(void) {
  const spec cases[] = {
      /* name                 type    K    N   rows batch block tensor zp   var */
      {"int4 block 32", "int4", 96, 70, 1, 1, 32, false, false, 0},
      {"int4 block 32 x5", "int4", 96, 70, 5, 1, 32, false, false, 0},
      {"uint4 zp block 16", "uint4", 100, 33, 1, 1, 16, false, true, 0},
      {"uint4 zp short block", "uint4", 100, 33, 2, 2, 32, false, true, 0},
      {"int4 zp block 64", "int4", 130, 129, 3, 1, 64, false, true, 0},
      {"int2 block 16", "int2", 64, 20, 1, 1, 16, false, false, 0},
      {"uint2 zp block 32", "uint2", 70, 65, 4, 1, 32, false, true, 0},
      {"int8 per column", "int8", 50, 40, 1, 2, 0, false, false, 0},
      {"uint8 zp per tensor", "uint8", 33, 17, 6, 1, 0, true, true, 0},
      {"int4 whole column", "int4", 40, 24, 1, 1, 64, false, false, 0},
      {"blocks along N", "int4", 32, 64, 1, 1, 32, false, false, 1},
      {"block splits a unit", "int4", 32, 16, 1, 1, 4, false, false, 4},
      {"float16 scale", "int4", 32, 16, 1, 1, 16, false, false, 2},
      {"weights also output", "int4", 64, 16, 1, 1, 32, false, false, 3},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check(&cases[i]);
  if (fails)
    fprintf(stderr, "%d checks failed\n", fails);
  else
    printf("%zu weight-only models: fused and float paths agree\n", sizeof cases / sizeof *cases);
  return fails != 0;
}
