/* gemm.c - blocked SGEMM with packed panels: the family's dispatch table,
 * packing, the threaded driver, GEMV and the entry points of gemm.h. The
 * micro-kernels live per instruction set (gemm_avx512.c, gemm_avx2.c,
 * gemm_ref.c); the table below picks them once from the CPU probe.
 *
 * Loop nest (per task): columns in blocks of NC, depth in blocks of KC (B
 * block packed in NR-column panels), rows in blocks of MC (A block packed in
 * MR-row panels), then NR x MR micro-tiles. The micro-kernel keeps an MR x NR
 * tile of C in registers over kc steps and writes alpha * acc + beta * C. */
#include "gemm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../base/cpu.h"
#include "gemm_impl.h"
#include "split.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define OX_GEMM_X86 1
#include <immintrin.h>
#endif

/* ---- the dispatch table ---- */

/* Blocking per microarchitecture. Every row holds the values tuned on Zen 4
 * / Zen 5 today; a core that wants others (Intel's two 512-bit FMA ports
 * and larger L2, client cores' smaller one) gets its row here. kc at most
 * OX_GEMM_KC_MAX; mc a multiple of every mr (12, 6, 4). */
typedef struct gemm_blocking {
  int64_t kc, mc, nc, strip_min_rows, small_n, pb_mc_max, pb_c_bytes, pb_a_bytes, pb_grid_a_bytes;
} gemm_blocking;
#define OX_GEMM_BLOCKING_DEFAULT \
  { 384, 96, 768, 48, 128, 144, 384 * 1024, 1536 * 1024, 8 * 1024 * 1024 }
static const gemm_blocking k_blocking[] = {
    [OX_UARCH_GENERIC] = OX_GEMM_BLOCKING_DEFAULT,    [OX_UARCH_INTEL] = OX_GEMM_BLOCKING_DEFAULT,
    [OX_UARCH_INTEL_AVX2] = OX_GEMM_BLOCKING_DEFAULT, [OX_UARCH_ZEN2_3] = OX_GEMM_BLOCKING_DEFAULT,
    [OX_UARCH_ZEN4] = OX_GEMM_BLOCKING_DEFAULT,       [OX_UARCH_ZEN5] = OX_GEMM_BLOCKING_DEFAULT,
};

static ox_gemm_table g_table;
static pthread_once_t g_table_once = PTHREAD_ONCE_INIT;

static void table_fill(void) {
  const ox_cpu *c = ox_cpu_get();
  ox_gemm_table *t = &g_table;
  ox_gemm_fill_ref(t); /* every level starts portable; the faster replace what they have */
  if (c->isa >= OX_ISA_AVX512)
    ox_gemm_fill_avx512(t);
  else if (c->isa >= OX_ISA_AVX2 && c->fma)
    ox_gemm_fill_avx2(t);
  else if (c->simd128)
    ox_gemm_fill_wasm(t);
  size_t u = (size_t)c->uarch < sizeof k_blocking / sizeof *k_blocking ? (size_t)c->uarch : 0;
  const gemm_blocking *b = &k_blocking[u];
  t->kc = b->kc < OX_GEMM_KC_MAX ? b->kc : OX_GEMM_KC_MAX; /* the stack strips' size */
  t->mc = b->mc;
  t->nc = b->nc;
  t->strip_min_rows = b->strip_min_rows;
  t->small_n = b->small_n;
  t->pb_mc_max = b->pb_mc_max;
  t->pb_c_bytes = b->pb_c_bytes;
  t->pb_a_bytes = b->pb_a_bytes;
  t->pb_grid_a_bytes = b->pb_grid_a_bytes;
  /* a quarter of this core's L2 (the probe's, 1 MB when unknown) for a
   * block of B packed whole: that block and the next one being fetched
   * take half, A's block and C the rest */
  size_t l2 = c->l2 ? c->l2 : (size_t)1 << 20;
  if (l2 < ((size_t)256 << 10)) l2 = (size_t)256 << 10;
  if (l2 > ((size_t)4 << 20)) l2 = (size_t)4 << 20;
  t->pb_b_bytes = (int64_t)(l2 / 4);
}

const ox_gemm_table *ox_gemm_dispatch(void) {
  pthread_once(&g_table_once, table_fill);
  return &g_table;
}

ukernel ox_gemm_kernel(void) { return ox_gemm_dispatch()->uk; }

const char *ox_sgemm_isa(void) { return ox_gemm_dispatch()->uk.name; }

bool ox_sgemm_has_ua(void) { return ox_gemm_dispatch()->ua != NULL; }

/* ---- packing ---- */
/* Rows [i0, i0+mc) x depth [k0, k0+kc) of op(A) into MR-row panels: panel p
 * holds kc groups of MR values (rows past M are zero). */
void ox_gemm_pack_a(int mr, bool ta, const float *A, int64_t lda, int64_t M, int64_t i0, int64_t mc,
                    int64_t k0, int64_t kc, float *dst) {
  ox_gemm_pack12_fn pack12 = ox_gemm_dispatch()->pack_a12;
  for (int64_t p = 0; p < mc; p += mr) {
    int64_t rows = mc - p < mr ? mc - p : mr;
    float *d = dst + p * kc;
    if (i0 + p + rows > M) rows = M - (i0 + p);
    /* twelve-row panels belong to the AVX-512 kernel: its packing */
    if (!ta && mr == 12 && rows > 0 && pack12) {
      pack12(A + (i0 + p) * lda + k0, lda, kc, d, (int)rows);
      continue;
    }
    if (!ta) { /* read each row of A contiguously, write with stride mr */
      for (int64_t i = 0; i < rows; i++) {
        const float *s = A + (i0 + p + i) * lda + k0;
        for (int64_t k = 0; k < kc; k++) d[k * mr + i] = s[k];
      }
      for (int64_t i = rows; i < mr; i++)
        for (int64_t k = 0; k < kc; k++) d[k * mr + i] = 0.0f;
    } else {
      for (int64_t k = 0; k < kc; k++) {
        const float *s = A + (k0 + k) * lda + i0 + p;
        int64_t i = 0;
        for (; i < rows; i++) d[k * mr + i] = s[i];
        for (; i < mr; i++) d[k * mr + i] = 0.0f;
      }
    }
  }
}

gemm_panels ox_gemm_panels(const gemm_job *g, int64_t mc) {
  const int64_t mr = g->uk.mr;
  int64_t n = (mc + mr - 1) / mr;
  /* the any-shape tile stores straight into C but knows no alpha; A packed
   * once keeps its mr-row panels */
  if (n > 0 && mc % mr && g->t && g->t->gtile && mr == 12 && !g->pa && g->alpha == 1.0f)
    return (gemm_panels){n, mc / n, mc % n};
  return (gemm_panels){n, mr, 0};
}

void ox_gemm_pack_a_block(const gemm_job *g, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
                          float *dst) {
  const int mr = g->uk.mr;
  gemm_panels pp = ox_gemm_panels(g, mc);
  if (pp.base == mr) {
    ox_gemm_pack_a(mr, g->ta, g->A, g->lda, g->M, i0, pp.n * mr, k0, kc, dst);
    return;
  }
  for (int64_t p = 0; p < pp.n; p++) { /* one panel at a time, its rows past its own zero */
    int64_t r = ox_gemm_panel_row(pp, p), m = ox_gemm_panel_rows(pp, p, mc);
    ox_gemm_pack_a(mr, g->ta, g->A, g->lda, i0 + r + m, i0 + r, mr, k0, kc, dst + p * mr * kc);
  }
}

/* Columns [j0, j0+nc) x depth [k0, k0+kc) of op(B) into NR-column panels. */

void ox_gemm_pack_b_panels(int nr, bool tb, const f32_unaligned *B, int64_t ldb, int64_t k0,
                           int64_t kc, int64_t j0, int64_t nc, float *dst) {
  for (int64_t p = 0; p < nc; p += nr) {
    int64_t cols = nc - p < nr ? nc - p : nr;
    float *d = dst + p * kc;
    if (!tb) {
      const f32_unaligned *s = B + k0 * ldb + j0 + p;
      if (cols == nr) {
        for (int64_t k = 0; k < kc; k++, s += ldb, d += nr)
          memcpy(d, s, (size_t)nr * sizeof(float));
      } else {
        for (int64_t k = 0; k < kc; k++, s += ldb, d += nr) {
          int64_t j = 0;
          for (; j < cols; j++) d[j] = s[j];
          for (; j < nr; j++) d[j] = 0.0f;
        }
      }
    } else {
      for (int64_t j = 0; j < cols; j++) {
        const f32_unaligned *s = B + (j0 + p + j) * ldb + k0;
        for (int64_t k = 0; k < kc; k++) d[k * nr + j] = s[k];
      }
      for (int64_t j = cols; j < nr; j++)
        for (int64_t k = 0; k < kc; k++) d[k * nr + j] = 0.0f;
    }
  }
}

/* ---- the blocked product over rows [m0, m1) and columns [n0, n1) ---- */

static void gemm_naive(const gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  for (int64_t i = m0; i < m1; i++)
    for (int64_t j = n0; j < n1; j++) {
      double s = 0.0;
      for (int64_t k = 0; k < g->K; k++) {
        float a = g->ta ? g->A[k * g->lda + i] : g->A[i * g->lda + k];
        float b = g->tb ? g->B[j * g->ldb + k] : g->B[k * g->ldb + j];
        s += (double)a * (double)b;
      }
      float *c = g->C + i * g->ldc + j;
      *c = g->beta == 0.0f ? g->alpha * (float)s : g->alpha * (float)s + g->beta * *c;
    }
}

/* One tile: rows [0, m) of the packed A panel a by columns [0, n) of the B
 * panel bpan into C at c; edge tiles through the any-shape tile straight
 * into C where there is one (gtile: alpha 1), else through a scratch tile. */
static inline void macro_one(const gemm_job *g, ox_gemm_gtile_fn gtile, int64_t kc, const float *a,
                             const float *bpan, float *c, int64_t m, int64_t n, float beta) {
  const int mr = g->uk.mr, nr = g->uk.nr;
  if (m == mr && n == nr) {
    g->uk.fn(kc, a, bpan, c, g->ldc, g->alpha, beta);
    return;
  }
  if (gtile) { /* C = acc + beta * C, only the m x n elements touched */
    gtile(kc, a, bpan, nr, c, g->ldc, beta, NULL, NULL, (int)m, (int)n);
    return;
  }
  float tile[12 * 32];
  g->uk.fn(kc, a, bpan, tile, nr, 1.0f, 0.0f);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float *cc = c + i * g->ldc + j;
      float v = g->alpha * tile[i * nr + j];
      *cc = beta == 0.0f ? v : v + beta * *cc;
    }
}

/* B packed whole and its columns here more than pb_b_bytes (L2 / 4): in
 * blocks of columns that stay in L2, each row panel of A sweeps a whole
 * block (A's panel in L1, B's panels from L2; onnxruntime's MLAS walks its
 * packed B the same way), the next block fetched into L2 a share per tile,
 * and each tile's C lines fetched into L2 while it computes. Panel by
 * panel, C is written 12 rows at a time left to right. The other order
 * (every panel under one B panel, then the next) moves along all of A's
 * rows at once: 64 rows of a language model's head, 16 KB apart, each
 * taking two lines per step, more streams than the hardware prefetchers
 * follow, C's lines evicted by the B streaming through L2 in between.
 * That product ran 47 GFLOP/s on one Emerald Rapids core (onnxruntime 121)
 * against 190 on Zen 5; this order is 0-9 % faster on Zen 5 (one thread,
 * 64 x 256 x 4096 to 1500 x 384 x 1536). B still comes from memory once
 * per call (once per task on several threads). Every C element is summed
 * by the same tile calls as in the other order: the same bits. */
static void macro_pb_cols(const gemm_job *g, ox_gemm_gtile_fn gtile, gemm_panels pp,
                          const float *apan, const float *bblk, int64_t kc, int64_t mc, float *C,
                          int64_t nc, float beta, int64_t ncb) {
  const int mr = g->uk.mr, nr = g->uk.nr;
  for (int64_t jc = 0; jc < nc; jc += ncb) {
    int64_t nb = nc - jc < ncb ? nc - jc : ncb;
    int64_t nn = nc - jc - nb < ncb ? nc - jc - nb : ncb; /* the next block's columns */
    const char *next = nn > 0 ? (const char *)(bblk + (jc + nb) * kc) : NULL;
    int64_t lines = nn > 0 ? ((nn + nr - 1) / nr * nr * kc * 4 + 63) / 64 : 0;
    int64_t tiles = pp.n * ((nb + nr - 1) / nr), share = (lines + tiles - 1) / tiles, line = 0;
#ifndef OX_GEMM_X86
    (void)next;
    (void)share;
    (void)line;
#endif
    for (int64_t p = 0; p < pp.n; p++) {
      int64_t ir = ox_gemm_panel_row(pp, p), m = ox_gemm_panel_rows(pp, p, mc);
      const float *a = apan + p * mr * kc;
      for (int64_t jr = jc; jr < jc + nb; jr += nr) {
        int64_t n = nc - jr < nr ? nc - jr : nr;
        float *c = C + ir * g->ldc + jr;
#ifdef OX_GEMM_X86
        for (int64_t q = 0; q < share && line < lines; q++, line++)
          _mm_prefetch(next + line * 64, _MM_HINT_T1);
        /* the tile's C lines, into L2 while it computes */
        for (int64_t i = 0; i < m; i++) {
          _mm_prefetch((const char *)(c + i * g->ldc), _MM_HINT_T1);
          _mm_prefetch((const char *)(c + i * g->ldc + n - 1), _MM_HINT_T1);
          if (n > 16) _mm_prefetch((const char *)(c + i * g->ldc + 16), _MM_HINT_T1);
        }
#endif
        macro_one(g, gtile, kc, a, bblk + jr * kc, c, m, n, beta);
      }
    }
  }
}

/* Micro-kernel tiles over mc rows of packed A (apan, panels as
 * ox_gemm_panels) and nc columns of packed B (panels of kc x nr from bblk)
 * into C (row stride ldc). */
void ox_gemm_macro_tile(const gemm_job *g, const float *apan, const float *bblk, int64_t kc,
                        int64_t mc, float *C, int64_t nc, float beta) {
  const int mr = g->uk.mr, nr = g->uk.nr;
  gemm_panels pp = ox_gemm_panels(g, mc);
  ox_gemm_gtile_fn gtile = g->t && mr == 12 && nr == 32 && g->alpha == 1.0f ? g->t->gtile : NULL;
  if (g->bpre && g->t && pp.n > 1) {
    int64_t ncb = g->t->pb_b_bytes / (kc * 4) / nr * nr;
    if (ncb < 4 * nr) ncb = 4 * nr;
    if (nc > ncb) { /* blocks of equal whole panels: 768 as 384 + 384, not 672 + 96 */
      int64_t nblk = (nc + ncb - 1) / ncb, panels = (nc + nr - 1) / nr;
      ncb = (panels + nblk - 1) / nblk * nr;
      macro_pb_cols(g, gtile, pp, apan, bblk, kc, mc, C, nc, beta, ncb);
      return;
    }
  }
  int64_t tiles = pp.n;
  for (int64_t jr = 0; jr < nc; jr += nr) {
    int64_t n = nc - jr < nr ? nc - jr : nr;
    const float *bpan = bblk + jr * kc;
    /* a B packed whole comes from memory: the next panel is fetched into
     * L2 a share per tile while this one computes */
    const char *next = g->bpre && jr + nr < nc ? (const char *)(bpan + (int64_t)nr * kc) : NULL;
    int64_t share = next ? ((int64_t)nr * kc * 4 / 64 + tiles - 1) / tiles : 0;
#ifndef OX_GEMM_X86
    (void)share; /* the prefetch below is x86's */
#endif
    for (int64_t p = 0; p < pp.n; p++) {
      int64_t ir = ox_gemm_panel_row(pp, p), m = ox_gemm_panel_rows(pp, p, mc);
#ifdef OX_GEMM_X86
      for (int64_t q = 0; q < share; q++) {
        int64_t line = p * share + q;
        if (line * 64 < (int64_t)nr * kc * 4) _mm_prefetch(next + line * 64, _MM_HINT_T1);
      }
#endif
      macro_one(g, gtile, kc, apan + p * mr * kc, bpan, C + ir * g->ldc + jr, m, n, beta);
    }
  }
}

void ox_gemm_block(const gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const int mr = g->uk.mr, nr = g->uk.nr;
  const int64_t kc_blk = g->t->kc, mc_blk = g->t->mc, nc_blk = g->t->nc;
  int64_t ncb = n1 - n0 < nc_blk ? n1 - n0 : nc_blk;
  int64_t ncb_pad = (ncb + nr - 1) / nr * nr;
  int64_t kcb = g->K < kc_blk ? g->K : kc_blk;
  /* the thread's scratch (slots 0 and 1): buffers allocated per call were
   * faulted in anew on every run */
  float *bp = g->bpre ? NULL : ox_scratch(0, (size_t)(ncb_pad * kcb * 4));
  float *ap = g->pa ? NULL : ox_scratch(1, (size_t)(mc_blk * kcb * 4));
  if ((!g->bpre && !bp) || (!g->pa && !ap)) {
    if (g->bpre) { /* A is plain here (B pre-packed): compute from B's panels */
      for (int64_t i = m0; i < m1; i++)
        for (int64_t j = n0; j < n1; j++) {
          double s = 0.0;
          for (int64_t pc = 0; pc < g->K; pc += kc_blk) {
            int64_t kc = g->K - pc < kc_blk ? g->K - pc : kc_blk;
            const float *pan = g->bpre + pc * g->bpre_npad + (j / nr) * nr * kc + j % nr;
            for (int64_t k = 0; k < kc; k++)
              s += (double)g->A[i * g->lda + pc + k] * (double)pan[k * nr];
          }
          g->C[i * g->ldc + j] = (float)s;
        }
      return;
    }
    if (g->pa) { /* cannot fall back without the raw A: compute from the panels */
      for (int64_t i = m0; i < m1; i++)
        for (int64_t j = n0; j < n1; j++) {
          double s = 0.0;
          for (int64_t pc = 0; pc < g->K; pc += kc_blk) {
            int64_t kc = g->K - pc < kc_blk ? g->K - pc : kc_blk;
            const float *pan = g->pa->data + pc * g->pa->Mpad + (i / mr) * mr * kc;
            for (int64_t k = 0; k < kc; k++) {
              float b = g->tb ? g->B[j * g->ldb + pc + k] : g->B[(pc + k) * g->ldb + j];
              s += (double)pan[k * mr + i % mr] * (double)b;
            }
          }
          float *c = g->C + i * g->ldc + j;
          *c = g->beta == 0.0f ? g->alpha * (float)s : g->alpha * (float)s + g->beta * *c;
        }
      return;
    }
    gemm_naive(g, m0, m1, n0, n1);
    return;
  }
  for (int64_t jc = n0; jc < n1; jc += nc_blk) {
    int64_t nc = n1 - jc < nc_blk ? n1 - jc : nc_blk;
    for (int64_t pc = 0; pc < g->K; pc += kc_blk) {
      int64_t kc = g->K - pc < kc_blk ? g->K - pc : kc_blk;
      float beta = pc == 0 ? g->beta : 1.0f;
      const float *bblk = bp;
      if (g->bpre) /* block pc starts at pc * npad, panel of column jc at jc * kc */
        bblk = g->bpre + pc * g->bpre_npad + jc * kc;
      else
        ox_gemm_pack_b_panels(nr, g->tb, g->B, g->ldb, pc, kc, jc, nc, bp);
      for (int64_t ic = m0; ic < m1; ic += mc_blk) {
        int64_t mc = m1 - ic < mc_blk ? m1 - ic : mc_blk;
        const float *apan;
        if (g->pa)
          apan = g->pa->data + pc * g->pa->Mpad + ic * kc;
        else {
          ox_gemm_pack_a_block(g, ic, mc, pc, kc, ap);
          apan = ap;
        }
        ox_gemm_macro_tile(g, apan, bblk, kc, mc, g->C + ic * g->ldc + jc, nc, beta);
      }
    }
  }
}

static void gemm_task(void *arg, int64_t t0, int64_t t1) {
  const gemm_job *g = arg;
  void (*block)(const gemm_job *, int64_t, int64_t, int64_t, int64_t) =
      g->bpre ? ox_gemm_block_pb : ox_gemm_block;
  for (int64_t t = t0; t < t1; t++) {
    int64_t r = t / g->ntn, c = t % g->ntn, nr = g->uk.nr;
    int64_t mu = (g->M + g->mscale - 1) / g->mscale, ntl = (g->N + nr - 1) / nr;
    int64_t m0 = ox_gemm_part(mu, g->mparts, r) * g->mscale;
    int64_t m1 = ox_gemm_part(mu, g->mparts, r + 1) * g->mscale;
    int64_t n0 = ox_gemm_part(ntl, g->ntn, c) * nr, n1 = ox_gemm_part(ntl, g->ntn, c + 1) * nr;
    if (m1 > g->M) m1 = g->M;
    if (n1 > g->N) n1 = g->N;
    if (m0 < m1 && n0 < n1) block(g, m0, m1, n0, n1);
  }
}

/* beta * C for the degenerate K == 0 product. */
static void scale_c(int64_t M, int64_t N, float beta, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    float *c = C + i * ldc;
    if (beta == 0.0f)
      memset(c, 0, (size_t)N * sizeof(float));
    else
      for (int64_t j = 0; j < N; j++) c[j] *= beta;
  }
}

/* C[i, :] += bias[i] (bias may be NULL). */
static void add_row_bias(int64_t M, int64_t N, const float *bias, float *C, int64_t ldc) {
  if (!bias) return;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) C[i * ldc + j] += bias[i];
}

/* Row vector times matrix (M == 1, B not transposed): c = alpha * a B + beta c,
 * accumulated over rows of B so the inner loop is contiguous. */
typedef struct dot_job {
  int64_t K, ldb, N, chunk;
  float alpha, beta;
  const float *a, *B;
  float *c;
} dot_job;

static void dot_task(void *arg, int64_t t0, int64_t t1) {
  const dot_job *g = arg;
  int64_t j0 = t0 * g->chunk, j1 = t1 * g->chunk < g->N ? t1 * g->chunk : g->N;
  const ox_gemm_table *t = ox_gemm_dispatch();
  for (int64_t j = j0; j < j1;) {
    float d[OX_GEMM_DOT_ROWS];
    int n = 1;
    if (t->dotn && j + OX_GEMM_DOT_ROWS <= j1) {
      t->dotn(g->a, g->B + j * g->ldb, g->ldb, g->K, d);
      n = OX_GEMM_DOT_ROWS;
    } else {
      d[0] = t->dot(g->a, g->B + j * g->ldb, g->K);
    }
    for (int r = 0; r < n; r++, j++)
      g->c[j] = g->beta == 0.0f ? g->alpha * d[r] : g->alpha * d[r] + g->beta * g->c[j];
  }
}

static void gemv_task(void *arg, int64_t t0, int64_t t1) {
  const gemv_job *g = arg;
  int64_t j0 = t0 * g->chunk, j1 = t1 * g->chunk < g->N ? t1 * g->chunk : g->N;
  if (j0 >= j1) return;
  ox_gemm_dispatch()->gemv_rows(g, j0, j1);
}

/* Tasks for a vector product over N outputs (one task per thread). */
static int64_t vec_chunks(ox_thread_pool *pool, int64_t N, int64_t K, int64_t *chunk) {
  int nt = pool ? ox_thread_pool_size(pool) : 1;
  if (nt < 1 || (double)N * (double)K < 1.0e5) nt = 1;
  *chunk = ((N + nt - 1) / nt + 15) / 16 * 16;
  return (N + *chunk - 1) / *chunk;
}

/* ---- the split over threads ---- */

/* The planner's view of one product (split.c): units of rows (rows, or
 * whole tiles where A is packed once in mr-row panels) by column panels. */
typedef struct grid_plan {
  const gemm_job *g;
  int64_t units, scale, ntl;
  int nt;
  bool room, a_shared; /* a_shared: A packed once for every task */
} grid_plan;

/* The estimated time of one task of a_per row units by b_per column
 * panels, in multiply-adds: its product with rows as the tiles pay for
 * them (panels of even height below 6 rows bound by the sums' latency,
 * or whole mr-row tiles), its packing of A unless shared, its streaming of
 * B once per block of rows (and its packing unless B is packed whole), a
 * fixed cost per task. An element moved counts as OX_GEMM_MOVE_COST: the
 * copies run at memory speed. A split that breaks the rules (tasks under
 * OX_GEMM_MIN_TASK when there are more than threads; fewer than two per
 * thread where the work has room for three of that size) costs more than
 * any that keeps them. */
static double grid_task_cost(const void *ctx, int64_t panels, int64_t units) {
  const grid_plan *p = ctx;
  const gemm_job *g = p->g;
  int64_t rows = units * p->scale < g->M ? units * p->scale : g->M, cols = panels * g->uk.nr;
  int64_t tasks = (p->units + units - 1) / units * ((p->ntl + panels - 1) / panels);
  double K = (double)g->K, work = (double)rows * (double)cols * K;
  if ((tasks > p->nt && work < OX_GEMM_MIN_TASK) || (p->room && tasks < 2 * (int64_t)p->nt))
    return 1e30;
  gemm_panels pp = ox_gemm_panels(g, rows);
  double eff = 0.0;
  for (int64_t q = 0; q < pp.n; q++) {
    int64_t h = pp.base == g->uk.mr ? g->uk.mr : ox_gemm_panel_rows(pp, q, rows);
    eff += (double)(h < 6 && h < g->uk.mr ? 6 : h);
  }
  int64_t mc = g->bpre ? g->t->pb_mc_max : g->t->mc;
  double passes = p->a_shared ? 1.0 : (double)((rows + mc - 1) / mc);
  return eff * (double)cols * K + (p->a_shared ? 0.0 : OX_GEMM_MOVE_COST * (double)rows * K) +
         OX_GEMM_MOVE_COST * (double)cols * K * (passes + (g->bpre ? 0.0 : 1.0)) +
         OX_GEMM_TASK_COST;
}

void ox_gemm_grid(const gemm_job *g, int nt, int64_t units, int64_t scale, int64_t max_per,
                  bool a_shared, int64_t *rparts, int64_t *cparts) {
  int64_t ntl = (g->N + g->uk.nr - 1) / g->uk.nr;
  double total = (double)g->M * (double)g->N * (double)g->K;
  grid_plan p = {
      .g = g, .units = units, .scale = scale, .ntl = ntl, .nt = nt, .a_shared = a_shared};
  p.room = total >= 3.0 * nt * OX_GEMM_MIN_TASK && 2 * (int64_t)nt <= units * ntl;
  /* split.c's A: the column panels, its B: the row units (a bound per task) */
  ox_split sp = ox_split_plan(nt, 1, ntl, ntl, units, max_per, grid_task_cost, &p);
  *rparts = sp.b_parts;
  *cparts = sp.a_parts;
}

void ox_gemm_plan(gemm_job *g, int nt) {
  if (!g->t) g->t = ox_gemm_dispatch();
  if (nt < 1 || 2.0 * (double)g->M * (double)g->N * (double)g->K < 2.0e6) nt = 1;
  /* rows in even parts (a 50-row product on 16 threads was cut 36 + 14),
   * whole tiles where A is packed once (its panels are mr rows) */
  g->mscale = g->pa ? g->uk.mr : 1;
  int64_t units = (g->M + g->mscale - 1) / g->mscale;
  g->mparts = g->ntn = 1;
  if (nt > 1) ox_gemm_grid(g, nt, units, g->mscale, units, false, &g->mparts, &g->ntn);
  g->ntasks = g->mparts * g->ntn;
}

/* Splits C into a grid of blocks for the pool's threads (ox_gemm_plan) and
 * runs them: a product of few rows (a transformer's 64 tokens) still keeps
 * every thread busy (columns alone would give some threads nothing: 768
 * columns are 24 tiles of 32) and a tall one is not cut into slivers that
 * each pack all of A. */
void ox_gemm_run(gemm_job *g, ox_thread_pool *pool) {
  ox_gemm_plan(g, pool ? ox_thread_pool_size(pool) : 1);
  if (g->ntasks <= 1)
    gemm_task(g, 0, g->ntasks);
  else
    ox_parallel_for(pool, g->ntasks, 1, gemm_task, g);
}

static void sgemm_plain(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                        const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                        float *C, int64_t ldc, ox_thread_pool *pool) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.0f) {
    scale_c(M, N, beta, C, ldc);
    return;
  }
  /* a few rows: one vector product per row of op(A) (B streamed once per row) */
  if (M <= 4) {
    float *abuf = NULL;
    if (trans_a && lda != 1) {
      abuf = malloc((size_t)K * sizeof(float));
      if (!abuf) goto blocked;
    }
    for (int64_t i = 0; i < M; i++) {
      const float *a = A + (trans_a ? i : i * lda);
      if (abuf) {
        for (int64_t k = 0; k < K; k++) abuf[k] = A[k * lda + i];
        a = abuf;
      }
      int64_t chunk, ntasks = vec_chunks(pool, N, K, &chunk);
      if (!trans_b) {
        gemv_job v = {K, ldb, alpha, beta, a, B, C + i * ldc, chunk, N};
        if (ntasks <= 1)
          gemv_task(&v, 0, 1);
        else
          ox_parallel_for(pool, ntasks, 1, gemv_task, &v);
      } else {
        dot_job v = {K, ldb, N, chunk, alpha, beta, a, B, C + i * ldc};
        if (ntasks <= 1)
          dot_task(&v, 0, 1);
        else
          ox_parallel_for(pool, ntasks, 1, dot_task, &v);
      }
    }
    free(abuf);
    return;
  }
blocked:;
  gemm_job g = {
      ox_gemm_kernel(), trans_a, trans_b, M, N, K, lda, ldb, ldc, alpha, beta, A, B, C, NULL};
  ox_gemm_run(&g, pool);
}

ox_sgemm_packed *ox_sgemm_packed_alloc(int64_t M, int64_t K, ox_err *e) {
  ukernel uk = ox_gemm_kernel();
  ox_sgemm_packed *p = calloc(1, sizeof *p);
  if (!p) {
    ox_err_set(e, OX_ENOMEM, "out of memory packing a %lld x %lld matrix", (long long)M,
               (long long)K);
    return NULL;
  }
  p->M = M;
  p->K = K;
  p->mr = uk.mr;
  p->nr = uk.nr;
  p->kc = ox_gemm_dispatch()->kc;
  p->Mpad = (M + uk.mr - 1) / uk.mr * uk.mr;
  size_t n;
  if (M < 0 || K < 0 || !ox_mul_size((size_t)p->Mpad, (size_t)(K > 0 ? K : 1), &n) ||
      !ox_mul_size(n, sizeof(float), &n) || !(p->data = aligned_alloc(64, (n + 63) / 64 * 64))) {
    free(p);
    ox_err_set(e, OX_ENOMEM, "out of memory packing a %lld x %lld matrix", (long long)M,
               (long long)K);
    return NULL;
  }
  return p;
}

int ox_sgemm_packed_mr(const ox_sgemm_packed *p) { return p->mr; }

void ox_sgemm_packed_fill(ox_sgemm_packed *p, int64_t m0, int64_t m1, const float *A, int64_t lda) {
  if (m0 < 0 || m1 > p->M || m0 >= m1 || m0 % p->mr) return;
  int64_t rows = m1 - m0, mc = (rows + p->mr - 1) / p->mr * p->mr, KCB = p->kc;
  for (int64_t pc = 0; pc < p->K; pc += KCB) {
    int64_t kc = p->K - pc < KCB ? p->K - pc : KCB;
    ox_gemm_pack_a(p->mr, false, A, lda, rows, 0, mc, pc, kc, p->data + pc * p->Mpad + m0 * kc);
  }
}

ox_sgemm_packed *ox_sgemm_pack_a(bool trans_a, int64_t M, int64_t K, const float *A, int64_t lda,
                                 ox_err *e) {
  ox_sgemm_packed *p = ox_sgemm_packed_alloc(M, K, e);
  if (!p) return NULL;
  for (int64_t pc = 0; pc < K; pc += p->kc) {
    int64_t kc = K - pc < p->kc ? K - pc : p->kc;
    ox_gemm_pack_a(p->mr, trans_a, A, lda, M, 0, p->Mpad, pc, kc, p->data + pc * p->Mpad);
  }
  return p;
}

void ox_sgemm_packed_free(ox_sgemm_packed *p) {
  if (!p) return;
  free(p->data);
  free(p);
}

int64_t ox_sgemm_packed_rows(const ox_sgemm_packed *p) { return p->M; }
int64_t ox_sgemm_packed_depth(const ox_sgemm_packed *p) { return p->K; }

static void sgemm_pa(const ox_sgemm_packed *A, bool trans_b, int64_t N, float alpha, const float *B,
                     int64_t ldb, float beta, float *C, int64_t ldc, ox_thread_pool *pool) {
  if (A->M <= 0 || N <= 0) return;
  if (A->K <= 0 || alpha == 0.0f) {
    scale_c(A->M, N, beta, C, ldc);
    return;
  }
  ukernel uk = ox_gemm_kernel();
  gemm_job g = {uk, false, trans_b, A->M, N, A->K, 0, ldb, ldc, alpha, beta, NULL, B, C, A};
  ox_gemm_run(&g, pool);
}

int ox_sgemm_nr(void) { return ox_gemm_kernel().nr; }
int64_t ox_sgemm_kc(void) { return ox_gemm_dispatch()->kc; }

size_t ox_sgemm_packed_b_floats(int64_t K, int64_t N) {
  int nr = ox_sgemm_nr();
  int64_t npad = (N + nr - 1) / nr * nr;
  return (size_t)(npad * (K > 0 ? K : 1));
}

static void sgemm_pa_pb(const ox_sgemm_packed *A, int64_t N, const float *Bp, float beta, float *C,
                        int64_t ldc) {
  if (A->M <= 0 || N <= 0) return;
  if (A->K <= 0) {
    scale_c(A->M, N, beta, C, ldc);
    return;
  }
  const ox_gemm_table *t = ox_gemm_dispatch();
  ukernel uk = t->uk;
  const int mr = uk.mr, nr = uk.nr;
  const int64_t kc_blk = A->kc, mc_blk = t->mc;
  int64_t npad = (N + nr - 1) / nr * nr;
  float tile[12 * 32];
  for (int64_t pc = 0; pc < A->K; pc += kc_blk) {
    int64_t kc = A->K - pc < kc_blk ? A->K - pc : kc_blk;
    float bt = pc == 0 ? beta : 1.0f;
    const float *bblock = Bp + pc * npad;
    for (int64_t ic = 0; ic < A->M; ic += mc_blk) {
      int64_t mc = A->M - ic < mc_blk ? A->M - ic : mc_blk;
      const float *apan = A->data + pc * A->Mpad + ic * kc;
      for (int64_t jr = 0; jr < N; jr += nr) {
        int64_t n = N - jr < nr ? N - jr : nr;
        const float *bpan = bblock + jr * kc;
        for (int64_t ir = 0; ir < mc; ir += mr) {
          int64_t m = mc - ir < mr ? mc - ir : mr;
          float *c = C + (ic + ir) * ldc + jr;
          if (m == mr && n == nr) {
            uk.fn(kc, apan + ir * kc, bpan, c, ldc, 1.0f, bt);
          } else if (t->gtile) {
            t->gtile(kc, apan + ir * kc, bpan, nr, c, ldc, bt, NULL, NULL, (int)m, (int)n);
          } else {
            uk.fn(kc, apan + ir * kc, bpan, tile, nr, 1.0f, 0.0f);
            for (int64_t i = 0; i < m; i++)
              for (int64_t j = 0; j < n; j++) {
                float *cc = c + i * ldc + j;
                *cc = bt == 0.0f ? tile[i * nr + j] : tile[i * nr + j] + bt * *cc;
              }
          }
        }
      }
    }
  }
}

static void sgemm_ua_pb(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                        const float *Bp, float beta, float *C, int64_t ldc) {
  const ox_gemm_table *t = ox_gemm_dispatch();
  if (!t->ua) return; /* only where ox_sgemm_has_ua() */
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    scale_c(M, N, beta, C, ldc);
    return;
  }
  ukernel uk = t->uk;
  const int mr = uk.mr, nr = uk.nr;
  const int64_t kc_blk = t->kc;
  int64_t npad = (N + nr - 1) / nr * nr;
  float tile[12 * 32], edge[12 * OX_GEMM_KC_MAX];
  int64_t Mfull = M / mr * mr;
  for (int64_t pc = 0; pc < K; pc += kc_blk) {
    int64_t kc = K - pc < kc_blk ? K - pc : kc_blk;
    float bt = pc == 0 ? beta : 1.0f;
    const float *bblock = Bp + pc * npad;
    if (Mfull < M) ox_gemm_pack_a(mr, false, A, lda, M, Mfull, mr, pc, kc, edge);
    for (int64_t jr = 0; jr < N; jr += nr) {
      int64_t n = N - jr < nr ? N - jr : nr;
      const float *bpan = bblock + jr * kc;
      for (int64_t ir = 0; ir < M; ir += mr) {
        int64_t m = M - ir < mr ? M - ir : mr;
        float *c = C + ir * ldc + jr;
        if (m == mr && n == nr) {
          t->ua(kc, A + ir * lda + pc, lda, bpan, c, ldc, bt);
          continue;
        }
        if (m == mr)
          t->ua(kc, A + ir * lda + pc, lda, bpan, tile, nr, 0.0f);
        else
          uk.fn(kc, edge, bpan, tile, nr, 1.0f, 0.0f);
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++) {
            float *cc = c + i * ldc + j;
            *cc = bt == 0.0f ? tile[i * nr + j] : tile[i * nr + j] + bt * *cc;
          }
      }
    }
  }
}

void ox_sgemm_epi_apply(const ox_sgemm_epi *ep, int64_t M, int64_t N, float *C, int64_t ldc) {
  if (!ep || (!ep->res && ep->act == OX_ACT_NONE && !ep->bound)) return;
  ox_gemm_dispatch()->epi(ep, M, N, C, ldc);
}

ox_sgemm_epi ox_sgemm_epi_at(const ox_sgemm_epi *ep, int64_t i, int64_t j) {
  ox_sgemm_epi r = *ep;
  if (r.res) r.res += i * r.ldr + j;
  return r;
}

/* NULL when the epilogue does nothing. */
static const ox_sgemm_epi *epi_active(const ox_sgemm_epi *ep) {
  return ep && (ep->res || ep->act != OX_ACT_NONE || ep->bound) ? ep : NULL;
}

static bool sgemm_sb_rows(const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N,
                          const float *B, int64_t ldb, const float *bias, const ox_sgemm_epi *ep,
                          const ox_sgemm_pro *pro, float *C, int64_t ldc) {
  ep = epi_active(ep);
  const ox_gemm_table *t = ox_gemm_dispatch();
  if (m0 < 0 || m1 > A->M || m0 % 12) return false;
  if (m1 <= m0 || N <= 0) return true;
  /* the level's own (AVX-512's 12-row tiles, SIMD128's 4 x 8 without a prologue) */
  if (A->K > 0 && t->sb_rows && A->mr == t->uk.mr && (A->mr == 12 || !pro)) {
    t->sb_rows(A, m0, m1, N, B, ldb, bias, ep, pro, C, ldc);
    return true;
  }
  if (m0 != 0 || m1 != A->M || pro) return false; /* row ranges, prologues: 12-row tiles only */
  if (A->M <= 0 || N <= 0) return true;
  sgemm_pa(A, false, N, 1.0f, B, ldb, 0.0f, C, ldc, NULL);
  add_row_bias(A->M, N, bias, C, ldc);
  ox_sgemm_epi_apply(ep, A->M, N, C, ldc);
  return true;
}

static bool sgemm_strips_rows(const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N,
                              ox_sgemm_strip_fn strip, void *ctx, const float *bias,
                              const ox_sgemm_epi *ep, float *C, int64_t ldc) {
  ep = epi_active(ep);
  const ox_gemm_table *t = ox_gemm_dispatch();
  if (A->mr != 12 || !t->strips_rows || m0 < 0 || m1 > A->M || m0 % 12) return false;
  if (m1 <= m0 || N <= 0) return true;
  if (A->K <= 0) {
    ox_sgemm_epi te = ep ? ox_sgemm_epi_at(ep, m0, 0) : (ox_sgemm_epi){0};
    scale_c(m1 - m0, N, 0.0f, C + m0 * ldc, ldc);
    add_row_bias(m1 - m0, N, bias ? bias + m0 : NULL, C + m0 * ldc, ldc);
    ox_sgemm_epi_apply(ep ? &te : NULL, m1 - m0, N, C + m0 * ldc, ldc);
    return true;
  }
  t->strips_rows(A, m0, m1, N, strip, ctx, bias, ep, C, ldc);
  return true;
}

bool ox_gemm(const ox_gemm_desc *d) {
  switch (d->b) {
    case OX_GEMM_B_PLAIN:
      if (d->pa)
        sgemm_pa(d->pa, d->trans_b, d->N, d->alpha, d->B, d->ldb, d->beta, d->C, d->ldc, d->pool);
      else
        sgemm_plain(d->trans_a, d->trans_b, d->M, d->N, d->K, d->alpha, d->A, d->lda, d->B, d->ldb,
                    d->beta, d->C, d->ldc, d->pool);
      return true;
    case OX_GEMM_B_PANELS:
      if (d->pa)
        sgemm_pa_pb(d->pa, d->N, d->B, d->beta, d->C, d->ldc);
      else
        sgemm_ua_pb(d->M, d->N, d->K, d->A, d->lda, d->B, d->beta, d->C, d->ldc);
      return true;
    case OX_GEMM_B_INPLACE:
      return sgemm_sb_rows(d->pa, d->rows ? d->m0 : 0, d->rows ? d->m1 : d->pa->M, d->N, d->B,
                           d->ldb, d->bias, d->ep, d->pro, d->C, d->ldc);
    case OX_GEMM_B_STRIPS:
      return sgemm_strips_rows(d->pa, d->rows ? d->m0 : 0, d->rows ? d->m1 : d->pa->M, d->N,
                               d->strip, d->strip_ctx, d->bias, d->ep, d->C, d->ldc);
    case OX_GEMM_B_WHOLE:
      ox_gemm_pb_run(d->M, d->A, d->lda, d->bp, d->C, d->ldc, d->pool, d->post, d->post_ctx);
      return true;
  }
  return false;
}
