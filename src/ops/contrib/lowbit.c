/* lowbit.c - kernels of onnxruntime's com.microsoft MatMulNBits, GatherBlockQuantized and the
 * contrib QuantizeLinear / DequantizeLinear (schemas in src/schema/schema_contrib_lowbit.c).
 *
 * MatMulNBits runs on the weight-only low-bit decoder of MatMulDQFused (src/kernels/wqgemm.c):
 * at prepare B ([N, k_blocks, blob], the weights transposed and packed low field first) is
 * unpacked into the decoder's K x N layout at the weights' own width, once; runs never make
 * the float weights. Three things the decoder does not take directly:
 *  - no zero point: onnxruntime's default 2^(bits - 1) is the decoder's signed form (q - 2^(bits-1)
 *    as a signed value, zero point 0), which keeps its fast path without zero points;
 *  - float zero points: the decoder runs with zero point 0, and s * z of each block is taken
 *    off after: Y -= (sums of A over each block) x (s * z), a product n_blk deep;
 *  - g_idx (act-order): the rows of each group are gathered into one block (padded to the
 *    decoder's unit), and A's columns are gathered the same way at run time.
 * GatherBlockQuantized: lowbit_gather.c; the Quantize/DequantizeLinear forms run on quant.c's
 * kernels. */
#include "lowbit.h"

#include <stdlib.h>
#include <string.h>

#include "../../base/floatconv.h"
#include "../../kernels/gemm.h"
#include "../../kernels/wqgemm.h"
#include "../../schema/schema_hand.h"
#include "../onnx/quant.h"
#include "../opcore.h"

typedef struct nb_state {
  ox_wq_matrix w;
  int64_t K, N;
  int64_t *perm; /* g_idx: A's column of each of the decoder's w.K rows, -1 padding; or NULL */
  float *zs;     /* float zero points: s * z per decoder block and column [n_blk][N]; or NULL */
  float *bias;   /* [N] when bias is a constant, as float; else read at run time */
  bool int8_decode;
} nb_state;

static void nb_release(void *state) {
  nb_state *s = state;
  if (!s) return;
  ox_wq_free(&s->w);
  free(s->perm);
  free(s->zs);
  free(s->bias);
  free(s);
}

/* field k of row n of B (fields packed low first, blob bytes per block) */
static inline int nb_field(const uint8_t *B, int64_t n, int64_t k, int bits, int64_t bs,
                           int64_t kblk, int64_t blob) {
  int64_t bit = (k % bs) * bits;
  uint8_t byte = B[(n * kblk + k / bs) * blob + bit / 8];
  return (byte >> (bit % 8)) & ((1 << bits) - 1);
}

/* a value of a float or float16 tensor as float */
static float nb_real(const ox_value *v, int64_t i) {
  return v->dtype == OX_FLOAT16 ? ox_f16_to_f32(((const uint16_t *)v->data)[i])
                                : ((const float *)v->data)[i];
}

/* The decoder's blocks: each holds rows of one group (block of onnxruntime's scales) of
 * `chunk` rows; rows[r] is A's column of decoder row r, -1 for padding. Without g_idx every
 * block is the group k / bs, in order. */
typedef struct nb_layout {
  int64_t chunk, n_blk, rows_n;
  int64_t *rows;  /* [rows_n] */
  int64_t *group; /* [n_blk] */
} nb_layout;

static int nb_make_layout(const int32_t *g, int64_t K, int64_t bs, int64_t kblk, int bits,
                          nb_layout *L) {
  memset(L, 0, sizeof *L);
  if (!g) { /* A's columns as they are: K rows, the last block short */
    L->chunk = bs, L->n_blk = kblk, L->rows_n = K;
    L->rows = malloc((size_t)K * sizeof *L->rows);
    L->group = malloc((size_t)kblk * sizeof *L->group);
    if (!L->rows || !L->group) return free(L->rows), free(L->group), OX_ENOMEM;
    for (int64_t k = 0; k < K; k++) L->rows[k] = k;
    for (int64_t b = 0; b < kblk; b++) L->group[b] = b;
    return OX_OK;
  }
  int64_t unit = 32 / bits;
  int64_t *count = calloc((size_t)kblk, sizeof *count);
  if (!count) return OX_ENOMEM;
  int64_t most = 0, used = 0;
  for (int64_t k = 0; k < K; k++) {
    int64_t b = g[k];
    if (count[b]++ == 0) used++;
    if (count[b] > most) most = count[b];
  }
  /* one block per group when that costs at most twice the rows (act-order gives groups of
   * block_size), else blocks of the decoder's unit, so no group of skewed g_idx pads much */
  int64_t whole = (most + unit - 1) / unit * unit;
  L->chunk = used * whole <= 2 * K + unit ? whole : unit;
  int64_t n_blk = 0;
  for (int64_t b = 0; b < kblk; b++) n_blk += (count[b] + L->chunk - 1) / L->chunk;
  L->n_blk = n_blk;
  L->rows_n = n_blk * L->chunk;
  L->rows = malloc((size_t)L->rows_n * sizeof *L->rows);
  L->group = malloc((size_t)n_blk * sizeof *L->group);
  int64_t *start = malloc((size_t)kblk * sizeof *start);
  if (!L->rows || !L->group || !start) {
    free(count), free(start), free(L->rows), free(L->group);
    return OX_ENOMEM;
  }
  /* each group's first row, then its rows in order of k */
  int64_t at = 0, blk = 0;
  for (int64_t b = 0; b < kblk; b++) {
    start[b] = at;
    int64_t nb = (count[b] + L->chunk - 1) / L->chunk;
    for (int64_t j = 0; j < nb; j++) L->group[blk++] = b;
    at += nb * L->chunk;
  }
  for (int64_t r = 0; r < L->rows_n; r++) L->rows[r] = -1;
  for (int64_t k = 0; k < K; k++) {
    int64_t b = g[k];
    L->rows[start[b]++] = k;
  }
  free(count);
  free(start);
  return OX_OK;
}

static void nb_free_layout(nb_layout *L) {
  free(L->rows);
  free(L->group);
}

typedef struct nb_attrs {
  int64_t K, N, bits, bs, level, kblk, blob;
} nb_attrs;

/* checks the attributes and the constants' shapes against them (B, scales, zero points,
 * g_idx and bias, where they are constants) */
static int nb_check(const ox_kinfo *info, nb_attrs *a, ox_err *e) {
  const ox_node *nd = info->node;
  a->K = ox_node_attr_int(nd, "K", -1);
  a->N = ox_node_attr_int(nd, "N", -1);
  a->bits = ox_node_attr_int(nd, "bits", 4);
  a->bs = ox_node_attr_int(nd, "block_size", -1);
  a->level = ox_node_attr_int(nd, "accuracy_level", 0);
  if (a->K < 1 || a->N < 1) return oc_prep_fail(info, e, "attributes K and N must be positive");
  if (a->bits != 2 && a->bits != 4 && a->bits != 8)
    return oc_prep_fail(info, e, "bits must be 2, 4 or 8, not %lld", (long long)a->bits);
  if (a->bs < 16 || (a->bs & (a->bs - 1)))
    return oc_prep_fail(info, e, "block_size must be a power of two of at least 16, not %lld",
                        (long long)a->bs);
  a->kblk = (a->K + a->bs - 1) / a->bs;
  a->blob = a->bs * a->bits / 8;
  ox_value *const *ci = info->const_inputs;
  const ox_value *B = ci && info->n_inputs > 1 ? ci[1] : NULL;
  const ox_value *S = ci && info->n_inputs > 2 ? ci[2] : NULL;
  const ox_value *Z = ci && info->n_inputs > 3 ? ci[3] : NULL;
  const ox_value *G = ci && info->n_inputs > 4 ? ci[4] : NULL;
  const ox_value *bias = ci && info->n_inputs > 5 ? ci[5] : NULL;
  if (B && (B->dtype != OX_UINT8 || B->rank != 3 || B->dims[0] != a->N || B->dims[1] != a->kblk ||
            B->dims[2] != a->blob))
    return oc_prep_fail(info, e,
                        "B must be uint8 [N, ceil(K / block_size), block_size * bits / 8] = "
                        "[%lld, %lld, %lld] for K %lld, N %lld",
                        (long long)a->N, (long long)a->kblk, (long long)a->blob, (long long)a->K,
                        (long long)a->N);
  int64_t nsc = a->N * a->kblk;
  if (S && (S->numel != nsc || S->rank < 1 || S->rank > 2 || (S->rank == 2 && S->dims[0] != a->N)))
    return oc_prep_fail(info, e, "scales must be [N * k_blocks] or [N, k_blocks] = [%lld, %lld]",
                        (long long)a->N, (long long)a->kblk);
  if (Z) {
    int64_t per = Z->dtype == OX_UINT8 ? (a->kblk * a->bits + 7) / 8 : a->kblk;
    if (Z->numel != a->N * per || Z->rank < 1 || Z->rank > 2 ||
        (Z->rank == 2 && Z->dims[0] != a->N))
      return oc_prep_fail(info, e,
                          "zero_points must be [N * %lld] or [N, %lld] (%s) for N %lld, not %lld "
                          "values",
                          (long long)per, (long long)per,
                          Z->dtype == OX_UINT8 ? "packed uint8" : "of the scales' type",
                          (long long)a->N, (long long)Z->numel);
  }
  if (G) {
    if (G->dtype != OX_INT32 || G->rank != 1 || (G->numel != a->K && G->numel != a->kblk * a->bs))
      return oc_prep_fail(info, e, "g_idx must be int32 [K] or [k_blocks * block_size] = [%lld]",
                          (long long)a->K);
    const int32_t *g = G->data;
    for (int64_t k = 0; k < G->numel; k++)
      if (g[k] < 0 || g[k] >= a->kblk)
        return oc_prep_fail(info, e, "g_idx[%lld] = %d is out of range [0, %lld)", (long long)k,
                            (int)g[k], (long long)a->kblk);
  }
  if (bias && bias->numel != a->N)
    return oc_prep_fail(info, e, "bias must have N = %lld values, not %lld", (long long)a->N,
                        (long long)bias->numel);
  return OX_OK;
}

/* the unpacking of B into the decoder's K x N bytes, 64 rows of B (columns of the matrix)
 * at a time, each read in order, so that the transposition stays in cache */
typedef struct nb_unpack_job {
  const uint8_t *B;
  uint8_t *q;
  const nb_layout *L;
  const nb_attrs *a;
  bool sgn;
  int half;
} nb_unpack_job;

static void nb_unpack_tiles(void *arg, int64_t t0, int64_t t1) {
  const nb_unpack_job *j = arg;
  const nb_attrs *a = j->a;
  int bits = (int)a->bits;
  int64_t N = a->N;
  for (int64_t t = t0; t < t1; t++) {
    int64_t n0 = t * 64, n1 = n0 + 64 < N ? n0 + 64 : N;
    for (int64_t r = 0; r < j->L->rows_n; r++) {
      int64_t k = j->L->rows[r];
      uint8_t *qr = j->q + r * N;
      for (int64_t n = n0; n < n1; n++) {
        int v =
            k < 0 ? (j->sgn ? j->half : 0) : nb_field(j->B, n, k, bits, a->bs, a->kblk, a->blob);
        qr[n] = j->sgn ? (uint8_t)(int8_t)(v - j->half) : (uint8_t)v;
      }
    }
  }
}

/* fills the decoder's K x N weights (one byte each), scales and integer zero points
 * [n_blk x N] from the constants, in layout L */
static int nb_pack(const ox_kinfo *info, const nb_attrs *a, const nb_layout *L, const ox_value *B,
                   const ox_value *S, const ox_value *Z, nb_state *st, ox_err *e) {
  int bits = (int)a->bits;
  int64_t N = a->N, R = L->rows_n, nb = L->n_blk;
  bool zint = Z && Z->dtype == OX_UINT8, zflt = Z && !zint;
  /* no zero point: the decoder's signed form stands for onnxruntime's 2^(bits - 1) */
  bool sgn = !Z;
  int half = 1 << (bits - 1);
  uint8_t *q = malloc((size_t)(R * N));
  float *s = malloc((size_t)(nb * N) * sizeof *s);
  uint8_t *z = zint ? malloc((size_t)(nb * N)) : NULL;
  st->zs = zflt ? malloc((size_t)(nb * N) * sizeof *st->zs) : NULL;
  int rc = OX_OK;
  if (!q || !s || (zint && !z) || (zflt && !st->zs)) {
    rc = ox_err_set(e, OX_ENOMEM, "out of memory");
    goto done;
  }
  nb_unpack_job j = {B->data, q, L, a, sgn, half};
  ox_parallel_for(info->pool, (N + 63) / 64, 1, nb_unpack_tiles, &j);
  int64_t zrow = (a->kblk * bits + 7) / 8;
  for (int64_t b = 0; b < nb; b++) {
    int64_t g = L->group[b];
    for (int64_t n = 0; n < N; n++) {
      float sc = nb_real(S, n * a->kblk + g);
      s[b * N + n] = sc;
      if (zint) {
        int64_t bit = g * bits;
        z[b * N + n] =
            (((const uint8_t *)Z->data)[n * zrow + bit / 8] >> (bit % 8)) & ((1 << bits) - 1);
      } else if (zflt) {
        st->zs[b * N + n] = sc * nb_real(Z, n * a->kblk + g);
      }
    }
  }
  if (ox_wq_pack(bits, sgn, R, N, q, s, nb * N, z, L->chunk, &st->w, e))
    rc = ox_err_prefix(e, "node '%s' (MatMulNBits)", info->node->name ? info->node->name : "");
done:
  free(q);
  free(s);
  free(z);
  return rc;
}

static int nb_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  *state = NULL;
  nb_attrs a = {0};
  int rc = nb_check(info, &a, e);
  if (rc) return rc;
  ox_value *const *ci = info->const_inputs;
  const ox_node *nd = info->node;
  bool zp_given = info->n_inputs > 3 && nd->input[3] && *nd->input[3];
  bool g_given = info->n_inputs > 4 && nd->input[4] && *nd->input[4];
  const ox_value *B = ci && info->n_inputs > 1 ? ci[1] : NULL;
  const ox_value *S = ci && info->n_inputs > 2 ? ci[2] : NULL;
  const ox_value *Z = zp_given && ci ? ci[3] : NULL;
  const ox_value *G = g_given && ci ? ci[4] : NULL;
  if (!B || !S || (zp_given && !Z) || (g_given && !G))
    return oc_prep_fail(info, e, "B, scales, zero_points and g_idx must be constants");
  if (S->dtype != OX_FLOAT && S->dtype != OX_FLOAT16)
    return oc_prep_fail(info, e, "scales must be float or float16");
  if (Z && Z->dtype != OX_UINT8 && Z->dtype != S->dtype)
    return oc_prep_fail(info, e, "zero_points must be uint8 or of the scales' type");
  const int32_t *g = G ? G->data : NULL;
  if (g) { /* g_idx that is k / block_size throughout is no reordering */
    bool plain = true;
    for (int64_t k = 0; k < a.K && plain; k++) plain = g[k] == k / a.bs;
    if (plain) g = NULL;
  }
  nb_state *st = calloc(1, sizeof *st);
  if (!st) return ox_err_set(e, OX_ENOMEM, "out of memory");
  st->K = a.K;
  st->N = a.N;
  nb_layout L;
  rc = nb_make_layout(g, a.K, a.bs, a.kblk, (int)a.bits, &L);
  if (rc) {
    free(st);
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  rc = nb_pack(info, &a, &L, B, S, Z, st, e);
  if (!rc && g) {
    st->perm = L.rows;
    L.rows = NULL;
  }
  nb_free_layout(&L);
  const ox_value *bias = info->n_inputs > 5 && ci ? ci[5] : NULL;
  if (!rc && bias) {
    st->bias = malloc((size_t)a.N * sizeof *st->bias);
    if (!st->bias) rc = ox_err_set(e, OX_ENOMEM, "out of memory");
    for (int64_t n = 0; !rc && n < a.N; n++) st->bias[n] = nb_real(bias, n);
  }
  if (rc) {
    nb_release(st);
    return rc;
  }
  /* onnxruntime's int8 products (accuracy_level 4) are those of its packed kernel: not with
   * g_idx or float zero points, which it dequantizes to float */
  st->int8_decode = a.level == 4 && !st->perm && !st->zs;
  *state = st;
  for (size_t i = 1; i < info->n_inputs && i < 5; i++) info->consumed[i] = true;
  if (bias) info->consumed[5] = true;
  return OX_OK;
}

/* Y (M x N) -= block sums of A (M x n_blk, blocks of w.kb rows) x zs (n_blk x N) */
static int nb_zero_correct(const nb_state *st, const float *A, int64_t M, float *Y,
                           ox_thread_pool *pool) {
  const ox_wq_matrix *w = &st->w;
  int64_t nb = w->n_blk, kb = w->kb, K = w->K;
  float *sums = malloc((size_t)(M * nb) * sizeof *sums);
  if (!sums) return OX_ENOMEM;
  for (int64_t m = 0; m < M; m++)
    for (int64_t b = 0; b < nb; b++) {
      int64_t k0 = b * kb, k1 = k0 + kb < K ? k0 + kb : K;
      sums[m * nb + b] = k1 > k0 ? (float)oc_row_sum_f32(A + m * K + k0, k1 - k0) : 0.0f;
    }
  ox_gemm_desc d = {.b = OX_GEMM_B_PLAIN,
                    .M = M,
                    .N = st->N,
                    .K = nb,
                    .A = sums,
                    .lda = nb,
                    .B = st->zs,
                    .ldb = st->N,
                    .alpha = -1.0f,
                    .beta = 1.0f,
                    .C = Y,
                    .ldc = st->N,
                    .pool = pool};
  bool ok = ox_gemm(&d);
  free(sums);
  return ok ? OX_OK : OX_EUNSUPPORTED;
}

static int nb_run(ox_kctx *c, void *state) {
  const nb_state *st = state;
  if (!st) return ox_kctx_fail(c, OX_ERUNTIME, "weights were not prepared");
  ox_value *a = ox_kctx_input(c, 0), *bias_v = ox_kctx_input(c, 5);
  if (!a || a->kind != OX_VAL_TENSOR || (a->dtype != OX_FLOAT && a->dtype != OX_FLOAT16) ||
      a->rank < 1)
    return ox_kctx_fail(c, OX_ERUNTIME, "A must be a float or float16 tensor");
  if (a->dims[a->rank - 1] != st->K)
    return ox_kctx_fail(c, OX_ERUNTIME, "A's last dimension is %lld, K is %lld",
                        (long long)a->dims[a->rank - 1], (long long)st->K);
  if (!st->bias && bias_v &&
      (bias_v->numel != st->N || (bias_v->dtype != OX_FLOAT && bias_v->dtype != OX_FLOAT16)))
    return ox_kctx_fail(c, OX_ERUNTIME, "bias must have N = %lld float values", (long long)st->N);
  if (a->rank > OC_MAXRANK) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t dims[OC_MAXRANK];
  for (size_t i = 0; i + 1 < a->rank; i++) dims[i] = a->dims[i];
  dims[a->rank - 1] = st->N;
  ox_value *y = ox_kctx_output(c, 0, a->dtype, dims, a->rank);
  if (!y) return OX_ERUNTIME;
  int64_t M = a->numel / st->K, N = st->N, Kw = st->w.K;
  if (M == 0) return OX_OK;
  bool half = a->dtype == OX_FLOAT16;
  /* float A, gathered by g_idx, and float Y: scratch where they are not the tensors */
  float *af = half ? malloc((size_t)(M * st->K) * sizeof *af) : a->data;
  float *ag = st->perm ? malloc((size_t)(M * Kw) * sizeof *ag) : af;
  float *yf = half ? malloc((size_t)(M * N) * sizeof *yf) : y->data;
  int rc = OX_OK;
  if (!af || !ag || !yf) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  if (half) ox_f16_to_f32_n(a->data, af, (size_t)(M * st->K));
  if (st->perm)
    for (int64_t m = 0; m < M; m++)
      for (int64_t r = 0; r < Kw; r++)
        ag[m * Kw + r] = st->perm[r] < 0 ? 0.0f : af[m * st->K + st->perm[r]];
  ox_err e = {0};
  ox_thread_pool *pool = ox_kctx_pool(c);
  if (ox_wq_gemm(ag, M, Kw, &st->w, yf, N, st->int8_decode, pool, &e)) {
    rc = ox_kctx_fail(c, e.code, "%s", e.msg);
    goto done;
  }
  if (st->zs && nb_zero_correct(st, ag, M, yf, pool)) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  if (st->bias || bias_v)
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) yf[m * N + n] += st->bias ? st->bias[n] : nb_real(bias_v, n);
  if (half) ox_f32_to_f16_n(yf, y->data, (size_t)(M * N));
done:
  if (half) free(af), free(yf);
  if (st->perm) free(ag);
  return rc;
}

const ox_kernel_def ox_ops_contrib_lowbit[] = {
    {OX_CONTRIB_DOMAIN, "MatMulNBits", 1, 1, nb_prepare, nb_run, nb_release},
    {OX_CONTRIB_DOMAIN, "GatherBlockQuantized", 1, 1, ox_gbq_prepare, ox_gbq_run, NULL},
    {OX_CONTRIB_DOMAIN, "QuantizeLinear", 1, 1, ox_quant_prepare_contrib, ox_quantize_run, NULL},
    {OX_CONTRIB_DOMAIN, "DequantizeLinear", 1, 1, ox_quant_prepare_contrib, ox_dequantize_run,
     NULL},
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
