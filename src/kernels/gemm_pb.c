/* gemm_pb.c - float products by a B packed whole once (a MatMul by a
 * constant weight, see gemm.h): the packing, one to four rows streaming the
 * panels (decode), more rows through the blocked GEMM of gemm.c. */
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "gemm_impl.h"

/* The blocking (the table's, gemm_impl.h): pb_mc_max, the most rows of A
 * packed at once with B packed whole (ox_gemm_block_pb); pb_c_bytes and
 * pb_a_bytes, below. */

/* More than one depth block and more columns than keep C in L2: with the
 * depth blocks outermost, every block after the first read C back from
 * memory (a language model's head, 128 x 50257 floats, three passes of 26
 * MB). Here all of A is packed first (when it is small), then columns go
 * in blocks whose C stays in L2 through every depth block. false: not
 * taken (C fits anyway, A too large, no memory): C of at most pb_c_bytes
 * per column block, A of at most pb_a_bytes packed whole. */

static bool gemm_block_pb_cols(const gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1,
                               int64_t nblk, int64_t mcb) {
  const int nr = g->uk.nr;
  const int64_t kc_blk = g->t->kc, pb_c_bytes = g->t->pb_c_bytes, pb_a_bytes = g->t->pb_a_bytes;
  int64_t rows = m1 - m0, ncb = pb_c_bytes / (rows * 4) / nr * nr;
  if (ncb < 2 * nr) ncb = 2 * nr;
  size_t whole = (size_t)(nblk * mcb) * (size_t)g->K;
  if (n1 - n0 <= ncb || whole * 4 > (size_t)pb_a_bytes) return false;
  float *aw = ox_scratch(1, whole * 4);
  if (!aw) return false;
  /* block (pc, b): at pc * nblk * mcb (pc counts A's columns) + b * mcb * kc */
  for (int64_t pc = 0; pc < g->K; pc += kc_blk) {
    int64_t kc = g->K - pc < kc_blk ? g->K - pc : kc_blk;
    for (int64_t ic = m0, b = 0; ic < m1; ic += mcb, b++) {
      int64_t mc = m1 - ic < mcb ? m1 - ic : mcb;
      ox_gemm_pack_a_block(g, ic, mc, pc, kc, aw + pc * nblk * mcb + b * mcb * kc);
    }
  }
  for (int64_t jc = n0; jc < n1; jc += ncb) {
    int64_t nc = n1 - jc < ncb ? n1 - jc : ncb;
    for (int64_t pc = 0; pc < g->K; pc += kc_blk) {
      int64_t kc = g->K - pc < kc_blk ? g->K - pc : kc_blk;
      float beta = pc == 0 ? g->beta : 1.0f;
      bool last = pc + kc >= g->K;
      for (int64_t ic = m0, b = 0; ic < m1; ic += mcb, b++) {
        int64_t mc = m1 - ic < mcb ? m1 - ic : mcb;
        ox_gemm_macro_tile(g, aw + pc * nblk * mcb + b * mcb * kc,
                           g->bpre + pc * g->bpre_npad + jc * kc, kc, mc, g->C + ic * g->ldc + jc,
                           nc, beta);
        if (last && g->post) g->post(g->post_ctx, ic, ic + mc, jc, jc + nc);
      }
    }
  }
  return true;
}

/* gemm_block for B packed whole (OX_GEMM_B_WHOLE): each A panel block is packed
 * once and used for every column of the task (with B packed per call, the
 * column loop is outside and A would be packed again per column block). */
void ox_gemm_block_pb(const gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const int mr = g->uk.mr;
  const int64_t kc_blk = g->t->kc, pb_mc_max = g->t->pb_mc_max;
  int64_t kcb = g->K < kc_blk ? g->K : kc_blk;
  /* rows in equal blocks of at most pb_mc_max: every block streams all of
   * B's columns again, so 128 rows as 96 + 32 paid a whole pass of B for
   * 32 rows (a transformer's 128 tokens ran its projections at 76-83% of
   * the FMA peak, one block of 128 at 87-90%) */
  int64_t nblk = (m1 - m0 + pb_mc_max - 1) / pb_mc_max;
  int64_t mcb = (m1 - m0 + nblk - 1) / nblk;
  mcb = (mcb + mr - 1) / mr * mr;
  if (g->K > kc_blk && gemm_block_pb_cols(g, m0, m1, n0, n1, nblk, mcb)) return;
  float *ap = ox_scratch(1, (size_t)(pb_mc_max * kcb * 4));
  if (!ap) {
    ox_gemm_block(g, m0, m1, n0, n1); /* computes from the panels without buffers */
    if (g->post) g->post(g->post_ctx, m0, m1, n0, n1);
    return;
  }
  for (int64_t pc = 0; pc < g->K; pc += kc_blk) {
    int64_t kc = g->K - pc < kc_blk ? g->K - pc : kc_blk;
    float beta = pc == 0 ? g->beta : 1.0f;
    bool last = pc + kc >= g->K;
    for (int64_t ic = m0; ic < m1; ic += mcb) {
      int64_t mc = m1 - ic < mcb ? m1 - ic : mcb;
      ox_gemm_pack_a_block(g, ic, mc, pc, kc, ap);
      ox_gemm_macro_tile(g, ap, g->bpre + pc * g->bpre_npad + n0 * kc, kc, mc,
                         g->C + ic * g->ldc + n0, n1 - n0, beta);
      /* rows [ic, ic + mc) are final after the last depth block */
      if (last && g->post) g->post(g->post_ctx, ic, ic + mc, n0, n1);
    }
  }
}

ox_sgemm_bpack *ox_sgemm_pack_b(bool trans_b, int64_t K, int64_t N, const void *B, int64_t ldb,
                                ox_err *e) {
  const ox_gemm_table *t = ox_gemm_dispatch();
  ukernel uk = t->uk;
  const int64_t kc_blk = t->kc;
  int64_t npad = (N + uk.nr - 1) / uk.nr * uk.nr;
  ox_sgemm_bpack *p = calloc(1, sizeof *p);
  size_t n = (size_t)npad * (size_t)(K > 0 ? K : 1);
  /* streamed on every run (one-row products read it whole): huge pages */
  if (p && K > 0 && N > 0 && (uint64_t)npad * (uint64_t)K < ((uint64_t)1 << 40))
    p->data = ox_alloc_streamed(n * sizeof(float));
  if (!p || !p->data || K <= 0 || N <= 0) {
    if (p) ox_free_streamed(p->data);
    free(p);
    ox_err_set(e, OX_ENOMEM, "out of memory packing a %lld x %lld weight", (long long)K,
               (long long)N);
    return NULL;
  }
  p->K = K;
  p->N = N;
  p->npad = npad;
  p->nr = uk.nr;
  p->kc = kc_blk;
  /* B is read once: its pages go back as packing passes them (weights read
   * out of a model file leave memory as they are packed, not after) */
  const f32_unaligned *b = B;
  if (!trans_b) {
    for (int64_t pc = 0; pc < K; pc += kc_blk) {
      int64_t kc = K - pc < kc_blk ? K - pc : kc_blk;
      ox_gemm_pack_b_panels(uk.nr, false, b, ldb, pc, kc, 0, N, p->data + pc * npad);
      ox_pages_unneeded(b + pc * ldb, (size_t)((kc - 1) * ldb + N) * sizeof(float));
    }
    return p;
  }
  /* transposed: B's rows are the columns; a group of them at a time */
  const int64_t group = (int64_t)uk.nr * 64;
  for (int64_t j0 = 0; j0 < N; j0 += group) {
    int64_t nc = N - j0 < group ? N - j0 : group;
    for (int64_t pc = 0; pc < K; pc += kc_blk) {
      int64_t kc = K - pc < kc_blk ? K - pc : kc_blk;
      ox_gemm_pack_b_panels(uk.nr, true, b, ldb, pc, kc, j0, nc, p->data + pc * npad + j0 * kc);
    }
    ox_pages_unneeded(b + j0 * ldb, (size_t)((nc - 1) * ldb + K) * sizeof(float));
  }
  return p;
}

void ox_sgemm_bpack_free(ox_sgemm_bpack *p) {
  if (!p) return;
  ox_free_streamed(p->data);
  free(p);
}

void ox_sgemm_bpack_col(const ox_sgemm_bpack *p, int64_t n, float *out) {
  int64_t panel = n - n % p->nr, j = n % p->nr;
  for (int64_t pc = 0; pc < p->K; pc += p->kc) {
    int64_t kc = p->K - pc < p->kc ? p->K - pc : p->kc;
    const float *s = p->data + pc * p->npad + panel * kc + j;
    for (int64_t k = 0; k < kc; k++) out[pc + k] = s[k * p->nr];
  }
}

int64_t ox_sgemm_bpack_k(const ox_sgemm_bpack *p) { return p->K; }
int64_t ox_sgemm_bpack_n(const ox_sgemm_bpack *p) { return p->N; }

/* ---- several threads: A packed once, then a grid of blocks ----
 *
 * With B packed whole, every task of a grid that splits the columns would
 * pack the same rows of A again (a transformer's 50 x 768 activation,
 * packed by each of 48 column tasks, cost about as much as their
 * products). So A is packed once, in parallel, into row groups of equal
 * height (on the 12-row tiles each group's rows spread evenly over its
 * panels, ox_gemm_panels), and the tasks only multiply: row group r by
 * column group c, the column groups whole panels of B in equal counts. */

void ox_gemm_pb_split(int64_t M, int64_t N, int64_t K, int nt, int64_t *rg, int64_t *cg) {
  static const float none; /* B packed whole: never read here */
  gemm_job g = {.uk = ox_gemm_kernel(), .M = M, .N = N, .K = K, .alpha = 1.0f, .bpre = &none};
  g.t = ox_gemm_dispatch();
  /* a row group's panels of A stay in L2 while its tasks stream B: at most
   * pb_mc_max rows, as one thread's blocks (ox_gemm_block_pb); the counts
   * come back, the grid cuts rows and panels evenly into that many parts */
  ox_gemm_grid(&g, nt, M, 1, g.t->pb_mc_max, true, rg, cg);
}

typedef struct pb_grid {
  const gemm_job *g;
  int64_t rg, cg, ntl, nkb;        /* row groups, column groups, column panels, depth blocks */
  int64_t poff[PB_MAX_GROUPS + 1]; /* first panel of each row group */
  float *a; /* A packed: depth block pc at pc * poff[rg] * mr, group r's panels at poff[r] */
} pb_grid;

static void pb_pack_task(void *arg, int64_t t0, int64_t t1) {
  const pb_grid *w = arg;
  const gemm_job *g = w->g;
  const int64_t kc_blk = g->t->kc;
  for (int64_t t = t0; t < t1; t++) {
    int64_t r = t / w->nkb, pc = t % w->nkb * kc_blk;
    int64_t kc = g->K - pc < kc_blk ? g->K - pc : kc_blk;
    int64_t r0 = ox_gemm_part(g->M, w->rg, r), r1 = ox_gemm_part(g->M, w->rg, r + 1);
    ox_gemm_pack_a_block(g, r0, r1 - r0, pc, kc,
                         w->a + (pc * w->poff[w->rg] + w->poff[r] * kc) * g->uk.mr);
  }
}

static void pb_grid_task(void *arg, int64_t t0, int64_t t1) {
  const pb_grid *w = arg;
  const gemm_job *g = w->g;
  const int64_t kc_blk = g->t->kc;
  for (int64_t t = t0; t < t1; t++) {
    int64_t r = t / w->cg, c = t % w->cg;
    int64_t r0 = ox_gemm_part(g->M, w->rg, r), r1 = ox_gemm_part(g->M, w->rg, r + 1);
    int64_t n0 = ox_gemm_part(w->ntl, w->cg, c) * g->uk.nr;
    int64_t n1 = ox_gemm_part(w->ntl, w->cg, c + 1) * g->uk.nr;
    if (n1 > g->N) n1 = g->N;
    for (int64_t pc = 0; pc < g->K; pc += kc_blk) {
      int64_t kc = g->K - pc < kc_blk ? g->K - pc : kc_blk;
      ox_gemm_macro_tile(g, w->a + (pc * w->poff[w->rg] + w->poff[r] * kc) * g->uk.mr,
                         g->bpre + pc * g->bpre_npad + n0 * kc, kc, r1 - r0,
                         g->C + r0 * g->ldc + n0, n1 - n0, pc == 0 ? 0.0f : 1.0f);
    }
    if (g->post) g->post(g->post_ctx, r0, r1, n0, n1);
  }
}

/* The grid over nt threads; false where it does not apply (A packed
 * larger than pb_grid_a_bytes, no memory): then ox_gemm_run. */
static bool pb_run_grid(const gemm_job *g, ox_thread_pool *pool, int nt) {
  const int64_t mr = g->uk.mr, nr = g->uk.nr;
  pb_grid w = {.g = g, .ntl = (g->N + nr - 1) / nr, .nkb = (g->K + g->t->kc - 1) / g->t->kc};
  ox_gemm_pb_split(g->M, g->N, g->K, nt, &w.rg, &w.cg);
  if (w.rg > PB_MAX_GROUPS) return false;
  for (int64_t r = 0; r < w.rg; r++)
    w.poff[r + 1] =
        w.poff[r] +
        ox_gemm_panels(g, ox_gemm_part(g->M, w.rg, r + 1) - ox_gemm_part(g->M, w.rg, r)).n;
  if ((double)(w.poff[w.rg] * mr) * (double)g->K * 4.0 > (double)g->t->pb_grid_a_bytes)
    return false;
  /* slot 4: the calling thread's across its tasks (base.h); the tasks
   * themselves use none */
  w.a = ox_scratch(4, (size_t)(w.poff[w.rg] * mr * g->K) * sizeof(float));
  if (!w.a) return false;
  ox_parallel_for(pool, w.rg * w.nkb, 1, pb_pack_task, &w);
  ox_parallel_for(pool, w.rg * w.cg, 1, pb_grid_task, &w);
  return true;
}

static void pgemv_task(void *arg, int64_t t0, int64_t t1) {
  const pgemv_job *j = arg;
  int64_t panels = j->B->npad / j->B->nr;
  int64_t p0 = t0 * j->chunk, p1 = t1 * j->chunk < panels ? t1 * j->chunk : panels;
  if (p0 >= p1) return;
  ox_gemm_dispatch()->pgemv(j, p0, p1);
  if (j->post) {
    int64_t n1 = p1 * j->B->nr < j->B->N ? p1 * j->B->nr : j->B->N;
    j->post(j->post_ctx, 0, j->M, p0 * j->B->nr, n1);
  }
}

void ox_gemm_pb_run(int64_t M, const float *A, int64_t lda, const ox_sgemm_bpack *B, float *C,
                    int64_t ldc, ox_thread_pool *pool, ox_sgemm_post_fn post, void *ctx) {
  if (M <= 0) return;
  ukernel uk = ox_gemm_kernel();
  if (uk.nr != B->nr) { /* packed for another kernel: cannot happen on one machine */
    for (int64_t i = 0; i < M; i++)
      for (int64_t n = 0; n < B->N; n++) C[i * ldc + n] = 0.0f;
    if (post) post(ctx, 0, M, 0, B->N);
    return;
  }
  int nt = pool ? ox_thread_pool_size(pool) : 1;
  if (nt < 1) nt = 1;
  if (M <= 4) {
    int64_t panels = B->npad / B->nr;
    if ((double)M * (double)B->N * (double)B->K < 1.0e5) nt = 1;
    pgemv_job j = {B, A, M, lda, ldc, (panels + nt - 1) / nt, C, post, ctx};
    int64_t ntasks = (panels + j.chunk - 1) / j.chunk;
    if (ntasks <= 1)
      pgemv_task(&j, 0, 1);
    else
      ox_parallel_for(pool, ntasks, 1, pgemv_task, &j);
    return;
  }
  gemm_job g = {uk, false, false, M, B->N, B->K, lda, 0, ldc, 1.0f, 0.0f, A, NULL, C, NULL};
  g.t = ox_gemm_dispatch();
  g.bpre = B->data;
  g.bpre_npad = B->npad;
  g.post = post;
  g.post_ctx = ctx;
  if (nt > 1 && 2.0 * (double)M * (double)B->N * (double)B->K >= 2.0e6 && pb_run_grid(&g, pool, nt))
    return;
  ox_gemm_run(&g, pool);
}
