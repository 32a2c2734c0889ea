/* attn_fused.c - MultiHeadAttentionFused (domain ai.onnxc, made by
 * src/opt/attention.c from exported attention).
 *
 * Inputs Q, K, V hold heads side by side ([.., S, H * D] as the exporter's
 * Reshape saw them; the Reshape targets come as attributes q_b, q_s, k_b,
 * k_s), optional additive mask broadcast to [B, H, Sq, Sk]. For each
 * (batch, head) the scores Q_h K_h^T are one strided product, divided (or
 * multiplied) by `scale`, the mask added, softmax taken per row (the float
 * operations of the nodes it replaces, the sum in double), and the product
 * with V_h is written straight into Y [B, Sq, H, D]. (batch, head) pairs
 * are spread over the pool. */
#include "attn_fused.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/attn_expsum.h"
#include "../../kernels/gemm.h"
#include "../../kernels/levels.h"
#include "../../kernels/vmath.h"
#include "../../runtime/kernel.h"
#include "../fused.h"
#include "../opcore.h"

/* scores per query block: see mha_go */
#ifndef MHA_BLOCK_BYTES
#define MHA_BLOCK_BYTES (256 * 1024)
#endif

typedef struct mha_attrs {
  int64_t heads, dim, qb, qs, kb, ks;
  float scale;
  bool div;
  bool q_heads_inferred; /* Q's Reshape has -1 heads: 1 at run time broadcasts */
} mha_attrs;

static int mha_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  mha_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  a->heads = ox_node_attr_int(n, "num_heads", 0);
  a->dim = ox_node_attr_int(n, "head_dim", 0);
  a->qb = ox_node_attr_int(n, "q_b", -1);
  a->qs = ox_node_attr_int(n, "q_s", -1);
  a->kb = ox_node_attr_int(n, "k_b", -1);
  a->ks = ox_node_attr_int(n, "k_s", -1);
  a->scale = ox_node_attr_float(n, "scale", 1.0f);
  a->div = ox_node_attr_int(n, "scale_div", 1) != 0;
  a->q_heads_inferred = ox_node_attr_int(n, "q_heads_inferred", 0) != 0;
  if (a->heads <= 0 || a->dim <= 0 || a->heads > ((int64_t)1 << 20) || a->dim > ((int64_t)1 << 20))
    return oc_prep_fail(info, e, "num_heads and head_dim must be positive");
  *state = a;
  return OX_OK;
}

/* [b, s] of Reshape(x, [b0, s0, H, D]) (0 copies x's dim, -1 is inferred) */
static bool split_dims(const ox_value *x, int64_t b0, int64_t s0, int64_t hd, int64_t *b,
                       int64_t *s) {
  if (x->numel % hd != 0) return false;
  int64_t rest = x->numel / hd;
  *b = b0 > 0 ? b0 : b0 == 0 ? (x->rank > 0 ? x->dims[0] : -2) : -1;
  *s = s0 > 0 ? s0 : s0 == 0 ? (x->rank > 1 ? x->dims[1] : -2) : -1;
  if (*b == -2 || *s == -2 || (*b == -1 && *s == -1)) return false;
  if (*b == -1) *b = *s ? rest / *s : 0;
  if (*s == -1) *s = *b ? rest / *b : 0;
  return *b * *s == rest;
}

/* One row of scores: / scale (or * scale), + mask, then softmax — loops
 * the compiler vectorises (the division stays a division, as Div's). */
OX_LEVEL_BODY void score_row_c(float *row, int64_t n, float scale, bool div, const float *m,
                               int64_t mstep) {
  const ox_vmath_kernels *vk = ox_vmath_kernels_get();
  if ((!m || mstep == 1) && vk->scale_mask_max) {
    float mx = vk->scale_mask_max(row, n, scale, div, m);
    float inv = (float)(1.0 / vk->exp_sum(row, mx, row, n));
    for (int64_t c = 0; c < n; c++) row[c] *= inv;
    return;
  }
  /* the scale and the mask in one pass (the same two roundings as the Div
   * or Mul and the Add they replace) */
  if (div && m && mstep == 1)
    for (int64_t c = 0; c < n; c++) row[c] = row[c] / scale + m[c];
  else if (!div && m && mstep == 1)
    for (int64_t c = 0; c < n; c++) row[c] = row[c] * scale + m[c];
  else if (div)
    for (int64_t c = 0; c < n; c++) row[c] = row[c] / scale + (m ? m[c * mstep] : 0.0f);
  else
    for (int64_t c = 0; c < n; c++) row[c] = row[c] * scale + (m ? m[c * mstep] : 0.0f);
  float mx = oc_row_max_f32(row, n);
  float inv = (float)(1.0 / oc_exp_shift_sum_f32(row, mx, row, n));
  for (int64_t c = 0; c < n; c++) row[c] *= inv;
}

OX_LEVELS_VOID(score_row,
               (float *row, int64_t n, float scale, bool div, const float *m, int64_t mstep), row,
               n, scale, div, m, mstep)

typedef struct mha_job {
  ox_mha_args a;
  int64_t qhs;                       /* Q's head stride (dim; 0: one shared head) */
  int64_t rb;                        /* query rows per block (scores rb x Sk stay in L2) */
  int64_t nseg;                      /* tasks per (batch, head): segments of its blocks */
  bool panels;                       /* K^T and V packed once per head (OX_GEMM_B_PANELS) */
  OX_LEVEL_PTR(score_row) score_row; /* of the level in use (levels.h) */
  atomic_int oom;
} mha_job;

/* B's panels as OX_GEMM_B_PANELS reads them (gemm.h): depth blocks of kc
 * rows at pc * npad, panel j0 at + j0 * kc, kc rows of nr values, columns
 * past N zero. trans: B[k][n] = s[n * ld + k] (K^T: keys are columns), else
 * s[k * ld + n] (V). */
static void pack_panels(float *d, const float *s, int64_t ld, bool trans, int64_t K, int64_t N,
                        int nr, int64_t kcb) {
  int64_t npad = (N + nr - 1) / nr * nr;
  for (int64_t pc = 0; pc < K; pc += kcb) {
    int64_t kc = K - pc < kcb ? K - pc : kcb;
    for (int64_t j0 = 0; j0 < npad; j0 += nr) {
      float *p = d + pc * npad + j0 * kc;
      int64_t n = N - j0 < nr ? N - j0 : nr;
      if (trans) {
        /* a key's dims are contiguous: read along them, write down a column */
        for (int64_t c = 0; c < n; c++) {
          const float *r = s + (j0 + c) * ld + pc;
          /* the rows are ld apart (the other heads between): fetch the
           * one 8 ahead (Whisper's K and V head packs ran ~1.5 ms of a
           * 25 ms node without) */
          if (j0 + c + 8 < N)
            for (int64_t k = 0; k < kc; k += 16) __builtin_prefetch(r + 8 * ld + k);
          for (int64_t k = 0; k < kc; k++) p[k * nr + c] = r[k];
        }
        for (int64_t c = n; c < nr; c++)
          for (int64_t k = 0; k < kc; k++) p[k * nr + c] = 0.0f;
      } else {
        for (int64_t k = 0; k < kc; k++) {
          if (k + 8 < kc) {
            __builtin_prefetch(s + (pc + k + 8) * ld + j0);
            __builtin_prefetch(s + (pc + k + 8) * ld + j0 + n - 1);
          }
          memcpy(p + k * nr, s + (pc + k) * ld + j0, (size_t)n * sizeof(float));
          if (n < nr) memset(p + k * nr + n, 0, (size_t)(nr - n) * sizeof(float));
        }
      }
    }
  }
}

/* C = A B: B from the panels bp packed once per head, or plain (b, ldb,
 * trans_b) and packed by the product */
static void blk_gemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *bp,
                     const float *b, int64_t ldb, bool trans_b, float *C, int64_t ldc) {
  ox_gemm_desc d = {.M = M, .N = N, .K = K, .A = A, .lda = lda, .alpha = 1.0f, .C = C, .ldc = ldc};
  if (bp) {
    d.b = OX_GEMM_B_PANELS;
    d.B = bp;
  } else {
    d.B = b;
    d.ldb = ldb;
    d.trans_b = trans_b;
  }
  ox_gemm(&d);
}

/* Task t: segment t % nseg of the query blocks of (batch, head) t / nseg.
 * Each block of rb query rows runs scores = Q_blk K^T, the softmax rows,
 * Y_blk = P V while its rb x Sk scores are still in L2 (whole heads held
 * 9 MB of scores at Whisper's 1,500 positions and streamed them through
 * memory three times). K^T and V are packed once per head (the same head
 * again in the next task of a chunk keeps them) and read by every block.
 *
 * Where the vector level has the fused row pass (scale_mask_max), the
 * rows keep their exponentials and Y_blk's rows are divided by their sums
 * after the product: D values a row instead of Sk (the output rounds once
 * more differently from the nodes replaced: within 1e-6 or so). */
static void mha_task(void *arg, int64_t t0, int64_t t1) {
  mha_job *j = arg;
  const ox_mha_args *a = &j->a;
  const ox_vmath_kernels *vk = ox_vmath_kernels_get();
  int64_t Sq = a->Sq, Sk = a->Sk, D = a->dim, rb = j->rb, nb = (Sq + rb - 1) / rb;
  int64_t bps = (nb + j->nseg - 1) / j->nseg; /* blocks per segment */
  int nr = j->panels ? ox_sgemm_nr() : 1;
  int64_t kcb = ox_sgemm_kc();
  size_t kp = j->panels ? (size_t)((Sk + nr - 1) / nr * nr * D) : 0;
  size_t vp = j->panels ? (size_t)(Sk * ((D + nr - 1) / nr * nr)) : 0;
  /* with panels the score rows are whole panels wide: the product writes
   * full tiles straight (the padded keys are zeros, their scores unused) */
  int64_t ls = j->panels ? (Sk + nr - 1) / nr * nr : Sk;
  float *sc = malloc(((size_t)(rb * ls + rb) + kp + vp) * sizeof *sc);
  if (!sc) {
    atomic_store(&j->oom, 1);
    return;
  }
  float *inv = sc + rb * ls, *kpk = inv + rb, *vpk = kpk + kp;
  ox_attn_exp_sum_fn es = ox_attn_exp_sum_get();
  bool unnorm = vk->scale_mask_max && (!a->mask || a->mst[3] == 1);
  /* no scale (x 1 is exact) and no mask: the row's maximum alone, read only */
  bool plain = !a->mask && !a->div && a->scale == 1.0f;
  int64_t packed = -1; /* the (batch, head) whose K^T and V are in kpk, vpk */
  for (int64_t t = t0; t < t1; t++) {
    int64_t bh = t / j->nseg, seg = t % j->nseg;
    int64_t b = bh / a->heads, h = bh % a->heads;
    const float *kh = a->k + b * Sk * a->kv_ld + h * D, *vh = a->v + b * Sk * a->kv_ld + h * D;
    if (j->panels && packed != bh) {
      pack_panels(kpk, kh, a->kv_ld, true, D, Sk, nr, kcb);
      pack_panels(vpk, vh, a->kv_ld, false, Sk, D, nr, kcb);
      packed = bh;
    }
    int64_t blk1 = (seg + 1) * bps < nb ? (seg + 1) * bps : nb;
    for (int64_t blk = seg * bps; blk < blk1; blk++) {
      int64_t r0 = blk * rb, rows = Sq - r0 < rb ? Sq - r0 : rb;
      const float *qh = a->q + (b * Sq + r0) * a->q_ld + h * j->qhs;
      float *yh = a->y + (b * Sq + r0) * a->y_ld + h * D;
      blk_gemm(rows, j->panels ? ls : Sk, D, qh, a->q_ld, j->panels ? kpk : NULL, kh, a->kv_ld, true,
               sc, ls);
      for (int64_t r = 0; r < rows; r++) {
        float *row = sc + r * ls;
        const float *m =
            a->mask ? a->mask + b * a->mst[0] + h * a->mst[1] + (r0 + r) * a->mst[2] : NULL;
        if (!unnorm) {
          j->score_row(row, Sk, a->scale, a->div, m, a->mst[3]);
          continue;
        }
        float mx = plain ? vk->row_max(row, Sk) : vk->scale_mask_max(row, Sk, a->scale, a->div, m);
        inv[r] = (float)(1.0 / (es ? es(row, Sk, mx) : vk->exp_sum(row, mx, row, Sk)));
      }
      blk_gemm(rows, D, Sk, sc, ls, j->panels ? vpk : NULL, vh, a->kv_ld, false, yh, a->y_ld);
      if (unnorm)
        for (int64_t r = 0; r < rows; r++)
          for (int64_t c = 0; c < D; c++) yh[r * a->y_ld + c] *= inv[r];
    }
  }
  free(sc);
}

/* The heads over the pool; q_shared: Q holds one head that every head reads. */
static int mha_go(ox_thread_pool *pool, const ox_mha_args *a, bool q_shared) {
  int64_t nt = ox_thread_pool_size(pool), BH = a->B * a->heads;
  if (nt < 1) nt = 1;
  if (a->Sq <= 0 || BH <= 0) return OX_OK;
  if (a->Sk == 0) {
    for (int64_t r = 0; r < a->B * a->Sq; r++)
      memset(a->y + r * a->y_ld, 0, (size_t)(a->heads * a->dim) * sizeof(float));
    return OX_OK;
  }
  /* Query blocks of scores of about MHA_BLOCK_BYTES (L2 holds them with
   * the packed K^T and V), rows a multiple of the 12-row tiles; at least
   * 12 rows, whatever Sk */
  int64_t rb = MHA_BLOCK_BYTES / (a->Sk * (int64_t)sizeof(float)) / 12 * 12;
  if (rb < 12) rb = 12;
  if (rb > a->Sq) rb = a->Sq;
  int64_t nb = (a->Sq + rb - 1) / rb;
  /* Whole heads while they are enough to share out (each packs K and V
   * once); else each head's blocks in segments, a pool's worth of tasks
   * (a segment packs its head's K and V again: a small cost against its
   * blocks' products) */
  int64_t nseg = 1;
  if (BH < 2 * nt) nseg = (2 * nt + BH - 1) / BH;
  if (nseg > nb) nseg = nb;
  mha_job j = {*a,  q_shared ? 0 : a->dim,   rb, nseg, ox_sgemm_has_ua(),
               OX_LEVEL_PICK(score_row), 0};
  ox_parallel_for(pool, BH * nseg, 1, mha_task, &j);
  return atomic_load(&j.oom) ? OX_ENOMEM : OX_OK;
}

int ox_mha_run(ox_thread_pool *pool, const ox_mha_args *a) { return mha_go(pool, a, false); }

ox_attn_row_fn ox_attn_score_row(void) { return OX_LEVEL_PICK(score_row); }

static int mha_run(ox_kctx *ctx, void *state) {
  const mha_attrs *a = state;
  ox_value *q = ox_kctx_input(ctx, 0), *k = ox_kctx_input(ctx, 1), *v = ox_kctx_input(ctx, 2);
  ox_value *mask = ox_kctx_input(ctx, 3);
  if (!q || !k || !v || q->dtype != OX_FLOAT || k->dtype != OX_FLOAT || v->dtype != OX_FLOAT ||
      (mask && mask->dtype != OX_FLOAT))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "Q, K, V (and the mask) must be float tensors");
  int64_t H = a->heads, D = a->dim, E = H * D, B, Sq, Bk, Sk, Bv, Sv, qE = E;
  /* Q's Reshape inferred its head count: one head broadcasts over K's H, as
   * in the MatMul it replaces */
  bool q_ok = split_dims(q, a->qb, a->qs, E, &B, &Sq), q_shared = false;
  if (!q_ok && a->q_heads_inferred && H > 1 && split_dims(q, a->qb, a->qs, D, &B, &Sq)) {
    q_ok = true;
    qE = D;
    q_shared = true;
  }
  if (!q_ok || !split_dims(k, a->kb, a->ks, E, &Bk, &Sk) ||
      !split_dims(v, a->kb, a->ks, E, &Bv, &Sv) || Bk != B || Bv != B || Sv != Sk)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "Q, K and V do not split into %lld heads of %lld with one batch",
                        (long long)H, (long long)D);
  ox_mha_args m = {.q = q->data,
                   .k = k->data,
                   .v = v->data,
                   .q_ld = qE,
                   .kv_ld = E,
                   .y_ld = E,
                   .B = B,
                   .heads = H,
                   .dim = D,
                   .Sq = Sq,
                   .Sk = Sk,
                   .scale = a->scale,
                   .div = a->div};
  if (mask) {
    /* numpy broadcast of the mask against [B, H, Sq, Sk] */
    const int64_t full[4] = {B, H, Sq, Sk};
    if (mask->rank > 4) return ox_kctx_fail(ctx, OX_ERUNTIME, "the mask has rank %zu", mask->rank);
    int64_t st = 1;
    for (size_t d = 4; d-- > 0;) {
      size_t md = mask->rank + d >= 4 ? mask->rank + d - 4 : SIZE_MAX;
      int64_t n = md == SIZE_MAX ? 1 : mask->dims[md];
      if (n != 1 && n != full[d])
        return ox_kctx_fail(ctx, OX_ERUNTIME, "the mask does not broadcast to the scores");
      m.mst[d] = n == 1 ? 0 : st;
      st *= n;
    }
    m.mask = mask->data;
  }
  const int64_t ydims[4] = {B, Sq, H, D};
  ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, ydims, 4);
  if (!y) return OX_ERUNTIME;
  if (y->numel == 0) return OX_OK;
  m.y = y->data;
  if (mha_go(ox_kctx_pool(ctx), &m, q_shared)) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  return OX_OK;
}

/* AttentionBHSDFused's kernel (attn_bhsd.c), registered with this family */
int ox_attn_bhsd_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_attn_bhsd_run(ox_kctx *ctx, void *state);
/* KVCacheAppend's (kv_append.c), the cache AttentionBHSDFused reads with kv_len */
int ox_kv_append_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_kv_append_run(ox_kctx *ctx, void *state);

const ox_kernel_def ox_ops_attn_fused[] = {
    {OX_FUSED_DOMAIN, "MultiHeadAttentionFused", 1, 1, mha_prepare, mha_run, NULL},
    {OX_FUSED_DOMAIN, "AttentionBHSDFused", 1, 1, ox_attn_bhsd_prepare, ox_attn_bhsd_run, NULL},
    /* present (output 0) may be written over the cache (input 0) in place */
    {OX_FUSED_DOMAIN, "KVCacheAppend", 1, 1, ox_kv_append_prepare, ox_kv_append_run, NULL,
     .alias_outputs = 1u},
    {0},
};
