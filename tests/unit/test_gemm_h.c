/* test_gemm_h.c - the GEMM by a packed 16-bit B (src/kernels/gemm_h.c) on
 * every path this CPU has, and MatMul / Gemm by constant float16 and
 * bfloat16 weights in sessions.
 *
 * The oracle is a double-precision product of the same 16-bit values,
 * decoded here by their definition (not by the library's conversions): a
 * result must be within one unit in the last place of its type plus the
 * float32 rounding a K-term sum may pick up. Kernel cases: M 1, 2, 3, 7,
 * 64; K 1, 5, 64, 300; N 1, 15, 17, 100, 1000; A float32, float16 or
 * bfloat16, plain or transposed; B plain or transposed; alpha, beta and C;
 * with and without a thread pool; empty shapes and K = 0. Session cases:
 * MatMul by a 2-D constant (A of rank 1, 2 and 3, one to seventy rows) and
 * Gemm (transA, transB, alpha, beta, C broadcast or whole), at optimisation
 * level 1 (B packed once) against the oracle and against level 0 (operands
 * widened to float32 per run, the path as it was): the two agree within one
 * unit in the last place of the 16-bit type. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/kernels/gemm_h.h"
#include "../../src/runtime/session.h"
#include "half_values.h"
#include "onnxc.h"
#include "session_check.h"

static size_t type_size(ox_hg_type t) { return t == OX_HG_F32 ? 4 : 2; }

/* element i of a buffer of type t: random value stored, its value returned */
static double put_rand(ox_hg_type t, void *buf, int64_t i) {
  if (t == OX_HG_F32) {
    double v = half_value(OX_HG_F16, rand_half(OX_HG_F16));
    ((float *)buf)[i] = (float)v;
    return v;
  }
  uint16_t h = rand_half(t);
  ((uint16_t *)buf)[i] = h;
  return half_value(t, h);
}

static double get_val(ox_hg_type t, const void *buf, int64_t i) {
  if (t == OX_HG_F32) return ((const float *)buf)[i];
  return half_value(t, ((const uint16_t *)buf)[i]);
}

static const char *type_name(ox_hg_type t) {
  return t == OX_HG_F32 ? "f32" : t == OX_HG_F16 ? "f16" : "bf16";
}

typedef struct kcase {
  int64_t M, K, N;
  ox_hg_type at, bt, ct;
  bool ta, tb;
  float alpha, beta;
} kcase;

/* every available path on one case against the double-precision product */
static void kernel_case(const kcase *c, ox_thread_pool *pool) {
  int64_t M = c->M, K = c->K, N = c->N;
  size_t na = (size_t)(M * K) + 1, nb = (size_t)(K * N) + 1, nc = (size_t)(M * N) + 1;
  void *A = malloc(na * type_size(c->at));
  uint16_t *B = malloc(nb * 2);
  void *C0 = malloc(nc * type_size(c->ct)), *C = malloc(nc * type_size(c->ct));
  double *ad = malloc(na * sizeof *ad), *bd = malloc(nb * sizeof *bd);
  double *ref = malloc(nc * sizeof *ref), *mag = malloc(nc * sizeof *mag);
  /* ad / bd in logical (i, k) / (k, n) order whatever the storage */
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++)
      ad[i * K + k] = put_rand(c->at, A, c->ta ? k * M + i : i * K + k);
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++) {
      int64_t at = c->tb ? n * K + k : k * N + n;
      B[at] = rand_half(c->bt);
      bd[k * N + n] = half_value(c->bt, B[at]);
    }
  for (int64_t i = 0; i < M * N; i++) {
    double cv = put_rand(c->ct, C0, i);
    double s = 0, m = 0;
    for (int64_t k = 0; k < K; k++) {
      double p = ad[i / N * K + k] * bd[k * N + i % N];
      s += p;
      m += fabs(p);
    }
    ref[i] = c->alpha * s + (c->beta != 0.0f ? c->beta * cv : 0.0);
    mag[i] = fabs(c->alpha) * m + fabs(c->beta * cv);
  }
  const ox_hg_path paths[] = {OX_HG_PORTABLE, OX_HG_AVX2, OX_HG_AVX512, OX_HG_AVX512BF16};
  for (size_t p = 0; p < sizeof paths / sizeof *paths; p++) {
    if (!ox_hgemm_path_ok(paths[p])) continue;
    ox_err e = {0};
    ox_hgemm_b *pb = ox_hgemm_pack_b(paths[p], c->bt, c->tb, K, N, B, c->tb ? K : N, &e);
    CHECK(pb != NULL);
    if (!pb) continue;
    memcpy(C, C0, nc * type_size(c->ct));
    int rc =
        ox_hgemm(M, c->at, c->ta, A, c->ta ? M : K, pb, c->alpha, c->beta, c->ct, C, N, pool, &e);
    CHECK(rc == OX_OK);
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < M * N; i++) {
      double got = get_val(c->ct, C, i);
      double tol = ulp_at(c->ct, ref[i]) + 4.0 * (double)(K + 2) * ldexp(mag[i], -24);
      if (!(fabs(got - ref[i]) <= tol)) {
        if (first < 0) first = i;
        bad++;
      }
    }
    if (bad) {
      fprintf(stderr,
              "%s: M %lld K %lld N %lld A %s%s B %s%s C %s alpha %g beta %g: %lld off, first "
              "[%lld] %.9g want %.9g\n",
              ox_hgemm_b_path(pb), (long long)M, (long long)K, (long long)N, type_name(c->at),
              c->ta ? "^T" : "", type_name(c->bt), c->tb ? "^T" : "", type_name(c->ct),
              (double)c->alpha, (double)c->beta, (long long)bad, (long long)first,
              get_val(c->ct, C, first), ref[first]);
      fails++;
    }
    ox_hgemm_b_free(pb);
  }
  free(A);
  free(B);
  free(C0);
  free(C);
  free(ad);
  free(bd);
  free(ref);
  free(mag);
}

static void kernel_shapes(ox_thread_pool *pool) {
  const int64_t Ms[] = {1, 2, 3, 7, 64, 200}, Ks[] = {1, 5, 64, 300}, Ns[] = {1, 15, 17, 100, 1000};
  int index = 0;
  for (size_t mi = 0; mi < 6; mi++)
    for (size_t ki = 0; ki < 4; ki++)
      for (size_t ni = 0; ni < 5; ni++, index++)
        for (int bf = 0; bf < 2; bf++) {
          ox_hg_type bt = bf ? OX_HG_BF16 : OX_HG_F16;
          kcase c = {Ms[mi], Ks[ki], Ns[ni], bt, bt, bt, false, false, 1.0f, 0.0f};
          ox_thread_pool *p = index % 2 ? pool : NULL;
          kernel_case(&c, p); /* the model's case: all three of one type */
          /* and one variation per shape, in turn */
          switch (index % 5) {
            case 0:
              c.tb = true;
              break;
            case 1:
              c.ta = true;
              break;
            case 2:
              c.alpha = 0.5f;
              c.beta = 2.0f;
              break;
            case 3:
              c.at = c.ct = OX_HG_F32;
              break;
            default:
              c.at = bf ? OX_HG_F16 : OX_HG_BF16;
              c.tb = c.ta = true;
              c.alpha = -1.5f;
              c.beta = 0.25f;
              break;
          }
          kernel_case(&c, p);
        }
}

/* K = 0 (C = beta C), M = 0 and N = 0 (nothing written), bad arguments */
static void kernel_edges(void) {
  ox_err e = {0};
  uint16_t C[27], want[27];
  for (int i = 0; i < 27; i++) C[i] = want[i] = rand_half(OX_HG_F16);
  ox_hgemm_b *pb = ox_hgemm_pack_b(OX_HG_AUTO, OX_HG_F16, false, 0, 9, NULL, 9, &e);
  CHECK(pb && ox_hgemm_b_k(pb) == 0 && ox_hgemm_b_n(pb) == 9);
  if (pb) {
    CHECK(ox_hgemm(3, OX_HG_F16, false, NULL, 0, pb, 1.0f, 0.5f, OX_HG_F16, C, 9, NULL, &e) ==
          OX_OK);
    for (int i = 0; i < 27; i++)
      CHECK(half_value(OX_HG_F16, C[i]) == 0.5 * half_value(OX_HG_F16, want[i]));
    CHECK(ox_hgemm(0, OX_HG_F16, false, NULL, 0, pb, 1.0f, 0.0f, OX_HG_F16, NULL, 9, NULL, &e) ==
          OX_OK);
    /* beta 0: C's NaN does not propagate */
    C[0] = 0x7E00;
    CHECK(ox_hgemm(1, OX_HG_F16, false, NULL, 0, pb, 1.0f, 0.0f, OX_HG_F16, C, 9, NULL, &e) ==
          OX_OK);
    CHECK(C[0] == 0);
    ox_hgemm_b_free(pb);
  }
  uint16_t b1[4] = {0x3C00, 0x3C00, 0x3C00, 0x3C00};
  pb = ox_hgemm_pack_b(OX_HG_AUTO, OX_HG_BF16, true, 4, 0, b1, 4, &e);
  CHECK(pb != NULL);
  if (pb) {
    CHECK(ox_hgemm(2, OX_HG_BF16, false, b1, 2, pb, 1.0f, 0.0f, OX_HG_BF16, NULL, 0, NULL, &e) ==
          OX_OK);
    ox_hgemm_b_free(pb);
  }
  CHECK(ox_hgemm_pack_b(OX_HG_AUTO, OX_HG_F32, false, 1, 1, b1, 1, &e) == NULL &&
        e.code == OX_EUNSUPPORTED);
  CHECK(ox_hgemm_pack_b(OX_HG_AUTO, OX_HG_F16, false, -1, 1, b1, 1, &e) == NULL);
  CHECK(ox_hgemm_pack_b(OX_HG_AUTO, OX_HG_F16, false, (int64_t)1 << 30, (int64_t)1 << 30, b1, 1,
                        &e) == NULL &&
        e.code == OX_ENOMEM);
}

/* ---- sessions ---- */

enum { SK = 67, SN = 45, SM = 9 };

/* session outputs equal to the widened path's, of all compared */
static int64_t same_as_widened[2];

/* appends the tensor's bits as integers (the text format reads an integer
 * of a 16-bit float type as its bits) */
static size_t put_bits(char *t, size_t at, size_t cap, const uint16_t *v, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    at += (size_t)snprintf(t + at, cap - at, "%s%u", i ? "," : "", v[i]);
  return at;
}

typedef struct scase {
  bool gemm, ta, tb;
  int c_rank; /* Gemm's C: 0 none, 1 [N], 2 [M, N] */
  float alpha, beta;
  int64_t adims[3];
  size_t arank;
} scase;

static onnxc_value *run_model(const char *text, int level, int threads, onnxc_value *in) {
  onnxc_error e;
  onnxc_model *m = NULL;
  onnxc_session *s = NULL;
  onnxc_value *out = NULL;
  const char *names[1] = {"A"}, *outs[1] = {"Y"};
  onnxc_session_options o = {0};
  o.threads = threads;
  o.optimization_level = level;
  if (onnxc_model_parse_text(text, strlen(text), "m", &m, &e) != ONNXC_OK ||
      onnxc_session_create(m, &o, &s, &e) != ONNXC_OK ||
      onnxc_session_run(s, names, &in, 1, outs, &out, 1, &e) != ONNXC_OK) {
    fprintf(stderr, "session: %s\n", e.msg);
    fails++;
    out = NULL;
  }
  onnxc_session_free(s);
  onnxc_model_free(m);
  return out;
}

static void session_case(ox_hg_type t, const scase *c) {
  const char *tn = t == OX_HG_F16 ? "float16" : "bfloat16";
  /* TensorProto.DataType FLOAT16 and BFLOAT16 */
  int32_t dtype = t == OX_HG_F16 ? 10 : 16;
  int64_t na = 1;
  for (size_t d = 0; d < c->arank; d++) na *= c->adims[d];
  int64_t K = SK, N = SN, M = na / K;
  uint16_t *a = malloc((size_t)na * 2), *w = malloc((size_t)(K * N) * 2);
  uint16_t *cv = malloc((size_t)(M * N) * 2);
  for (int64_t i = 0; i < na; i++) a[i] = rand_half(t);
  for (int64_t i = 0; i < K * N; i++) w[i] = rand_half(t);
  int64_t nc = c->c_rank == 2 ? M * N : N;
  for (int64_t i = 0; i < nc; i++) cv[i] = rand_half(t);
  size_t cap = (size_t)(K * N + nc) * 8 + 4096, at = 0;
  char *text = malloc(cap), adims[64] = "";
  for (size_t d = 0; d < c->arank; d++)
    snprintf(adims + strlen(adims), sizeof adims - strlen(adims), "%s%lld", d ? "," : "",
             (long long)c->adims[d]);
  at += (size_t)snprintf(text + at, cap - at,
                         "<ir_version: 8, opset_import: [\"\" : 13]>\n"
                         "m (%s[%s] A) => (%s Y) <%s[%lld,%lld] w = {",
                         tn, adims, tn, tn, (long long)(c->tb ? N : K), (long long)(c->tb ? K : N));
  at = put_bits(text, at, cap, w, K * N);
  if (c->c_rank) {
    at += (size_t)snprintf(text + at, cap - at, "}, %s[", tn);
    if (c->c_rank == 2) at += (size_t)snprintf(text + at, cap - at, "%lld,", (long long)M);
    at += (size_t)snprintf(text + at, cap - at, "%lld] c = {", (long long)N);
    at = put_bits(text, at, cap, cv, nc);
  }
  if (c->gemm)
    snprintf(text + at, cap - at,
             "}>\n{ Y = Gemm <transA = %d, transB = %d, alpha = %#g, beta = %#g> (A, w%s) }\n",
             c->ta, c->tb, (double)c->alpha, (double)c->beta, c->c_rank ? ", c" : "");
  else
    snprintf(text + at, cap - at, "}>\n{ Y = MatMul (A, w) }\n");

  onnxc_error e;
  onnxc_value *in = onnxc_tensor_wrap(dtype, c->adims, c->arank, a, &e);
  for (int threads = 1; threads <= 2; threads++) {
    onnxc_value *packed = run_model(text, 1, threads, in), *widened = run_model(text, 0, 1, in);
    if (packed && widened) {
      CHECK(onnxc_tensor_numel(packed) == M * N && onnxc_tensor_numel(widened) == M * N);
      const uint16_t *y = onnxc_tensor_data(packed), *y0 = onnxc_tensor_data(widened);
      int64_t bad = 0, apart = 0;
      for (int64_t i = 0; i < M && onnxc_tensor_numel(packed) == M * N; i++)
        for (int64_t n = 0; n < N; n++) {
          double s = 0, mag = 0;
          for (int64_t k = 0; k < K; k++) {
            double av = half_value(t, c->ta ? a[k * M + i] : a[i * K + k]);
            double p = av * half_value(t, c->tb ? w[n * K + k] : w[k * N + n]);
            s += p;
            mag += fabs(p);
          }
          double want = c->gemm ? c->alpha * s : s;
          if (c->gemm && c->c_rank) {
            double cc = half_value(t, cv[c->c_rank == 2 ? i * N + n : n]);
            want += c->beta * cc;
            mag = fabs(c->alpha) * mag + fabs(c->beta * cc);
          }
          double got = half_value(t, y[i * N + n]), old = half_value(t, y0[i * N + n]);
          if (!(fabs(got - want) <= ulp_at(t, want) + 4.0 * (double)(K + 2) * ldexp(mag, -24)))
            bad++;
          if (!(fabs(got - old) <= ulp_at(t, old))) apart++;
          same_as_widened[0] += got == old;
          same_as_widened[1]++;
        }
      if (bad || apart)
        fprintf(stderr,
                "%s %s%s%s rows %lld threads %d: %lld off the oracle, %lld apart from "
                "the widened path\n",
                c->gemm ? "Gemm" : "MatMul", tn, c->ta ? " transA" : "", c->tb ? " transB" : "",
                (long long)M, threads, (long long)bad, (long long)apart);
      CHECK(bad == 0 && apart == 0);
    }
    onnxc_value_free(packed);
    onnxc_value_free(widened);
  }
  onnxc_value_free(in);
  free(text);
  free(a);
  free(w);
  free(cv);
}

static void sessions(void) {
  const scase cases[] = {
      {false, false, false, 0, 1, 0, {SK}, 1},
      {false, false, false, 0, 1, 0, {1, SK}, 2},
      {false, false, false, 0, 1, 0, {3, SK}, 2},
      {false, false, false, 0, 1, 0, {4, SK}, 2},
      {false, false, false, 0, 1, 0, {5, SK}, 2},
      {false, false, false, 0, 1, 0, {70, SK}, 2},
      {false, false, false, 0, 1, 0, {2, 3, SK}, 3}, /* batched A, 2-D constant B */
      {true, false, true, 1, 0.5f, 2.0f, {SM, SK}, 2},
      {true, false, true, 2, 1.0f, -1.0f, {1, SK}, 2},
      {true, true, false, 2, 0.25f, 1.0f, {SK, SM}, 2},
      {true, true, true, 0, 2.0f, 1.0f, {SK, 3}, 2},
      {true, false, false, 1, 1.0f, 0.0f, {SM, SK}, 2}, /* beta 0: C ignored */
  };
  for (int t = 0; t < 2; t++)
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
      session_case(t ? OX_HG_BF16 : OX_HG_F16, &cases[i]);
}

int main(void) {
  ox_err e = {0};
  ox_thread_pool *pool = ox_thread_pool_new(2, &e);
  CHECK(pool != NULL);
  kernel_edges();
  kernel_shapes(pool);
  sessions();
  ox_thread_pool_free(pool);
  const char *names[] = {"portable", "avx2", "avx512", "avx512bf16"};
  printf("paths checked:");
  for (int p = OX_HG_PORTABLE; p <= OX_HG_AVX512BF16; p++)
    if (ox_hgemm_path_ok((ox_hg_path)p)) printf(" %s", names[p - OX_HG_PORTABLE]);
  printf("\n");
  printf("session outputs identical to the widened path: %lld of %lld (the rest one unit apart)\n",
         (long long)same_as_widened[0], (long long)same_as_widened[1]);
  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails != 0;
}
