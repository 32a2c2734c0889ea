/* nn.c - kernels of onnxruntime's com.microsoft encoder building blocks
 * and of its default-domain additions (schemas in
 * src/schema/schema_contrib_nn.c). Each runs on the kernel of the standard
 * operator it extends: the layer norms on norm.c's rows, the GELU forms on
 * unary.c's, BiasSoftmax on vmath's softmax row, FusedMatMul on MatMul's
 * product and FusedConv on conv.c's fused convolution. Arithmetic in
 * float32; other float types are widened on the way in and rounded once on
 * the way out (nn_common.h), as onnxruntime's float16 kernels do. */
#include <stdatomic.h>

#include "../../kernels/vmath.h"
#include "../../schema/schema_hand.h"
#include "../datamove.h"
#include "../nn_common.h"
#include "../onnx/conv_common.h"
#include "../onnx/matmul.h"
#include "../onnx/norm.h"
#include "../onnx/unary.h"
#include "../opcore.h"

static const char *dt_name(int32_t dt) {
  const ox_dtype_info *i = ox_dtype_get(dt);
  return i ? i->name : "?";
}

/* input i present: a tensor of a float type, of dtype `want` unless that
 * is OX_UNDEFINED */
static int need_real(ox_kctx *c, const ox_value *v, const char *what, int32_t want) {
  if (!v || v->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(c, OX_ERUNTIME, "input %s is missing or not a tensor", what);
  if (!nn_is_real(v->dtype))
    return ox_kctx_fail(c, OX_EUNSUPPORTED, "input %s has type %s, expected a float type", what,
                        dt_name(v->dtype));
  if (want != OX_UNDEFINED && v->dtype != want)
    return ox_kctx_fail(c, OX_ERUNTIME, "input %s is %s, the input is %s", what, dt_name(v->dtype),
                        dt_name(want));
  return OX_OK;
}

/* a 1-D parameter of n values (gamma, beta, bias), as onnxruntime checks it */
static int need_vec(ox_kctx *c, const ox_value *v, const char *what, int32_t dt, int64_t n) {
  int rc = need_real(c, v, what, dt);
  if (rc) return rc;
  if (v->rank != 1 || v->dims[0] != n)
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must be 1-D of the hidden size %lld, got %lld values",
                        what, (long long)n, (long long)v->numel);
  return OX_OK;
}

/* the float32 views a kernel loads, freed together */
enum { NB_MAX = 8 };
typedef struct fbufs {
  nn_fbuf b[NB_MAX];
  int n;
} fbufs;

static const float *fb_load(ox_kctx *c, fbufs *fb, const ox_value *v, int *rc) {
  if (!v || *rc) return NULL;
  nn_fbuf *b = &fb->b[fb->n++];
  *rc = nn_fload(c, v, b);
  return *rc ? NULL : b->p;
}

static void fb_free(fbufs *fb) {
  for (int i = 0; i < fb->n; i++) nn_ffree(&fb->b[i]);
  fb->n = 0;
}

/* ---- layer norms ---- */
typedef struct ln_state {
  float epsilon;
  int64_t axis;       /* SimplifiedLayerNormalization */
  int64_t stash_type; /* its inv_std_var's type */
  bool rms;           /* no centring (the Simplified forms) */
} ln_state;

static int ln_prepare_(const ox_kinfo *info, void **state, ox_err *e, bool rms, float eps) {
  ln_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->rms = rms;
  s->epsilon = ox_node_attr_float(info->node, "epsilon", eps);
  s->axis = ox_node_attr_int(info->node, "axis", -1);
  s->stash_type = ox_node_attr_int(info->node, "stash_type", 1);
  if (!(s->epsilon >= 0.0f)) return oc_prep_fail(info, e, "epsilon must be >= 0");
  *state = s;
  return OX_OK;
}
/* onnxruntime's defaults: 1e-12 for the BERT fusions, 1e-5 for
 * SimplifiedLayerNormalization (LayerNormalization's) */
static int skip_ln_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return ln_prepare_(info, state, e, false, 1e-12f);
}
static int skip_rms_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return ln_prepare_(info, state, e, true, 1e-12f);
}
static int rms_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return ln_prepare_(info, state, e, true, 1e-5f);
}

/* the statistics outputs (mean, inv_std_var): X's dims up to `axis`, ones
 * after, float unless the model says otherwise */
static int stats_out(ox_kctx *c, size_t o, const ox_value *x, size_t axis, const float *src,
                     int64_t rows, int32_t dflt) {
  if (o >= ox_kctx_n_outputs(c) || !ox_kctx_output_wanted(c, o)) return OX_OK;
  int64_t sd[OC_MAXRANK];
  for (size_t i = 0; i < x->rank; i++) sd[i] = i < axis ? x->dims[i] : 1;
  const ox_kinfo *info = ox_kctx_info(c);
  int32_t dt = info->output_dtypes ? info->output_dtypes[o] : OX_UNDEFINED;
  if (!nn_is_real(dt)) dt = dflt;
  ox_value *out = ox_kctx_output(c, o, dt, sd, x->rank);
  if (!out) return OX_ERUNTIME;
  for (int64_t r = 0; r < rows; r++) nn_set_real(out->data, dt, r, src[r]);
  return OX_OK;
}

/* The rows of ox_norm_rows over x (outer x inner, any float type) into
 * output 0 of x's type; statistics into outputs 1 and 2 when wanted, the
 * residual sum into output sum_o (-1: none). Parameters are float32 views
 * of `inner` values (skip: skip_rows rows). */
static int ln_rows(ox_kctx *c, const ln_state *s, const ox_value *x, size_t axis, const float *xf,
                   const float *skip, int64_t skip_rows, const float *add, const float *gamma,
                   const float *beta, int sum_o, int mean_o, int inv_o) {
  int64_t inner = nn_prod(x->dims, axis, x->rank), outer = x->numel / (inner ? inner : 1);
  if (inner == 0) outer = nn_prod(x->dims, 0, axis);
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank), *sum = NULL;
  if (!y) return OX_ERUNTIME;
  if (sum_o >= 0 && (size_t)sum_o < ox_kctx_n_outputs(c) && ox_kctx_output_wanted(c, sum_o) &&
      !(sum = ox_kctx_output(c, (size_t)sum_o, x->dtype, x->dims, x->rank)))
    return OX_ERUNTIME;
  nn_fbuf fy = {0}, fs = {0};
  float *stats = malloc(((size_t)outer * 2 + 1) * sizeof(float));
  int rc = stats ? OX_OK : ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  if (!rc) rc = nn_fout(c, y, &fy);
  if (!rc && sum) rc = nn_fout(c, sum, &fs);
  if (!rc) {
    ox_norm_rows_args a = {.x = xf,
                           .skip = skip,
                           .skip_rows = skip_rows,
                           .add = add,
                           .sum = sum ? fs.p : NULL,
                           .y = fy.p,
                           .mean = stats,
                           .inv = stats + outer,
                           .scale = gamma,
                           .bias = beta,
                           .outer = outer,
                           .inner = inner,
                           .eps = s->epsilon,
                           .rms = s->rms};
    ox_norm_rows(ox_kctx_pool(c), &a);
    nn_fstore(y, &fy);
    if (sum) nn_fstore(sum, &fs);
    int32_t st = s->stash_type == OX_BFLOAT16 ? OX_BFLOAT16 : OX_FLOAT;
    if (mean_o >= 0) rc = stats_out(c, (size_t)mean_o, x, axis, stats, outer, st);
    if (!rc && inv_o >= 0) rc = stats_out(c, (size_t)inv_o, x, axis, stats + outer, outer, st);
  }
  nn_ffree(&fy);
  nn_ffree(&fs);
  free(stats);
  return rc;
}

/* SkipLayerNormalization (input, skip, gamma, beta?, bias?) and
 * SkipSimplifiedLayerNormalization (input, skip, gamma, bias?):
 * s = input + skip + bias, output = LayerNorm(s) or RMSNorm(s) over the
 * last axis; outputs mean?, inv_std_var?, input_skip_bias_sum? (s). skip
 * has input's shape, or input is 3-D and skip is [1, S, H] or [S, H]. */
static int skip_ln_run(ox_kctx *c, void *st) {
  const ln_state *s = st;
  ox_value *x = ox_kctx_input(c, 0), *skip = ox_kctx_input(c, 1), *gamma = ox_kctx_input(c, 2);
  ox_value *beta = s->rms ? NULL : ox_kctx_input(c, 3);
  ox_value *bias = ox_kctx_input(c, s->rms ? 3 : 4);
  int rc = need_real(c, x, "input", OX_UNDEFINED);
  if (!rc) rc = need_real(c, skip, "skip", x->dtype);
  if (rc) return rc;
  if (x->rank != 2 && x->rank != 3)
    return ox_kctx_fail(c, OX_ERUNTIME, "input must be 2-D or 3-D, got rank %zu", x->rank);
  int64_t H = x->dims[x->rank - 1], S = x->dims[x->rank - 2];
  bool same = ox_shape_equal(x->dims, x->rank, skip->dims, skip->rank);
  bool bcast = x->rank == 3 && ((skip->rank == 3 && skip->dims[0] == 1) || skip->rank == 2) &&
               skip->dims[skip->rank - 1] == H && skip->dims[skip->rank - 2] == S;
  if (!same && !bcast)
    return ox_kctx_fail(c, OX_ERUNTIME,
                        "skip must have the input's shape, or [1, S, H] or [S, H] for a 3-D "
                        "input [B, S, H]");
  if ((rc = need_vec(c, gamma, "gamma", x->dtype, H))) return rc;
  if (beta && (rc = need_vec(c, beta, "beta", x->dtype, H))) return rc;
  if (bias && (rc = need_vec(c, bias, "bias", x->dtype, H))) return rc;
  fbufs fb = {0};
  const float *xf = fb_load(c, &fb, x, &rc), *kf = fb_load(c, &fb, skip, &rc),
              *gf = fb_load(c, &fb, gamma, &rc), *bf = fb_load(c, &fb, beta, &rc),
              *af = fb_load(c, &fb, bias, &rc);
  if (!rc) rc = ln_rows(c, s, x, x->rank - 1, xf, kf, H ? skip->numel / H : 0, af, gf, bf, 3, 1, 2);
  fb_free(&fb);
  return rc;
}

/* SimplifiedLayerNormalization (default domain): X / sqrt(mean(X^2) +
 * epsilon) * scale over the axes from `axis`; inv_std_var? */
static int rms_run(ox_kctx *c, void *st) {
  const ln_state *s = st;
  ox_value *x = ox_kctx_input(c, 0), *scale = ox_kctx_input(c, 1);
  int rc = need_real(c, x, "X", OX_UNDEFINED);
  if (!rc) rc = need_real(c, scale, "scale", x->dtype);
  if (rc) return rc;
  int64_t axis;
  if (!nn_axis(s->axis, x->rank, false, &axis))
    return ox_kctx_fail(c, OX_ERUNTIME, "axis %lld is out of range for rank %zu",
                        (long long)s->axis, x->rank);
  int64_t inner = nn_prod(x->dims, (size_t)axis, x->rank);
  fbufs fb = {0};
  const float *xf = fb_load(c, &fb, x, &rc), *gf = fb_load(c, &fb, scale, &rc);
  float *wide = NULL; /* scale broadcast to X's normalized axes (numpy) */
  if (!rc && scale->numel != inner) {
    if (!(wide = malloc(((size_t)inner + 1) * sizeof(float))))
      rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    else if (x->rank - (size_t)axis > 16 ||
             !nn_expand(gf, scale->dims, scale->rank, x->dims + axis, x->rank - (size_t)axis, wide))
      rc = ox_kctx_fail(c, OX_ERUNTIME,
                        "scale of %lld values does not broadcast to the normalized axes (%lld "
                        "values)",
                        (long long)scale->numel, (long long)inner);
    gf = wide;
  }
  if (!rc) rc = ln_rows(c, s, x, (size_t)axis, xf, NULL, 0, NULL, gf, NULL, -1, -1, 1);
  free(wide);
  fb_free(&fb);
  return rc;
}

/* ---- EmbedLayerNormalization ---- */
typedef struct emb_job {
  const int32_t *ids, *seg, *pos;
  int64_t pos_rows; /* rows of position_ids (1 or B), 0: none */
  const float *word, *posemb, *segemb;
  int64_t n_word, n_pos, n_seg, S, H;
  float *sum;
  atomic_bool bad;
} emb_job;

static void emb_gather(void *arg, int64_t r0, int64_t r1) {
  emb_job *j = arg;
  const ox_vmath_kernels *vk = ox_vmath_kernels_get();
  for (int64_t r = r0; r < r1; r++) {
    int64_t w = j->ids[r], b = r / j->S, sp = r % j->S;
    int64_t p = j->pos ? j->pos[(j->pos_rows > 1 ? b : 0) * j->S + sp] : sp;
    int64_t g = j->seg ? j->seg[r] : 0;
    if (w < 0 || w >= j->n_word || p < 0 || p >= j->n_pos || (j->seg && (g < 0 || g >= j->n_seg))) {
      atomic_store(&j->bad, true);
      continue;
    }
    float *o = j->sum + r * j->H;
    vk->add(j->word + w * j->H, j->posemb + p * j->H, o, j->H);
    if (j->seg) vk->add(o, j->segemb + g * j->H, o, j->H);
  }
}

static int need_ids(ox_kctx *c, const ox_value *v, const char *what, const ox_value *like) {
  if (!v) return OX_OK;
  if (v->kind != OX_VAL_TENSOR || v->dtype != OX_INT32)
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must be an int32 tensor", what);
  if (like && !ox_shape_equal(v->dims, v->rank, like->dims, like->rank))
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must have input_ids' shape", what);
  return OX_OK;
}

static int need_table(ox_kctx *c, const ox_value *v, const char *what, int64_t H) {
  int rc = need_real(c, v, what, OX_UNDEFINED);
  if (rc) return rc;
  if (v->rank != 2 || (H >= 0 && v->dims[1] != H))
    return ox_kctx_fail(c, OX_ERUNTIME, "%s must be 2-D with word_embedding's width", what);
  return OX_OK;
}

/* output = LayerNorm(word[input_ids] + position[position_ids or s] +
 * segment[segment_ids]) over the hidden axis; mask_index[b] = the count of
 * ones in mask row b (0 without a mask); embedding_sum? the sum */
static int embed_ln_run(ox_kctx *c, void *st) {
  const ln_state *s = st;
  ox_value *ids = ox_kctx_input(c, 0), *seg = ox_kctx_input(c, 1), *word = ox_kctx_input(c, 2),
           *pos = ox_kctx_input(c, 3), *segemb = ox_kctx_input(c, 4), *gamma = ox_kctx_input(c, 5),
           *beta = ox_kctx_input(c, 6), *mask = ox_kctx_input(c, 7), *pids = ox_kctx_input(c, 8);
  if (!ids) return ox_kctx_fail(c, OX_ERUNTIME, "input_ids is missing");
  int rc = need_ids(c, ids, "input_ids", NULL);
  if (!rc && ids->rank != 2)
    rc = ox_kctx_fail(c, OX_ERUNTIME, "input_ids must be 2-D [batch, sequence]");
  if (!rc) rc = need_ids(c, seg, "segment_ids", ids);
  if (!rc) rc = need_ids(c, mask, "mask", ids);
  if (!rc) rc = need_ids(c, pids, "position_ids", NULL);
  if (!rc && (!seg) != (!segemb))
    rc = ox_kctx_fail(c, OX_ERUNTIME, "segment_ids and segment_embedding go together");
  if (!rc) rc = need_table(c, word, "word_embedding", -1);
  if (rc) return rc;
  int64_t B = ids->dims[0], S = ids->dims[1], H = word->dims[1];
  if ((rc = need_table(c, pos, "position_embedding", H))) return rc;
  if (segemb && (rc = need_table(c, segemb, "segment_embedding", H))) return rc;
  if ((rc = need_vec(c, gamma, "gamma", OX_UNDEFINED, H))) return rc;
  if ((rc = need_vec(c, beta, "beta", OX_UNDEFINED, H))) return rc;
  if (pids && (pids->rank != 2 || pids->dims[1] != S || (pids->dims[0] != 1 && pids->dims[0] != B)))
    return ox_kctx_fail(c, OX_ERUNTIME, "position_ids must be [1, S] or [B, S]");
  int64_t od[3] = {B, S, H}, md[1] = {B};
  ox_value *y = ox_kctx_output(c, 0, word->dtype, od, 3);
  if (!y) return OX_ERUNTIME;
  if (ox_kctx_n_outputs(c) > 1 && ox_kctx_output_wanted(c, 1)) {
    ox_value *mi = ox_kctx_output(c, 1, OX_INT32, md, 1);
    if (!mi) return OX_ERUNTIME;
    for (int64_t b = 0; b < B; b++) {
      int32_t n = 0;
      for (int64_t k = 0; mask && k < S; k++) n += ((const int32_t *)mask->data)[b * S + k] == 1;
      ((int32_t *)mi->data)[b] = n;
    }
  }
  ox_value *esum = NULL;
  if (ox_kctx_n_outputs(c) > 2 && ox_kctx_output_wanted(c, 2) &&
      !(esum = ox_kctx_output(c, 2, word->dtype, od, 3)))
    return OX_ERUNTIME;
  fbufs fb = {0};
  const float *wf = fb_load(c, &fb, word, &rc), *pf = fb_load(c, &fb, pos, &rc),
              *sf = fb_load(c, &fb, segemb, &rc), *gf = fb_load(c, &fb, gamma, &rc),
              *bf = fb_load(c, &fb, beta, &rc);
  nn_fbuf fy = {0}, fs = {0};
  float *sum = NULL;
  if (!rc) rc = nn_fout(c, y, &fy);
  if (!rc && esum) rc = nn_fout(c, esum, &fs);
  if (!rc && !(sum = esum ? fs.p : malloc(((size_t)(B * S * H) + 1) * sizeof(float))))
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  if (!rc) {
    emb_job j = {ids->data,
                 seg ? seg->data : NULL,
                 pids ? pids->data : NULL,
                 pids ? pids->dims[0] : 0,
                 wf,
                 pf,
                 sf,
                 word->dims[0],
                 pos->dims[0],
                 segemb ? segemb->dims[0] : 0,
                 S,
                 H,
                 sum,
                 false};
    ox_parallel_for(ox_kctx_pool(c), B * S, 1 + 16384 / (H + 1), emb_gather, &j);
    if (atomic_load(&j.bad))
      rc = ox_kctx_fail(c, OX_ERUNTIME, "an input, segment or position id is out of its table");
  }
  if (!rc) {
    ox_norm_rows_args a = {.x = sum,
                           .y = fy.p,
                           .scale = gf,
                           .bias = bf,
                           .outer = B * S,
                           .inner = H,
                           .eps = s->epsilon};
    ox_norm_rows(ox_kctx_pool(c), &a);
    nn_fstore(y, &fy);
    if (esum) nn_fstore(esum, &fs);
  }
  if (!esum) free(sum);
  nn_ffree(&fy);
  nn_ffree(&fs);
  fb_free(&fb);
  return rc;
}

/* ---- the GELU forms ---- */
static int gelu_erf_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return ox_unary_prepare_gelu_form(info, state, e, false);
}
static int gelu_tanh_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return ox_unary_prepare_gelu_form(info, state, e, true);
}

/* FastGelu (X, bias?) and BiasGelu (A, B): GELU of X + bias, the bias 1-D
 * along the last axis; the sum rounded to X's type first, as the Add node
 * these fuse computes it */
static int bias_gelu_run(ox_kctx *c, void *st) {
  ox_value *x = ox_kctx_input(c, 0), *b = ox_kctx_input(c, 1);
  if (!b) return ox_unary_run(c, st);
  int rc = need_real(c, x, "X", OX_UNDEFINED);
  if (rc) return rc;
  int64_t H = x->rank ? x->dims[x->rank - 1] : 1;
  if ((rc = need_vec(c, b, "bias", x->dtype, H))) return rc;
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  if (x->dtype == OX_FLOAT) {
    const float *xf = x->data, *bf = b->data;
    float *yf = y->data;
    for (int64_t r = 0; r < x->numel / (H ? H : 1); r++) /* row by row: vectorised */
      for (int64_t k = 0; k < H; k++) yf[r * H + k] = xf[r * H + k] + bf[k];
  } else {
    for (int64_t i = 0; i < x->numel; i++)
      oc_set(
          y->data, x->dtype, i,
          (float)((float)oc_get(x->data, x->dtype, i) + (float)oc_get(b->data, b->dtype, i % H)));
  }
  ox_unary_apply(st, ox_kctx_pool(c), y->dtype, y->data, y->data, y->numel);
  return OX_OK;
}

/* ---- BiasSoftmax ---- */
typedef struct bsm_state {
  int64_t axis;
  bool inner; /* is_inner_broadcast */
} bsm_state;

static int bsm_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  bsm_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->axis = ox_node_attr_int(info->node, "axis", 1);
  if (!ox_node_attr(info->node, "is_inner_broadcast"))
    return oc_prep_fail(info, e, "attribute is_inner_broadcast is required");
  s->inner = ox_node_attr_int(info->node, "is_inner_broadcast", 0) != 0;
  *state = s;
  return OX_OK;
}

typedef struct bsm_job {
  const float *x, *bias;
  float *y;
  int64_t n, div, mod; /* row r adds bias row (r / div) % mod */
} bsm_job;

static void bsm_rows(void *arg, int64_t r0, int64_t r1) {
  const bsm_job *j = arg;
  const ox_vmath_kernels *vk = ox_vmath_kernels_get();
  for (int64_t r = r0; r < r1; r++) {
    float *y = j->y + r * j->n;
    vk->add(j->x + r * j->n, j->bias + ((r / j->div) % j->mod) * j->n, y, j->n);
    vk->softmax_row(y, y, j->n, false);
  }
}

/* Y = Softmax(data + bias) over the axes from `axis` taken as one (Softmax
 * before opset 13); bias (right-aligned) matches data from `axis` on and,
 * before it, repeats over the leading axes (is_inner_broadcast 0: bias
 * [1.., d_k.., ...]) or over the trailing ones (1: bias [d_0.., 1.., ...]) */
static int bsm_run(ox_kctx *c, void *st) {
  const bsm_state *s = st;
  ox_value *x = ox_kctx_input(c, 0), *b = ox_kctx_input(c, 1);
  int rc = need_real(c, x, "data", OX_UNDEFINED);
  if (!rc) rc = need_real(c, b, "bias", x->dtype);
  if (rc) return rc;
  int64_t r = (int64_t)x->rank, axis = s->axis < 0 ? s->axis + r : s->axis;
  if (axis < 0 || axis >= r || r > OC_MAXRANK)
    return ox_kctx_fail(c, OX_ERUNTIME, "axis %lld is out of range for rank %lld",
                        (long long)s->axis, (long long)r);
  bool ok = b->rank <= x->rank;
  int64_t bd[OC_MAXRANK];
  for (int64_t k = 0; ok && k < r; k++) {
    int64_t o = k - (r - (int64_t)b->rank);
    bd[k] = o >= 0 ? b->dims[o] : 1;
    ok = k >= axis ? bd[k] == x->dims[k] : (bd[k] == x->dims[k] || bd[k] == 1);
  }
  /* the axes before `axis` where bias is 1 must be a leading (outer) or
   * trailing (inner) run, the others equal to data's */
  int64_t lead = 0, trail = 0;
  while (lead < axis && bd[lead] == 1 && x->dims[lead] != 1) lead++;
  while (trail < axis && bd[axis - 1 - trail] == 1) trail++;
  for (int64_t k = 0; ok && k < axis; k++)
    if (bd[k] != x->dims[k] && (s->inner ? k < axis - trail : k >= lead)) ok = false;
  if (!ok)
    return ox_kctx_fail(c, OX_ERUNTIME,
                        "bias does not broadcast to data as is_inner_broadcast=%d allows (bias "
                        "axes from axis %lld on must equal data's; before it, bias may be 1 only "
                        "on the %s axes)",
                        s->inner ? 1 : 0, (long long)axis, s->inner ? "trailing" : "leading");
  int64_t n = nn_prod(x->dims, (size_t)axis, x->rank), rows = nn_prod(x->dims, 0, (size_t)axis);
  int64_t brows = n ? b->numel / n : 0;
  ox_value *y = ox_kctx_output(c, 0, x->dtype, x->dims, x->rank);
  if (!y) return OX_ERUNTIME;
  if (y->numel == 0) return OX_OK;
  fbufs fb = {0};
  const float *xf = fb_load(c, &fb, x, &rc), *bf = fb_load(c, &fb, b, &rc);
  nn_fbuf fy = {0};
  if (!rc) rc = nn_fout(c, y, &fy);
  if (!rc) {
    /* bias row of data row q: outer, q % brows; inner, q / (rows / brows) */
    bsm_job j = {xf, bf, fy.p, n, s->inner ? rows / brows : 1, brows};
    ox_parallel_for(ox_kctx_pool(c), rows, 1 + 16384 / n, bsm_rows, &j);
    nn_fstore(y, &fy);
  }
  nn_ffree(&fy);
  fb_free(&fb);
  return rc;
}

/* ---- FusedMatMul ---- */
typedef struct fmm_state {
  float alpha;
  bool ta, tb, tba, tbb;
} fmm_state;

static int fmm_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  fmm_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  const ox_node *n = info->node;
  s->alpha = ox_node_attr_float(n, "alpha", 1.0f);
  s->ta = ox_node_attr_int(n, "transA", 0) != 0;
  s->tb = ox_node_attr_int(n, "transB", 0) != 0;
  s->tba = ox_node_attr_int(n, "transBatchA", 0) != 0;
  s->tbb = ox_node_attr_int(n, "transBatchB", 0) != 0;
  *state = s;
  return OX_OK;
}

/* v's axes permuted: out dim k is v's axis perm[k] (a new tensor), by the
 * strided copy Transpose runs on */
static ox_value *permuted(ox_kctx *c, const ox_value *v, const size_t *perm) {
  size_t r = v->rank;
  int64_t od[OC_MAXRANK], st[OC_MAXRANK], ost[OC_MAXRANK];
  ox_dm_strides(v->dims, r, st);
  for (size_t k = 0; k < r; k++) od[k] = v->dims[perm[k]], ost[k] = st[perm[k]];
  ox_err e = {0};
  ox_value *o = ox_tensor_new_uninit(v->dtype, od, r, &e);
  if (!o) {
    ox_kctx_fail(c, e.code ? e.code : OX_ENOMEM, "%s", e.msg);
    return NULL;
  }
  if (ox_dm_strided(o->data, v->data, v->dtype, r, od, ost, ox_kctx_pool(c))) {
    ox_value_unref(o);
    ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    return NULL;
  }
  return o;
}

/* the operand as the product reads it: transBatch moves axis 0 behind the
 * batch axes ([d0, b.., K] -> [b.., d0, K]), trans swaps the last two;
 * *swap is set instead of permuting when only B's last two swap */
static int fmm_operand(ox_kctx *c, ox_value *v, bool tbatch, bool t, bool can_swap, bool *swap,
                       ox_value **out) {
  *out = NULL;
  *swap = false;
  if (v->rank < 2 || (!tbatch && !t) || (tbatch && v->rank == 2 && !t)) return OX_OK;
  if (!tbatch && can_swap) {
    *swap = true;
    return OX_OK;
  }
  if (v->rank > OC_MAXRANK) return ox_kctx_fail(c, OX_EUNSUPPORTED, "rank too large");
  size_t r = v->rank, perm[OC_MAXRANK];
  for (size_t k = 0; k < r; k++) perm[k] = k;
  if (tbatch) {
    for (size_t k = 0; k + 2 < r; k++) perm[k] = k + 1;
    perm[r - 2] = 0;
  }
  if (t) {
    size_t tmp = perm[r - 2];
    perm[r - 2] = perm[r - 1];
    perm[r - 1] = tmp;
  }
  return (*out = permuted(c, v, perm)) ? OX_OK : OX_ERUNTIME;
}

/* Y = alpha * op(A) x op(B), MatMul's broadcasting of the batch axes */
static int fmm_run(ox_kctx *c, void *st) {
  const fmm_state *s = st;
  ox_value *a = ox_kctx_input(c, 0), *b = ox_kctx_input(c, 1);
  int rc = need_real(c, a, "A", OX_UNDEFINED);
  if (!rc) rc = need_real(c, b, "B", a->dtype);
  if (rc) return rc;
  ox_value *pa = NULL, *pb = NULL;
  bool swap_a, swap_b;
  rc = fmm_operand(c, a, s->tba, s->ta, false, &swap_a, &pa);
  if (!rc) rc = fmm_operand(c, b, s->tbb, s->tb, true, &swap_b, &pb);
  if (!rc && s->alpha != 1.0f) {
    /* alpha on the smaller operand (a copy): the product's rounding aside,
     * alpha (A B) as onnxruntime's GEMM scales it */
    bool on_a = (pa ? pa : a)->numel <= (pb ? pb : b)->numel;
    ox_value **pv = on_a ? &pa : &pb, *src = on_a ? a : b;
    if (!*pv) {
      ox_err e = {0};
      if (!(*pv = ox_tensor_new_uninit(src->dtype, src->dims, src->rank, &e)))
        rc = ox_kctx_fail(c, e.code ? e.code : OX_ENOMEM, "%s", e.msg);
      else
        memcpy((*pv)->data, src->data, (size_t)src->numel * ox_value_elem_size(src->dtype));
    }
    for (int64_t i = 0; !rc && i < (*pv)->numel; i++)
      nn_set_real((*pv)->data, src->dtype, i, nn_get((*pv)->data, src->dtype, i) * s->alpha);
  }
  if (!rc) rc = ox_mm_compute_tb(c, pa ? pa : a, pb ? pb : b, swap_b);
  ox_value_unref(pa);
  ox_value_unref(pb);
  return rc;
}

const ox_kernel_def ox_ops_contrib_nn[] = {
    {OX_CONTRIB_DOMAIN, "QuickGelu", 1, 1, ox_unary_prepare_quick_gelu, ox_unary_run, NULL},
    {OX_CONTRIB_DOMAIN, "Gelu", 1, 1, gelu_erf_prepare, ox_unary_run, NULL},
    {OX_CONTRIB_DOMAIN, "BiasGelu", 1, 1, gelu_erf_prepare, bias_gelu_run, NULL},
    {OX_CONTRIB_DOMAIN, "FastGelu", 1, 1, gelu_tanh_prepare, bias_gelu_run, NULL},
    {OX_CONTRIB_DOMAIN, "SkipLayerNormalization", 1, 1, skip_ln_prepare, skip_ln_run, NULL},
    {OX_CONTRIB_DOMAIN, "SkipSimplifiedLayerNormalization", 1, 1, skip_rms_prepare, skip_ln_run,
     NULL},
    {OX_CONTRIB_DOMAIN, "EmbedLayerNormalization", 1, 1, skip_ln_prepare, embed_ln_run, NULL},
    {OX_CONTRIB_DOMAIN, "BiasSoftmax", 1, 1, bsm_prepare, bsm_run, NULL},
    {OX_CONTRIB_DOMAIN, "FusedMatMul", 1, 1, fmm_prepare, fmm_run, NULL},
    {OX_CONTRIB_DOMAIN, "FusedConv", 1, 1, ox_conv_prepare_ms_fused, ox_conv_run_ms_fused,
     ox_conv_release},
    {"", "SimplifiedLayerNormalization", 1, 1000, rms_prepare, rms_run, NULL},
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
