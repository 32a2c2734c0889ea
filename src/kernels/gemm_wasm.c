/* gemm_wasm.c - the float GEMM's WebAssembly SIMD128 level: the 4 x 8
 * micro-kernel, the GEMV, dot products, packed-B rows and the product by a
 * B read in place (1 x 1 convolutions, OX_GEMM_B_INPLACE) in f32x4
 * intrinsics. The dispatch table (gemm.c) puts them over the portable
 * entries through ox_gemm_fill_wasm when the build has -msimd128 (and
 * ONNXC_ISA does not cap it to portable).
 *
 * Why 4 x 8: the engines compile wasm to the host's vector registers, and
 * V8 on x86 allocates f32x4 values to XMM0-14 (XMM15 is its scratch);
 * without a fused multiply-add in SIMD128 (relaxed SIMD is not in
 * emscripten 3.1.6 nor enabled in node's engine by default) each step is a
 * multiply into a temporary and an add. 4 x 8 keeps 8 accumulators, two B
 * vectors, the broadcast A value and the product: 12 registers. The 6 x 8
 * tile it replaced needed 16 (12 accumulators) and V8 spilled in its inner
 * loop: tools/wasm_simd_peak.c measures the tiles over L1-resident panels
 * in node (on a Zen 5: 4 x 8 and 2 x 16 at ~40 GFLOP/s, 6 x 8, 5 x 8 and
 * 4 x 12 at 20-26, against a ceiling of ~50 for independent mul + add
 * chains). Every sum here is formed in the portable level's order (one
 * rounded multiply, one rounded add per step), so this level gives the
 * portable level's bits. */
#include "gemm_impl.h"

#ifdef __wasm_simd128__
#include <string.h>
#include <wasm_simd128.h>

/* ---- 4 x 8: C = alpha * A B + beta * C ---- */
/* B's rows ldb apart: 8 in its packed panels, the row stride of a B read
 * in place (sb_rows_wasm) */
static inline __attribute__((always_inline)) void tile_4x8(int64_t kc, const float *a,
                                                           const float *b, int64_t ldb, float *c,
                                                           int64_t ldc, float alpha, float beta) {
  v128_t c00 = wasm_f32x4_splat(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
         c30 = c00, c31 = c00;
  for (int64_t k = 0; k < kc; k++) {
    v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4), av;
    av = wasm_v128_load32_splat(a + 0);
    c00 = wasm_f32x4_add(c00, wasm_f32x4_mul(av, b0));
    c01 = wasm_f32x4_add(c01, wasm_f32x4_mul(av, b1));
    av = wasm_v128_load32_splat(a + 1);
    c10 = wasm_f32x4_add(c10, wasm_f32x4_mul(av, b0));
    c11 = wasm_f32x4_add(c11, wasm_f32x4_mul(av, b1));
    av = wasm_v128_load32_splat(a + 2);
    c20 = wasm_f32x4_add(c20, wasm_f32x4_mul(av, b0));
    c21 = wasm_f32x4_add(c21, wasm_f32x4_mul(av, b1));
    av = wasm_v128_load32_splat(a + 3);
    c30 = wasm_f32x4_add(c30, wasm_f32x4_mul(av, b0));
    c31 = wasm_f32x4_add(c31, wasm_f32x4_mul(av, b1));
    a += 4;
    b += ldb;
  }
  v128_t acc[8] = {c00, c01, c10, c11, c20, c21, c30, c31};
  v128_t va = wasm_f32x4_splat(alpha), vb = wasm_f32x4_splat(beta);
  for (int i = 0; i < 4; i++) {
    float *ci = c + i * ldc;
    for (int h = 0; h < 2; h++) {
      v128_t r = wasm_f32x4_mul(va, acc[2 * i + h]);
      /* beta == 0 ignores C (a NaN there must not come through) */
      if (beta != 0.0f) r = wasm_f32x4_add(r, wasm_f32x4_mul(vb, wasm_v128_load(ci + 4 * h)));
      wasm_v128_store(ci + 4 * h, r);
    }
  }
}

static void ukernel_wasm(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                         float alpha, float beta) {
  tile_4x8(kc, a, b, 8, c, ldc, alpha, beta);
}

/* ---- row vector times B (M == 1): gemm_ref.c's blocking and sums ---- */
enum { GEMV_BLOCK = 4096 };

static void gemv_rows_wasm(const gemv_job *g, int64_t j0, int64_t j1) {
  float acc[GEMV_BLOCK];
  const int64_t K = g->K, ldb = g->ldb;
  for (int64_t jb = j0; jb < j1; jb += GEMV_BLOCK) {
    int64_t n = j1 - jb < GEMV_BLOCK ? j1 - jb : GEMV_BLOCK, n4 = n & ~(int64_t)3;
    memset(acc, 0, (size_t)n * sizeof(float));
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
      const float *b0 = g->B + k * ldb + jb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
      float a0 = g->a[k], a1 = g->a[k + 1], a2 = g->a[k + 2], a3 = g->a[k + 3];
      v128_t v0 = wasm_f32x4_splat(a0), v1 = wasm_f32x4_splat(a1), v2 = wasm_f32x4_splat(a2),
             v3 = wasm_f32x4_splat(a3);
      int64_t j = 0;
      for (; j < n4; j += 4) {
        v128_t p01 = wasm_f32x4_add(wasm_f32x4_mul(v0, wasm_v128_load(b0 + j)),
                                    wasm_f32x4_mul(v1, wasm_v128_load(b1 + j)));
        v128_t p23 = wasm_f32x4_add(wasm_f32x4_mul(v2, wasm_v128_load(b2 + j)),
                                    wasm_f32x4_mul(v3, wasm_v128_load(b3 + j)));
        wasm_v128_store(acc + j, wasm_f32x4_add(wasm_v128_load(acc + j), wasm_f32x4_add(p01, p23)));
      }
      for (; j < n; j++) acc[j] += (a0 * b0[j] + a1 * b1[j]) + (a2 * b2[j] + a3 * b3[j]);
    }
    for (; k < K; k++) {
      float a = g->a[k];
      const float *b = g->B + k * ldb + jb;
      v128_t va = wasm_f32x4_splat(a);
      int64_t j = 0;
      for (; j < n4; j += 4)
        wasm_v128_store(acc + j, wasm_f32x4_add(wasm_v128_load(acc + j),
                                                wasm_f32x4_mul(va, wasm_v128_load(b + j))));
      for (; j < n; j++) acc[j] += a * b[j];
    }
    float *c = g->c + jb;
    for (int64_t j = 0; j < n; j++)
      c[j] = g->beta == 0.0f ? g->alpha * acc[j] : g->alpha * acc[j] + g->beta * c[j];
  }
}

/* <a, b>: eight partial sums as gemm_ref.c's dot_generic (two vectors),
 * added in its order */
static float dot_wasm(const float *a, const float *b, int64_t K) {
  v128_t s0 = wasm_f32x4_splat(0.0f), s1 = s0;
  int64_t k = 0;
  for (; k + 8 <= K; k += 8) {
    s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a + k), wasm_v128_load(b + k)));
    s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(wasm_v128_load(a + k + 4), wasm_v128_load(b + k + 4)));
  }
  float acc[8];
  wasm_v128_store(acc, s0);
  wasm_v128_store(acc + 4, s1);
  float sum = 0.0f;
  for (int i = 0; i < 8; i++) sum += acc[i];
  for (; k < K; k++) sum += a[k] * b[k];
  return sum;
}

/* ---- up to 4 rows against B packed whole in 8-column panels ---- */
/* One panel for M rows, M a constant at each call: with a run-time row count
 * the accumulators were an array indexed in the inner loop, kept on the
 * stack (a load and a store per step); unrolled over a constant M they stay
 * in registers. */
static inline __attribute__((always_inline)) void pgemv_panel(const pgemv_job *j, int64_t jr,
                                                              const int M) {
  const ox_sgemm_bpack *B = j->B;
  const int64_t KCB = B->kc;
  v128_t acc[4][2];
  for (int m = 0; m < 4; m++) acc[m][0] = acc[m][1] = wasm_f32x4_splat(0.0f);
  for (int64_t pc = 0; pc < B->K; pc += KCB) {
    int64_t kc = B->K - pc < KCB ? B->K - pc : KCB;
    const float *bp = B->data + pc * B->npad + jr * kc, *a = j->A + pc;
    for (int64_t k = 0; k < kc; k++, bp += 8) {
      v128_t b0 = wasm_v128_load(bp), b1 = wasm_v128_load(bp + 4);
      for (int m = 0; m < M; m++) {
        v128_t av = wasm_v128_load32_splat(a + m * j->lda + k);
        acc[m][0] = wasm_f32x4_add(acc[m][0], wasm_f32x4_mul(av, b0));
        acc[m][1] = wasm_f32x4_add(acc[m][1], wasm_f32x4_mul(av, b1));
      }
    }
  }
  int64_t n = B->N - jr < 8 ? B->N - jr : 8;
  for (int m = 0; m < M; m++) {
    float *c = j->C + m * j->ldc + jr;
    if (n == 8) {
      wasm_v128_store(c, acc[m][0]);
      wasm_v128_store(c + 4, acc[m][1]);
    } else {
      float row[8];
      wasm_v128_store(row, acc[m][0]);
      wasm_v128_store(row + 4, acc[m][1]);
      memcpy(c, row, (size_t)n * sizeof(float));
    }
  }
}

static void pgemv_wasm(const pgemv_job *j, int64_t p0, int64_t p1) {
  for (int64_t p = p0; p < p1; p++) switch (j->M) {
      case 1:
        pgemv_panel(j, p * 8, 1);
        break;
      case 2:
        pgemv_panel(j, p * 8, 2);
        break;
      case 3:
        pgemv_panel(j, p * 8, 3);
        break;
      case 4:
        pgemv_panel(j, p * 8, 4);
        break;
      default:
        return; /* 1 to 4 rows by the job's contract */
    }
}

/* ---- B read in place (a 1 x 1 convolution's input planes) ---- */
/* OX_GEMM_B_INPLACE with packed A: the 4 x 8 tiles read B's rows where
 * they lie (ldb apart) instead of a packed copy, and C is finished (+ bias,
 * then the epilogue) a block of columns at a time while it is in L2. The
 * portable path (gemm.c) packed all of B first, one copy of each element
 * for every 2 M flops (ResNet-50's 64-row 1 x 1 layer at 56 x 56 copied
 * 800 K values a run, SqueezeNet's 16-row squeezes 8 flops a copy), then
 * added the bias and ran the epilogue as two more passes over all of C
 * (3.2 MB in ResNet-50's first stage). Every tile forms its sums in the
 * portable order (the same depth blocks of A's packing, beta 1 after the
 * first), the last columns (fewer than 8) through a zero-padded panel and
 * the last rows through a scratch tile as gemm.c's edge tiles, the bias one
 * rounded add as gemm.c's add_row_bias and the epilogue element-wise: the
 * bits of the portable path. No prologue (gemm.c gives none to this level). */
enum { SB_BLOCK_BYTES = 256 * 1024 };

static void sb_rows_wasm(const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N,
                         const float *B, int64_t ldb, const float *bias, const ox_sgemm_epi *ep,
                         const ox_sgemm_pro *pro, float *C, int64_t ldc) {
  (void)pro;
  const int64_t K = A->K, KCB = A->kc, rows = m1 - m0;
  /* columns per block: C's block within SB_BLOCK_BYTES */
  int64_t nb = SB_BLOCK_BYTES / 4 / rows / 8 * 8;
  if (nb < 32) nb = 32;
  float edge[8 * OX_GEMM_KC_MAX], tile[4 * 8];
  for (int64_t j0 = 0; j0 < N; j0 += nb) {
    int64_t n = N - j0 < nb ? N - j0 : nb, n4 = n & ~(int64_t)3;
    for (int64_t pc = 0; pc < K; pc += KCB) {
      int64_t kc = K - pc < KCB ? K - pc : KCB;
      float beta = pc == 0 ? 0.0f : 1.0f;
      const float *apc = A->data + pc * A->Mpad;
      for (int64_t jr = j0; jr < j0 + n; jr += 8) {
        int64_t nn = j0 + n - jr < 8 ? j0 + n - jr : 8;
        const float *b = B + pc * ldb + jr;
        int64_t bs = ldb;
        if (nn < 8) { /* the last columns: a zero-padded panel */
          ox_gemm_pack_b_panels(8, false, B, ldb, pc, kc, jr, nn, edge);
          b = edge;
          bs = 8;
        }
        for (int64_t ir = m0; ir < m1; ir += 4) {
          int64_t m = m1 - ir < 4 ? m1 - ir : 4;
          const float *a = apc + ir * kc;
          float *c = C + ir * ldc + jr;
          if (m == 4 && nn == 8) {
            tile_4x8(kc, a, b, bs, c, ldc, 1.0f, beta);
            continue;
          }
          tile_4x8(kc, a, b, bs, tile, 8, 1.0f, 0.0f);
          for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
              float *cc = c + i * ldc + j, v = 1.0f * tile[i * 8 + j];
              *cc = beta == 0.0f ? v : v + beta * *cc;
            }
        }
      }
    }
    for (int64_t i = m0; bias && i < m1; i++) {
      float *c = C + i * ldc + j0;
      v128_t bv = wasm_f32x4_splat(bias[i]);
      int64_t j = 0;
      for (; j < n4; j += 4) wasm_v128_store(c + j, wasm_f32x4_add(wasm_v128_load(c + j), bv));
      for (; j < n; j++) c[j] += bias[i];
    }
    if (ep) {
      ox_sgemm_epi e = ox_sgemm_epi_at(ep, m0, j0);
      ox_sgemm_epi_apply(&e, rows, n, C + m0 * ldc + j0, ldc);
    }
  }
}

bool ox_gemm_fill_wasm(ox_gemm_table *t) {
  t->uk = (ukernel){4, 8, ukernel_wasm, "wasm"};
  t->sb_rows = sb_rows_wasm;
  t->gemv_rows = gemv_rows_wasm;
  t->dot = dot_wasm;
  t->pgemv = pgemv_wasm;
  return true;
}

#else
bool ox_gemm_fill_wasm(ox_gemm_table *t) {
  (void)t;
  return false;
}
#endif
