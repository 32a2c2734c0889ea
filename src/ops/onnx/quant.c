/* quant.c - linear quantisation: QuantizeLinear, DequantizeLinear (per-tensor,
 * per-axis and blocked; integer, float8 and float4 kinds), DynamicQuantizeLinear,
 * QLinearMatMul and MatMulInteger. */
#include "quant.h"

#include "../../kernels/q8.h"
#include "../../kernels/qgemm.h"
#include "../../schema/onnxc_ops.h"
#include "../nn_common.h"
#include "../opcore.h"

typedef struct quant_attrs {
  int64_t axis, block_size, output_dtype, precision;
  bool saturate;
  int version;
} quant_attrs;

static int quant_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  quant_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  a->version = (int)info->since_version;
  a->axis = ox_node_attr_int(n, "axis", 1);
  a->block_size = ox_node_attr_int(n, "block_size", 0);
  a->output_dtype = ox_node_attr_int(n, "output_dtype", 0);
  a->precision = ox_node_attr_int(n, "precision", 0);
  a->saturate = ox_node_attr_int(n, "saturate", 1) != 0;
  if (a->block_size < 0)
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): block_size must not be negative",
                      n->name ? n->name : "", n->op_type);
  *state = a;
  return OX_OK;
}

/* Integer range of a quantized type; false for the float kinds. */
static bool int_range(int32_t dt, double *lo, double *hi) {
  switch (dt) {
    case OX_UINT8:
      *lo = 0, *hi = 255;
      return true;
    case OX_INT8:
      *lo = -128, *hi = 127;
      return true;
    case OX_UINT16:
      *lo = 0, *hi = 65535;
      return true;
    case OX_INT16:
      *lo = -32768, *hi = 32767;
      return true;
    case OX_UINT4:
      *lo = 0, *hi = 15;
      return true;
    case OX_INT4:
      *lo = -8, *hi = 7;
      return true;
    case OX_UINT2:
      *lo = 0, *hi = 3;
      return true;
    case OX_INT2:
      *lo = -2, *hi = 1;
      return true;
    case OX_INT32:
      *lo = -2147483648.0, *hi = 2147483647.0;
      return true;
    default:
      return false;
  }
}

static bool is_f8(int32_t dt) {
  return dt == OX_FLOAT8E4M3FN || dt == OX_FLOAT8E4M3FNUZ || dt == OX_FLOAT8E5M2 ||
         dt == OX_FLOAT8E5M2FNUZ;
}

/* Stores an integer-valued v (already clamped) in a quantized int type. A
 * NaN (a zero scale: 0/0) stores 0, as converting it is undefined in C. */
static void set_int(void *d, int32_t dt, int64_t i, double v) {
  if (v != v) v = 0.0;
  switch (dt) {
    case OX_UINT8:
    case OX_UINT4:
    case OX_UINT2:
      ((uint8_t *)d)[i] = (uint8_t)v;
      break;
    case OX_INT8:
    case OX_INT4:
    case OX_INT2:
      ((int8_t *)d)[i] = (int8_t)v;
      break;
    case OX_UINT16:
      ((uint16_t *)d)[i] = (uint16_t)v;
      break;
    case OX_INT16:
      ((int16_t *)d)[i] = (int16_t)v;
      break;
    case OX_INT32:
      ((int32_t *)d)[i] = (int32_t)v;
      break;
    default:
      break;
  }
}

/* Rounds v to the precision of float type dt (float16/bfloat16/float). */
static double to_prec(double v, int32_t dt) {
  if (dt == OX_FLOAT16) return ox_f16_to_f32(ox_f32_to_f16((float)v));
  if (dt == OX_BFLOAT16) return ox_bf16_to_f32(ox_f32_to_bf16((float)v));
  if (dt == OX_FLOAT) return (float)v;
  return v;
}

/* Scale layout: index of the scale/zero point of every element, given as
 * outer x D x inner loops with sidx = (o * SD + d / bs) * SI + in * (SI > 1). */
typedef struct qlayout {
  int64_t outer, D, inner, SD, bs;
  bool per_tensor, per_axis;
} qlayout;

static int q_layout(ox_kctx *c, const quant_attrs *a, const ox_value *x, const ox_value *s,
                    const ox_value *zp, qlayout *L) {
  memset(L, 0, sizeof *L);
  if (zp && !ox_shape_equal(zp->dims, zp->rank, s->dims, s->rank) &&
      !(zp->numel == 1 && s->numel == 1))
    return ox_kctx_fail(c, OX_ERUNTIME, "zero point and scale shapes differ");
  if (s->numel == 1 && s->rank <= 1 && !(a->block_size > 0 && s->rank == x->rank && x->rank > 1)) {
    L->per_tensor = true;
    return OX_OK;
  }
  if (a->version < 13)
    return ox_kctx_fail(c, OX_ERUNTIME, "scale must be a scalar before opset 13");
  int64_t axis;
  if (!nn_axis(a->axis, x->rank, false, &axis))
    return ox_kctx_fail(c, OX_ERUNTIME, "axis %lld is out of range for rank %zu",
                        (long long)a->axis, x->rank);
  L->outer = nn_prod(x->dims, 0, (size_t)axis);
  L->D = x->dims[axis];
  L->inner = nn_prod(x->dims, (size_t)axis + 1, x->rank);
  if (s->rank == 1 && a->block_size == 0) {
    if (s->dims[0] != L->D)
      return ox_kctx_fail(c, OX_ERUNTIME, "per-axis scale has %lld elements, axis %lld has %lld",
                          (long long)s->dims[0], (long long)axis, (long long)L->D);
    L->per_axis = true;
    return OX_OK;
  }
  if (a->block_size <= 0 || s->rank != x->rank)
    return ox_kctx_fail(c, OX_ERUNTIME,
                        "scale of rank %zu needs block_size > 0 and the rank of x (%zu)", s->rank,
                        x->rank);
  for (size_t k = 0; k < x->rank; k++)
    if ((int64_t)k != axis && s->dims[k] != x->dims[k])
      return ox_kctx_fail(c, OX_ERUNTIME, "blocked scale must match x except on axis %lld",
                          (long long)axis);
  L->SD = s->dims[axis];
  L->bs = a->block_size;
  if (L->D > L->SD * L->bs || (L->SD - 1) * L->bs >= (L->D > 0 ? L->D : 1))
    return ox_kctx_fail(c, OX_ERUNTIME,
                        "block_size %lld does not fit axis %lld of %lld with %lld blocks",
                        (long long)L->bs, (long long)axis, (long long)L->D, (long long)L->SD);
  return OX_OK;
}

/* Calls body(i, si) for element i with scale index si. */
#define Q_FOREACH(L, n, BODY)                                           \
  do {                                                                  \
    if ((L)->per_tensor) {                                              \
      for (int64_t i = 0, si = 0; i < (n); i++) BODY                    \
    } else if ((L)->per_axis) {                                         \
      int64_t i = 0;                                                    \
      for (int64_t o = 0; o < (L)->outer; o++)                          \
        for (int64_t d = 0; d < (L)->D; d++)                            \
          for (int64_t in = 0, si = d; in < (L)->inner; in++, i++) BODY \
    } else {                                                            \
      int64_t i = 0;                                                    \
      for (int64_t o = 0; o < (L)->outer; o++)                          \
        for (int64_t d = 0; d < (L)->D; d++)                            \
          for (int64_t in = 0; in < (L)->inner; in++, i++) {            \
            int64_t si = (o * (L)->SD + d / (L)->bs) * (L)->inner + in; \
            BODY                                                        \
          }                                                             \
    }                                                                   \
  } while (0)

/* ---- fast paths: float32 <-> 8-bit integers with float32 scales
 * (kernels/q8.h: the quotient of a float32 division, rounded half to even,
 * saturated; NaN -> 0) ---- */

/* a QuantizeLinear or DequantizeLinear whose scale is constant over runs
 * of `inner` elements (per tensor: one run of everything) */
typedef struct q8_job {
  bool quantize, is_signed;
  const void *x, *s, *zp;
  void *y;
  int64_t inner, D, n_runs, chunk; /* runs are cut in chunks of `chunk` */
  bool per_tensor;
} q8_job;

static void q8_task(void *arg, int64_t t0, int64_t t1) {
  const q8_job *j = arg;
  int64_t per_run = (j->inner + j->chunk - 1) / j->chunk;
  const ox_q8_kernels *k = ox_q8_kernels_get();
  for (int64_t t = t0; t < t1; t++) {
    int64_t run = t / per_run, part = t % per_run;
    int64_t si = j->per_tensor ? 0 : run % j->D;
    int64_t b = part * j->chunk, n = j->inner - b < j->chunk ? j->inner - b : j->chunk;
    int64_t off = run * j->inner + b;
    float sc = ((const float *)j->s)[si];
    float z = !j->zp         ? 0.0f
              : j->is_signed ? (float)((const int8_t *)j->zp)[si]
                             : (float)((const uint8_t *)j->zp)[si];
    if (j->quantize)
      k->from_f32((const float *)j->x + off, n, sc, z, j->is_signed, (uint8_t *)j->y + off);
    else
      k->to_f32((const uint8_t *)j->x + off, n, sc, z, j->is_signed, (float *)j->y + off);
  }
}

/* true when the fast path applies (and ran) */
static bool q8_fast(ox_kctx *c, bool quantize, const qlayout *L, const ox_value *x,
                    const ox_value *s, const ox_value *zp, ox_value *y, int32_t int_type) {
  if (s->dtype != OX_FLOAT || (int_type != OX_UINT8 && int_type != OX_INT8)) return false;
  if (!L->per_tensor && !(L->per_axis && L->inner >= 16)) return false;
  q8_job j = {quantize,
              int_type == OX_INT8,
              x->data,
              s->data,
              zp ? zp->data : NULL,
              y->data,
              L->per_tensor ? x->numel : L->inner,
              L->per_tensor ? 1 : L->D,
              L->per_tensor ? 1 : L->outer * L->D,
              16384,
              L->per_tensor};
  if (x->numel == 0) return true;
  int64_t tasks = j.n_runs * ((j.inner + j.chunk - 1) / j.chunk);
  ox_parallel_for(ox_kctx_pool(c), tasks, 1, q8_task, &j);
  return true;
}

static int quantize_run(ox_kctx *c, void *st) {
  const quant_attrs *a = st;
  ox_value *x = ox_kctx_input(c, 0), *s = ox_kctx_input(c, 1), *zp = ox_kctx_input(c, 2);
  if (!x || !s) return ox_kctx_fail(c, OX_ERUNTIME, "x and y_scale are required");
  if (!nn_is_real(x->dtype) && x->dtype != OX_INT32)
    return ox_kctx_fail(c, OX_ERUNTIME, "x must be float, float16, bfloat16 or int32");
  int32_t odt = zp ? zp->dtype : a->output_dtype ? (int32_t)a->output_dtype : OX_UINT8;
  if (zp && a->output_dtype && a->output_dtype != zp->dtype)
    return ox_kctx_fail(c, OX_ERUNTIME, "output_dtype %lld differs from the zero point type %d",
                        (long long)a->output_dtype, (int)zp->dtype);
  double lo = 0, hi = 0;
  bool is_int = int_range(odt, &lo, &hi) && odt != OX_INT32;
  if (!is_int && !is_f8(odt) && odt != OX_FLOAT4E2M1)
    return ox_kctx_fail(c, OX_ERUNTIME, "unsupported quantized type %d", (int)odt);
  qlayout L;
  int rc = q_layout(c, a, x, s, zp, &L);
  if (rc) return rc;
  ox_value *y = ox_kctx_output(c, 0, odt, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  int32_t prec = a->precision ? (int32_t)a->precision : s->dtype;
  const void *xd = x->data, *sd = s->data, *zd = zp ? zp->data : NULL;
  int32_t xt = x->dtype, stt = s->dtype, zt = zp ? zp->dtype : odt;
  void *yd = y->data;
  bool sat = a->saturate;
  if (xt == OX_FLOAT && prec == OX_FLOAT && q8_fast(c, true, &L, x, s, zp, y, odt)) return OX_OK;
  Q_FOREACH (&L, x->numel, {
    double sc = nn_get(sd, stt, si);
    double q = to_prec(to_prec(nn_get(xd, xt, i), prec) / to_prec(sc, prec), prec);
    double z = zd ? nn_get(zd, zt, si) : 0.0;
    if (is_int) {
      double r = nearbyint(q) + z;
      r = r < lo ? lo : r > hi ? hi : r;
      if (r != r) r = 0;
      set_int(yd, odt, i, r);
    } else if (odt == OX_FLOAT4E2M1) {
      ((uint8_t *)yd)[i] = ox_f32_to_f4((float)(q + z));
    } else {
      ((uint8_t *)yd)[i] = ox_f32_to_f8((float)(q + z), odt, sat);
    }
  })
    ;
  return OX_OK;
}

static int dequantize_run(ox_kctx *c, void *st) {
  const quant_attrs *a = st;
  ox_value *x = ox_kctx_input(c, 0), *s = ox_kctx_input(c, 1), *zp = ox_kctx_input(c, 2);
  if (!x || !s) return ox_kctx_fail(c, OX_ERUNTIME, "x and x_scale are required");
  if (zp && zp->dtype != x->dtype)
    return ox_kctx_fail(c, OX_ERUNTIME, "x and x_zero_point types differ");
  double lo = 0, hi = 0;
  if (!int_range(x->dtype, &lo, &hi) && !is_f8(x->dtype) && x->dtype != OX_FLOAT4E2M1)
    return ox_kctx_fail(c, OX_ERUNTIME, "unsupported quantized input type %d", (int)x->dtype);
  int32_t odt = a->output_dtype        ? (int32_t)a->output_dtype
                : nn_is_real(s->dtype) ? s->dtype
                                       : OX_FLOAT;
  if (!nn_is_real(odt) || odt == OX_DOUBLE)
    return ox_kctx_fail(c, OX_ERUNTIME, "unsupported output type %d", (int)odt);
  qlayout L;
  int rc = q_layout(c, a, x, s, zp, &L);
  if (rc) return rc;
  ox_value *y = ox_kctx_output(c, 0, odt, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  const void *xd = x->data, *sd = s->data, *zd = zp ? zp->data : NULL;
  int32_t xt = x->dtype, stt = s->dtype;
  void *yd = y->data;
  if (odt == OX_FLOAT && q8_fast(c, false, &L, x, s, zp, y, xt)) return OX_OK;
  Q_FOREACH (&L, x->numel, {
    double z = zd ? nn_get(zd, xt, si) : 0.0;
    double v = to_prec(nn_get(xd, xt, i) - z, odt) * to_prec(nn_get(sd, stt, si), odt);
    nn_set_real(yd, odt, i, v);
  })
    ;
  return OX_OK;
}

/* DynamicQuantizeLinear's two passes over chunks of the input, on the
 * pool: the range of each chunk (0 included, NaN skipped: the minimum and
 * maximum of the chunks' are those of the whole, in any order), then the
 * quantization with the scale and zero point they give. */
enum { DYNQ_CHUNK = 16384 };
typedef struct dynq_job {
  const float *x;
  int64_t n;
  float *lo, *hi; /* per chunk */
  float scale, zp;
  uint8_t *y;
} dynq_job;

static void dynq_range_task(void *arg, int64_t t0, int64_t t1) {
  dynq_job *j = arg;
  const ox_q8_kernels *k = ox_q8_kernels_get();
  for (int64_t t = t0; t < t1; t++) {
    int64_t b = t * DYNQ_CHUNK, n = j->n - b < DYNQ_CHUNK ? j->n - b : DYNQ_CHUNK;
    k->range(j->x + b, n, &j->lo[t], &j->hi[t]);
  }
}

static void dynq_quant_task(void *arg, int64_t t0, int64_t t1) {
  dynq_job *j = arg;
  int64_t b = t0 * DYNQ_CHUNK, e = t1 * DYNQ_CHUNK < j->n ? t1 * DYNQ_CHUNK : j->n;
  ox_q8_kernels_get()->from_f32(j->x + b, e - b, j->scale, j->zp, false, j->y + b);
}

static int dynq_run(ox_kctx *c, void *st) {
  (void)st;
  ox_value *x = ox_kctx_input(c, 0);
  if (!x || x->dtype != OX_FLOAT) return ox_kctx_fail(c, OX_ERUNTIME, "x must be float");
  const float *xd = x->data;
  int64_t chunks = (x->numel + DYNQ_CHUNK - 1) / DYNQ_CHUNK;
  float part[2 * 64], *parts = chunks <= 64 ? part : malloc((size_t)chunks * 2 * sizeof(float));
  if (!parts) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  dynq_job j = {xd, x->numel, parts, parts + (chunks <= 64 ? 64 : chunks), 0, 0, NULL};
  ox_parallel_for(ox_kctx_pool(c), chunks, 1, dynq_range_task, &j);
  float mn = 0, mx = 0;
  for (int64_t t = 0; t < chunks; t++) {
    mn = j.lo[t] < mn ? j.lo[t] : mn;
    mx = j.hi[t] > mx ? j.hi[t] : mx;
  }
  if (parts != part) free(parts);
  float scale = (mx - mn) / 255.0f;
  float zpf = scale != 0.0f ? nearbyintf((0.0f - mn) / scale) : 0.0f;
  zpf = zpf < 0 ? 0 : zpf > 255 ? 255 : zpf == zpf ? zpf : 0; /* NaN from infinite input: 0 */
  ox_value *y = ox_kctx_output(c, 0, OX_UINT8, x->dims, x->rank);
  ox_value *ys = y ? ox_kctx_output(c, 1, OX_FLOAT, NULL, 0) : NULL;
  ox_value *yz = ys ? ox_kctx_output(c, 2, OX_UINT8, NULL, 0) : NULL;
  if (!yz) return OX_ERUNTIME;
  uint8_t *yd = y->data;
  if (scale != 0.0f && scale == scale) {
    j.scale = scale;
    j.zp = zpf;
    j.y = yd;
    ox_parallel_for(ox_kctx_pool(c), chunks, 1, dynq_quant_task, &j);
  } else
    for (int64_t i = 0; i < x->numel; i++) yd[i] = (uint8_t)zpf; /* all zero or no range */
  *(float *)ys->data = scale;
  *(uint8_t *)yz->data = (uint8_t)zpf;
  return OX_OK;
}

/* ---- batched matrix products with numpy broadcasting ---- */
typedef struct mm_plan {
  int64_t M, K, N, batch;
  int64_t *aoff, *boff; /* per batch element offsets (malloc'd) */
  int64_t dims[16];
  size_t rank;
} mm_plan;

static int mm_plan_make(ox_kctx *c, const ox_value *A, const ox_value *B, mm_plan *p) {
  memset(p, 0, sizeof *p);
  if (A->rank < 1 || B->rank < 1 || A->rank > 12 || B->rank > 12)
    return ox_kctx_fail(c, OX_ERUNTIME, "matmul operands need rank 1..12");
  int64_t ad[14], bd[14];
  size_t ar = A->rank, br = B->rank;
  memcpy(ad, A->dims, ar * sizeof(int64_t));
  memcpy(bd, B->dims, br * sizeof(int64_t));
  bool a1 = ar == 1, b1 = br == 1;
  if (a1) ad[1] = ad[0], ad[0] = 1, ar = 2;
  if (b1) bd[1] = 1, br = 2;
  p->M = ad[ar - 2], p->K = ad[ar - 1], p->N = bd[br - 1];
  if (bd[br - 2] != p->K)
    return ox_kctx_fail(c, OX_ERUNTIME, "matmul inner dimensions differ (%lld vs %lld)",
                        (long long)p->K, (long long)bd[br - 2]);
  size_t r = (ar > br ? ar : br) - 2;
  int64_t bdims[12], as[12], bs[12];
  int64_t sa = p->M * p->K, sb = p->K * p->N;
  for (size_t k = r; k-- > 0;) {
    size_t ka = k + (ar - 2) - r, kb = k + (br - 2) - r;
    int64_t da = k + (ar - 2) >= r ? ad[ka] : 1, db = k + (br - 2) >= r ? bd[kb] : 1;
    if (da != db && da != 1 && db != 1)
      return ox_kctx_fail(c, OX_ERUNTIME, "matmul batch dimensions do not broadcast");
    bdims[k] = da > db ? da : db;
    as[k] = da == 1 ? 0 : sa;
    bs[k] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
  }
  p->batch = nn_prod(bdims, 0, r);
  p->aoff = malloc(((size_t)p->batch + 1) * sizeof(int64_t));
  p->boff = malloc(((size_t)p->batch + 1) * sizeof(int64_t));
  if (!p->aoff || !p->boff) {
    free(p->aoff);
    free(p->boff);
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  int64_t idx[12] = {0}, oa = 0, ob = 0;
  for (int64_t b = 0; b < p->batch; b++) {
    p->aoff[b] = oa, p->boff[b] = ob;
    for (size_t k = r; k-- > 0;) {
      idx[k]++, oa += as[k], ob += bs[k];
      if (idx[k] < bdims[k]) break;
      oa -= as[k] * idx[k], ob -= bs[k] * idx[k], idx[k] = 0;
    }
  }
  for (size_t k = 0; k < r; k++) p->dims[p->rank++] = bdims[k];
  if (!a1) p->dims[p->rank++] = p->M;
  if (!b1) p->dims[p->rank++] = p->N;
  return OX_OK;
}

static void mm_plan_free(mm_plan *p) {
  free(p->aoff);
  free(p->boff);
}

/* Zero point for row (A) or column (B) j: scalar or 1-D per row/column. */
static int zp_check(ox_kctx *c, const ox_value *z, int32_t dt, int64_t n, const char *what) {
  if (!z) return OX_OK;
  if (z->dtype != dt) return ox_kctx_fail(c, OX_ERUNTIME, "%s type differs from its tensor", what);
  if (z->numel != 1 && z->numel != n)
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must be a scalar or have %lld elements", what,
                        (long long)n);
  return OX_OK;
}

/* C[b] = (A - za) x (B - zb) in double (exact for the integer types): both
 * operands are centred into double buffers once, then each output row is an
 * i-k-j accumulation over contiguous rows of B, rows spread over the pool. */
typedef struct mm_job {
  const mm_plan *p;
  const double *a, *b;
  double *c;
} mm_job;

static void mm_rows(void *arg, int64_t r0, int64_t r1) {
  const mm_job *j = arg;
  const mm_plan *p = j->p;
  for (int64_t r = r0; r < r1; r++) {
    int64_t bt = r / p->M, i = r % p->M;
    const double *ar = j->a + p->aoff[bt] + i * p->K;
    double *cr = j->c + r * p->N;
    for (int64_t n = 0; n < p->N; n++) cr[n] = 0.0;
    for (int64_t k = 0; k < p->K; k++) {
      const double *br = j->b + p->boff[bt] + k * p->N;
      double av = ar[k];
      for (int64_t n = 0; n < p->N; n++) cr[n] += av * br[n];
    }
  }
}

static int mm_centered(ox_kctx *c, const ox_value *A, const ox_value *za, const ox_value *B,
                       const ox_value *zb, const mm_plan *p, double *C) {
  double *ad = malloc(((size_t)A->numel + 1) * sizeof(double));
  double *bd = malloc(((size_t)B->numel + 1) * sizeof(double));
  if (!ad || !bd) {
    free(ad);
    free(bd);
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  int64_t idx = 0;
  for (int64_t m = 0; m < A->numel / (p->M * p->K > 0 ? p->M * p->K : 1); m++)
    for (int64_t i = 0; i < p->M; i++) {
      double z = za ? nn_get(za->data, za->dtype, za->numel == 1 ? 0 : i) : 0.0;
      for (int64_t k = 0; k < p->K; k++, idx++) ad[idx] = nn_get(A->data, A->dtype, idx) - z;
    }
  double *zcol = malloc(((size_t)p->N + 1) * sizeof(double));
  if (!zcol) {
    free(ad);
    free(bd);
    return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  }
  for (int64_t n = 0; n < p->N; n++)
    zcol[n] = zb ? nn_get(zb->data, zb->dtype, zb->numel == 1 ? 0 : n) : 0.0;
  idx = 0;
  for (int64_t m = 0; m < B->numel / (p->K * p->N > 0 ? p->K * p->N : 1); m++)
    for (int64_t k = 0; k < p->K; k++)
      for (int64_t n = 0; n < p->N; n++, idx++) bd[idx] = nn_get(B->data, B->dtype, idx) - zcol[n];
  mm_job j = {p, ad, bd, C};
  ox_parallel_for(ox_kctx_pool(c), p->batch * p->M, 1 + 65536 / (p->N * p->K + 1), mm_rows, &j);
  free(zcol);
  free(ad);
  free(bd);
  return OX_OK;
}

static bool is_q8(int32_t dt) { return dt == OX_INT8 || dt == OX_UINT8; }

/* MatMulInteger with a 2-D B: the integer GEMM (src/kernels/qgemm.c), B
 * packed once when it and its zero point are constants. */
typedef struct mmi_state {
  ox_qgemm_b packed; /* K == 0 and N == 0 when B is not constant */
  bool has_packed;
  /* QMatMulScaledFused's activation after the bias (attribute act: 0 none,
   * 1 Relu, 2 GELU's erf form with gelu_c0..2 and gelu_mul) */
  int act;
  oc_gelu_erf gelu;
} mmi_state;

static bool zp_fits(const ox_value *z, int64_t n) {
  return !z || (z->rank <= 1 && (z->numel == 1 || z->numel == n));
}

static int matmulint_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  mmi_state *st = calloc(1, sizeof *st);
  if (!st) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *state = st;
  int64_t act = ox_node_attr_int(info->node, "act", 0);
  if (act < 0 || act > 2) return oc_prep_fail(info, e, "unknown act %lld", (long long)act);
  if (act == 2 && (!ox_node_attr(info->node, "gelu_c0") || !ox_node_attr(info->node, "gelu_c1") ||
                   !ox_node_attr(info->node, "gelu_c2")))
    return oc_prep_fail(info, e, "act 2 needs gelu_c0, gelu_c1 and gelu_c2");
  st->act = (int)act;
  st->gelu = (oc_gelu_erf){ox_node_attr_float(info->node, "gelu_c0", 0),
                           ox_node_attr_float(info->node, "gelu_c1", 0),
                           ox_node_attr_float(info->node, "gelu_c2", 0),
                           ox_node_attr_int(info->node, "gelu_mul", 0) != 0};
  const ox_value *B = info->n_inputs > 1 && info->const_inputs ? info->const_inputs[1] : NULL;
  const ox_node *n = info->node;
  bool zb_given = n->n_input > 3 && n->input[3] && n->input[3][0];
  const ox_value *zb = zb_given && info->const_inputs ? info->const_inputs[3] : NULL;
  if (!B || B->kind != OX_VAL_TENSOR || B->rank != 2 || !is_q8(B->dtype) || (zb_given && !zb) ||
      (zb && (zb->dtype != B->dtype || !zp_fits(zb, B->dims[1]))))
    return OX_OK; /* packed per run, or the general path */
  if (ox_qgemm_pack_b(B->data, B->dtype == OX_INT8, B->dims[0], B->dims[1], B->dims[1],
                      zb ? zb->data : NULL, zb ? zb->numel : 0, &st->packed, e))
    return e->code;
  st->has_packed = true;
  return OX_OK;
}

static void matmulint_release(void *state) {
  mmi_state *st = state;
  if (!st) return;
  ox_qgemm_free_b(&st->packed);
  free(st);
}

/* A (..., M, K) x B (K, N) on the integer GEMM; OX_EUNSUPPORTED when the
 * operands need the general path (batched B, per-row zero points of an N-d A). */
static int matmulint_gemm(ox_kctx *c, const mmi_state *st, const ox_value *A, const ox_value *za,
                          const ox_value *B, const ox_value *zb, const ox_qgemm_epi *epi) {
  if (B->rank != 2 || A->rank < 1 || A->dims[A->rank - 1] != B->dims[0]) return OX_EUNSUPPORTED;
  int64_t K = B->dims[0], N = B->dims[1], M = K ? A->numel / K : 0;
  if (A->rank < 2 && A->numel != K) return OX_EUNSUPPORTED;
  if (za && !(za->numel == 1 || (A->rank == 2 && za->rank == 1 && za->numel == M)))
    return OX_EUNSUPPORTED;
  if (za && za->dtype != A->dtype) return OX_EUNSUPPORTED;
  if (zb && (zb->dtype != B->dtype || !zp_fits(zb, N))) return OX_EUNSUPPORTED;
  int64_t dims[16];
  size_t rank = 0;
  for (size_t i = 0; i + 1 < A->rank && rank < 15; i++) dims[rank++] = A->dims[i];
  dims[rank++] = N;
  if (A->rank > 16) return OX_EUNSUPPORTED;
  ox_qgemm_b local;
  const ox_qgemm_b *pb = &st->packed;
  ox_err pe = {0};
  if (!st->has_packed) {
    if (ox_qgemm_pack_b(B->data, B->dtype == OX_INT8, K, N, N, zb ? zb->data : NULL,
                        zb ? zb->numel : 0, &local, &pe))
      return ox_kctx_fail(c, pe.code, "%s", pe.msg);
    pb = &local;
  }
  ox_value *y = ox_kctx_output(c, 0, epi ? OX_FLOAT : OX_INT32, dims, rank);
  int rc = !y ? OX_ERUNTIME
           : epi
               ? ox_qgemm_scaled_on(NULL, A->data, A->dtype == OX_INT8, M, K, za ? za->data : NULL,
                                    za ? za->numel : 0, pb, epi, y->data, N, ox_kctx_pool(c), &pe)
               : ox_qgemm(A->data, A->dtype == OX_INT8, M, K, za ? za->data : NULL,
                          za ? za->numel : 0, pb, y->data, N, ox_kctx_pool(c), &pe);
  if (rc && y) rc = ox_kctx_fail(c, pe.code, "%s", pe.msg);
  if (!st->has_packed) ox_qgemm_free_b(&local);
  return rc;
}

static int matmulint_run(ox_kctx *c, void *state) {
  const mmi_state *st = state;
  ox_value *A = ox_kctx_input(c, 0), *B = ox_kctx_input(c, 1);
  ox_value *za = ox_kctx_input(c, 2), *zb = ox_kctx_input(c, 3);
  if (!A || !B || !is_q8(A->dtype) || !is_q8(B->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "A and B must be int8 or uint8 tensors");
  int frc = matmulint_gemm(c, st, A, za, B, zb, NULL);
  if (frc != OX_EUNSUPPORTED) return frc;
  mm_plan p;
  int rc = mm_plan_make(c, A, B, &p);
  if (rc) return rc;
  if ((rc = zp_check(c, za, A->dtype, p.M, "a_zero_point")) ||
      (rc = zp_check(c, zb, B->dtype, p.N, "b_zero_point"))) {
    mm_plan_free(&p);
    return rc;
  }
  ox_value *y = ox_kctx_output(c, 0, OX_INT32, p.dims, p.rank);
  double *C = y ? malloc(((size_t)(p.batch * p.M * p.N) + 1) * sizeof(double)) : NULL;
  if (!C) {
    mm_plan_free(&p);
    return y ? ox_kctx_fail(c, OX_ENOMEM, "out of memory") : OX_ERUNTIME;
  }
  rc = mm_centered(c, A, za, B, zb, &p, C);
  for (int64_t i = 0; !rc && i < y->numel; i++) ((int32_t *)y->data)[i] = (int32_t)C[i];
  free(C);
  mm_plan_free(&p);
  return rc;
}

/* the activation on each finished block of the product, as the Relu kernel
 * or the GELU nodes compute it */
static void qmm_act(void *ctx, float *C, int64_t ldc, int64_t m0, int64_t m1, int64_t n0,
                    int64_t n1) {
  const mmi_state *st = ctx;
  for (int64_t m = m0; m < m1; m++) {
    float *y = C + m * ldc + n0;
    if (st->act == 2)
      oc_gelu_erf_f32(y, y, n1 - n0, &st->gelu);
    else
      for (int64_t k = 0; k < n1 - n0; k++) y[k] = y[k] > 0.0f ? y[k] : 0.0f;
  }
}

/* QMatMulScaledFused (domain ai.onnxc; src/opt/dyn_matmul.c makes it from
 * MatMulInteger -> Cast(float) -> Mul(scale) [-> Add(bias)] [-> Relu or
 * GELU]): inputs A, B, a_zero_point, b_zero_point (as MatMulInteger),
 * scale and optional bias, each one value or one per column. The float
 * epilogue runs in the GEMM's registers with the same two roundings as the
 * nodes it replaces; the activation on each block as it is finished. */
static int qmm_scaled_run(ox_kctx *c, void *state) {
  const mmi_state *st = state;
  ox_value *A = ox_kctx_input(c, 0), *B = ox_kctx_input(c, 1);
  ox_value *za = ox_kctx_input(c, 2), *zb = ox_kctx_input(c, 3);
  ox_value *sc = ox_kctx_input(c, 4), *bias = ox_kctx_input(c, 5);
  if (!A || !B || !is_q8(A->dtype) || !is_q8(B->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "A and B must be int8 or uint8 tensors");
  int64_t N = B->rank == 2 ? B->dims[1] : -1;
  if (!sc || sc->dtype != OX_FLOAT || sc->rank > 1 || (sc->numel != 1 && sc->numel != N) ||
      (bias &&
       (bias->dtype != OX_FLOAT || bias->rank > 1 || (bias->numel != 1 && bias->numel != N))))
    return ox_kctx_fail(c, OX_ERUNTIME, "scale and bias must be float, one value or %lld",
                        (long long)N);
  ox_qgemm_epi epi = {sc->data,
                      bias ? bias->data : NULL,
                      sc->numel,
                      bias ? bias->numel : 0,
                      st->act ? qmm_act : NULL,
                      (void *)st};
  int rc = matmulint_gemm(c, st, A, za, B, zb, &epi);
  if (rc == OX_EUNSUPPORTED)
    return ox_kctx_fail(c, OX_ERUNTIME, "operands the fused integer GEMM does not take");
  return rc;
}

static int qlinearmatmul_run(ox_kctx *c, void *st) {
  (void)st;
  ox_value *in[8];
  for (size_t i = 0; i < 8; i++) {
    in[i] = ox_kctx_input(c, i);
    if (!in[i]) return ox_kctx_fail(c, OX_ERUNTIME, "input %zu is required", i);
  }
  ox_value *A = in[0], *as = in[1], *za = in[2], *B = in[3], *bs = in[4], *zb = in[5];
  ox_value *ys = in[6], *zy = in[7];
  mm_plan p;
  int rc = mm_plan_make(c, A, B, &p);
  if (rc) return rc;
  if ((rc = zp_check(c, za, A->dtype, p.M, "a_zero_point")) ||
      (rc = zp_check(c, zb, B->dtype, p.N, "b_zero_point")) ||
      (as->numel != 1 && as->numel != p.M &&
       (rc = ox_kctx_fail(c, OX_ERUNTIME, "a_scale must be a scalar or per row"))) ||
      (bs->numel != 1 && bs->numel != p.N &&
       (rc = ox_kctx_fail(c, OX_ERUNTIME, "b_scale must be a scalar or per column"))) ||
      (ys->numel != 1 && (rc = ox_kctx_fail(c, OX_ERUNTIME, "y_scale must be a scalar")))) {
    mm_plan_free(&p);
    return rc;
  }
  double lo = 0, hi = 0;
  int32_t odt = zy->dtype;
  bool is_int = int_range(odt, &lo, &hi);
  if (!is_int && !is_f8(odt)) {
    mm_plan_free(&p);
    return ox_kctx_fail(c, OX_ERUNTIME, "unsupported output type %d", (int)odt);
  }
  ox_value *y = ox_kctx_output(c, 0, odt, p.dims, p.rank);
  double *C = y ? malloc(((size_t)(p.batch * p.M * p.N) + 1) * sizeof(double)) : NULL;
  if (!C) {
    mm_plan_free(&p);
    return y ? ox_kctx_fail(c, OX_ENOMEM, "out of memory") : OX_ERUNTIME;
  }
  rc = mm_centered(c, A, za, B, zb, &p, C);
  double ysc = nn_get(ys->data, ys->dtype, 0), yz = nn_get(zy->data, zy->dtype, 0);
  for (int64_t b = 0; !rc && b < p.batch; b++)
    for (int64_t i = 0; i < p.M; i++)
      for (int64_t j = 0; j < p.N; j++) {
        int64_t k = (b * p.M + i) * p.N + j;
        double m = nn_get(as->data, as->dtype, as->numel == 1 ? 0 : i) *
                   nn_get(bs->data, bs->dtype, bs->numel == 1 ? 0 : j) / ysc;
        double q = C[k] * (float)m;
        if (is_int) {
          double r = nearbyint(q) + yz;
          r = r < lo ? lo : r > hi ? hi : r;
          set_int(y->data, odt, k, r);
        } else {
          ((uint8_t *)y->data)[k] = ox_f32_to_f8((float)(q + yz), odt, true);
        }
      }
  free(C);
  mm_plan_free(&p);
  return rc;
}

/* the contrib forms (src/ops/contrib/lowbit.c): the standard kernels as at opset 21, less
 * block_size, which onnxruntime's contrib schemas do not have */
int ox_quant_prepare_contrib(const ox_kinfo *info, void **state, ox_err *e) {
  int rc = quant_prepare(info, state, e);
  if (rc) return rc;
  quant_attrs *a = *state;
  a->version = 21;
  a->block_size = 0;
  a->precision = OX_FLOAT; /* onnxruntime divides float16 inputs in float */
  return OX_OK;
}
int ox_quantize_run(ox_kctx *ctx, void *state) { return quantize_run(ctx, state); }
int ox_dequantize_run(ox_kctx *ctx, void *state) { return dequantize_run(ctx, state); }

const ox_kernel_def ox_ops_quant[] = {
    {"", "QuantizeLinear", 10, 1000, quant_prepare, quantize_run, NULL},
    {"", "DequantizeLinear", 10, 1000, quant_prepare, dequantize_run, NULL},
    {"", "DynamicQuantizeLinear", 11, 1000, quant_prepare, dynq_run, NULL},
    {"", "MatMulInteger", 10, 1000, matmulint_prepare, matmulint_run, matmulint_release},
    {OX_ONNXC_DOMAIN, "QMatMulScaledFused", 1, 1, matmulint_prepare, qmm_scaled_run,
     matmulint_release},
    {"", "QLinearMatMul", 10, 1000, quant_prepare, qlinearmatmul_run, NULL},
    {0},
};
