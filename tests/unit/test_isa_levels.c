/* test_isa_levels.c - the CPU dispatch of src/kernels/ (docs/architecture.md,
 * "CPU dispatch"): ONNXC_ISA caps what the tables hold and which level the
 * operators' loops run (kernels/levels.h), and every level this CPU can run
 * computes what the portable one does.
 *
 * `make test` runs this (with the other kernel tests) plain and with
 * ONNXC_ISA=avx2 and =portable, so on an AVX-512 machine each run checks
 * that the tables hold the capped level's entries; the comparisons between
 * levels run in every run (each level at or below the CPU's is asked for
 * by name). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpu.h"
#include "kernels/conv_direct.h"
#include "kernels/levels.h"
#include "kernels/q8.h"
#include "kernels/vmath.h"
#include "session_check.h" /* CHECK */

static uint32_t rng = 12345u;
static float frand(float lo, float hi) {
  rng = rng * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(rng >> 8) / 16777216.0f;
}

/* the level ONNXC_ISA asks for (its own reading of the variable, so that
 * the probe's is checked against it), the CPU's when unset */
static ox_isa wanted(const ox_cpu *c) {
  const char *e = getenv("ONNXC_ISA");
  ox_isa w = c->found;
  if (e && (!strcmp(e, "portable") || !strcmp(e, "none"))) w = OX_ISA_PORTABLE;
  if (e && !strcmp(e, "avx2")) w = OX_ISA_AVX2;
  return w < c->found ? w : c->found;
}

static void test_cap(void) {
  const ox_cpu *c = ox_cpu_get();
  ox_isa w = wanted(c);
  printf("cpu %s (%s, %s): level %s, found %s\n", c->brand, c->vendor, ox_uarch_name(c->uarch),
         ox_isa_name(c->isa), ox_isa_name(c->found));
  CHECK(c->isa == w);
  CHECK(ox_vmath_kernels_get()->isa == w);
  CHECK(ox_conv_direct_kernels_get()->isa == w);
  CHECK(ox_q8_kernels_get()->isa == w);
  /* the entries are those of the level asked for by name */
  CHECK(ox_vmath_kernels_get() == ox_vmath_kernels_at(w));
  CHECK(ox_conv_direct_kernels_get() == ox_conv_direct_kernels_at(w));
  /* features above the level read as absent */
  if (w < OX_ISA_AVX512) CHECK(!c->avx512f && !c->avx512bw && !c->avx512vbmi);
  if (w < OX_ISA_AVX2) CHECK(!c->avx2 && !c->fma && !c->f16c);
  /* AVX-512's attention pass only at that level */
  CHECK((ox_vmath_kernels_get()->scale_mask_max != NULL) == (w == OX_ISA_AVX512));
  /* a level above the CPU's gives the CPU's */
  CHECK(ox_vmath_kernels_at(OX_ISA_AVX512)->isa == c->found);
  CHECK(ox_vmath_kernels_at(OX_ISA_PORTABLE)->isa == OX_ISA_PORTABLE);
}

/* |a - b| within tol of |b| (same NaNs, same infinities) */
static bool near(float a, float b, float tol) {
  if (isnan(b)) return isnan(a);
  if (isinf(b)) return a == b;
  return fabsf(a - b) <= tol * fmaxf(fabsf(b), 1e-30f) || fabsf(a - b) < 1e-37f;
}

enum { N = 1031 };

static void test_vmath_levels(void) {
  static float x[N], r[N], y[N];
  for (int i = 0; i < N; i++) x[i] = frand(-30.0f, 30.0f);
  const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, 88.8f, -103.0f};
  memcpy(x, special, sizeof special);
  const ox_vmath_kernels *ref = ox_vmath_kernels_at(OX_ISA_PORTABLE);
  for (int lv = OX_ISA_AVX2; lv <= (int)ox_cpu_get()->found; lv++) {
    const ox_vmath_kernels *k = ox_vmath_kernels_at((ox_isa)lv);
    CHECK(k->isa == (ox_isa)lv);
    int bad = 0;
    ref->exp(x, 0.5f, r, N), k->exp(x, 0.5f, y, N);
    for (int i = 0; i < N; i++) bad += !near(y[i], r[i], 1e-6f);
    ref->erf(x, r, N), k->erf(x, y, N);
    for (int i = 0; i < N; i++) bad += !near(y[i], r[i], 1e-6f);
    ref->tanh(x, r, N), k->tanh(x, y, N);
    for (int i = 0; i < N; i++) bad += !near(y[i], r[i], 1e-6f);
    ref->sigmoid(x, r, N, 1.0f, true), k->sigmoid(x, y, N, 1.0f, true);
    for (int i = 0; i < N; i++) bad += !near(y[i], r[i], 1e-6f);
    ox_gelu_erf g = {1.4142135f, 1.0f, 0.5f, false};
    ref->gelu_erf(x, r, N, &g), k->gelu_erf(x, y, N, &g);
    /* (x (erf + 1) cancels for x < 0: erf's absolute error, times x) */
    for (int i = 0; i < N; i++)
      bad += !(near(y[i], r[i], 1e-6f) || fabsf(y[i] - r[i]) <= 1e-6f * fabsf(x[i]));
    /* the row sum's order is the same at every level: the same bits */
    for (int i = 0; i < N; i++) r[i] = frand(-1.0f, 1.0f);
    bad += ref->row_sum(r, N) != k->row_sum(r, N);
    bad += ref->row_max(r, N) != k->row_max(r, N);
    double se = ref->exp_sum(r, 1.0f, y, N), sk = k->exp_sum(r, 1.0f, y, N);
    bad += fabs(se - sk) > 1e-6 * se;
    /* the operators' rows: softmax, normalisation, sums, bias and Relu */
    for (int f = 0; f < 2; f++) {
      ref->softmax_row(x + 8, r, N - 8, f), k->softmax_row(x + 8, y, N - 8, f);
      for (int i = 0; i < N - 8; i++) bad += !near(y[i], r[i], 1e-6f);
    }
    bad += fabs(ref->row_sq_sum(x + 8, N - 8, 0.25) - k->row_sq_sum(x + 8, N - 8, 0.25)) >
           1e-12 * ref->row_sq_sum(x + 8, N - 8, 0.25);
    static float sc[N], bi[N];
    for (int i = 0; i < N; i++) sc[i] = frand(0.5f, 2.0f), bi[i] = frand(-1.0f, 1.0f);
    ref->norm_row(x + 8, r, N - 8, 0.3f, 0.7f, sc, bi),
        k->norm_row(x + 8, y, N - 8, 0.3f, 0.7f, sc, bi);
    /* (x - m) inv scale + bias cancels where it is near 0: an absolute bound */
    for (int i = 0; i < N - 8; i++) bad += !(fabsf(y[i] - r[i]) <= 1e-5f);
    ref->add(x + 8, sc, r, N - 8), k->add(x + 8, sc, y, N - 8);
    bad += memcmp(r, y, (N - 8) * sizeof *r) != 0;
    double s0[2] = {0, 0}, s1[2] = {0, 0};
    ref->sum_into(x + 8, N - 8, true, true, s0), k->sum_into(x + 8, N - 8, true, true, s1);
    bad += fabs(s0[0] - s1[0]) > 1e-12 * s0[0];
    memcpy(r, x + 8, (N - 8) * sizeof *r), memcpy(y, x + 8, (N - 8) * sizeof *y);
    ref->bias_relu(r, N - 8, bi, false, true), k->bias_relu(y, N - 8, bi, false, true);
    bad += memcmp(r, y, (N - 8) * sizeof *r) != 0;
    if (bad) printf("vmath %s: %d values off\n", ox_isa_name((ox_isa)lv), bad);
    CHECK(bad == 0);
  }
}

static void test_q8_levels(void) {
  static float x[N], r[N], y[N];
  static uint8_t qa[N], qb[N], qr[N], qy[N], t[256];
  for (int i = 0; i < N; i++) x[i] = frand(-300.0f, 300.0f);
  x[0] = NAN, x[1] = INFINITY, x[2] = -INFINITY, x[3] = 2.5f, x[4] = -3.5f;
  for (int i = 0; i < N; i++) qa[i] = (uint8_t)(rng >> 3), rng = rng * 1664525u + 1013904223u;
  for (int i = 0; i < N; i++) qb[i] = (uint8_t)(rng >> 5), rng = rng * 1664525u + 1013904223u;
  for (int i = 0; i < 256; i++) t[i] = (uint8_t)(255 - i * 7);
  const ox_q8_kernels *ref = ox_q8_kernels_at(OX_ISA_PORTABLE);
  for (int lv = OX_ISA_AVX2; lv <= (int)ox_cpu_get()->found; lv++) {
    const ox_q8_kernels *k = ox_q8_kernels_at((ox_isa)lv);
    int bad = 0;
    for (int s = 0; s < 2; s++) {
      ref->from_f32(x, N, 1.7f, s ? 3.0f : 128.0f, s, qr);
      k->from_f32(x, N, 1.7f, s ? 3.0f : 128.0f, s, qy);
      bad += memcmp(qr, qy, N) != 0;
      ref->to_f32(qa, N, 0.03f, 7.0f, s, r);
      k->to_f32(qa, N, 0.03f, 7.0f, s, y);
      bad += memcmp(r, y, sizeof r) != 0;
    }
    float l0, h0, l1, h1;
    ref->range(x + 5, N - 5, &l0, &h0), k->range(x + 5, N - 5, &l1, &h1);
    bad += l0 != l1 || h0 != h1;
    ref->add_u8(qa, qb, qr, N, 0.7f, 0.45f, -20.25f, 0.0f, 255.0f);
    k->add_u8(qa, qb, qy, N, 0.7f, 0.45f, -20.25f, 0.0f, 255.0f);
    /* (AVX-512 computes a ka + (b kb + c) by two fused multiply-adds, the
     * others round each product: a value near a half may round the other
     * way, as it did between AVX-512 and AVX2 machines before) */
    for (int i = 0; i < N; i++) bad += abs((int)qr[i] - (int)qy[i]) > 1;
    ref->lookup(t, qa, qr, N), k->lookup(t, qa, qy, N);
    bad += memcmp(qr, qy, N) != 0;
    if (bad) printf("q8 %s: %d arrays differ\n", ox_isa_name((ox_isa)lv), bad);
    CHECK(bad == 0);
  }
}

/* depthwise 3 x 3 and 5 x 5, strides 1 and 2, maps from 5 x 5 to 40 x 40,
 * 32 channels (the blocked, flat, bordered and masked AVX-512 paths), and
 * a few-positions layer: each level against the portable one */
static void test_conv_levels(void) {
  enum { C = 32, MAXS = 40 };
  static float x[C * MAXS * MAXS], w[C * 25], b[C], r[C * MAXS * MAXS], y[C * MAXS * MAXS];
  for (int i = 0; i < C * MAXS * MAXS; i++) x[i] = frand(-1.0f, 1.0f);
  for (int i = 0; i < C * 25; i++) w[i] = frand(-1.0f, 1.0f);
  for (int i = 0; i < C; i++) b[i] = frand(-1.0f, 1.0f);
  const ox_conv_direct_kernels *ref = ox_conv_direct_kernels_at(OX_ISA_PORTABLE);
  const int sizes[] = {5, 7, 14, 28, 40};
  for (int lv = OX_ISA_AVX2; lv <= (int)ox_cpu_get()->found; lv++) {
    const ox_conv_direct_kernels *k = ox_conv_direct_kernels_at((ox_isa)lv);
    int bad = 0;
    for (int K = 3; K <= 5; K += 2)
      for (int S = 1; S <= 2; S++)
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
          int H = sizes[si], P = K / 2;
          ox_nn_geom g = {0};
          g.nd = 2;
          for (int d = 0; d < 2; d++) {
            g.in[d] = H, g.k[d] = K, g.stride[d] = S, g.dil[d] = 1, g.pb[d] = P, g.pe[d] = P;
            g.out[d] = (H + 2 * P - K) / S + 1;
          }
          g.in_size = H * H, g.out_size = g.out[0] * g.out[1], g.k_size = K * K;
          int64_t n = C * g.out_size;
          ref->depthwise(NULL, &g, 1, C, 1, x, w, b, NULL, 0, r);
          k->depthwise(NULL, &g, 1, C, 1, x, w, b, NULL, 0, y);
          /* (sums of K K products of values up to 1, with and without
           * fused multiply-adds: an absolute bound) */
          for (int64_t i = 0; i < n; i++) bad += !(fabsf(y[i] - r[i]) <= 1e-6f * (float)(K * K));
        }
    /* 40 outputs of 3 positions from rows of 75 */
    ox_few_job fr = {x, w, b, r, 3, 75}, fy = {x, w, b, y, 3, 75};
    ref->few_task(&fr, 0, 10), k->few_task(&fy, 0, 10);
    for (int i = 0; i < 30; i++) bad += !near(y[i], r[i], 1e-5f);
    if (bad) printf("conv_direct %s: %d values off\n", ox_isa_name((ox_isa)lv), bad);
    CHECK(bad == 0);
  }
}

/* ---- the per-function levels (levels.h) ---- */

/* a body compiled per level, to check what a pick names */
OX_LEVEL_BODY int twice_c(int v) { return 2 * v; }
OX_LEVELS(int, twice, (int v), v)

static void test_level_pick(void) {
  ox_isa w = wanted(ox_cpu_get());
  OX_LEVEL_PTR(twice) f = OX_LEVEL_PICK(twice);
#if OX_LEVELS_X86
  CHECK(f == (w == OX_ISA_AVX512 ? twice_avx512 : w == OX_ISA_AVX2 ? twice_avx2 : twice_ref));
  CHECK(OX_LEVEL_TABLE(OX_ISA_PORTABLE, twice) == twice_ref);
  CHECK(OX_LEVEL_TABLE(OX_ISA_AVX512, twice) == (ox_cpu_get()->found == OX_ISA_AVX512 ? twice_avx512
                                                 : ox_cpu_get()->found == OX_ISA_AVX2 ? twice_avx2
                                                                                      : twice_ref));
#else
  CHECK(f == twice_ref);
#endif
  CHECK(f(21) == 42);
}

/* What the operators' picks took, by the watcher (one thread: the session
 * runs on the caller's). */
enum { MAX_SEEN = 64 };
static struct {
  const char *name;
  ox_isa level;
} seen[MAX_SEEN];
static int n_seen;

static void watch(const char *name, ox_isa level) {
  if (n_seen < MAX_SEEN) seen[n_seen].name = name, seen[n_seen].level = level, n_seen++;
}

/* A model whose operators run loops compiled per level in src/ops (pool.c,
 * norm.c, reduce.c, unary.c, elementwise.c, resize.c, conv.c, fused.c):
 * every loop must be picked, and at the level ONNXC_ISA allows. A loop
 * dispatched by the loader (the CPU's level whatever the cap) or called
 * without a pick fails here. */
static void test_ops_levels(void) {
  const char *text =
      "<ir_version: 8, opset_import: [\"\" : 13]>\n"
      "G (float[1,4,6,6] X) => (float[1,4,1,1] gp, float[1,4,3,3] mp, float[1,4,6,6] bn,\n"
      "  float[1,4,6,6] lrn, float[1,1,6,6] rmax, float[1,4,6,6] sn, float[1,4,6,6] add,\n"
      "  float[1,4,12,12] rs, float[1,2,12,12] ct, float[1,4,6,6] ch)\n"
      "<float[4] s = {1, 2, 0.5, 3}, float[4] b = {0, 1, -1, 2}, float[4] mu = {0, 0.5, 1, -1},\n"
      "  float[4] var = {1, 2, 3, 4}, float[0] roi = {}, float[4] sc = {1, 1, 2, 2},\n"
      "  float[4,2,2,2] wt = {1, -1, 2, 0.5, 1, 1, -2, 3, 0, 1, 2, -1, 1, 0.5, 0.25, 2,\n"
      "  3, 1, -1, 0, 2, 2, 1, -3, 1, 1, 1, 1, -1, 0.5, 2, 1}, float k = {1.5}, float c = {0.25}> "
      "{\n"
      "  gp = GlobalAveragePool (X)\n"
      "  mp = MaxPool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (X)\n"
      "  bn = BatchNormalization (X, s, b, mu, var)\n"
      "  lrn = LRN <size = 3> (X)\n"
      "  rmax = ReduceMax <axes = [1]> (X)\n"
      "  sn = Sin (X)\n"
      "  add = Add (X, sn)\n"
      "  rs = Resize <mode = \"linear\"> (X, roi, sc)\n"
      "  ct = ConvTranspose <kernel_shape = [2, 2], strides = [2, 2]> (X, wt)\n"
      "  t = Mul (X, k)\n  u = Add (t, c)\n  ch = Tanh (u)\n}\n";
  onnxc_model *m = NULL;
  onnxc_session *s = open_text_session("ops_levels", text, true, 1, &m);
  CHECK(s != NULL);
  if (!s) return;
  int64_t dims[4] = {1, 4, 6, 6};
  float x[144];
  for (int i = 0; i < 144; i++) x[i] = (float)((i * 37) % 23 - 11) / 8.0f;
  onnxc_error e;
  onnxc_value *in = onnxc_tensor_wrap(1, dims, 4, x, &e), *out[10] = {0};
  const char *names[1] = {"X"};
  n_seen = 0;
  ox_level_watch(watch);
  int rc = onnxc_session_run(s, names, &in, 1, NULL, out, 10, &e);
  ox_level_watch(NULL);
  if (rc != ONNXC_OK) fprintf(stderr, "ops_levels: %s\n", e.msg);
  CHECK(rc == ONNXC_OK);
  ox_isa w = wanted(ox_cpu_get());
  const char *want[] = {"gpool_task",  "bordered3s2_task", "bn_apply", "lrn_task",
                        "red_run_fn",  "un_f32_fast",      "bin_f32",  "apply_axis",
                        "convt_tiles", "fz_block"};
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    bool found = false;
    for (int i = 0; i < n_seen; i++) found |= strcmp(seen[i].name, want[k]) == 0;
    if (!found) fprintf(stderr, "ops_levels: no pick of %s\n", want[k]);
    CHECK(found);
  }
  int off = 0;
  for (int i = 0; i < n_seen; i++)
    if (seen[i].level != w) {
      fprintf(stderr, "ops_levels: %s ran at %s, not %s\n", seen[i].name,
              ox_isa_name(seen[i].level), ox_isa_name(w));
      off++;
    }
  CHECK(off == 0);
  printf("operators' loops: %d picks, %d at %s\n", n_seen, n_seen - off, ox_isa_name(w));
  for (int k = 0; k < 10; k++) onnxc_value_free(out[k]);
  onnxc_value_free(in);
  onnxc_session_free(s);
  onnxc_model_free(m);
}

int main(void) {
  test_cap();
  test_vmath_levels();
  test_q8_levels();
  test_conv_levels();
  test_level_pick();
  test_ops_levels();
  if (fails) {
    printf("%d fails\n", fails);
    return 1;
  }
  printf("isa levels: ok\n");
  return 0;
}
