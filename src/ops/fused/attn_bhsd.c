/* attn_bhsd.c - AttentionBHSDFused (domain ai.onnxc, made by
 * src/opt/attention_bhsd.c from attention written on [B, H, S, D] heads).
 *
 * Y = softmax(Where(cond, Q K^T * scale, fill) + mask) V per head, with
 * Q [B, H, S, D], K [B, Hk, T, D] (or already [B, Hk, D, T]: k_transposed),
 * V [B, Hk, T, Dv]; q_bshd / k_bshd / v_bshd: that input is still [B, S, H,
 * D] (the head split's Transpose folded: its heads are read in place), and
 * y_bshd: Y is written [B, S, H, Dv] (the Transpose after it folded).
 * kv_groups 1: grouped-query attention, head h reads K/V head h / (H / Hk)
 * (repeat_kv's Expand and Reshape folded); else Hk and Hv are 1 or H as
 * MatMul broadcasts them. The batch broadcasts as MatMul's too. Input 7
 * (qk_factor): a computed value q (and k, qk_factor_pow 2) were multiplied
 * by, SDPA's sqrt(scale). Input 8 (kv_len): K and V are KV caches of a
 * fixed length read up to kv_len rows per head (the generation loop's
 * in-place cache, src/api/generate_kv.c).
 *
 * Work: (batch, head, block of query rows) over the pool; a block's scores
 * (rows x T) are one strided GEMM into a per-task buffer, scaled, masked
 * and softmaxed row by row with the same row function as
 * MultiHeadAttentionFused (attn_fused.c: the roundings of the Mul/Div, Add
 * and Softmax nodes it replaces), then one GEMM by V into Y. The block
 * keeps rows x T within a budget, so a long sequence never holds all S x T
 * scores at once. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/gemm.h"
#include "../../runtime/kernel.h"
#include "../fused.h"
#include "../opcore.h"
#include "attn_fused.h"

typedef struct bhsd_attrs {
  float scale, fill;
  bool div, k_transposed, q_bshd, k_bshd, v_bshd, y_bshd, groups, keep_true;
  /* repeat_kv's Expand target (kv_expand, when constant) and its Reshape's
   * allowzero, for the check of what it made */
  bool have_expand, allowzero;
  int64_t expand[5];
  int64_t factor_pow; /* input 7 multiplied q (1) or q and k (2) */
} bhsd_attrs;

int ox_attn_bhsd_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  bhsd_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  a->scale = ox_node_attr_float(n, "scale", 1.0f);
  a->div = ox_node_attr_int(n, "scale_div", 0) != 0;
  a->k_transposed = ox_node_attr_int(n, "k_transposed", 0) != 0;
  a->q_bshd = ox_node_attr_int(n, "q_bshd", 0) != 0;
  a->k_bshd = ox_node_attr_int(n, "k_bshd", 0) != 0;
  a->v_bshd = ox_node_attr_int(n, "v_bshd", 0) != 0;
  a->y_bshd = ox_node_attr_int(n, "y_bshd", 0) != 0;
  a->groups = ox_node_attr_int(n, "kv_groups", 0) != 0;
  a->fill = ox_node_attr_float(n, "where_fill", 0.0f);
  a->keep_true = ox_node_attr_int(n, "where_keep", 1) != 0;
  if (a->k_transposed && a->k_bshd)
    return oc_prep_fail(info, e, "k_transposed and k_bshd cannot both be set");
  const ox_attr *ex = ox_node_attr(n, "kv_expand");
  if (ex && ex->n_ints != 5) return oc_prep_fail(info, e, "kv_expand must hold 5 values");
  a->have_expand = ex != NULL;
  for (size_t d = 0; ex && d < 5; d++) a->expand[d] = ex->ints[d];
  a->allowzero = ox_node_attr_int(n, "kv_allowzero", 0) != 0;
  a->factor_pow = ox_node_attr_int(n, "qk_factor_pow", 1);
  if (a->factor_pow != 1 && a->factor_pow != 2)
    return oc_prep_fail(info, e, "qk_factor_pow must be 1 or 2");
  *state = a;
  return OX_OK;
}

/* strides of one operand over (batch, head, row); its columns are contiguous */
typedef struct opnd {
  const float *p;
  int64_t sb, sh, sr;
  int64_t heads; /* 1: every head reads head 0 */
} opnd;

typedef struct bhsd_job {
  opnd q, k, v;
  float *y;
  int64_t ysb, ysh, ysr;
  int64_t B, H, S, T, D, Dv, rows, group; /* group: query heads per K/V head (0: none) */
  bool k_transposed;                      /* k.sr strides D, the rows of K^T */
  const float *mask;
  int64_t mst[4];
  const bool *cond;
  int64_t cst[4];
  float scale, fill;
  bool div, keep_true;
  ox_attn_row_fn row;
  atomic_int oom;
} bhsd_job;

static int64_t kv_head(const bhsd_job *j, const opnd *o, int64_t h) {
  if (o->heads == 1) return 0;
  return j->group ? h / j->group : h;
}

/* Task t: query rows [r0, r0 + rows) of one (batch, head). */
static void bhsd_task(void *arg, int64_t t0, int64_t t1) {
  bhsd_job *j = arg;
  int64_t T = j->T, rb = j->rows, nb = (j->S + rb - 1) / rb;
  float *sc = malloc((size_t)(rb * T > 0 ? rb * T : 1) * sizeof *sc);
  if (!sc) {
    atomic_store(&j->oom, 1);
    return;
  }
  for (int64_t t = t0; t < t1; t++) {
    int64_t bh = t / nb, r0 = t % nb * rb, rows = j->S - r0 < rb ? j->S - r0 : rb;
    int64_t b = bh / j->H, h = bh % j->H;
    const float *qh = j->q.p + b * j->q.sb + (j->q.heads == 1 ? 0 : h) * j->q.sh + r0 * j->q.sr;
    const float *kh = j->k.p + b * j->k.sb + kv_head(j, &j->k, h) * j->k.sh;
    const float *vh = j->v.p + b * j->v.sb + kv_head(j, &j->v, h) * j->v.sh;
    ox_gemm(&(ox_gemm_desc){.M = rows,
                            .N = T,
                            .K = j->D,
                            .A = qh,
                            .lda = j->q.sr,
                            .B = kh,
                            .ldb = j->k.sr,
                            .trans_b = !j->k_transposed,
                            .alpha = 1.0f,
                            .C = sc,
                            .ldc = T});
    for (int64_t r = 0; r < rows; r++) {
      float *row = sc + r * T;
      int64_t s = r0 + r;
      const float *m = j->mask ? j->mask + b * j->mst[0] + h * j->mst[1] + s * j->mst[2] : NULL;
      if (!j->cond) {
        j->row(row, T, j->scale, j->div, m, j->mst[3]);
        continue;
      }
      /* the scale, then Where, then the mask and softmax (times 1: exact) */
      const bool *c = j->cond + b * j->cst[0] + h * j->cst[1] + s * j->cst[2];
      if (j->div)
        for (int64_t x = 0; x < T; x++) row[x] = row[x] / j->scale;
      else
        for (int64_t x = 0; x < T; x++) row[x] = row[x] * j->scale;
      for (int64_t x = 0; x < T; x++)
        if (c[x * j->cst[3]] != j->keep_true) row[x] = j->fill;
      j->row(row, T, 1.0f, false, m, j->mst[3]);
    }
    ox_gemm(&(ox_gemm_desc){.M = rows,
                            .N = j->Dv,
                            .K = T,
                            .A = sc,
                            .lda = T,
                            .B = vh,
                            .ldb = j->v.sr,
                            .alpha = 1.0f,
                            .C = j->y + b * j->ysb + h * j->ysh + r0 * j->ysr,
                            .ldc = j->ysr});
  }
  free(sc);
}

/* numpy broadcast strides of x (rank <= 4) against full[4]; false if not */
static bool bcast(const ox_value *x, const int64_t *full, int64_t *st) {
  if (x->rank > 4) return false;
  int64_t s = 1;
  for (size_t d = 4; d-- > 0;) {
    size_t xd = x->rank + d >= 4 ? x->rank + d - 4 : SIZE_MAX;
    int64_t n = xd == SIZE_MAX ? 1 : x->dims[xd];
    if (n != 1 && n != full[d]) return false;
    st[d] = n == 1 ? 0 : s;
    s *= n;
  }
  return true;
}

/* x's dims as four, leading 1s added; rank 4 required for a [B, S, H, D] layout */
static bool dims4(const ox_value *x, bool bshd, int64_t *d) {
  if (x->rank < 2 || x->rank > 4 || (bshd && x->rank != 4)) return false;
  for (size_t i = 0; i < 4; i++) d[i] = i + x->rank < 4 ? 1 : x->dims[i + x->rank - 4];
  return true;
}

/* the n values of an int64 tensor of n elements */
static bool ints_of(const ox_value *x, int64_t *out, int64_t n) {
  if (!x || x->dtype != OX_INT64 || x->numel != n) return false;
  memcpy(out, x->data, (size_t)n * sizeof *out);
  return true;
}

/* repeat_kv folded (kv_groups): Reshape(Expand(Unsqueeze(x, 2), e), r) of x
 * [b, hk, t, d] must give [b', hk * n, t, d] with x's heads, rows and
 * columns unbroadcast (the kernel reads x in their place); r NULL: proved
 * by the pass. The repeat count n in *n_rep; false if the nodes made
 * anything else. */
static bool repeat_is(const int64_t *e, const int64_t *r, bool allowzero, int64_t b, int64_t hk,
                      int64_t t, int64_t d, int64_t *n_rep) {
  const int64_t in[5] = {b, hk, 1, t, d};
  int64_t o[5], numel = 1;
  for (int i = 0; i < 5; i++) {
    o[i] = e[i] == 1 ? in[i] : in[i] == 1 || in[i] == e[i] ? e[i] : -1;
    if (o[i] < 0) return false;
    numel *= o[i];
  }
  if (o[1] != hk || o[3] != t || o[4] != d) return false;
  *n_rep = o[2];
  if (!r) return true;
  /* Reshape's rules: 0 copies the input's dim (unless allowzero), -1 is inferred */
  int64_t y[4], known = 1, infer = -1;
  for (int i = 0; i < 4; i++) {
    y[i] = r[i] == 0 && !allowzero ? o[i] : r[i];
    if (y[i] == -1 && infer < 0)
      infer = i;
    else if (y[i] < 0)
      return false;
    else
      known *= y[i];
  }
  if (infer >= 0) y[infer] = known ? numel / known : 0;
  return y[0] == o[0] && y[1] == o[1] * o[2] && y[2] == t && y[3] == d;
}

/* one of the batch or head counts a, b: equal, or 1 broadcasting; -1 if neither */
static int64_t joint(int64_t a, int64_t b) { return a == b || b == 1 ? a : a == 1 ? b : -1; }

int ox_attn_bhsd_run(ox_kctx *ctx, void *state) {
  const bhsd_attrs *a = state;
  ox_value *q = ox_kctx_input(ctx, 0), *k = ox_kctx_input(ctx, 1), *v = ox_kctx_input(ctx, 2);
  ox_value *mask = ox_kctx_input(ctx, 3), *cond = ox_kctx_input(ctx, 4);
  if (!q || !k || !v || q->dtype != OX_FLOAT || k->dtype != OX_FLOAT || v->dtype != OX_FLOAT ||
      (mask && mask->dtype != OX_FLOAT) || (cond && cond->dtype != OX_BOOL))
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "Q, K, V (and the mask) must be float tensors, the condition bool");
  /* ranks below 4 take leading 1s (MatMul's broadcasting); a folded head
   * split's Transpose had four axes */
  int64_t qd[4], kd[4], vd[4];
  if (!dims4(q, a->q_bshd, qd) || !dims4(k, a->k_bshd, kd) || !dims4(v, a->v_bshd, vd))
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "Q, K and V must have rank 2 to 4 (4 where a layout is [B, S, H, D])");
  int64_t Bq = qd[0], Hq = a->q_bshd ? qd[2] : qd[1], S = a->q_bshd ? qd[1] : qd[2], D = qd[3];
  int64_t Bk = kd[0], Hk = a->k_bshd ? kd[2] : kd[1];
  int64_t T = a->k_transposed ? kd[3] : a->k_bshd ? kd[1] : kd[2];
  int64_t Dk = a->k_transposed ? kd[2] : kd[3];
  int64_t Bv = vd[0], Hv = a->v_bshd ? vd[2] : vd[1], Tv = a->v_bshd ? vd[1] : vd[2], Dv = vd[3];
  /* kv_len (input 8): K and V are fixed-length caches (KVCacheAppend's) of
   * which the first kv_len rows of each head count; their rows stay at the
   * buffers' own pitch (Tk, Tv rows per head). Set before kv_groups' check,
   * whose repeat_kv shapes count the rows the graph saw (kv_len). */
  ox_value *lv = ox_kctx_input(ctx, 8);
  int64_t Tk_buf = T, Tv_buf = Tv;
  if (lv) {
    if (lv->dtype != OX_INT64 || lv->numel != 1)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "kv_len must be one int64 value");
    if (a->k_transposed || a->k_bshd || a->v_bshd)
      return ox_kctx_fail(ctx, OX_ERUNTIME,
                          "kv_len needs K and V as [B, Hk, T, D] (no k_transposed, k_bshd or "
                          "v_bshd)");
    int64_t len = *(const int64_t *)lv->data;
    if (len < 0 || len > T || len > Tv)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "kv_len %lld is beyond K's %lld or V's %lld rows",
                          (long long)len, (long long)T, (long long)Tv);
    T = Tv = len;
  }
  int64_t B = joint(joint(Bq, Bk), Bv), H, group = 0;
  if (a->groups) {
    H = Hq;
    if (Hk != Hv || Hk <= 0 || H % Hk != 0) H = -1;
    group = H > 0 ? H / Hk : 0;
    /* what repeat_kv made is what the kernel reads */
    ox_value *ev = ox_kctx_input(ctx, 5), *rv = ox_kctx_input(ctx, 6);
    int64_t e[5], r[4], nk = 0, nv = 0;
    bool have_e = a->have_expand || ev;
    if (have_e && !a->have_expand && !ints_of(ev, e, 5))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "kv_expand must be 5 int64 values");
    if (a->have_expand) memcpy(e, a->expand, sizeof e);
    if (rv && !ints_of(rv, r, 4))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "kv_shape must be 4 int64 values");
    if (have_e && (!repeat_is(e, rv ? r : NULL, a->allowzero, Bk, Hk, T, Dk, &nk) ||
                   !repeat_is(e, rv ? r : NULL, a->allowzero, Bv, Hv, Tv, Dv, &nv) || nk != nv ||
                   Hk * nk != H))
      return ox_kctx_fail(ctx, OX_ERUNTIME,
                          "the repeated K and V (Expand to [%lld, %lld, %lld, %lld, %lld]) are not "
                          "%lld heads in groups over K's %lld heads of %lld rows",
                          (long long)e[0], (long long)e[1], (long long)e[2], (long long)e[3],
                          (long long)e[4], (long long)H, (long long)Hk, (long long)T);
  } else {
    H = joint(joint(Hq, Hk), Hv);
  }
  if (B < 0 || H < 0 || Dk != D || Tv != T)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "Q [%lld, %lld, %lld, %lld], K and V do not make an attention (K: %lld "
                        "heads of %lld rows of %lld, V: %lld heads of %lld rows)",
                        (long long)Bq, (long long)Hq, (long long)S, (long long)D, (long long)Hk,
                        (long long)T, (long long)Dk, (long long)Hv, (long long)Tv);
  bhsd_job j = {.B = B,
                .H = H,
                .S = S,
                .T = T,
                .D = D,
                .Dv = Dv,
                .group = group,
                .k_transposed = a->k_transposed,
                .scale = a->scale,
                .fill = a->fill,
                .div = a->div,
                .keep_true = a->keep_true,
                .row = ox_attn_score_row()};
  ox_value *fv = ox_kctx_input(ctx, 7);
  if (fv) {
    /* q (and k) were multiplied by f: the scores by f (f * f), then the
     * scale; one product in place of the nodes' roundings */
    if (fv->dtype != OX_FLOAT || fv->numel != 1)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "qk_factor must be one float value");
    float f = *(const float *)fv->data, ff = a->factor_pow == 2 ? f * f : f;
    j.scale = a->div ? ff / a->scale : ff * a->scale;
    j.div = false;
  }
  /* strides: [B, H, R, C] or [B, R, H, C] contiguous, batch 1 broadcast */
  j.q =
      (opnd){q->data, Bq == 1 ? 0 : Hq * S * D, a->q_bshd ? D : S * D, a->q_bshd ? Hq * D : D, Hq};
  if (a->k_transposed)
    j.k = (opnd){k->data, Bk == 1 ? 0 : Hk * T * D, T * D, T, Hk};
  else
    j.k = (opnd){k->data, Bk == 1 ? 0 : Hk * Tk_buf * D, a->k_bshd ? D : Tk_buf * D,
                 a->k_bshd ? Hk * D : D, Hk};
  j.v = (opnd){v->data, Bv == 1 ? 0 : Hv * Tv_buf * Dv, a->v_bshd ? Dv : Tv_buf * Dv,
               a->v_bshd ? Hv * Dv : Dv, Hv};
  const int64_t full[4] = {B, H, S, T};
  if (mask) {
    if (!bcast(mask, full, j.mst))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "the mask does not broadcast to the scores");
    j.mask = mask->data;
  }
  if (cond) {
    if (!bcast(cond, full, j.cst))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "the condition does not broadcast to the scores");
    j.cond = cond->data;
  }
  const int64_t ydims[4] = {B, a->y_bshd ? S : H, a->y_bshd ? H : S, Dv};
  ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, ydims, 4);
  if (!y) return OX_ERUNTIME;
  if (y->numel == 0) return OX_OK;
  j.y = y->data;
  j.ysb = H * S * Dv;
  j.ysh = a->y_bshd ? Dv : S * Dv;
  j.ysr = a->y_bshd ? H * Dv : Dv;
  if (T == 0) {
    memset(y->data, 0, (size_t)y->numel * sizeof(float));
    return OX_OK;
  }
  /* Query rows per task: a whole head while the heads keep the pool busy,
   * else blocks of at least 256 rows, 32 for sequences up to 512 (each
   * task packs K and V for itself); and
   * at most 256 Ki scores (1 MiB) in a block, so that a long sequence's
   * scores stay in cache and its S x T are never all held */
  int64_t nt = ox_thread_pool_size(ox_kctx_pool(ctx)), rows = S, BH = B * H;
  if (BH < 2 * nt && S > 32) {
    int64_t nb = (2 * nt + BH - 1) / BH;
    rows = (S + nb - 1) / nb;
    /* (short sequences too: DistilBERT's 12 heads of 128 rows left 4 of
     * 16 threads idle; 32 rows still outweigh a task's packing of K, V) */
    int64_t least = S > 512 ? 256 : 32;
    if (rows < least) rows = least;
  }
  int64_t cap = ((int64_t)1 << 18) / T;
  if (cap < 16) cap = 16;
  if (rows > cap) rows = cap;
  j.rows = rows;
  ox_parallel_for(ox_kctx_pool(ctx), BH * ((S + rows - 1) / rows), 1, bhsd_task, &j);
  if (atomic_load(&j.oom)) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  return OX_OK;
}
