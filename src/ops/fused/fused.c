/* fused.c - internal operators made by the session's fusion pass
 * (src/runtime/fuse.c), domain "ai.onnxc".
 *
 * ElementwiseChain: a program of float32 elementwise operations rooted at
 * one tensor (input 0); every other operand is a constant with one element
 * or with one element per index of a single axis (per channel). The whole
 * program runs over cache-sized blocks of the output, one loop per
 * operation, so that intermediate values never leave the cache. Each
 * operation is the same float32 expression as the unfused kernel
 * (src/ops/elementwise.c, src/ops/unary.c), evaluated in the same order, so
 * results are bit-identical.
 *
 * Attributes:
 *   ops     ints, one opcode per instruction (fz_op)
 *   args    ints, two operands per instruction: v >= 0 is value v (0: the
 *           root, k: the result of instruction k-1), v < 0 is constant -v-1
 *   params  floats, two per instruction (Clip bounds, alpha/beta)
 *   cdata   floats, the constants' elements, concatenated
 *   crank   ints, the rank of each constant; cdims ints, their dims
 * The result of the last instruction is the output. */
#include "../fused.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/ewise.h"
#include "../../kernels/levels.h"
#include "../datamove.h"
#include "../opcore.h"

#define FZ_MAX_INSTR 256
#define FZ_STACK_FLOATS 8192 /* scratch per block: 32 KiB */

typedef struct fz_const {
  const float *data;
  int64_t numel;
  size_t rank;
  const int64_t *dims;
} fz_const;

typedef struct fz_state {
  size_t n_instr, n_const;
  int32_t *op;
  int32_t *a, *b; /* operands */
  float *p0, *p1;
  int32_t *buf; /* scratch buffer of each instruction's result; -1: output */
  size_t n_buf;
  fz_const *c;
  /* >= 0: instructions gelu_at.. (the last five) are GELU's erf form on
   * value gelu_in, run as one loop (oc_gelu_erf_f32, the same operations) */
  int32_t gelu_at, gelu_in;
  oc_gelu_erf gelu;
  const ox_ew_kernels *ew; /* hand-written rows (WebAssembly SIMD128), or NULL */
} fz_state;

/* The scalar constant of operand v (v < 0), or false. */
static bool fz_scalar(const fz_state *s, int32_t v, float *out) {
  if (v >= 0 || s->c[-v - 1].numel != 1) return false;
  *out = s->c[-v - 1].data[0];
  return true;
}

/* The operand of binary instruction i that is not value `val`, when the
 * other one is (either order: IEEE addition and multiplication commute). */
static bool fz_other(const fz_state *s, size_t i, int32_t val, int32_t *other) {
  if (s->a[i] == val) return *other = s->b[i], true;
  if (s->b[i] == val) return *other = s->a[i], true;
  return false;
}

/* Finds x / c0 (x * c0) -> Erf -> + c1 -> * x -> * c2 as the program's
 * last five instructions. */
static void fz_find_gelu(fz_state *s) {
  s->gelu_at = -1;
  if (s->n_instr < 5) return;
  int32_t k = (int32_t)s->n_instr - 5, x = s->a[k], o;
  float c0, c1, c2;
  if ((s->op[k] != FZ_DIV && s->op[k] != FZ_MUL) || x < 0 || !fz_scalar(s, s->b[k], &c0)) return;
  if (s->op[k + 1] != FZ_ERF || s->a[k + 1] != k + 1) return;
  if (s->op[k + 2] != FZ_ADD || !fz_other(s, (size_t)k + 2, k + 2, &o) || !fz_scalar(s, o, &c1))
    return;
  if (s->op[k + 3] != FZ_MUL || !fz_other(s, (size_t)k + 3, k + 3, &o) || o != x) return;
  if (s->op[k + 4] != FZ_MUL || !fz_other(s, (size_t)k + 4, k + 4, &o) || !fz_scalar(s, o, &c2))
    return;
  s->gelu_at = k;
  s->gelu_in = x;
  s->gelu = (oc_gelu_erf){c0, c1, c2, s->op[k] == FZ_MUL};
}

static bool is_unary(int op) { return op >= FZ_CLIP; }

static int fz_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  const ox_attr *ops = ox_node_attr(n, "ops"), *args = ox_node_attr(n, "args");
  const ox_attr *par = ox_node_attr(n, "params"), *cd = ox_node_attr(n, "cdata");
  const ox_attr *cr = ox_node_attr(n, "crank"), *cdm = ox_node_attr(n, "cdims");
  if (!ops || !args || !par || !ops->n_ints || ops->n_ints > FZ_MAX_INSTR ||
      args->n_ints != 2 * ops->n_ints || par->n_floats != 2 * ops->n_ints)
    return oc_prep_fail(info, e, "malformed program (ops, args, params)");
  if (info->n_inputs != 1 || info->n_outputs != 1)
    return oc_prep_fail(info, e, "takes one input and gives one output");
  fz_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  size_t k = ops->n_ints;
  s->n_instr = k;
  s->n_const = cr ? cr->n_ints : 0;
  if (s->n_const > 2 * FZ_MAX_INSTR) return oc_prep_fail(info, e, "too many constants");
  s->op = ox_arena_calloc(info->arena, k, sizeof *s->op);
  s->a = ox_arena_calloc(info->arena, k, sizeof *s->a);
  s->b = ox_arena_calloc(info->arena, k, sizeof *s->b);
  s->buf = ox_arena_calloc(info->arena, k, sizeof *s->buf);
  s->p0 = ox_arena_calloc(info->arena, k, sizeof *s->p0);
  s->p1 = ox_arena_calloc(info->arena, k, sizeof *s->p1);
  s->c = ox_arena_calloc(info->arena, s->n_const + 1, sizeof *s->c);
  int64_t *last = ox_arena_calloc(info->arena, k + 1, sizeof *last);
  int32_t *owner = ox_arena_calloc(info->arena, k + 1, sizeof *owner);
  if (!s->op || !s->a || !s->b || !s->buf || !s->p0 || !s->p1 || !s->c || !last || !owner)
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  /* constants */
  size_t off = 0, doff = 0;
  for (size_t i = 0; i < s->n_const; i++) {
    int64_t r = cr->ints[i];
    if (r < 0 || r > OC_MAXRANK || (r > 0 && (!cdm || doff + (size_t)r > cdm->n_ints)))
      return oc_prep_fail(info, e, "malformed constant %zu", i);
    fz_const *c = &s->c[i];
    c->rank = (size_t)r;
    c->dims = r > 0 ? cdm->ints + doff : NULL;
    c->numel = 1;
    for (size_t d = 0; d < c->rank; d++) {
      if (c->dims[d] < 1 || c->dims[d] > (int64_t)1 << 40)
        return oc_prep_fail(info, e, "malformed constant %zu", i);
      c->numel *= c->dims[d];
    }
    doff += (size_t)r;
    int varying = 0;
    for (size_t d = 0; d < c->rank; d++) varying += c->dims[d] != 1;
    if (varying > 1) return oc_prep_fail(info, e, "constant %zu varies along several axes", i);
    if (!cd || off + (size_t)c->numel > cd->n_floats)
      return oc_prep_fail(info, e, "constant %zu has no data", i);
    c->data = cd->floats + off;
    off += (size_t)c->numel;
  }
  /* instructions */
  for (size_t i = 0; i < k; i++) {
    int64_t op = ops->ints[i], a = args->ints[2 * i], b = args->ints[2 * i + 1];
    if (op < 0 || op >= FZ_N_OPS)
      return oc_prep_fail(info, e, "unknown opcode %lld", (long long)op);
    s->op[i] = (int32_t)op;
    for (int w = 0; w < (is_unary((int)op) ? 1 : 2); w++) {
      int64_t v = w ? b : a;
      if (v >= (int64_t)i + 1 || (v < 0 && -v - 1 >= (int64_t)s->n_const))
        return oc_prep_fail(info, e, "instruction %zu: operand %lld out of range", i, (long long)v);
      if (v > 0) last[v] = (int64_t)i;
    }
    if (!is_unary((int)op) && a < 0 && b < 0)
      return oc_prep_fail(info, e, "instruction %zu has two constant operands", i);
    if (is_unary((int)op) && a < 0)
      return oc_prep_fail(info, e, "instruction %zu: operand must be a value", i);
    s->a[i] = (int32_t)a;
    s->b[i] = is_unary((int)op) ? 0 : (int32_t)b;
    s->p0[i] = par->floats[2 * i];
    s->p1[i] = par->floats[2 * i + 1];
  }
  /* scratch buffers: a buffer is free again after the last reader of its
   * value (an operation may write over an operand it reads) */
  for (size_t i = 0; i < k; i++) owner[i] = -1;
  for (size_t i = 0; i + 1 < k; i++) {
    for (size_t q = 0; q < s->n_buf; q++)
      if (owner[q] > 0 && last[owner[q]] <= (int64_t)i) owner[q] = -1;
    size_t q = 0;
    while (q < s->n_buf && owner[q] >= 0) q++;
    if (q == s->n_buf) s->n_buf++;
    owner[q] = (int32_t)(i + 1);
    s->buf[i] = (int32_t)q;
  }
  s->buf[k - 1] = -1;
  fz_find_gelu(s);
  s->ew = ox_ew_kernels_get();
  *state = s;
  return OX_OK;
}

/* ---- evaluation of one block ---- */

#define FZ_BIN(EXPR)                    \
  do {                                  \
    if (pa && pb)                       \
      for (int64_t i = 0; i < n; i++) { \
        float x = pa[i], y = pb[i];     \
        d[i] = (EXPR);                  \
      }                                 \
    else if (pa)                        \
      for (int64_t i = 0; i < n; i++) { \
        float x = pa[i], y = sb;        \
        d[i] = (EXPR);                  \
      }                                 \
    else                                \
      for (int64_t i = 0; i < n; i++) { \
        float x = sa, y = pb[i];        \
        d[i] = (EXPR);                  \
      }                                 \
  } while (0)

#define FZ_UN(BODY)                 \
  for (int64_t i = 0; i < n; i++) { \
    float x = pa[i];                \
    BODY;                           \
  }

/* Instruction op through the hand-written rows (kernels/ewise.h: the same
 * expressions as the loops below); false for an op they do not have. */
static bool fz_ew(const ox_ew_kernels *ew, int32_t op, const float *pa, const float *pb, float sa,
                  float sb, float *d, int64_t n, float p0, float p1) {
  static const signed char bin[FZ_N_OPS] = {
      [FZ_ADD] = OX_EW_ADD + 1, [FZ_SUB] = OX_EW_SUB + 1, [FZ_MUL] = OX_EW_MUL + 1,
      [FZ_DIV] = OX_EW_DIV + 1, [FZ_MAX] = OX_EW_MAX + 1, [FZ_MIN] = OX_EW_MIN + 1};
  static const signed char un[FZ_N_OPS] = {
      [FZ_CLIP] = OX_EW_CLIP + 1,     [FZ_RELU] = OX_EW_RELU + 1,
      [FZ_LEAKY] = OX_EW_LEAKY + 1,   [FZ_HSIGMOID] = OX_EW_HSIGMOID + 1,
      [FZ_HSWISH] = OX_EW_HSWISH + 1, [FZ_NEG] = OX_EW_NEG + 1,
      [FZ_ABS] = OX_EW_ABS + 1,       [FZ_SQRT] = OX_EW_SQRT + 1,
      [FZ_POW2] = OX_EW_POW2 + 1,     [FZ_POW3] = OX_EW_POW3 + 1};
  if (op < 0 || op >= FZ_N_OPS) return false;
  if (bin[op]) {
    ew->bin((ox_ew_bin)(bin[op] - 1), pa, pb, sa, sb, d, n);
    return true;
  }
  if (un[op]) {
    ew->un((ox_ew_un)(un[op] - 1), pa, d, n, p0, p1);
    return true;
  }
  return false;
}

/* cv: each constant's value for this block when it is one number here;
 * cp: its elements for this block when it varies along the block (a
 * constant on the last axis), else NULL. */
OX_LEVEL_BODY void fz_block_c(const fz_state *s, const float *in, float *out, int64_t n,
                              const float *cv, const float *const *cp, float *scratch,
                              int64_t stride) {
  const float *val[FZ_MAX_INSTR + 1];
  val[0] = in;
  size_t n_instr = s->gelu_at >= 0 ? (size_t)s->gelu_at : s->n_instr;
  for (size_t k = 0; k < n_instr; k++) {
    float *d = s->buf[k] < 0 ? out : scratch + s->buf[k] * stride;
    int32_t ia = s->a[k], ib = s->b[k];
    const float *pa = ia >= 0 ? val[ia] : cp[-ia - 1], *pb = ib >= 0 ? val[ib] : cp[-ib - 1];
    float sa = ia < 0 ? cv[-ia - 1] : 0, sb = ib < 0 ? cv[-ib - 1] : 0;
    const float p0 = s->p0[k], p1 = s->p1[k], one = 1, zero = 0, half = 0.5f;
    if (s->ew && fz_ew(s->ew, s->op[k], pa, pb, sa, sb, d, n, p0, p1)) {
      val[k + 1] = d;
      continue;
    }
    switch (s->op[k]) {
      case FZ_ADD:
        FZ_BIN(x + y);
        break;
      case FZ_SUB:
        FZ_BIN(x - y);
        break;
      case FZ_MUL:
        FZ_BIN(x * y);
        break;
      case FZ_DIV:
        FZ_BIN(x / y);
        break;
      case FZ_MAX:
        FZ_BIN(oc_fmax_f32(x, y));
        break;
      case FZ_MIN:
        FZ_BIN(oc_fmin_f32(x, y));
        break;
      case FZ_CLIP:
        FZ_UN(float v = x < p0 ? p0 : x; d[i] = v > p1 ? p1 : v);
        break;
      case FZ_RELU:
        FZ_UN(d[i] = x > zero ? x : zero);
        break;
      case FZ_LEAKY:
        FZ_UN(d[i] = oc_neg_scale_f32(x, p0));
        break;
      case FZ_HSIGMOID:
        FZ_UN(float v = p0 * x + p1; v = v > one ? one : v; d[i] = v < zero ? zero : v);
        break;
      case FZ_HSWISH:
        FZ_UN(float v = x / (float)6 + half; v = v > one ? one : v;
              d[i] = x * (v < zero ? zero : v));
        break;
      case FZ_NEG:
        FZ_UN(d[i] = -x);
        break;
      case FZ_ABS:
        FZ_UN(d[i] = fabsf(x));
        break;
      case FZ_SQRT:
        FZ_UN(d[i] = sqrtf(x));
        break;
      case FZ_TANH:
        oc_tanh_f32(pa, d, n);
        break;
      case FZ_ERF:
        oc_erf_f32(pa, d, n);
        break;
      case FZ_POW2:
        FZ_UN(d[i] = x * x);
        break;
      case FZ_POW3:
        FZ_UN(d[i] = x * x * x);
        break;
      case FZ_SIGMOID:
        oc_sigmoid_f32(pa, d, n, 1.0f, false);
        break;
      default:
        break;
    }
    val[k + 1] = d;
  }
  if (s->gelu_at >= 0) oc_gelu_erf_f32(val[s->gelu_in], out, n, &s->gelu);
}

/* fz_block_ref, _avx2, _avx512: the run picks one (levels.h) */
OX_LEVELS_VOID(fz_block,
               (const fz_state *s, const float *in, float *out, int64_t n, const float *cv,
                const float *const *cp, float *scratch, int64_t stride),
               s, in, out, n, cv, cp, scratch, stride)

typedef struct fz_job {
  const fz_state *s;
  const float *x;
  float *y;
  int64_t inner, chans, nb, blk;
  bool last_axis;               /* constants vary along the last axis (inner == 1) */
  OX_LEVEL_PTR(fz_block) block; /* fz_block of the level in use */
} fz_job;

static void fz_chunk(void *arg, int64_t begin, int64_t end) {
  const fz_job *j = arg;
  const fz_state *s = j->s;
  float scratch[FZ_STACK_FLOATS];
  float cv[FZ_MAX_INSTR * 2 + 1];
  const float *cp[FZ_MAX_INSTR * 2 + 1] = {0};
  size_t nc = s->n_const < FZ_MAX_INSTR * 2 ? s->n_const : FZ_MAX_INSTR * 2;
  int64_t cur_seg = -1;
  for (int64_t t = begin; t < end; t++) {
    int64_t seg = t / j->nb, b = t % j->nb;
    if (j->last_axis) {
      /* a segment is one row of `chans` elements; vector constants are
       * read along it */
      int64_t start = b * j->blk, len = j->chans - start < j->blk ? j->chans - start : j->blk;
      for (size_t c = 0; c < nc; c++) {
        cv[c] = s->c[c].data[0];
        cp[c] = s->c[c].numel == 1 ? NULL : s->c[c].data + start;
      }
      int64_t off = seg * j->chans + start;
      j->block(s, j->x + off, j->y + off, len, cv, cp, scratch, j->blk);
      continue;
    }
    if (seg != cur_seg) {
      int64_t ch = seg % j->chans;
      for (size_t c = 0; c < nc; c++)
        cv[c] = s->c[c].numel == 1 ? s->c[c].data[0] : s->c[c].data[ch];
      cur_seg = seg;
    }
    int64_t start = b * j->blk, len = j->inner - start < j->blk ? j->inner - start : j->blk;
    int64_t off = seg * j->inner + start;
    j->block(s, j->x + off, j->y + off, len, cv, cp, scratch, j->blk);
  }
}

/* x broadcast to the output shape (only when the constants widen it) */
static ox_value *fz_expand(ox_kctx *ctx, const ox_value *x, const int64_t *dims, size_t rank) {
  ox_err e = {0};
  ox_value *t = ox_tensor_new_uninit(OX_FLOAT, dims, rank, &e);
  if (!t) {
    ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    return NULL;
  }
  /* zero strides on the broadcast dims: one strided copy */
  int64_t xst[OC_MAXRANK];
  size_t lead = rank - x->rank;
  int64_t st = 1;
  for (size_t d = rank; d-- > 0;) {
    int64_t xd = d >= lead ? x->dims[d - lead] : 1;
    xst[d] = xd == 1 ? 0 : st;
    st *= xd;
  }
  if (ox_dm_strided(t->data, x->data, OX_FLOAT, rank, dims, xst, ox_kctx_pool(ctx))) {
    ox_value_unref(t);
    ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    return NULL;
  }
  return t;
}

static int fz_run(ox_kctx *ctx, void *state) {
  const fz_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR || x->dtype != OX_FLOAT)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input 0 must be a float32 tensor");
  int64_t od[OC_MAXRANK];
  size_t orank = x->rank;
  if (orank > OC_MAXRANK) return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "rank %zu too large", orank);
  memcpy(od, x->dims, orank * sizeof *od);
  for (size_t c = 0; c < s->n_const; c++) {
    int64_t nd[OC_MAXRANK];
    size_t nr;
    ox_err be = {0};
    if (ox_broadcast_shape(od, orank, s->c[c].dims, s->c[c].rank, nd, &nr, &be))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "%s", be.msg);
    memcpy(od, nd, nr * sizeof *nd);
    orank = nr;
  }
  ox_value *src = x, *tmp = NULL;
  if (!ox_shape_equal(od, orank, x->dims, x->rank)) {
    tmp = fz_expand(ctx, x, od, orank);
    if (!tmp) return OX_ENOMEM;
    src = tmp;
  }
  ox_value *y = ox_kctx_output(ctx, 0, OX_FLOAT, od, orank);
  if (!y) {
    ox_value_unref(tmp);
    return OX_ENOMEM;
  }
  /* per-channel constants vary along one axis: blocks stay inside one run
   * of `inner` elements of a channel */
  int64_t inner = y->numel, chans = 1;
  for (size_t c = 0; c < s->n_const; c++) {
    const fz_const *k = &s->c[c];
    if (k->numel == 1) continue;
    size_t ax = 0;
    for (size_t d = 0; d < k->rank; d++)
      if (k->dims[d] != 1) ax = orank - k->rank + d;
    int64_t in = 1;
    for (size_t d = ax + 1; d < orank; d++) in *= od[d];
    if (chans != 1 && (chans != od[ax] || in != inner)) {
      ox_value_unref(tmp);
      return ox_kctx_fail(ctx, OX_ERUNTIME, "constants vary along different axes");
    }
    chans = od[ax];
    inner = in;
  }
  if (y->numel > 0 && inner > 0) {
    int64_t blk = FZ_STACK_FLOATS / (int64_t)(s->n_buf ? s->n_buf : 1);
    blk = blk >= 1024 ? 1024 : blk - blk % 16;
    if (blk < 16) blk = 16;
    /* constants along the last axis: blocks run along rows instead of
     * being one element long */
    bool last_axis = inner == 1 && chans > 1;
    int64_t run = last_axis ? chans : inner;
    fz_job j = {s, src->data, y->data, inner, chans, (run + blk - 1) / blk, blk, last_axis};
    j.block = OX_LEVEL_PICK(fz_block);
    int64_t items = (y->numel / run) * j.nb;
    int64_t grain = 16384 / blk;
    ox_parallel_for(ox_kctx_pool(ctx), items, grain > 0 ? grain : 1, fz_chunk, &j);
  }
  ox_value_unref(tmp);
  return OX_OK;
}

const ox_kernel_def ox_ops_fused[] = {
    {OX_FUSED_DOMAIN, "ElementwiseChain", 1, 1, fz_prepare, fz_run, NULL},
    {0},
};
