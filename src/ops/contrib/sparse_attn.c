/* sparse_attn.c - kernel of onnxruntime's com.microsoft SparseAttention
 * (schema in src/schema/schema_contrib_gqa.c, shapes in
 * src/infer/infer_ops_contrib_gqa.c): causal grouped-query attention over a
 * key/value cache, restricted to the key blocks a block-sparse layout keeps.
 *
 * It computes in float32 (float16 inputs are widened). present_key /
 * present_value are the past buffer with the new rows written at each
 * sequence's past length; onnxruntime insists that present is past's own
 * buffer, and when the runtime arranges that (alias_outputs) nothing is
 * copied here either.
 *
 * The attention itself is GroupQueryAttention's decode machinery
 * (kernels/attn_decode.h): one task per (batch, query head, block of query
 * rows); each query row's running softmax is fed only the key blocks its
 * layout row keeps, cut at the row's causal end, and the one partial state
 * is finished by the merge entry. No score matrix is built, so the work is
 * proportional to the kept blocks, not to the sequence squared. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/attn_decode.h"
#include "../../schema/schema_hand.h"
#include "../nn_common.h"
#include "../opcore.h"
#include "attn_kv.h"

typedef struct sp_attrs {
  int64_t nh, kvh, blk;
  float scale;
  bool rotary, interleaved;
} sp_attrs;

static int sp_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  sp_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  int rc = akv_heads(info, e, &a->nh, &a->kvh);
  if (rc) return rc;
  a->blk = ox_node_attr_int(n, "sparse_block_size", 0);
  a->scale = ox_node_attr_float(n, "scale", 0.0f);
  a->rotary = ox_node_attr_int(n, "do_rotary", 0) != 0;
  a->interleaved = ox_node_attr_int(n, "rotary_interleaved", 0) != 0;
  if (a->blk <= 0 || a->blk > (1 << 20))
    return oc_prep_fail(info, e, "sparse_block_size must be positive, not %lld", (long long)a->blk);
  if (a->scale != a->scale) return oc_prep_fail(info, e, "scale must be a number");
  for (size_t i = 0; info->input_dtypes && i < info->n_inputs; i++) {
    int32_t t = info->input_dtypes[i];
    bool idx = i >= 5 && i <= 8;
    if (t != OX_UNDEFINED && !idx && t != OX_FLOAT && t != OX_FLOAT16 && t != OX_BFLOAT16)
      return oc_prep_fail(info, e, "input %zu must be float, float16 or bfloat16", i);
    if (t != OX_UNDEFINED && idx && t != OX_INT32)
      return oc_prep_fail(info, e, "input %zu must be int32", i);
  }
  *state = a;
  return OX_OK;
}

/* Everything one run works on, in float32. */
typedef struct sp_run {
  const sp_attrs *a;
  int64_t B, S, N, Nk, G, H, M, total, R;
  int64_t L, nb;              /* layouts, blocks per layout row (max_blocks) */
  int64_t ncol;               /* block_col_indices' row length */
  const int32_t *rows, *cols; /* CSR [L, nb + 1], [L, ncol] */
  const int32_t *klen;        /* key_total_sequence_lengths [B] */
  bool prompt;                /* total_sequence_length == S: no past rows */
  float scale;
  float *q;           /* [B, S, N, H], rotated */
  float *prk, *prv;   /* present [B, Nk, M, H] */
  float *y;           /* [B, S, N, H] */
  int64_t qrows, nqb; /* query rows per task, tasks per (b, head) */
  atomic_bool failed; /* a task ran out of memory */
} sp_run;

static int64_t past_len(const sp_run *r, int64_t b) {
  return r->prompt ? 0 : (int64_t)r->klen[b] - r->S;
}

/* keys fed to the block pass at a time: bounds the scratch (G * n floats) */
#define SP_CHUNK 256

/* folds keys [k0, k1) of (b, kv head g) into one query row's state */
static void fold(const sp_run *r, const ox_attn_dec *d, int64_t b, int64_t g, int64_t k0,
                 int64_t k1, ox_attn_part *st, float *sc) {
  const ox_attn_decode_kernels *kd = ox_attn_decode_kernels_get();
  int64_t H = r->H;
  const float *kb = r->prk + (b * r->Nk + g) * r->M * H, *vb = r->prv + (b * r->Nk + g) * r->M * H;
  for (int64_t c0 = k0; c0 < k1; c0 += SP_CHUNK) {
    int64_t c1 = c0 + SP_CHUNK < k1 ? c0 + SP_CHUNK : k1;
    kd->block(d, kb + c0 * H, vb + c0 * H, c1 - c0, st, sc);
  }
}

static void sp_tasks(void *arg, int64_t t0, int64_t t1) {
  sp_run *r = arg;
  const ox_attn_decode_kernels *kd = ox_attn_decode_kernels_get();
  int64_t H = r->H, N = r->N, S = r->S, blk = r->a->blk;
  float *buf = malloc((size_t)(SP_CHUNK + H + 2) * sizeof(float));
  if (!buf) {
    atomic_store(&r->failed, true);
    return;
  }
  float *sc = buf, *acc = buf + SP_CHUNK, *m = acc + H, *l = m + 1;
  for (int64_t t = t0; t < t1; t++) {
    int64_t qb = t % r->nqb, bh = t / r->nqb, b = bh / N, h = bh % N, g = h / r->G;
    int64_t lay = h % r->L, past = past_len(r, b);
    const int32_t *rows = r->rows + lay * (r->nb + 1), *cols = r->cols + lay * r->ncol;
    int64_t s1 = (qb + 1) * r->qrows < S ? (qb + 1) * r->qrows : S;
    for (int64_t s = qb * r->qrows; s < s1; s++) {
      int64_t p = past + s, row = p / blk; /* the query's position and layout row */
      ox_attn_dec d = {.q = r->q + ((b * S + s) * N + h) * H, .G = 1, .H = H, .scale = r->scale};
      ox_attn_part st = {m, l, acc};
      *m = -INFINITY, *l = 0.0f;
      memset(acc, 0, (size_t)H * sizeof(float));
      /* the CSR was checked to be lower triangular with increasing columns,
       * so a row holding row + 1 blocks keeps every block: one pass */
      if (rows[row + 1] - rows[row] == row + 1) {
        fold(r, &d, b, g, 0, p + 1, &st, sc);
      } else {
        for (int32_t j = rows[row]; j < rows[row + 1]; j++) {
          int64_t k0 = (int64_t)cols[j] * blk, k1 = k0 + blk < p + 1 ? k0 + blk : p + 1;
          if (k1 > k0) fold(r, &d, b, g, k0, k1, &st, sc);
        }
      }
      kd->merge(m, l, 1, acc, H, 1, H, false, 0.0f, r->y + ((b * S + s) * N + h) * H);
    }
  }
  free(buf);
}

#define FAIL(...) ox_kctx_fail(c, OX_ERUNTIME, __VA_ARGS__)

/* the block layouts: every layout's CSR well formed, lower triangular,
 * holding each row's diagonal block (so no query is left without keys) */
static int check_layout(ox_kctx *c, const sp_run *r) {
  for (int64_t lay = 0; lay < r->L; lay++) {
    const int32_t *rows = r->rows + lay * (r->nb + 1), *cols = r->cols + lay * r->ncol;
    if (rows[0] != 0)
      return FAIL("block_row_indices of layout %lld must start at 0, not %d", (long long)lay,
                  rows[0]);
    for (int64_t i = 0; i < r->nb; i++) {
      if (rows[i + 1] < rows[i] || rows[i + 1] > r->ncol)
        return FAIL(
            "block_row_indices of layout %lld are not a CSR row index: entry %lld = %d is "
            "not in [%d, %lld]",
            (long long)lay, (long long)(i + 1), rows[i + 1], rows[i], (long long)r->ncol);
      bool diag = false;
      for (int32_t j = rows[i]; j < rows[i + 1]; j++) {
        if (cols[j] < 0 || cols[j] > i || (j > rows[i] && cols[j] <= cols[j - 1]))
          return FAIL(
              "block_col_indices of layout %lld, row %lld: column %d is not increasing in "
              "[0, %lld] (the mask must be lower triangular)",
              (long long)lay, (long long)i, cols[j], (long long)i);
        diag |= cols[j] == i;
      }
      if (!diag)
        return FAIL("layout %lld, block row %lld does not keep its diagonal block", (long long)lay,
                    (long long)i);
    }
  }
  return OX_OK;
}

/* checks the shapes and fills the sizes of r */
static int sp_check(ox_kctx *c, sp_run *r, ox_value *const *in, bool packed) {
  const sp_attrs *a = r->a;
  const ox_value *Q = in[0], *K = in[1], *V = in[2], *PK = in[3], *PV = in[4];
  const ox_value *RI = in[5], *CI = in[6], *TS = in[7], *KL = in[8], *CS = in[9], *SN = in[10];
  r->N = a->nh, r->Nk = a->kvh, r->G = a->nh / a->kvh;
  int rc = akv_check_qkv(c, Q, K, V, a->nh, a->kvh, packed, &r->B, &r->S, &r->H);
  if (rc) return rc;
  for (int i = 0; i < 2; i++) {
    const ox_value *x = i ? PV : PK;
    if (x->dtype != Q->dtype) return FAIL("past_key and past_value must have the query's type");
    if (x->rank != 4 || x->dims[0] != r->B || x->dims[1] != r->Nk || x->dims[3] != r->H ||
        x->dims[2] != PK->dims[2])
      return FAIL(
          "%s must be [%lld, %lld, buffer length, %lld] (kv_num_heads %lld, head size "
          "%lld), as the other past",
          i ? "past_value" : "past_key", (long long)r->B, (long long)r->Nk, (long long)r->H,
          (long long)r->Nk, (long long)r->H);
  }
  r->M = PK->dims[2];
  if (RI->dtype != OX_INT32 || CI->dtype != OX_INT32 || RI->rank != 2 || CI->rank != 2)
    return FAIL("block_row_indices and block_col_indices must be int32 matrices");
  r->L = RI->dims[0], r->nb = RI->dims[1] - 1, r->ncol = CI->dims[1];
  if (r->L < 1 || r->N % r->L || r->nb < 1)
    return FAIL(
        "block_row_indices must be [layouts, max_blocks + 1] with layouts dividing "
        "num_heads %lld, not [%lld, %lld]",
        (long long)r->N, (long long)RI->dims[0], (long long)RI->dims[1]);
  if (CI->dims[0] != r->L)
    return FAIL("block_col_indices has %lld layouts, block_row_indices %lld",
                (long long)CI->dims[0], (long long)r->L);
  r->rows = RI->data, r->cols = CI->data;
  if (TS->dtype != OX_INT32 || TS->numel != 1)
    return FAIL("total_sequence_length must be one int32 value");
  r->total = ((const int32_t *)TS->data)[0];
  if (r->total < r->S)
    return FAIL("total_sequence_length %lld is less than the %lld new rows", (long long)r->total,
                (long long)r->S);
  if (r->nb * a->blk < r->total)
    return FAIL(
        "the layouts cover %lld blocks of sparse_block_size %lld = %lld positions, "
        "fewer than total_sequence_length %lld",
        (long long)r->nb, (long long)a->blk, (long long)(r->nb * a->blk), (long long)r->total);
  if (r->M < r->total)
    return FAIL("the past buffer holds %lld rows, fewer than total_sequence_length %lld",
                (long long)r->M, (long long)r->total);
  r->prompt = r->total == r->S;
  if (KL->dtype != OX_INT32 || KL->rank != 1 || KL->dims[0] != r->B)
    return FAIL("key_total_sequence_lengths must be int32 [batch %lld]", (long long)r->B);
  r->klen = KL->data;
  for (int64_t b = 0; b < r->B; b++) {
    int64_t kl = r->klen[b];
    if (kl < (r->prompt ? 1 : r->S) || kl > r->total)
      return FAIL(
          "key_total_sequence_lengths[%lld] = %lld is not in [%lld, "
          "total_sequence_length %lld] (the past buffer holds %lld rows)",
          (long long)b, (long long)kl, (long long)(r->prompt ? 1 : r->S), (long long)r->total,
          (long long)r->M);
  }
  if ((rc = check_layout(c, r))) return rc;
  r->R = 0;
  if (a->rotary) {
    if (!CS || !SN) return FAIL("do_rotary needs cos_cache and sin_cache");
    if (CS->rank != 2 || SN->rank != 2 || CS->dims[0] != SN->dims[0] ||
        CS->dims[1] != SN->dims[1] || CS->dtype != Q->dtype || SN->dtype != Q->dtype)
      return FAIL(
          "cos_cache and sin_cache must be two [positions, rotary / 2] matrices of one "
          "shape and the query's type");
    if (CS->dims[1] < 1 || 2 * CS->dims[1] > r->H)
      return FAIL("cos_cache width %lld must be in [1, head size / 2 = %lld]",
                  (long long)CS->dims[1], (long long)(r->H / 2));
    if (CS->dims[0] < r->total)
      return FAIL("cos_cache has %lld rows, fewer than total_sequence_length %lld",
                  (long long)CS->dims[0], (long long)r->total);
    r->R = 2 * CS->dims[1];
  }
  return OX_OK;
}

static int sp_run_fn(ox_kctx *c, void *st) {
  const sp_attrs *a = st;
  ox_value *in[11];
  for (size_t i = 0; i < 11; i++) in[i] = ox_kctx_input(c, i);
  for (size_t i = 3; i < 9; i++)
    if (!in[i])
      return FAIL(
          "past_key, past_value, block_row_indices, block_col_indices, "
          "total_sequence_length and key_total_sequence_lengths are required");
  if (!in[0]) return FAIL("query is required");
  bool packed = in[1] == NULL;
  sp_run r = {.a = a};
  int rc = sp_check(c, &r, in, packed);
  if (rc) return rc;
  int32_t dt = in[0]->dtype;
  r.scale = a->scale != 0.0f ? a->scale : 1.0f / sqrtf((float)r.H);
  nn_fbuf fq = {0}, fk = {0}, fv = {0}, fpk = {0}, fpv = {0}, fc = {0}, fs = {0};
  float *work = NULL;
  int64_t *pos = NULL; /* [B * S] rotary positions, then [B] past lengths */
  ox_value *outs[3] = {NULL};
  int64_t B = r.B, S = r.S, N = r.N, Nk = r.Nk, H = r.H;
  int64_t yd[3] = {B, S, N * H}, pd[4] = {B, Nk, r.M, H};
  int64_t n_y = B * S * N * H, n_p = B * Nk * r.M * H;
  if ((rc = nn_fload(c, in[0], &fq))) goto done;
  if (!packed && ((rc = nn_fload(c, in[1], &fk)) || (rc = nn_fload(c, in[2], &fv)))) goto done;
  if ((rc = nn_fload(c, in[3], &fpk)) || (rc = nn_fload(c, in[4], &fpv))) goto done;
  if (a->rotary && ((rc = nn_fload(c, in[9], &fc)) || (rc = nn_fload(c, in[10], &fs)))) goto done;
  if ((rc = akv_outputs(c, dt, yd, pd, outs))) goto done;
  /* one scratch allocation: q, then the outputs not written in place (a
   * present nobody wants still holds the keys the attention reads) */
  bool fy = dt == OX_FLOAT, fp = fy && outs[1] && outs[2];
  work = nn_falloc(n_y + (fy ? 0 : n_y) + (fp ? 0 : 2 * n_p), 1, 1, 1);
  pos = calloc((size_t)(B * S + B), sizeof(int64_t));
  if (!work || !pos) {
    rc = FAIL("out of memory");
    goto done;
  }
  float *w = work;
  r.q = w, w += n_y;
  akv_place(outs, &w, n_y, n_p, &r.y, &r.prk, &r.prv);
  /* present over past's own buffer (the runtime's alias): the past rows
   * are in place already; any other overlap would garble the copy */
  bool inplace = r.prk == fpk.p && r.prv == fpv.p;
  if (!inplace) {
    size_t nb = (size_t)n_p * sizeof(float);
    if ((rc = akv_check_crossed(c, r.prk, r.prv, fpk.p, fpv.p, nb, nb))) goto done;
    memcpy(r.prk, fpk.p, (size_t)n_p * sizeof(float));
    memcpy(r.prv, fpv.p, (size_t)n_p * sizeof(float));
  }
  {
    /* the new rows go to present at each sequence's past length, which is
     * also their position for the rotary embedding */
    for (int64_t b = 0; b < B; b++) {
      pos[B * S + b] = past_len(&r, b);
      for (int64_t i = 0; i < S; i++) pos[b * S + i] = past_len(&r, b) + i;
    }
    akv_split_qkv(&(akv_split){.B = B,
                               .S = S,
                               .N = N,
                               .Nk = Nk,
                               .H = H,
                               .R = r.R,
                               .interleaved = a->interleaved,
                               .q = fq.p,
                               .k = fk.p,
                               .v = fv.p,
                               .cs = a->rotary ? fc.p : NULL,
                               .sn = a->rotary ? fs.p : NULL,
                               .pos = pos,
                               .qo = r.q,
                               .ko = r.prk,
                               .vo = r.prv,
                               .rows = r.M,
                               .row0 = pos + B * S});
  }
  /* tasks of (batch, head, sparse_block_size query rows): a prompt splits
   * into as many tasks as it has layout rows, a decode step is one task a
   * head */
  r.qrows = a->blk;
  r.nqb = (S + r.qrows - 1) / r.qrows;
  ox_parallel_for(ox_kctx_pool(c), B * N * r.nqb, 1, sp_tasks, &r);
  if (atomic_load(&r.failed)) {
    rc = FAIL("out of memory");
    goto done;
  }
  if (!fy) oc_from_f32(r.y, dt, outs[0]->data, n_y);
  if (!fp)
    for (size_t i = 1; i < 3; i++)
      if (outs[i]) oc_from_f32(i == 1 ? r.prk : r.prv, dt, outs[i]->data, n_p);
done:
  nn_ffree(&fq), nn_ffree(&fk), nn_ffree(&fv), nn_ffree(&fpk), nn_ffree(&fpv);
  nn_ffree(&fc), nn_ffree(&fs);
  free(work);
  free(pos);
  return rc;
}

const ox_kernel_def ox_ops_contrib_sparse[] = {
    /* present_key / present_value may be the past's own buffers (alias_outputs),
     * as onnxruntime requires them to be: the new rows are then written in place */
    {OX_CONTRIB_DOMAIN, "SparseAttention", 1, 1, sp_prepare, sp_run_fn, NULL,
     .alias_outputs = 1u << 1 | 1u << 2},
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
