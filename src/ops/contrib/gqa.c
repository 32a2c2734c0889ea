/* gqa.c - kernels of onnxruntime's com.microsoft GroupQueryAttention and
 * RotaryEmbedding (schemas in src/schema/schema_contrib_gqa.c).
 *
 * GroupQueryAttention computes in float32 (float16 inputs are widened).
 * present_key / present_value are the past's valid rows, then the new
 * rows, then zeros, as onnxruntime writes them when present is a buffer of
 * its own. Two paths:
 *  - decode (one query row, no output_qk): one task per (batch, key/value
 *    head, block of cache rows) copies its block of the past into present
 *    and folds it, while it is in L1, into the running softmaxes of all the
 *    group's query heads (kernels/attn_decode.h); the partial softmaxes of
 *    the blocks are merged at the end. The cache is read once.
 *  - prompt (several rows, or output_qk): per (batch, query head) the score
 *    matrix is one GEMM against present_key, the rows are masked and
 *    normalised, and one GEMM with present_value gives the output. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/attn_decode.h"
#include "../../kernels/gemm.h"
#include "../../schema/schema_hand.h"
#include "../nn_common.h"
#include "../opcore.h"
#include "attn_kv.h"

typedef struct gqa_attrs {
  int64_t nh, kvh, lws, qk_out;
  float scale, softcap;
  bool rotary, interleaved, smooth;
} gqa_attrs;

static int gqa_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  gqa_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  int rc = akv_heads(info, e, &a->nh, &a->kvh);
  if (rc) return rc;
  a->lws = ox_node_attr_int(n, "local_window_size", -1);
  a->qk_out = ox_node_attr_int(n, "qk_output", 0);
  a->scale = ox_node_attr_float(n, "scale", 0.0f);
  a->softcap = ox_node_attr_float(n, "softcap", 0.0f);
  a->rotary = ox_node_attr_int(n, "do_rotary", 0) != 0;
  a->interleaved = ox_node_attr_int(n, "rotary_interleaved", 0) != 0;
  a->smooth = ox_node_attr_int(n, "smooth_softmax", -1) == 1;
  if (a->lws == 0 || a->lws < -1)
    return oc_prep_fail(info, e, "local_window_size must be -1 or positive, not %lld",
                        (long long)a->lws);
  if (a->qk_out < 0 || a->qk_out > 2) return oc_prep_fail(info, e, "qk_output must be 0, 1 or 2");
  if (ox_node_attr_int(n, "causal", 1) != 1)
    return oc_prep_fail(info, e, "only causal attention (causal = 1) is supported");
  if (a->softcap < 0.0f || a->softcap != a->softcap)
    return oc_prep_fail(info, e, "softcap must be >= 0");
  for (size_t i = 0; info->input_dtypes && i < info->n_inputs && i < 5; i++) {
    int32_t t = info->input_dtypes[i];
    if (t != OX_UNDEFINED && t != OX_FLOAT && t != OX_FLOAT16 && t != OX_BFLOAT16)
      return oc_prep_fail(info, e, "input %zu must be float, float16 or bfloat16", i);
  }
  *state = a;
  return OX_OK;
}

/* Everything one run works on, in float32. */
typedef struct gqa_run {
  const gqa_attrs *a;
  int64_t B, S, N, Nk, G, H, P, Pl, total, R;
  float scale;
  const int32_t *seqlens;
  bool first;            /* the first prompt: no past rows are used */
  bool inplace;          /* present is past's own buffer: its rows stay, the rest untouched */
  float *q;              /* [B, S, N, H], rotated */
  float *knew, *vnew;    /* [B, Nk, S, H], K rotated */
  const float *pk, *pv;  /* past [B, Nk, P, H] or NULL */
  float *prk, *prv;      /* present [B, Nk, Pl, H] */
  float *y;              /* [B, S, N, H] */
  float *qk;             /* [B, N, S, total] or NULL */
  const float *bias;     /* attention_bias or NULL */
  int64_t bst[3], bcols; /* its strides for batch, head, row; row length */
  const float *sink;     /* head_sink [N] or NULL */
  /* decode: split-K blocks */
  int64_t blk, nblk;
  float *pm, *pl, *pacc; /* per (b, kv head, block): G maxima, sums, G x H sums */
  atomic_bool failed;    /* a task ran out of memory */
} gqa_run;

static int64_t past_rows(const gqa_run *r, int64_t b) {
  return r->first ? 0 : (int64_t)r->seqlens[b] + 1 - r->S;
}

/* the keys query row s of batch b sees: [*lo, *hi) */
static void key_range(const gqa_run *r, int64_t b, int64_t s, int64_t *lo, int64_t *hi) {
  int64_t tot = (int64_t)r->seqlens[b] + 1, h = past_rows(r, b) + s + 1;
  if (h > tot) h = tot; /* a padded prompt row sees the whole sequence */
  *hi = h;
  *lo = r->a->lws > 0 && h > r->a->lws ? h - r->a->lws : 0;
}

/* present rows of (b, kv head): past rows [0, past) are copied by the
 * caller (all at once, or block by block on the decode path); this writes
 * the new rows after them and zeros the rest */
static void write_new_rows(gqa_run *r, int64_t b, int64_t g) {
  int64_t H = r->H, S = r->S, p = past_rows(r, b);
  size_t row = (size_t)H * sizeof(float);
  float *dk = r->prk + (b * r->Nk + g) * r->Pl * H, *dv = r->prv + (b * r->Nk + g) * r->Pl * H;
  memcpy(dk + p * H, r->knew + (b * r->Nk + g) * S * H, (size_t)S * row);
  memcpy(dv + p * H, r->vnew + (b * r->Nk + g) * S * H, (size_t)S * row);
  if (p + S < r->Pl && !r->inplace) {
    memset(dk + (p + S) * H, 0, (size_t)(r->Pl - p - S) * row);
    memset(dv + (p + S) * H, 0, (size_t)(r->Pl - p - S) * row);
  }
}

static void copy_past(gqa_run *r, int64_t b, int64_t g, int64_t j0, int64_t j1) {
  if (!r->pk || j1 <= j0 || r->inplace) return;
  int64_t H = r->H;
  size_t off = (size_t)((b * r->Nk + g) * r->Pl + j0) * H;
  size_t src = (size_t)((b * r->Nk + g) * r->P + j0) * H, n = (size_t)(j1 - j0) * H;
  memcpy(r->prk + off, r->pk + src, n * sizeof(float));
  memcpy(r->prv + off, r->pv + src, n * sizeof(float));
}

/* ---- the decode path ---- */
static void decode_tasks(void *arg, int64_t t0, int64_t t1) {
  gqa_run *r = arg;
  const ox_attn_decode_kernels *kd = ox_attn_decode_kernels_get();
  int64_t G = r->G, H = r->H, step = 64;
  float *sc = malloc((size_t)(G * step) * sizeof(float));
  if (!sc) {
    atomic_store(&r->failed, true);
    return;
  }
  for (int64_t t = t0; t < t1; t++) {
    int64_t blk = t % r->nblk, bg = t / r->nblk, b = bg / r->Nk, g = bg % r->Nk;
    int64_t past = past_rows(r, b), lo, hi;
    key_range(r, b, 0, &lo, &hi);
    int64_t j0 = blk * r->blk, j1 = j0 + r->blk;
    float *m = r->pm + t * G, *l = r->pl + t * G;
    ox_attn_part st = {m, l, r->pacc + t * G * H};
    for (int64_t i = 0; i < G; i++) m[i] = -INFINITY, l[i] = 0.0f;
    memset(st.acc, 0, (size_t)(G * H) * sizeof(float));
    ox_attn_dec d = {.q = r->q + (b * r->N + g * G) * H,
                     .G = G,
                     .H = H,
                     .scale = r->scale,
                     .softcap = r->a->softcap};
    const float *kb = r->prk + (b * r->Nk + g) * r->Pl * H;
    const float *vb = r->prv + (b * r->Nk + g) * r->Pl * H;
    for (int64_t c0 = j0; c0 < j1; c0 += step) {
      int64_t c1 = c0 + step < j1 ? c0 + step : j1;
      copy_past(r, b, g, c0, c1 < past ? c1 : past);
      int64_t a0 = c0 > lo ? c0 : lo, a1 = c1 < hi ? c1 : hi;
      if (a1 <= a0) continue;
      if (r->bias) {
        d.bias = r->bias + b * r->bst[0] + g * G * r->bst[1] + a0;
        d.bias_ld = r->bst[1];
      }
      kd->block(&d, kb + a0 * H, vb + a0 * H, a1 - a0, &st, sc);
    }
  }
  free(sc);
}

static void decode_merge(void *arg, int64_t i0, int64_t i1) {
  gqa_run *r = arg;
  const ox_attn_decode_kernels *kd = ox_attn_decode_kernels_get();
  int64_t G = r->G, H = r->H;
  for (int64_t i = i0; i < i1; i++) { /* i = (b, query head) */
    int64_t b = i / r->N, h = i % r->N, g = h / G, gi = h % G;
    int64_t t = (b * r->Nk + g) * r->nblk;
    bool has_sink = r->sink || r->a->smooth;
    /* the partial states of this head: stride G between blocks */
    kd->merge(r->pm + t * G + gi, r->pl + t * G + gi, G, r->pacc + (t * G + gi) * H, G * H, r->nblk,
              H, has_sink, r->sink ? r->sink[h] : 0.0f, r->y + (b * r->N + h) * H);
  }
}

/* ---- the prompt path ---- */
static void prompt_copy(void *arg, int64_t i0, int64_t i1) {
  gqa_run *r = arg;
  for (int64_t i = i0; i < i1; i++) {
    int64_t b = i / r->Nk, g = i % r->Nk;
    copy_past(r, b, g, 0, past_rows(r, b));
    write_new_rows(r, b, g);
  }
}

/* softmax of row[lo, hi) with e^sink in the denominator when has_sink;
 * the rest of the row set to zero */
static void softmax_window(float *row, int64_t n, int64_t lo, int64_t hi, bool has_sink,
                           float sink) {
  const ox_vmath_kernels *vm = ox_vmath_kernels_get();
  float mx = has_sink ? sink : -INFINITY;
  if (hi > lo) {
    float rm = vm->row_max(row + lo, hi - lo);
    mx = rm > mx || rm != rm ? rm : mx;
  }
  memset(row, 0, (size_t)lo * sizeof(float));
  memset(row + hi, 0, (size_t)(n - hi) * sizeof(float));
  if (hi <= lo) return;
  if (mx == -INFINITY) {
    memset(row + lo, 0, (size_t)(hi - lo) * sizeof(float));
    return;
  }
  double s = vm->exp_sum(row + lo, mx, row + lo, hi - lo);
  if (has_sink) s += exp((double)sink - mx);
  float inv = (float)(1.0 / s);
  for (int64_t j = lo; j < hi; j++) row[j] *= inv;
}

/* rows of one (batch, head) taken at a time: their scores stay in L2, and
 * the columns a block needs (from its first row's window start to its
 * last row's causal end) skip most of what the causal mask would drop */
#define PROMPT_ROWS 64

static void prompt_heads(void *arg, int64_t i0, int64_t i1) {
  gqa_run *r = arg;
  const ox_vmath_kernels *vm = ox_vmath_kernels_get();
  int64_t S = r->S, H = r->H, N = r->N, T = r->Pl;
  float *sc = malloc((size_t)(PROMPT_ROWS * T + 1) * sizeof(float));
  if (!sc) {
    atomic_store(&r->failed, true);
    return;
  }
  for (int64_t i = i0; i < i1; i++) {
    int64_t b = i / N, h = i % N, g = h / r->G;
    const float *kb = r->prk + (b * r->Nk + g) * T * H, *vb = r->prv + (b * r->Nk + g) * T * H;
    for (int64_t s0 = 0; s0 < S; s0 += PROMPT_ROWS) {
      int64_t s1 = s0 + PROMPT_ROWS < S ? s0 + PROMPT_ROWS : S, c0, c1, lo, hi;
      key_range(r, b, s0, &c0, &hi);
      key_range(r, b, s1 - 1, &lo, &c1);
      int64_t w = c1 - c0;
      ox_gemm(&(ox_gemm_desc){.M = s1 - s0,
                              .N = w,
                              .K = H,
                              .A = r->q + ((b * S + s0) * N + h) * H,
                              .lda = N * H,
                              .B = kb + c0 * H,
                              .ldb = H,
                              .trans_b = true,
                              .alpha = r->scale,
                              .C = sc,
                              .ldc = w});
      for (int64_t s = s0; s < s1; s++) {
        float *row = sc + (s - s0) * w; /* row[j]: key c0 + j */
        key_range(r, b, s, &lo, &hi);
        lo -= c0, hi -= c0;
        if (r->a->softcap > 0.0f) {
          float c = r->a->softcap;
          for (int64_t j = lo; j < hi; j++) row[j] /= c;
          vm->tanh(row + lo, row + lo, hi - lo);
          for (int64_t j = lo; j < hi; j++) row[j] *= c;
        }
        if (r->bias) {
          const float *bb = r->bias + b * r->bst[0] + h * r->bst[1] + s * r->bst[2] + c0;
          for (int64_t j = lo; j < hi; j++) row[j] += bb[j];
        }
        float *qo = r->qk ? r->qk + ((b * N + h) * S + s) * r->total : NULL;
        if (qo) memset(qo, 0, (size_t)r->total * sizeof(float));
        if (qo && r->a->qk_out == 1)
          memcpy(qo + c0 + lo, row + lo, (size_t)(hi - lo) * sizeof(float));
        softmax_window(row, w, lo, hi, r->sink || r->a->smooth, r->sink ? r->sink[h] : 0.0f);
        if (qo && r->a->qk_out == 2) memcpy(qo + c0, row, (size_t)w * sizeof(float));
      }
      ox_gemm(&(ox_gemm_desc){.M = s1 - s0,
                              .N = H,
                              .K = w,
                              .A = sc,
                              .lda = w,
                              .B = vb + c0 * H,
                              .ldb = H,
                              .alpha = 1.0f,
                              .C = r->y + ((b * S + s0) * N + h) * H,
                              .ldc = N * H});
    }
  }
  free(sc);
}

/* ---- inputs ---- */

/* rows [b, s] of the cos/sin caches for the new positions: pos[b * S + s] */
static int positions(ox_kctx *c, gqa_run *r, const ox_value *pid, int64_t rows, int64_t *pos) {
  for (int64_t b = 0; b < r->B; b++)
    for (int64_t s = 0; s < r->S; s++) {
      int64_t p = pid ? nn_get_int(pid->data, pid->dtype, b * r->S + s) : past_rows(r, b) + s;
      if (p < 0 || p >= rows)
        return ox_kctx_fail(c, OX_ERUNTIME,
                            "position %lld (batch %lld, row %lld) is outside the cos/sin caches "
                            "of %lld rows",
                            (long long)p, (long long)b, (long long)s, (long long)rows);
      pos[b * r->S + s] = p;
    }
  return OX_OK;
}

#define FAIL(...) ox_kctx_fail(c, OX_ERUNTIME, __VA_ARGS__)

/* checks the shapes and fills the sizes of r */
static int gqa_check(ox_kctx *c, gqa_run *r, ox_value *const *in, bool packed) {
  const gqa_attrs *a = r->a;
  const ox_value *Q = in[0], *K = in[1], *V = in[2], *PK = in[3], *PV = in[4];
  const ox_value *SL = in[5], *TS = in[6], *CS = in[7], *SN = in[8], *PI = in[9], *AB = in[10];
  const ox_value *HS = in[11];
  r->N = a->nh, r->Nk = a->kvh, r->G = a->nh / a->kvh;
  int rc = akv_check_qkv(c, Q, K, V, a->nh, a->kvh, packed, &r->B, &r->S, &r->H);
  if (rc) return rc;
  if ((PK == NULL) != (PV == NULL)) return FAIL("past_key and past_value must be given together");
  r->P = 0;
  if (PK) {
    for (int i = 0; i < 2; i++) {
      const ox_value *x = i ? PV : PK;
      if (x->dtype != Q->dtype) return FAIL("past_key and past_value must have the query's type");
      if (x->rank != 4 || x->dims[0] != r->B || x->dims[1] != r->Nk || x->dims[3] != r->H ||
          x->dims[2] != PK->dims[2])
        return FAIL("%s must be [%lld, %lld, past, %lld] (head size %lld)",
                    i ? "past_value" : "past_key", (long long)r->B, (long long)r->Nk,
                    (long long)r->H, (long long)r->H);
    }
    r->P = PK->dims[2];
  }
  if (SL->dtype != OX_INT32 || SL->numel != r->B)
    return FAIL("seqlens_k must be int32 [batch %lld]", (long long)r->B);
  if (TS->dtype != OX_INT32 || TS->numel != 1)
    return FAIL("total_sequence_length must be one int32 value");
  r->total = ((const int32_t *)TS->data)[0];
  r->seqlens = SL->data;
  if (r->total < 1) return FAIL("total_sequence_length %lld must be positive", (long long)r->total);
  bool later_prompt = r->S > 1 && r->S != r->total;
  r->first = !later_prompt && r->S == r->total;
  if (!r->first && r->S > r->total)
    return FAIL("total_sequence_length %lld is less than the %lld new rows", (long long)r->total,
                (long long)r->S);
  r->Pl = r->P > r->total ? r->P : r->total;
  for (int64_t b = 0; b < r->B; b++) {
    int64_t tot = (int64_t)r->seqlens[b] + 1;
    if (tot < 1 || tot > r->total)
      return FAIL("seqlens_k[%lld] = %d is not in [0, total_sequence_length - 1 = %lld]",
                  (long long)b, r->seqlens[b], (long long)(r->total - 1));
    if (!r->first && tot < r->S)
      return FAIL("seqlens_k[%lld] = %d leaves no room for the %lld new rows", (long long)b,
                  r->seqlens[b], (long long)r->S);
    if (past_rows(r, b) > r->P)
      return FAIL("seqlens_k[%lld] = %d needs %lld past rows, beyond the past buffer's %lld",
                  (long long)b, r->seqlens[b], (long long)past_rows(r, b), (long long)r->P);
  }
  r->R = 0;
  if ((CS == NULL) != (SN == NULL)) return FAIL("cos_cache and sin_cache must be given together");
  if (a->rotary && !CS) return FAIL("do_rotary needs cos_cache and sin_cache");
  if (a->rotary) {
    if (CS->rank != 2 || SN->rank != 2 || CS->dims[0] != SN->dims[0] || CS->dims[1] != SN->dims[1])
      return FAIL(
          "cos_cache and sin_cache must be two [positions, rotary / 2] matrices of one "
          "shape");
    if (CS->dims[1] < 1 || 2 * CS->dims[1] > r->H)
      return FAIL("cos_cache width %lld must be in [1, head size / 2 = %lld]",
                  (long long)CS->dims[1], (long long)(r->H / 2));
    if (CS->dims[0] < r->total && !PI)
      return FAIL("cos_cache has %lld rows, fewer than total_sequence_length %lld",
                  (long long)CS->dims[0], (long long)r->total);
    r->R = 2 * CS->dims[1];
    if (PI && (PI->rank != 2 || PI->dims[0] != r->B || PI->dims[1] != r->S))
      return FAIL("position_ids must be [%lld, %lld]", (long long)r->B, (long long)r->S);
  }
  if (AB) {
    if (AB->rank != 4 || (AB->dims[0] != 1 && AB->dims[0] != r->B) ||
        (AB->dims[1] != 1 && AB->dims[1] != r->N) || AB->dims[2] != r->S)
      return FAIL("attention_bias must be [1 or %lld, 1 or %lld, %lld, total]", (long long)r->B,
                  (long long)r->N, (long long)r->S);
    for (int64_t b = 0; b < r->B; b++)
      if (AB->dims[3] < (int64_t)r->seqlens[b] + 1)
        return FAIL("attention_bias has %lld columns, fewer than sequence %lld's %d",
                    (long long)AB->dims[3], (long long)b, r->seqlens[b] + 1);
    r->bcols = AB->dims[3];
    r->bst[2] = r->bcols;
    r->bst[1] = AB->dims[1] == 1 ? 0 : r->S * r->bcols;
    r->bst[0] = AB->dims[0] == 1 ? 0 : AB->dims[1] * r->S * r->bcols;
  }
  if (HS && HS->numel != r->N)
    return FAIL("head_sink must hold num_heads = %lld values", (long long)r->N);
  return OX_OK;
}

static int gqa_run_fn(ox_kctx *c, void *st) {
  const gqa_attrs *a = st;
  ox_value *in[12];
  for (size_t i = 0; i < 12; i++) in[i] = ox_kctx_input(c, i);
  if (!in[0] || !in[5] || !in[6])
    return FAIL("query, seqlens_k and total_sequence_length are required");
  bool packed = in[1] == NULL;
  gqa_run r = {.a = a};
  int rc = gqa_check(c, &r, in, packed);
  if (rc) return rc;
  int32_t dt = in[0]->dtype;
  r.scale = a->scale != 0.0f ? a->scale : 1.0f / sqrtf((float)r.H);
  nn_fbuf fq = {0}, fk = {0}, fv = {0}, fpk = {0}, fpv = {0}, fc = {0}, fs = {0}, fb = {0},
          fh = {0};
  int64_t *pos = NULL;
  float *work = NULL;
  ox_value *outs[4] = {NULL};
  int64_t B = r.B, S = r.S, N = r.N, Nk = r.Nk, H = r.H, Pl = r.Pl;
  if ((rc = nn_fload(c, in[0], &fq))) goto done;
  if (!packed && ((rc = nn_fload(c, in[1], &fk)) || (rc = nn_fload(c, in[2], &fv)))) goto done;
  if (in[3] && ((rc = nn_fload(c, in[3], &fpk)) || (rc = nn_fload(c, in[4], &fpv)))) goto done;
  if (a->rotary && ((rc = nn_fload(c, in[7], &fc)) || (rc = nn_fload(c, in[8], &fs)))) goto done;
  if (in[10] && (rc = nn_fload(c, in[10], &fb))) goto done;
  if (in[11] && (rc = nn_fload(c, in[11], &fh))) goto done;
  r.pk = fpk.p, r.pv = fpv.p, r.bias = fb.p, r.sink = fh.p;
  /* the outputs: float32 ones are written in place, others go through work */
  int64_t yd[3] = {B, S, N * H}, pd[4] = {B, Nk, Pl, H}, qd[4] = {B, N, S, r.total};
  bool want_qk = a->qk_out && ox_kctx_n_outputs(c) > 3 && ox_kctx_output_wanted(c, 3);
  int64_t n_y = B * S * N * H, n_p = B * Nk * Pl * H, n_qk = want_qk ? B * N * S * r.total : 0;
  int64_t n_new = B * Nk * S * H;
  if ((rc = akv_outputs(c, dt, yd, pd, outs))) goto done;
  if (want_qk && !(outs[3] = ox_kctx_output(c, 3, dt, qd, 4))) {
    rc = OX_ERUNTIME;
    goto done;
  }
  /* one scratch allocation: q, new K and V, then the outputs not in float32 */
  bool fy = dt == OX_FLOAT, fp = fy && outs[1] && outs[2];
  int64_t n_work = n_y + 2 * n_new + (fy ? 0 : n_y) + (fp ? 0 : 2 * n_p) + (fy ? 0 : n_qk);
  work = nn_falloc(n_work, 1, 1, 1);
  pos = calloc((size_t)(B * S) + 1, sizeof(int64_t));
  if (!work || !pos) {
    rc = FAIL("out of memory");
    goto done;
  }
  float *w = work;
  r.q = w, w += n_y;
  r.knew = w, w += n_new;
  r.vnew = w, w += n_new;
  akv_place(outs, &w, n_y, n_p, &r.y, &r.prk, &r.prv);
  if (n_qk) r.qk = fy ? (float *)outs[3]->data : w;
  /* the caller's shared KV buffer (onnxc_session_run_into with present over
   * past): the past rows are where they belong already */
  r.inplace = fp && r.pk && r.prk == r.pk && r.prv == r.pv && r.Pl == r.P;
  /* the caller's buffers crossed: refuse, do not garble */
  if (fp && r.pk && !r.inplace &&
      (rc = akv_check_crossed(c, r.prk, r.prv, r.pk, r.pv, (size_t)n_p * sizeof(float),
                              (size_t)(B * Nk * r.P * H) * sizeof(float))))
    goto done;
  if (a->rotary && (rc = positions(c, &r, in[9], in[7]->dims[0], pos))) goto done;
  {
    /* the new K and V rows [B, Nk, S, H], Q [B, S, N, H], rotated */
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
                               .ko = r.knew,
                               .vo = r.vnew,
                               .rows = S});
  }
  ox_thread_pool *pool = ox_kctx_pool(c);
  int threads = pool ? ox_thread_pool_size(pool) : 1;
  if (S == 1 && !n_qk) {
    /* the split: blocks of at least 256 rows, enough for two tasks per thread */
    int64_t maxtot = 1;
    for (int64_t b = 0; b < B; b++)
      if ((int64_t)r.seqlens[b] + 1 > maxtot) maxtot = (int64_t)r.seqlens[b] + 1;
    int64_t want = (2 * threads + B * Nk - 1) / (B * Nk);
    r.blk = (maxtot + want - 1) / want;
    if (r.blk < 256) r.blk = 256;
    r.nblk = (maxtot + r.blk - 1) / r.blk;
    int64_t ntask = B * Nk * r.nblk;
    for (int64_t i = 0; i < B * Nk; i++) write_new_rows(&r, i / Nk, i % Nk);
    float *part = nn_falloc(ntask, r.G, H + 2, 1);
    if (!part) {
      rc = FAIL("out of memory");
      goto done;
    }
    r.pacc = part, r.pm = part + ntask * r.G * H, r.pl = r.pm + ntask * r.G;
    ox_parallel_for(pool, ntask, 1, decode_tasks, &r);
    if (!atomic_load(&r.failed)) ox_parallel_for(pool, B * N, 1, decode_merge, &r);
    free(part);
  } else {
    ox_parallel_for(pool, B * Nk, 1, prompt_copy, &r);
    ox_parallel_for(pool, B * N, 1, prompt_heads, &r);
  }
  if (atomic_load(&r.failed)) {
    rc = FAIL("out of memory");
    goto done;
  }
  if (!fy) oc_from_f32(r.y, dt, outs[0]->data, n_y);
  if (!fp)
    for (size_t i = 1; i < 3; i++)
      if (outs[i]) oc_from_f32(i == 1 ? r.prk : r.prv, dt, outs[i]->data, n_p);
  if (n_qk && !fy) oc_from_f32(r.qk, dt, outs[3]->data, n_qk);
done:
  nn_ffree(&fq), nn_ffree(&fk), nn_ffree(&fv), nn_ffree(&fpk), nn_ffree(&fpv);
  nn_ffree(&fc), nn_ffree(&fs), nn_ffree(&fb), nn_ffree(&fh);
  free(work);
  free(pos);
  return rc;
}

/* ---- RotaryEmbedding ---- */
typedef struct rope_attrs {
  int64_t nh, rd;
  bool interleaved;
} rope_attrs;

static int rope_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  rope_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  a->nh = ox_node_attr_int(n, "num_heads", 0);
  a->rd = ox_node_attr_int(n, "rotary_embedding_dim", 0);
  a->interleaved = ox_node_attr_int(n, "interleaved", 0) != 0;
  if (a->nh < 0 || a->rd < 0 || a->rd % 2)
    return oc_prep_fail(info, e, "num_heads must be >= 0 and rotary_embedding_dim even and >= 0");
  if (a->rd > 0 && a->nh == 0) return oc_prep_fail(info, e, "rotary_embedding_dim needs num_heads");
  if (ox_node_attr_int(n, "is_packed_batching", 0) != 0)
    return oc_prep_fail(info, e, "is_packed_batching = 1 is not supported");
  *state = a;
  return OX_OK;
}

static int rope_run(ox_kctx *c, void *st) {
  const rope_attrs *a = st;
  ox_value *X = ox_kctx_input(c, 0), *PI = ox_kctx_input(c, 1), *CS = ox_kctx_input(c, 2);
  ox_value *SN = ox_kctx_input(c, 3);
  if (!X || !PI || !CS || !SN || !nn_is_real(X->dtype))
    return FAIL("input, position_ids, cos_cache and sin_cache are required");
  if (X->rank != 3 && X->rank != 4) return FAIL("input must have rank 3 or 4, not %zu", X->rank);
  if (CS->rank != 2 || SN->rank != 2 || CS->dims[0] != SN->dims[0] || CS->dims[1] != SN->dims[1])
    return FAIL(
        "cos_cache and sin_cache must be two [positions, rotary / 2] matrices of one shape");
  bool four = X->rank == 4;
  int64_t B = X->dims[0], S = four ? X->dims[2] : X->dims[1];
  int64_t hidden = four ? X->dims[1] * X->dims[3] : X->dims[2];
  int64_t H = a->rd == 0 ? 2 * CS->dims[1] : hidden / a->nh;
  if (H <= 0 || hidden % H)
    return FAIL("head size %lld does not divide the hidden size %lld", (long long)H,
                (long long)hidden);
  int64_t N = a->nh > 0 ? a->nh : hidden / H, R = a->rd > 0 ? a->rd : H;
  if (four && X->dims[1] != N)
    return FAIL("input has %lld heads, not %lld", (long long)X->dims[1], (long long)N);
  if (N * H != hidden)
    return FAIL("num_heads %lld does not divide the hidden size %lld", (long long)N,
                (long long)hidden);
  if (R > H)
    return FAIL("rotary_embedding_dim %lld is larger than the head size %lld", (long long)R,
                (long long)H);
  if (CS->dims[1] != R / 2)
    return FAIL("cos_cache width %lld is not rotary dimension / 2 = %lld", (long long)CS->dims[1],
                (long long)(R / 2));
  bool one = PI->numel == 1;
  if (!one && (PI->rank != 2 || PI->dims[0] != B || PI->dims[1] != S))
    return FAIL("position_ids must be one value or [%lld, %lld]", (long long)B, (long long)S);
  ox_value *Y = ox_kctx_output(c, 0, X->dtype, X->dims, X->rank);
  if (!Y) return OX_ERUNTIME;
  nn_fbuf fx = {0}, fc = {0}, fs = {0}, fy = {0};
  int rc;
  if ((rc = nn_fload(c, X, &fx)) || (rc = nn_fload(c, CS, &fc)) || (rc = nn_fload(c, SN, &fs)) ||
      (rc = nn_fout(c, Y, &fy)))
    goto done;
  const ox_attn_decode_kernels *kd = ox_attn_decode_kernels_get();
  memcpy(fy.p, fx.p, (size_t)X->numel * sizeof(float));
  for (int64_t b = 0; b < B; b++)
    for (int64_t s = 0; s < S; s++) {
      int64_t p =
          one ? nn_get_int(PI->data, PI->dtype, 0) + s : nn_get_int(PI->data, PI->dtype, b * S + s);
      if (p < 0 || p >= CS->dims[0]) {
        rc = FAIL("position %lld is outside the cos/sin caches of %lld rows", (long long)p,
                  (long long)CS->dims[0]);
        goto done;
      }
      for (int64_t h = 0; h < N; h++) {
        int64_t off = four ? ((b * N + h) * S + s) * H : ((b * S + s) * N + h) * H;
        kd->rotary(fx.p + off, fy.p + off, R, fc.p + p * (R / 2), fs.p + p * (R / 2),
                   a->interleaved);
      }
    }
done:
  if (rc)
    nn_ffree(&fy);
  else
    nn_fstore(Y, &fy);
  nn_ffree(&fx), nn_ffree(&fc), nn_ffree(&fs);
  return rc;
}

const ox_kernel_def ox_ops_contrib_gqa[] = {
    /* present_key / present_value may be the past's own buffers (alias_outputs):
     * the new rows are then written in place, nothing copied */
    {OX_CONTRIB_DOMAIN, "GroupQueryAttention", 1, 1, gqa_prepare, gqa_run_fn, NULL,
     .alias_outputs = 1u << 1 | 1u << 2},
    {OX_CONTRIB_DOMAIN, "RotaryEmbedding", 1, 1, rope_prepare, rope_run, NULL},
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
