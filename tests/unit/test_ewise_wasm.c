/* test_ewise_wasm.c - the WebAssembly SIMD128 element-wise rows
 * (kernels/ewise_wasm.c) against the C expressions of the operators they
 * replace (written out here as the element-wise chain and opcore.h define
 * them), and vmath.h's SIMD128 table (kernels/vmath_wasm.c) against the
 * portable table it builds on: both must give the same bits (NaN, infinity
 * and signed zeros included), in place and not, for lengths around the
 * four-lane and block steps. In a build without SIMD128 (native, or
 * ONNXC_ISA=portable) only the dispatch is checked: no ewise entries, the
 * probed level's vmath table. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "kernels/ewise.h"
#include "kernels/vmath.h"

static int failures;

#ifdef __wasm_simd128__
extern const ox_vmath_kernels ox_vmath_kernels_ref, ox_vmath_kernels_wasm;

static float rnd(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 4096.0f - 8.0f;
}

/* n values with the special ones sprinkled in */
static void fill(float *x, int64_t n, uint32_t seed) {
  static const float sp[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 3.0f, -3.0f, 6.0f};
  for (int64_t i = 0; i < n; i++) x[i] = rnd(&seed);
  for (int64_t i = 3; i < n; i += 7) x[i] = sp[(i / 7) % 8];
}

static bool same(const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (memcmp(&a[i], &b[i], sizeof(float)) != 0 && !(isnan(a[i]) && isnan(b[i]))) return false;
  return true;
}

static float fmax_ref(float x, float y) { /* opcore.h's oc_fmax_f32 */
  float r = x > y ? x : y;
  r = y != y ? y : r;
  return x != x ? x : r;
}
static float fmin_ref(float x, float y) {
  float r = x < y ? x : y;
  r = y != y ? y : r;
  return x != x ? x : r;
}

static float bin_ref(ox_ew_bin op, float x, float y) {
  switch (op) {
    case OX_EW_ADD:
      return x + y;
    case OX_EW_SUB:
      return x - y;
    case OX_EW_MUL:
      return x * y;
    case OX_EW_DIV:
      return x / y;
    case OX_EW_MAX:
      return fmax_ref(x, y);
    case OX_EW_MIN:
      return fmin_ref(x, y);
  }
  return 0;
}

static float un_ref(ox_ew_un op, float x, float p0, float p1) {
  const float one = 1, zero = 0;
  float v;
  switch (op) {
    case OX_EW_CLIP:
      v = x < p0 ? p0 : x;
      return v > p1 ? p1 : v;
    case OX_EW_RELU:
      return x > zero ? x : zero;
    case OX_EW_LEAKY:
      return signbit(x) ? x * p0 : x;
    case OX_EW_HSIGMOID:
      v = p0 * x + p1;
      v = v > one ? one : v;
      return v < zero ? zero : v;
    case OX_EW_HSWISH:
      v = x / (float)6 + 0.5f;
      v = v > one ? one : v;
      return x * (v < zero ? zero : v);
    case OX_EW_NEG:
      return -x;
    case OX_EW_ABS:
      return fabsf(x);
    case OX_EW_SQRT:
      return sqrtf(x);
    case OX_EW_POW2:
      return x * x;
    case OX_EW_POW3:
      return x * x * x;
  }
  return 0;
}

static void test_ewise(const ox_ew_kernels *ew) {
  enum { N = 77 };
  float a[N], b[N], y[N], want[N];
  for (int64_t n = 0; n <= N; n += (n < 12 ? 1 : 13)) {
    for (int op = OX_EW_ADD; op <= OX_EW_MIN; op++)
      for (int form = 0; form < 5; form++) { /* vv, vs, sv, vv in place on a, vs in place */
        fill(a, n, 11u + (uint32_t)op);
        fill(b, n, 29u + (uint32_t)form);
        float sa = form == 2 ? -0.0f : 0, sb = form == 1 || form == 4 ? 6.0f : 0;
        for (int64_t i = 0; i < n; i++)
          want[i] =
              bin_ref((ox_ew_bin)op, form == 2 ? sa : a[i], form == 1 || form == 4 ? sb : b[i]);
        const float *pa = form == 2 ? NULL : a, *pb = form == 1 || form == 4 ? NULL : b;
        float *out = form >= 3 ? a : y;
        ew->bin((ox_ew_bin)op, pa, pb, sa, sb, out, n);
        if (!same(out, want, n)) {
          printf("FAIL ewise bin op %d form %d n %lld\n", op, form, (long long)n);
          failures++;
        }
      }
    for (int op = OX_EW_CLIP; op <= OX_EW_POW3; op++)
      for (int inplace = 0; inplace < 2; inplace++) {
        fill(a, n, 5u + (uint32_t)op);
        float p0 = op == OX_EW_CLIP ? -1.5f : 0.2f, p1 = op == OX_EW_CLIP ? 6.0f : 0.5f;
        for (int64_t i = 0; i < n; i++) want[i] = un_ref((ox_ew_un)op, a[i], p0, p1);
        float *out = inplace ? a : y;
        ew->un((ox_ew_un)op, a, out, n, p0, p1);
        if (!same(out, want, n)) {
          printf("FAIL ewise un op %d in place %d n %lld\n", op, inplace, (long long)n);
          failures++;
        }
      }
  }
}

/* one vmath entry, in place and not, against the portable table */
static void test_vmath(void) {
  const ox_vmath_kernels *r = &ox_vmath_kernels_ref, *w = &ox_vmath_kernels_wasm;
  static const int64_t ns[] = {1, 3, 4, 15, 16, 17, 255, 256, 257, 600};
  enum { M = 600 };
  static float x[M], y0[M], y1[M], sc[M], bi[M];
  for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
    int64_t n = ns[t];
    for (int inplace = 0; inplace < 2; inplace++) {
      const char *what = NULL;
      for (int f = 0; f < 12 && !what; f++) {
        fill(x, n, 3u + (uint32_t)n);
        /* past e^x's limits and the branch points of erf and tanh */
        static const float wide[] = {90.0f, -90.0f, 100.0f, -100.0f, 88.75f, -87.4f, 9.5f, -20.0f,
                                     0.49f, -0.5f,  1e-20f, -9.0f,   88.7f,  -87.3f, 4.0f, -0.51f};
        for (int64_t i = 5; i < n; i += 11) x[i] = wide[(i / 11) % 16];
        if (f >= 7) /* the row functions: finite values (softmax of inf is NaN either way) */
          for (int64_t i = 0; i < n; i++) x[i] = isfinite(x[i]) ? x[i] : 1.25f;
        fill(sc, n, 77u);
        fill(bi, n, 78u);
        memcpy(y0, x, sizeof(float) * (size_t)n);
        memcpy(y1, x, sizeof(float) * (size_t)n);
        const float *x0 = inplace ? y0 : x, *x1 = inplace ? y1 : x;
        double s0 = 0, s1 = 0;
        ox_gelu_erf g = {1.4142135f, 1.0f, 0.5f, f == 6};
        switch (f) {
          case 0:
            r->exp(x0, 0.5f, y0, n);
            w->exp(x1, 0.5f, y1, n);
            break;
          case 1:
            s0 = r->exp_sum(x0, 2.0f, y0, n);
            s1 = w->exp_sum(x1, 2.0f, y1, n);
            break;
          case 2:
            r->erf(x0, y0, n);
            w->erf(x1, y1, n);
            break;
          case 3:
            r->tanh(x0, y0, n);
            w->tanh(x1, y1, n);
            break;
          case 4:
            r->sigmoid(x0, y0, n, 1.0f, true);
            w->sigmoid(x1, y1, n, 1.0f, true);
            break;
          case 5:
          case 6:
            r->gelu_erf(x0, y0, n, &g);
            w->gelu_erf(x1, y1, n, &g);
            break;
          case 7:
            r->softmax_row(x0, y0, n, false);
            w->softmax_row(x1, y1, n, false);
            break;
          case 8:
            r->norm_row(x0, y0, n, 0.25f, 1.5f, sc, bi);
            w->norm_row(x1, y1, n, 0.25f, 1.5f, sc, bi);
            break;
          case 9:
            r->norm_row(x0, y0, n, 0.25f, 1.5f, NULL, NULL);
            w->norm_row(x1, y1, n, 0.25f, 1.5f, NULL, NULL);
            break;
          case 10:
            r->add(x0, sc, y0, n);
            w->add(x1, sc, y1, n);
            break;
          case 11: { /* the maximum, with a NaN and without */
            float m0 = r->row_max(x, n), m1 = w->row_max(x, n);
            x[n / 2] = NAN;
            if (memcmp(&m0, &m1, sizeof m0) != 0 || !isnan(w->row_max(x, n))) what = "row_max";
            continue;
          }
        }
        if (!same(y0, y1, n) || memcmp(&s0, &s1, sizeof s0) != 0) {
          static const char *names[] = {"exp",      "exp_sum",     "erf",
                                        "tanh",     "sigmoid",     "gelu_div",
                                        "gelu_mul", "softmax_row", "norm_row scale",
                                        "norm_row", "add"};
          what = names[f];
        }
      }
      if (what) {
        printf("FAIL vmath %s n %lld in place %d: differs from the portable entry\n", what,
               (long long)n, inplace);
        failures++;
      }
    }
  }
}
#endif

int main(void) {
  const ox_ew_kernels *ew = ox_ew_kernels_get();
#ifdef __wasm_simd128__
  if (ox_cpu_get()->simd128) {
    if (!ew || ox_vmath_kernels_get() != &ox_vmath_kernels_wasm) {
      printf("FAIL the SIMD128 build hands out the portable entries\n");
      failures++;
    } else {
      test_ewise(ew);
      test_vmath();
    }
  } else if (ew || ox_vmath_kernels_get() != &ox_vmath_kernels_ref) {
    printf("FAIL ONNXC_ISA=portable still hands out the SIMD128 entries\n");
    failures++;
  }
#else
  if (ew) {
    printf("FAIL element-wise rows handed out without SIMD128\n");
    failures++;
  }
  if (ox_vmath_kernels_get()->isa != ox_cpu_get()->isa) {
    printf("FAIL the vmath table is not the probed level's\n");
    failures++;
  }
#endif
  if (failures) return 1;
  printf("test_ewise_wasm: ok\n");
  return 0;
}
