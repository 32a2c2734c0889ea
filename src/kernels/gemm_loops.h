/* gemm_loops.h - the float GEMM's loops that are the same C for every
 * instruction set: each per-level file (gemm_avx512.c, gemm_avx2.c,
 * gemm_ref.c) includes this header and instantiates them under its own
 * target attribute, so the compiler vectorises (and contracts) each for
 * that level; the dispatch table (gemm.c) picks one instance.
 *
 * The including file defines silu_row (x sigmoid(x) over a row) for its
 * level before any use of act_row. */
#ifndef OX_KERNELS_GEMM_LOOPS_H
#define OX_KERNELS_GEMM_LOOPS_H

#include <string.h>

#include "gemm_impl.h"
#include "vexp.h"

#define OX_PGEMV_BODY(NR)                                                                    \
  do {                                                                                       \
    const ox_sgemm_bpack *B = j->B;                                                          \
    int64_t M = j->M, KCB = B->kc;                                                           \
    for (int64_t p = p0; p < p1; p++) {                                                      \
      int64_t jr = p * (NR);                                                                 \
      float acc[4][NR];                                                                      \
      memset(acc, 0, sizeof acc);                                                            \
      for (int64_t pc = 0; pc < B->K; pc += KCB) {                                           \
        int64_t kc = B->K - pc < KCB ? B->K - pc : KCB;                                      \
        const float *bp = B->data + pc * B->npad + jr * kc;                                  \
        for (int64_t k = 0; k < kc; k++, bp += (NR))                                         \
          for (int64_t m = 0; m < M; m++) {                                                  \
            float a = j->A[m * j->lda + pc + k];                                             \
            for (int c = 0; c < (NR); c++) acc[m][c] += a * bp[c];                           \
          }                                                                                  \
      }                                                                                      \
      int64_t n = B->N - jr < (NR) ? B->N - jr : (NR);                                       \
      for (int64_t m = 0; m < M; m++) memcpy(j->C + m * j->ldc + jr, acc[m], (size_t)n * 4); \
    }                                                                                        \
  } while (0)

static void silu_row(float *c, int64_t n);

/* v = act(v) over one row (one loop per activation: vectorised; inlined
 * into each level's epilogue, as into the target clones it replaces) */
__attribute__((always_inline)) static inline void act_row(int act, float al, float be, float *c,
                                                          int64_t n) {
  const float zero = 0.0f, one = 1.0f;
  switch (act) {
    case OX_ACT_RELU:
      for (int64_t j = 0; j < n; j++) c[j] = c[j] > zero ? c[j] : zero;
      break;
    case OX_ACT_LEAKY:
      for (int64_t j = 0; j < n; j++) {
        float v = c[j], m = al * v;
        c[j] = v < zero ? m : v;
      }
      break;
    case OX_ACT_CLIP:
      for (int64_t j = 0; j < n; j++) {
        float v = c[j] < al ? al : c[j];
        c[j] = v > be ? be : v;
      }
      break;
    case OX_ACT_HSIGMOID:
      for (int64_t j = 0; j < n; j++) {
        float t = al * c[j] + be;
        t = t > one ? one : t;
        c[j] = t < zero ? zero : t;
      }
      break;
    case OX_ACT_HSWISH:
      for (int64_t j = 0; j < n; j++) {
        float v = c[j], t = v / 6.0f + 0.5f;
        t = t > one ? one : t;
        c[j] = v * (t < zero ? zero : t);
      }
      break;
    case OX_ACT_SILU:
      silu_row(c, n);
      break;
    default:
      break;
  }
}

/* The epilogue over a block; instantiated per level with the same target
 * as the activation operators' loops (src/ops), so that alpha * v + beta is
 * contracted the same way as theirs. */
__attribute__((always_inline)) static inline void epi_rows(const ox_sgemm_epi *ep, int64_t M,
                                                           int64_t N, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    float *ci = C + i * ldc;
    if (ep->res) {
      const float *ri = ep->res + i * ep->ldr;
      for (int64_t j = 0; j < N; j++) ci[j] += ri[j];
    }
    act_row(ep->act, ep->alpha, ep->beta, ci, N);
    float c = ep->bval;
    if (ep->bound == 1)
      for (int64_t j = 0; j < N; j++) {
        float v = ci[j], r = v > c ? v : c;
        ci[j] = v != v ? v : r;
      }
    else if (ep->bound == 2)
      for (int64_t j = 0; j < N; j++) {
        float v = ci[j], r = v < c ? v : c;
        ci[j] = v != v ? v : r;
      }
  }
}

#endif
