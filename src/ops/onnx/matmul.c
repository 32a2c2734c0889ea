/* matmul.c - MatMul (numpy semantics: batched broadcasting, 1-D operands),
 * Gemm (transA/transB, alpha, beta, C broadcast or absent), Einsum, Det.
 * float32 goes through ox_gemm; float16/bfloat16 by a constant 2-D B go
 * through ox_hgemm (B packed once, still 16-bit), other float16/bfloat16
 * products are widened to float32 per run; double and integer types use
 * plain loops. */
#include "matmul.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/gemm.h"
#include "../../kernels/gemm_h.h"
#include "../../schema/onnxc_ops.h"
#include "../opcore.h"

static const char *dt_name(int32_t dt) {
  const ox_dtype_info *i = ox_dtype_get(dt);
  return i ? i->name : "?";
}

static bool mm_type_ok(int32_t dt) {
  return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 || dt == OX_BFLOAT16 ||
         dt == OX_INT32 || dt == OX_INT64 || dt == OX_UINT32 || dt == OX_UINT64;
}

/* C[M,N] = alpha * op(A) op(B) + beta * C for any numeric type, through
 * double (int64 through int64). lda/ldb are the row strides of A and B as
 * stored. */
static void gemm_generic(int32_t dt, bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                         double alpha, const void *A, int64_t aoff, int64_t lda, const void *B,
                         int64_t boff, int64_t ldb, double beta, void *C, int64_t coff) {
  bool ints = oc_is_int(dt);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      int64_t iacc = 0;
      for (int64_t k = 0; k < K; k++) {
        int64_t ai = aoff + (ta ? k * lda + i : i * lda + k);
        int64_t bi = boff + (tb ? j * ldb + k : k * ldb + j);
        if (ints)
          iacc = (int64_t)((uint64_t)iacc +
                           (uint64_t)oc_get_i64(A, dt, ai) * (uint64_t)oc_get_i64(B, dt, bi));
        else
          acc += oc_get(A, dt, ai) * oc_get(B, dt, bi);
      }
      int64_t ci = coff + i * N + j;
      if (ints) {
        int64_t r = iacc;
        if (alpha != 1) r = (int64_t)(alpha * (double)iacc);
        if (beta != 0)
          r = (int64_t)((uint64_t)r + (uint64_t)(int64_t)(beta * (double)oc_get_i64(C, dt, ci)));
        oc_set_i64(C, dt, ci, r);
      } else {
        double r = alpha * acc;
        if (beta != 0) r += beta * oc_get(C, dt, ci);
        oc_set(C, dt, ci, r);
      }
    }
}

/* ---- MatMul ---- */

/* A constant B of rank 2 is packed once: float32 by ox_sgemm_pack_b,
 * float16/bfloat16 by ox_hgemm_pack_b in its 16-bit form (no float32 copy
 * of the weight per run). No packing per run, and one-row products stream
 * it sequentially. */
typedef struct mm_state {
  ox_sgemm_bpack *bp;
  bool bp_shared; /* bp belongs to the session (ox_kinfo_share) */
  ox_hgemm_b *hb;
  bool have;           /* B was packed at prepare */
  const ox_value *src; /* the constant it was packed from (NULL: from its bytes) */
  int64_t K, N;        /* its product's shape (B is K x N, or N x K transposed) */
  int32_t dtype;
} mm_state;

static void mm_release_packs(mm_state *s) {
  if (!s->bp_shared) ox_sgemm_bpack_free(s->bp);
  ox_hgemm_b_free(s->hb);
}

static void mm_release(void *state) {
  if (!state) return;
  mm_release_packs(state);
  free(state);
}

static bool is_half(int32_t dt) { return dt == OX_FLOAT16 || dt == OX_BFLOAT16; }

static ox_hg_type hg_type(int32_t dt) {
  return dt == OX_FLOAT16 ? OX_HG_F16 : dt == OX_BFLOAT16 ? OX_HG_BF16 : OX_HG_F32;
}

/* Packs a constant 2-D B (K x N, or N x K when trans_b) into s: float16
 * and bfloat16 for ox_hgemm, float32 (when f32 and not trans_b) for
 * ox_gemm (OX_GEMM_B_WHOLE). OX_OK with s->src NULL when B is not such a constant. */
static int pack_const_b(const ox_value *b, bool trans_b, bool f32, mm_state *s, ox_err *e) {
  if (!b || b->kind != OX_VAL_TENSOR || b->rank != 2 || b->numel < 1) return OX_OK;
  int64_t K = trans_b ? b->dims[1] : b->dims[0], N = trans_b ? b->dims[0] : b->dims[1];
  if (b->dtype == OX_FLOAT && f32 && !trans_b)
    s->bp = ox_sgemm_pack_b(false, K, N, b->data, b->dims[1], e);
  else if (is_half(b->dtype))
    s->hb = ox_hgemm_pack_b(OX_HG_AUTO, hg_type(b->dtype), trans_b, K, N, b->data, b->dims[1], e);
  else
    return OX_OK;
  if (!s->bp && !s->hb) return e->code;
  s->have = true;
  s->src = b;
  s->K = K;
  s->N = N;
  s->dtype = b->dtype;
  /* runs read the packed copy: the file's pages of B may leave memory */
  ox_pages_unneeded(b->data, (size_t)b->numel * ox_value_elem_size(b->dtype));
  return OX_OK;
}

/* The bytes of an initializer not made into a value yet (lazy_consts),
 * when they are a little-endian 2-D float to pack as they lie: its dims in
 * rows and cols. */
static const void *f32_2d_payload(const ox_kinfo *info, size_t i, int64_t *rows, int64_t *cols) {
  const ox_tensor *t = ox_kinfo_const_proto(info, i);
  const uint16_t one = 1;
  if (!t || t->data_type != OX_FLOAT || t->n_dims != 2 || t->segment || *(const uint8_t *)&one != 1)
    return NULL;
  int64_t n;
  ox_bytes pl = ox_tensor_payload(t);
  if (!ox_numel(t->dims, 2, &n) || n < 1 || !pl.data || pl.size != (size_t)n * sizeof(float))
    return NULL;
  *rows = t->dims[0];
  *cols = t->dims[1];
  return pl.data;
}

static int mm_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  *state = NULL;
  const ox_value *b = info->const_inputs && info->n_inputs > 1 ? info->const_inputs[1] : NULL;
  mm_state packed = {0};
  int64_t K = 0, N = 0;
  /* a float B not made yet is packed from the model's bytes: no copy */
  const void *bytes = b ? NULL : f32_2d_payload(info, 1, &K, &N);
  if (bytes) {
    packed.bp = ox_sgemm_pack_b(false, K, N, bytes, N, e);
    if (!packed.bp) return e->code;
    packed.have = true;
    packed.K = K;
    packed.N = N;
    packed.dtype = OX_FLOAT;
  } else {
    if (!b && info->const_ids && info->const_ids[1] >= 0) {
      b = ox_kinfo_const(info, 1, e);
      if (!b) return e->code;
    }
    int rc = pack_const_b(b, false, true, &packed, e);
    if (rc != OX_OK || !packed.have) return rc;
  }
  mm_state *s = malloc(sizeof *s);
  if (!s) {
    mm_release_packs(&packed);
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  *s = packed;
  *state = s;
  /* runs read the packed copy only: the constant may be freed */
  info->consumed[1] = true;
  return OX_OK;
}

typedef struct mm_job {
  int32_t dt;
  bool tb; /* B stored transposed: [..., N, K] */
  int64_t M, N, K;
  const void *a, *b;
  void *c;
  const float *af, *bf; /* widened float16/bfloat16 */
  float *cf;
  ox_thread_pool *pool;
} mm_job;

static void mm_batches(void *arg, const int64_t *off, const int64_t *st, int64_t oo, int64_t n) {
  const mm_job *j = arg;
  int64_t M = j->M, N = j->N, K = j->K;
  for (int64_t t = 0; t < n; t++) {
    int64_t ia = (off[0] + t * st[0]) * M * K, ib = (off[1] + t * st[1]) * K * N,
            ic = (oo + t) * M * N;
    int64_t ldb = j->tb ? K : N;
    if (j->dt == OX_FLOAT)
      ox_gemm(&(ox_gemm_desc){.M = M,
                              .N = N,
                              .K = K,
                              .A = (const float *)j->a + ia,
                              .lda = K,
                              .B = (const float *)j->b + ib,
                              .ldb = ldb,
                              .trans_b = j->tb,
                              .alpha = 1.0f,
                              .C = (float *)j->c + ic,
                              .ldc = N,
                              .pool = j->pool});
    else if (j->af)
      ox_gemm(&(ox_gemm_desc){.M = M,
                              .N = N,
                              .K = K,
                              .A = j->af + ia,
                              .lda = K,
                              .B = j->bf + ib,
                              .ldb = ldb,
                              .trans_b = j->tb,
                              .alpha = 1.0f,
                              .C = j->cf + ic,
                              .ldc = N,
                              .pool = j->pool});
    else
      gemm_generic(j->dt, false, j->tb, M, N, K, 1, j->a, ia, K, j->b, ib, ldb, 0, j->c, ic);
  }
}

/* A (numpy MatMul) times B, or times B with its last two axes swapped
 * when tb (MatMulTransBFused). b is NULL when B was a constant packed into
 * st and freed (consumed at prepare). */
static int mm_compute(ox_kctx *ctx, const mm_state *st, ox_value *a, ox_value *b, bool tb,
                      ox_mm_post *post) {
  bool packed = st && st->have && (!b || b == st->src);
  if (!a || a->kind != OX_VAL_TENSOR || (!b && !packed) || (b && b->kind != OX_VAL_TENSOR))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "inputs must be tensors");
  /* B's element type and dims: a packed constant that was freed keeps them */
  int32_t bdt = b ? b->dtype : st->dtype;
  size_t brank = b ? b->rank : 2;
  int64_t pdims[2] = {0, 0};
  if (!b) {
    pdims[0] = tb ? st->N : st->K;
    pdims[1] = tb ? st->K : st->N;
  }
  const int64_t *bdims = b ? b->dims : pdims;
  if (a->dtype != bdt)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "A is %s and B is %s", dt_name(a->dtype), dt_name(bdt));
  int32_t dt = a->dtype;
  if (!mm_type_ok(dt))
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported", dt_name(dt));
  if (a->rank == 0 || brank == 0) return ox_kctx_fail(ctx, OX_ERUNTIME, "MatMul of a scalar");
  if (tb && brank < 2)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "the transposed B must have rank 2 or more");
  if (a->rank > OC_MAXRANK || brank > OC_MAXRANK)
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "rank too large");
  int64_t M = a->rank == 1 ? 1 : a->dims[a->rank - 2];
  int64_t K = a->dims[a->rank - 1];
  int64_t Kb = brank == 1 ? bdims[0] : bdims[brank - (tb ? 1 : 2)];
  int64_t N = brank == 1 ? 1 : bdims[brank - (tb ? 2 : 1)];
  if (K != Kb)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "inner dimensions differ: A has %lld, B has %lld",
                        (long long)K, (long long)Kb);
  size_t rab = a->rank > 2 ? a->rank - 2 : 0, rbb = brank > 2 ? brank - 2 : 0;
  oc_bcast bc;
  const int64_t *bd[2] = {a->dims, bdims};
  size_t br[2] = {rab, rbb};
  if (oc_bcast_init(&bc, ctx, bd, br, 2)) return OX_ERUNTIME;
  int64_t odims[OC_MAXRANK + 2];
  size_t orank = bc.out_rank;
  memcpy(odims, bc.out_dims, orank * sizeof *odims);
  if (a->rank > 1) odims[orank++] = M;
  if (brank > 1) odims[orank++] = N;
  if (post && (dt != OX_FLOAT || brank != 2))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "the fused product takes float A and a 2-D B");
  ox_value *y = ox_kctx_output(ctx, 0, dt, odims, orank);
  if (!y) return OX_ENOMEM;
  if (y->numel == 0) return OX_OK;
  if (post) {
    post->y = y->data;
    post->N = N;
  }
  if (K == 0) {
    memset(y->data, 0, (size_t)y->numel * ox_value_elem_size(dt));
    if (dt == OX_FLOAT16 || dt == OX_BFLOAT16)
      for (int64_t i = 0; i < y->numel; i++) oc_set(y->data, dt, i, 0);
    if (post) post->fn(post, 0, y->numel / N, 0, N);
    return OX_OK;
  }
  if (packed && st->bp && dt == OX_FLOAT) { /* B packed at prepare: every row of A */
    ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_WHOLE,
                            .M = a->numel / K,
                            .A = a->data,
                            .lda = K,
                            .bp = st->bp,
                            .C = y->data,
                            .ldc = N,
                            .pool = ox_kctx_pool(ctx),
                            .post = post ? post->fn : NULL,
                            .post_ctx = post});
    return OX_OK;
  }
  if (packed && st->hb) { /* 16-bit B packed at prepare: every row of A */
    if (ox_hgemm(a->numel / K, hg_type(dt), false, a->data, K, st->hb, 1.0f, 0.0f, hg_type(dt),
                 y->data, N, ox_kctx_pool(ctx), NULL))
      return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    return OX_OK;
  }
  if (!b) return ox_kctx_fail(ctx, OX_ERUNTIME, "the packed B does not fit these operands");
  mm_job j = {dt, tb, M, N, K, a->data, b->data, y->data, NULL, NULL, NULL, ox_kctx_pool(ctx)};
  /* B shared by every batch and A contiguous: one GEMM with the batches as rows */
  int64_t nb_b = 1;
  for (size_t d = 0; d < rbb; d++) nb_b *= b->dims[d];
  if (nb_b == 1 && bc.numel > 1 && a->numel / (M * K) == bc.numel) {
    j.M = M * bc.numel;
    bc.numel = 1;
    bc.rank = 1;
    bc.dims[0] = 1;
    bc.st[0][0] = bc.st[1][0] = 0;
  }
  float *buf = NULL;
  if (dt == OX_FLOAT16 || dt == OX_BFLOAT16) {
    size_t tot = (size_t)a->numel + (size_t)b->numel + (size_t)y->numel;
    buf = malloc(tot * sizeof(float));
    if (!buf) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    oc_to_f32(a->data, dt, buf, a->numel);
    oc_to_f32(b->data, dt, buf + a->numel, b->numel);
    j.af = buf;
    j.bf = buf + a->numel;
    j.cf = buf + a->numel + b->numel;
  }
  /* Many small products (attention's per-head Q K^T and P V: 12 heads of
   * 50 x 64 x 50 in CLIP) are each too small for the GEMM to thread, so
   * the batches go to the threads, one GEMM each with no pool inside; so
   * do batches at least as many as the threads. The GEMM never splits K,
   * so a product's bytes do not depend on who computes it. */
  int nt = ox_thread_pool_size(j.pool);
  if (nt > 1 && bc.numel >= 2 && (bc.numel >= nt || j.M * N * K < (1 << 21))) {
    ox_thread_pool *pool = j.pool;
    j.pool = NULL;
    oc_bcast_each_grain(&bc, pool, 1, mm_batches, &j);
  } else {
    oc_bcast_each(&bc, NULL, mm_batches, &j);
  }
  if (buf) {
    oc_from_f32(j.cf, dt, y->data, y->numel);
    free(buf);
  }
  if (post) post->fn(post, 0, y->numel / N, 0, N);
  return OX_OK;
}

static int mm_run(ox_kctx *ctx, void *state) {
  return mm_compute(ctx, state, ox_kctx_input(ctx, 0), ox_kctx_input(ctx, 1), false, NULL);
}

int ox_mm_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return mm_prepare(info, state, e);
}
void ox_mm_release(void *state) { mm_release(state); }
int ox_mm_compute_post(ox_kctx *ctx, const void *state, ox_value *a, ox_value *b, bool tb,
                       ox_mm_post *post) {
  return mm_compute(ctx, state, a, b, tb, post);
}
int ox_mm_compute_tb(ox_kctx *ctx, ox_value *a, ox_value *b, bool tb) {
  return mm_compute(ctx, NULL, a, b, tb, NULL);
}
int64_t ox_mm_packed_n(const void *state) {
  const mm_state *s = state;
  return s && s->have ? s->N : -1;
}

/* A constant float W (N x K) packed as B = W^T, made once per session and
 * shared by every node that asks (the head and GatherTiedFused of a tied
 * embedding), so that the constant itself can be freed. */
#define TRANS_PACK "sgemm_pack_b_trans"

static void bpack_release(void *p) { ox_sgemm_bpack_free(p); }

static ox_sgemm_bpack *shared_trans_pack(const ox_kinfo *info, size_t i, int64_t N, int64_t K,
                                         const void *w, ox_err *e) {
  ox_sgemm_bpack *bp = ox_kinfo_shared(info, i, TRANS_PACK);
  if (bp) return bp;
  /* runs read the packed copy: W's file pages leave memory as it is packed */
  bp = ox_sgemm_pack_b(true, K, N, w, K, e);
  if (!bp || ox_kinfo_share(info, i, TRANS_PACK, bp, bpack_release, e)) return NULL;
  return bp;
}

static bool const_f32_2d(const ox_value *w) {
  return w && w->kind == OX_VAL_TENSOR && w->dtype == OX_FLOAT && w->rank == 2 && w->numel > 0;
}

/* MatMulTransBFused (ai.onnxc, src/opt/matmul_transb.c): A times B with
 * B's last two axes swapped (numpy MatMul otherwise: batch axes broadcast),
 * any MatMul type. A constant 2-D float W (N x K) is packed once as W^T
 * (the panels stream sequentially: a language model's head runs at the
 * packed MatMul's bandwidth); anything else is read in place by a GEMM
 * that takes B transposed (attention's scores q k^T without the copy). */
static int mmtb_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  *state = NULL;
  const ox_value *w = info->const_inputs && info->n_inputs > 1 ? info->const_inputs[1] : NULL;
  int64_t N = 0, K = 0;
  /* a float W not made yet is packed from the model's bytes: no copy */
  const void *bytes = w ? NULL : f32_2d_payload(info, 1, &N, &K);
  if (!w && !bytes) {
    w = ox_kinfo_const(info, 1, e);
    if (!w && e->code) return e->code;
  }
  if (w && (w->kind != OX_VAL_TENSOR || w->rank != 2 || w->numel < 1)) return OX_OK;
  if (!w && !bytes) return OX_OK;
  mm_state packed = {0};
  if (bytes || w->dtype == OX_FLOAT) {
    if (w) {
      N = w->dims[0];
      K = w->dims[1];
    }
    packed.bp = shared_trans_pack(info, 1, N, K, bytes ? bytes : w->data, e);
    if (!packed.bp) return e->code;
    packed.bp_shared = true;
    packed.have = true;
    packed.src = w;
    packed.K = K;
    packed.N = N;
    packed.dtype = OX_FLOAT;
  } else {
    /* float16 / bfloat16: packed transposed in their 16-bit form */
    int rc = pack_const_b(w, true, false, &packed, e);
    if (rc != OX_OK || !packed.have) return rc;
  }
  mm_state *s = malloc(sizeof *s);
  if (!s) {
    mm_release_packs(&packed);
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  *s = packed;
  *state = s;
  info->consumed[1] = true;
  return OX_OK;
}

int ox_mm_prepare_tb(const ox_kinfo *info, void **state, ox_err *e) {
  return mmtb_prepare(info, state, e);
}

static int mmtb_run(ox_kctx *ctx, void *state) {
  return mm_compute(ctx, state, ox_kctx_input(ctx, 0), ox_kctx_input(ctx, 1), true, NULL);
}

/* GatherTiedFused (ai.onnxc, src/opt/tied_gather.c): Gather<axis = 0> of
 * the rows of a float [V, D] W, read out of the W^T the head packed (the
 * same values, bit for bit), or out of W itself when W is no constant.
 * The Gather comes first in the graph and the head last: W is never made
 * for the Gather (lazy_consts), whose prepare only consumes it; the head
 * packs it, and the Gather finds that pack at run time. */
static int tied_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  (void)e;
  *state = NULL;
  if (info->const_ids && info->const_ids[0] >= 0) info->consumed[0] = true;
  return OX_OK;
}

static int tied_run(ox_kctx *c, void *state) {
  (void)state;
  bool packed = ox_kctx_info(c)->consumed[0];
  const ox_sgemm_bpack *bp = packed ? ox_kctx_shared(c, 0, TRANS_PACK) : NULL;
  ox_value *w = ox_kctx_input(c, 0), *ind = ox_kctx_input(c, 1);
  if (packed && !bp)
    return ox_kctx_fail(c, OX_ERUNTIME, "the packed matrix of the head is missing");
  if (!packed && !const_f32_2d(w))
    return ox_kctx_fail(c, OX_ERUNTIME, "data must be a non-empty 2-D float tensor");
  if (!ind || ind->kind != OX_VAL_TENSOR || (ind->dtype != OX_INT64 && ind->dtype != OX_INT32))
    return ox_kctx_fail(c, OX_ERUNTIME, "indices must be an int32 or int64 tensor");
  if (ind->rank + 1 > OC_MAXRANK) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  int64_t V = bp ? ox_sgemm_bpack_n(bp) : w->dims[0], D = bp ? ox_sgemm_bpack_k(bp) : w->dims[1];
  int64_t dims[OC_MAXRANK];
  memcpy(dims, ind->dims, ind->rank * sizeof *dims);
  dims[ind->rank] = D;
  ox_value *y = ox_kctx_output(c, 0, OX_FLOAT, dims, ind->rank + 1);
  if (!y) return OX_ENOMEM;
  float *out = y->data;
  for (int64_t i = 0; i < ind->numel; i++) {
    int64_t t =
        ind->dtype == OX_INT64 ? ((const int64_t *)ind->data)[i] : ((const int32_t *)ind->data)[i];
    if (t < -V || t >= V)
      return ox_kctx_fail(c, OX_ERUNTIME, "index %lld out of range [-%lld, %lld)", (long long)t,
                          (long long)V, (long long)V);
    if (t < 0) t += V;
    if (bp)
      ox_sgemm_bpack_col(bp, t, out + i * D);
    else
      memcpy(out + i * D, (const float *)w->data + t * D, (size_t)D * sizeof(float));
  }
  return OX_OK;
}

/* ---- Gemm ---- */

typedef struct gemm_state {
  bool ta, tb;
  float alpha, beta;
  mm_state packed; /* a constant float16/bfloat16 B, packed once */
} gemm_state;

static int gemm_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  gemm_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->ta = ox_node_attr_int(info->node, "transA", 0) != 0;
  s->tb = ox_node_attr_int(info->node, "transB", 0) != 0;
  s->alpha = ox_node_attr_float(info->node, "alpha", 1.0f);
  s->beta = ox_node_attr_float(info->node, "beta", 1.0f);
  *state = s;
  const ox_value *b = info->const_inputs && info->n_inputs > 1 ? info->const_inputs[1] : NULL;
  return pack_const_b(b, s->tb, false, &s->packed, e);
}

static void gemm_release(void *state) {
  if (state) mm_release_packs(&((gemm_state *)state)->packed);
}

static int gemm_run(ox_kctx *ctx, void *state) {
  const gemm_state *s = state;
  ox_value *a = ox_kctx_input(ctx, 0), *b = ox_kctx_input(ctx, 1), *c = ox_kctx_input(ctx, 2);
  if (!a || !b || a->kind != OX_VAL_TENSOR || b->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "A and B must be tensors");
  int32_t dt = a->dtype;
  if (b->dtype != dt || (c && c->dtype != dt))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "inputs have different element types");
  if (!mm_type_ok(dt))
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported", dt_name(dt));
  if (a->rank != 2 || b->rank != 2) return ox_kctx_fail(ctx, OX_ERUNTIME, "A and B must be 2-D");
  int64_t M = s->ta ? a->dims[1] : a->dims[0], K = s->ta ? a->dims[0] : a->dims[1];
  int64_t Kb = s->tb ? b->dims[1] : b->dims[0], N = s->tb ? b->dims[0] : b->dims[1];
  if (K != Kb)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "inner dimensions differ: %lld and %lld", (long long)K,
                        (long long)Kb);
  int64_t odims[2] = {M, N};
  ox_value *y = ox_kctx_output(ctx, 0, dt, odims, 2);
  if (!y) return OX_ENOMEM;
  float beta = s->beta;
  bool use_c = c && beta != 0.0f && c->numel > 0;
  if (use_c) {
    /* C broadcast (unidirectionally) into Y */
    oc_bcast bc;
    const int64_t *bd[2] = {odims, c->dims};
    size_t br[2] = {2, c->rank};
    if (oc_bcast_init(&bc, ctx, bd, br, 2)) return OX_ERUNTIME;
    if (bc.out_rank != 2 || bc.out_dims[0] != M || bc.out_dims[1] != N)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "C does not broadcast to [%lld,%lld]", (long long)M,
                          (long long)N);
    size_t es = ox_value_elem_size(dt);
    int64_t c0 = c->rank == 2 ? c->dims[0] : 1, c1 = c->rank ? c->dims[c->rank - 1] : 1;
    for (int64_t i = 0; i < M; i++)
      for (int64_t jj = 0; jj < N; jj++) {
        int64_t ci = (c0 == 1 ? 0 : i) * c1 + (c1 == 1 ? 0 : jj);
        memcpy((uint8_t *)y->data + (size_t)(i * N + jj) * es,
               (const uint8_t *)c->data + (size_t)ci * es, es);
      }
  } else
    beta = 0.0f;
  if (y->numel == 0) return OX_OK;
  int64_t lda = a->dims[1], ldb = b->dims[1];
  if (s->packed.src == b && s->packed.hb) { /* 16-bit B packed at prepare; C is in y */
    if (ox_hgemm(M, hg_type(dt), s->ta, a->data, lda, s->packed.hb, s->alpha, beta, hg_type(dt),
                 y->data, N, ox_kctx_pool(ctx), NULL))
      return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  } else if (dt == OX_FLOAT) {
    ox_gemm(&(ox_gemm_desc){.M = M,
                            .N = N,
                            .K = K,
                            .A = a->data,
                            .lda = lda,
                            .trans_a = s->ta,
                            .B = b->data,
                            .ldb = ldb,
                            .trans_b = s->tb,
                            .alpha = s->alpha,
                            .beta = beta,
                            .C = y->data,
                            .ldc = N,
                            .pool = ox_kctx_pool(ctx)});
  } else if (dt == OX_FLOAT16 || dt == OX_BFLOAT16) {
    size_t tot = (size_t)a->numel + (size_t)b->numel + (size_t)y->numel;
    float *buf = malloc(tot * sizeof(float));
    if (!buf) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    float *af = buf, *bf = buf + a->numel, *cf = bf + b->numel;
    oc_to_f32(a->data, dt, af, a->numel);
    oc_to_f32(b->data, dt, bf, b->numel);
    oc_to_f32(y->data, dt, cf, y->numel);
    ox_gemm(&(ox_gemm_desc){.M = M,
                            .N = N,
                            .K = K,
                            .A = af,
                            .lda = lda,
                            .trans_a = s->ta,
                            .B = bf,
                            .ldb = ldb,
                            .trans_b = s->tb,
                            .alpha = s->alpha,
                            .beta = beta,
                            .C = cf,
                            .ldc = N,
                            .pool = ox_kctx_pool(ctx)});
    oc_from_f32(cf, dt, y->data, y->numel);
    free(buf);
  } else
    gemm_generic(dt, s->ta, s->tb, M, N, K, s->alpha, a->data, 0, lda, b->data, 0, ldb, beta,
                 y->data, 0);
  return OX_OK;
}

/* ---- Einsum ---- */

#define EIN_MAXL 64 /* labels: 52 letters + ellipsis dims */

typedef struct ein_state {
  const char *eq;
} ein_state;

static int ein_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  ein_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->eq = ox_node_attr_str(info->node, "equation", NULL);
  if (!s->eq) return oc_prep_fail(info, e, "attribute 'equation' is required");
  *state = s;
  return OX_OK;
}

static int label_of(char ch) {
  if (ch >= 'a' && ch <= 'z') return ch - 'a';
  if (ch >= 'A' && ch <= 'Z') return 26 + (ch - 'A');
  return -1;
}

/* Parses one term into label ids; an ellipsis expands to ids 52.. aligned to
 * the right over `ell` dims. Returns the count or -1. */
static int parse_term(const char *t, size_t len, int *ids, int max, int ell, int max_ell) {
  int n = 0;
  for (size_t i = 0; i < len; i++) {
    char ch = t[i];
    if (ch == ' ') continue;
    if (ch == '.') {
      if (i + 2 >= len) return -1;
      if (t[i + 1] != '.' || t[i + 2] != '.') return -1;
      for (int k = 0; k < ell; k++) {
        if (n >= max) return -1;
        ids[n++] = 52 + (max_ell - ell) + k;
      }
      i += 2;
      continue;
    }
    int l = label_of(ch);
    if (l < 0 || n >= max) return -1;
    ids[n++] = l;
  }
  return n;
}

static int count_letters(const char *t, size_t len, bool *has_ell) {
  int n = 0;
  *has_ell = false;
  for (size_t i = 0; i < len; i++)
    if (label_of(t[i]) >= 0)
      n++;
    else if (t[i] == '.') {
      *has_ell = true;
      i += 2;
    }
  return n;
}

/* Copies src into dst in row-major order over the labels lab[0..nl), reading
 * with the per-label strides stl (indexed by label). */
static void ein_gather(const float *src, const int *lab, int nl, const int64_t *size,
                       const int64_t *stl, float *dst) {
  int64_t idx[EIN_MAXL] = {0}, total = 1, off = 0;
  for (int i = 0; i < nl; i++) total *= size[lab[i]];
  for (int64_t t = 0; t < total; t++) {
    dst[t] = src[off];
    for (int i = nl; i-- > 0;) {
      int l = lab[i];
      idx[i]++;
      off += stl[l];
      if (idx[i] < size[l]) break;
      off -= stl[l] * size[l];
      idx[i] = 0;
    }
  }
}

/* float32 with two operands whose labels are each either batch (both inputs
 * and output), M (A and output), N (B and output) or K (both inputs, summed)
 * and appear once per term: gather A as [batch,M,K] and B as [batch,K,N],
 * SGEMM per batch, gather the output. Returns 1 when it does not apply. */
static int ein_gemm(ox_kctx *ctx, ox_value *const *in, int (*ids)[OC_MAXRANK], const int64_t *size,
                    int64_t (*st)[EIN_MAXL], const int *out, int nout, ox_value *y) {
  bool inA[EIN_MAXL] = {false}, inB[EIN_MAXL] = {false}, isO[EIN_MAXL] = {false};
  for (size_t d = 0; d < in[0]->rank; d++) {
    if (inA[ids[0][d]]) return 1; /* repeated label: diagonal */
    inA[ids[0][d]] = true;
  }
  for (size_t d = 0; d < in[1]->rank; d++) {
    if (inB[ids[1][d]]) return 1;
    inB[ids[1][d]] = true;
  }
  for (int i = 0; i < nout; i++) isO[out[i]] = true;
  int bl[EIN_MAXL], ml[EIN_MAXL], nl[EIN_MAXL], kl[EIN_MAXL], nb = 0, nm = 0, nn = 0, nk = 0;
  int64_t B = 1, M = 1, N = 1, K = 1;
  for (int l = 0; l < EIN_MAXL; l++) {
    if (!inA[l] && !inB[l]) continue;
    if (inA[l] && inB[l] && isO[l])
      bl[nb++] = l, B *= size[l];
    else if (inA[l] && !inB[l] && isO[l])
      ml[nm++] = l, M *= size[l];
    else if (!inA[l] && inB[l] && isO[l])
      nl[nn++] = l, N *= size[l];
    else if (inA[l] && inB[l] && !isO[l])
      kl[nk++] = l, K *= size[l];
    else
      return 1; /* summed over one input only */
  }
  if (y->numel == 0) return OX_OK;
  size_t na = (size_t)(B * M * K), nbb = (size_t)(B * K * N), nc = (size_t)(B * M * N);
  float *buf = malloc((na + nbb + nc) * sizeof(float));
  if (!buf) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  float *a = buf, *b = buf + na, *c = b + nbb;
  int la[EIN_MAXL], lb[EIN_MAXL], lc[EIN_MAXL], q = 0;
  for (int i = 0; i < nb; i++) la[q++] = bl[i];
  for (int i = 0; i < nm; i++) la[q++] = ml[i];
  for (int i = 0; i < nk; i++) la[q++] = kl[i];
  ein_gather(in[0]->data, la, q, size, st[0], a);
  q = 0;
  for (int i = 0; i < nb; i++) lb[q++] = bl[i];
  for (int i = 0; i < nk; i++) lb[q++] = kl[i];
  for (int i = 0; i < nn; i++) lb[q++] = nl[i];
  ein_gather(in[1]->data, lb, q, size, st[1], b);
  if (K == 0)
    memset(c, 0, nc * sizeof(float));
  else
    for (int64_t t = 0; t < B; t++)
      ox_gemm(&(ox_gemm_desc){.M = M,
                              .N = N,
                              .K = K,
                              .A = a + t * M * K,
                              .lda = K,
                              .B = b + t * K * N,
                              .ldb = N,
                              .alpha = 1.0f,
                              .C = c + t * M * N,
                              .ldc = N,
                              .pool = ox_kctx_pool(ctx)});
  /* strides of C per label: [batch..., M..., N...] row-major */
  int64_t cst[EIN_MAXL] = {0}, stride = 1;
  q = 0;
  for (int i = 0; i < nb; i++) lc[q++] = bl[i];
  for (int i = 0; i < nm; i++) lc[q++] = ml[i];
  for (int i = 0; i < nn; i++) lc[q++] = nl[i];
  for (int i = q; i-- > 0;) {
    cst[lc[i]] = stride;
    stride *= size[lc[i]];
  }
  ein_gather(c, out, nout, size, cst, y->data);
  free(buf);
  return OX_OK;
}

static int ein_run(ox_kctx *ctx, void *state) {
  const ein_state *s = state;
  size_t nin = ox_kctx_n_inputs(ctx);
  if (nin == 0 || nin > 16) return ox_kctx_fail(ctx, OX_ERUNTIME, "Einsum needs 1 to 16 inputs");
  ox_value *in[16];
  int32_t dt = OX_UNDEFINED;
  for (size_t k = 0; k < nin; k++) {
    in[k] = ox_kctx_input(ctx, k);
    if (!in[k] || in[k]->kind != OX_VAL_TENSOR)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "inputs must be tensors");
    if (k == 0)
      dt = in[k]->dtype;
    else if (in[k]->dtype != dt)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "inputs have different types");
  }
  if (!(oc_is_int(dt) || dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 ||
        dt == OX_BFLOAT16))
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported", dt_name(dt));
  const char *eq = s->eq, *arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
  /* split the terms */
  const char *tb[16];
  size_t tl[16];
  size_t nt = 0;
  const char *p = eq;
  while (1) {
    const char *comma = memchr(p, ',', lhs_len - (size_t)(p - eq));
    const char *end = comma ? comma : eq + lhs_len;
    if (nt >= 16) return ox_kctx_fail(ctx, OX_ERUNTIME, "too many terms in '%s'", eq);
    tb[nt] = p;
    tl[nt++] = (size_t)(end - p);
    if (!comma) break;
    p = comma + 1;
  }
  if (nt != nin)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "equation '%s' has %zu terms for %zu inputs", eq, nt,
                        nin);
  int64_t size[EIN_MAXL];
  for (int l = 0; l < EIN_MAXL; l++) size[l] = -1;
  int ids[16][OC_MAXRANK];
  int max_ell = 0;
  int ell_n[16];
  for (size_t k = 0; k < nin; k++) {
    bool he;
    int nl = count_letters(tb[k], tl[k], &he);
    ell_n[k] = he ? (int)in[k]->rank - nl : 0;
    if (ell_n[k] < 0 || (!he && nl != (int)in[k]->rank))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "term %zu of '%s' does not match rank %zu", k, eq,
                          in[k]->rank);
    if (ell_n[k] > max_ell) max_ell = ell_n[k];
  }
  if (max_ell > EIN_MAXL - 52) return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "ellipsis too long");
  int64_t st[16][EIN_MAXL];
  memset(st, 0, sizeof st);
  for (size_t k = 0; k < nin; k++) {
    int n = parse_term(tb[k], tl[k], ids[k], OC_MAXRANK, ell_n[k], max_ell);
    if (n != (int)in[k]->rank) return ox_kctx_fail(ctx, OX_ERUNTIME, "bad term %zu in '%s'", k, eq);
    int64_t stride = 1;
    for (int d = n; d-- > 0;) {
      int l = ids[k][d];
      int64_t dim = in[k]->dims[d];
      if (l >= 52 && dim == 1) { /* broadcast ellipsis dim */
        if (size[l] < 0) size[l] = 1;
      } else {
        if (size[l] >= 0 && size[l] != dim && !(l >= 52 && size[l] == 1))
          return ox_kctx_fail(ctx, OX_ERUNTIME, "label size mismatch in '%s'", eq);
        size[l] = dim;
        st[k][l] += stride;
      }
      stride *= dim;
    }
  }
  /* output labels */
  int out[EIN_MAXL];
  int nout = 0;
  if (arrow) {
    const char *o = arrow + 2;
    nout = parse_term(o, strlen(o), out, EIN_MAXL, max_ell, max_ell);
    if (nout < 0) return ox_kctx_fail(ctx, OX_ERUNTIME, "bad output term in '%s'", eq);
    for (int i = 0; i < nout; i++)
      if (size[out[i]] < 0) return ox_kctx_fail(ctx, OX_ERUNTIME, "output label not in inputs");
  } else {
    for (int l = 52; l < 52 + max_ell; l++) out[nout++] = l;
    int cnt[52] = {0};
    for (size_t k = 0; k < nin; k++)
      for (size_t d = 0; d < in[k]->rank; d++)
        if (ids[k][d] < 52) cnt[ids[k][d]]++;
    for (int l = 0; l < 52; l++)
      if (cnt[l] == 1) out[nout++] = l;
  }
  bool is_out[EIN_MAXL] = {false};
  for (int i = 0; i < nout; i++) is_out[out[i]] = true;
  int sum_l[EIN_MAXL], nsum = 0;
  for (int l = 0; l < EIN_MAXL; l++)
    if (size[l] >= 0 && !is_out[l]) sum_l[nsum++] = l;
  int64_t odims[EIN_MAXL];
  for (int i = 0; i < nout; i++) odims[i] = size[out[i]];
  ox_value *y = ox_kctx_output(ctx, 0, dt, odims, (size_t)nout);
  if (!y) return OX_ENOMEM;
  if (nin == 2 && dt == OX_FLOAT) {
    int r = ein_gemm(ctx, in, ids, size, st, out, nout, y);
    if (r != 1) return r;
  }
  int64_t nsum_tot = 1;
  for (int i = 0; i < nsum; i++) nsum_tot *= size[sum_l[i]];
  int64_t oidx[EIN_MAXL] = {0};
  for (int64_t o = 0; o < y->numel; o++) {
    int64_t base[16];
    for (size_t k = 0; k < nin; k++) {
      base[k] = 0;
      for (int i = 0; i < nout; i++) base[k] += oidx[i] * st[k][out[i]];
    }
    double acc = 0;
    int64_t sidx[EIN_MAXL] = {0}, off[16];
    memcpy(off, base, sizeof off);
    for (int64_t t = 0; t < nsum_tot; t++) {
      double prod = 1;
      for (size_t k = 0; k < nin; k++) prod *= oc_get(in[k]->data, dt, off[k]);
      acc += prod;
      for (int i = nsum; i-- > 0;) {
        int l = sum_l[i];
        sidx[i]++;
        for (size_t k = 0; k < nin; k++) off[k] += st[k][l];
        if (sidx[i] < size[l]) break;
        for (size_t k = 0; k < nin; k++) off[k] -= st[k][l] * size[l];
        sidx[i] = 0;
      }
    }
    oc_set(y->data, dt, o, acc);
    for (int i = nout; i-- > 0;) {
      if (++oidx[i] < odims[i]) break;
      oidx[i] = 0;
    }
  }
  return OX_OK;
}

/* ---- Det ---- */

static int det_run(ox_kctx *ctx, void *state) {
  (void)state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
  int32_t dt = x->dtype;
  if (dt != OX_FLOAT && dt != OX_DOUBLE && dt != OX_FLOAT16 && dt != OX_BFLOAT16)
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "element type %s not supported", dt_name(dt));
  if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be [*, M, M]");
  int64_t n = x->dims[x->rank - 1];
  ox_value *y = ox_kctx_output(ctx, 0, dt, x->dims, x->rank - 2);
  if (!y) return OX_ENOMEM;
  double *m = malloc((size_t)(n * n > 0 ? n * n : 1) * sizeof(double));
  if (!m) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  for (int64_t b = 0; b < y->numel; b++) {
    for (int64_t i = 0; i < n * n; i++) m[i] = oc_get(x->data, dt, b * n * n + i);
    double det = 1;
    for (int64_t c = 0; c < n; c++) {
      int64_t piv = c;
      for (int64_t r = c + 1; r < n; r++)
        if (fabs(m[r * n + c]) > fabs(m[piv * n + c])) piv = r;
      if (m[piv * n + c] == 0) {
        det = 0;
        break;
      }
      if (piv != c) {
        for (int64_t k = 0; k < n; k++) {
          double t = m[c * n + k];
          m[c * n + k] = m[piv * n + k];
          m[piv * n + k] = t;
        }
        det = -det;
      }
      double d = m[c * n + c];
      det *= d;
      for (int64_t r = c + 1; r < n; r++) {
        double f = m[r * n + c] / d;
        for (int64_t k = c; k < n; k++) m[r * n + k] -= f * m[c * n + k];
      }
    }
    oc_set(y->data, dt, b, det);
  }
  free(m);
  return OX_OK;
}

static int none_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  (void)info;
  (void)e;
  *state = NULL;
  return OX_OK;
}

const ox_kernel_def ox_ops_matmul[] = {
    {OX_ONNXC_DOMAIN, "MatMulTransBFused", 1, 1, mmtb_prepare, mmtb_run, mm_release, NULL, 2},
    {OX_ONNXC_DOMAIN, "GatherTiedFused", 1, 1, tied_prepare, tied_run, NULL, NULL, 1},
    {"", "MatMul", 1, 1000, mm_prepare, mm_run, mm_release, NULL, 2},
    {"", "Gemm", 1, 6, gemm_prepare, gemm_run, gemm_release},
    {"", "Gemm", 7, 1000, gemm_prepare, gemm_run, gemm_release},
    {"", "Einsum", 12, 1000, ein_prepare, ein_run, NULL},
    {"", "Det", 11, 1000, none_prepare, det_run, NULL},
    {0},
};
