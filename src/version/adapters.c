/* adapters.c - op-specific opset adapters: the changes between two
 * versions of an op that its schemas alone do not describe (attributes that
 * became inputs, legacy broadcasting, axis semantics, renamed ops). Each
 * adapter edits the node in place and may add nodes before (c->pre) or after
 * (c->post) it; the generic adapter then checks the result against the
 * target schema. */
#include <string.h>

#include "version_impl.h"

/* ------------------------------------------------------------ helpers */

/* Moves an int-list attribute to input k as a 1-D int64 constant (absent
 * attribute: the input stays absent). */
static int ints_attr_to_input(ox_vctx *c, ox_node *n, const char *attr, size_t k) {
  const ox_attr *at = ox_node_attr(n, attr);
  if (!at) return OX_OK;
  if (ox_v_attr_plain(c, n, at)) return c->e->code;
  const char *nm = ox_v_const_i64(c, attr, at->ints, at->n_ints, 1);
  if (!nm) return ox_v_oom(c);
  ox_v_attr_del(n, attr);
  return ox_v_set_input(c, n, k, nm);
}

/* Moves constant input k to an int-list attribute (absent input: no
 * attribute) and drops the input. */
static int input_to_ints_attr(ox_vctx *c, ox_node *n, size_t k, const char *attr) {
  if (!ox_v_has_input(n, k)) return OX_OK;
  int64_t *v;
  size_t cnt;
  if (ox_v_input_i64(c, n, k, attr, &v, &cnt)) return c->e->code;
  if (ox_v_attr_set_ints(c, n, attr, v, cnt)) return c->e->code;
  n->input[k] = "";
  return OX_OK;
}

static int input_to_float_attr(ox_vctx *c, ox_node *n, size_t k, const char *attr) {
  if (!ox_v_has_input(n, k)) return OX_OK;
  double *v;
  size_t cnt;
  if (ox_v_input_f64(c, n, k, attr, &v, &cnt)) return c->e->code;
  if (cnt != 1) return ox_vfail(c, n, "input '%s' (%s) is not a scalar", n->input[k], attr);
  if (ox_v_attr_set_float(c, n, attr, (float)v[0])) return c->e->code;
  n->input[k] = "";
  return OX_OK;
}

/* Element type of input k, which must be known and floating point. */
static int float_type_of(ox_vctx *c, const ox_node *n, size_t k, int32_t *dt) {
  *dt = ox_v_elem(c, n->input[k]);
  if (*dt != OX_FLOAT && *dt != OX_DOUBLE && *dt != OX_FLOAT16 && *dt != OX_BFLOAT16)
    return ox_vfail(c, n,
                    "the element type of input '%s' is %s; a constant of that type is "
                    "needed",
                    n->input[k], *dt ? "not a floating-point type" : "not known");
  return OX_OK;
}

/* ------------------------------------------------------------ 3 -> 4 */

/* Concat-1's axis is optional with the value 1 when absent ("Default value
 * is 1" in its text); Concat-4 requires it. */
static int concat_3_4(ox_vctx *c, ox_node *n) {
  if (ox_node_attr(n, "axis")) return OX_OK;
  return ox_v_attr_set_int(c, n, "axis", 1);
}

/* ------------------------------------------------------------ 5 -> 6 */

/* Cast-1's `to` is a string ("FLOAT"), Cast-6's the data type number. */
static int cast_5_6(ox_vctx *c, ox_node *n) {
  const ox_attr *at = ox_node_attr(n, "to");
  if (!at || at->type != OX_ATTR_STRING) return OX_OK;
  char name[40];
  size_t len = at->s.size < sizeof name - 1 ? at->s.size : sizeof name - 1;
  memcpy(name, at->s.data, len);
  name[len] = 0;
  for (int32_t dt = 1; dt < OX_DTYPE_COUNT; dt++) {
    const ox_dtype_info *di = ox_dtype_get(dt);
    if (di && (strcmp(di->upper, name) == 0 || strcmp(di->name, name) == 0))
      return ox_v_attr_set_int(c, n, "to", dt);
  }
  return ox_vfail(c, n, "unknown Cast target type '%s'", name);
}

static int cast_6_5(ox_vctx *c, ox_node *n) {
  const ox_attr *at = ox_node_attr(n, "to");
  if (ox_v_attr_plain(c, n, at)) return c->e->code;
  const ox_dtype_info *di = at && at->type == OX_ATTR_INT ? ox_dtype_get((int32_t)at->i) : NULL;
  if (!di || at->i == 0) return ox_vfail(c, n, "Cast needs a known 'to' type");
  return ox_v_attr_set_str(c, n, "to", di->upper);
}

/* LpPool-1's p is a float, LpPool-2's an int. */
static int lppool_1_2(ox_vctx *c, ox_node *n) {
  const ox_attr *p = ox_node_attr(n, "p");
  if (!p || p->type != OX_ATTR_FLOAT) return OX_OK;
  if (p->f != (float)(int64_t)p->f)
    return ox_vfail(c, n, "p=%g is not an integer, which LpPool-2 needs", (double)p->f);
  return ox_v_attr_set_int(c, n, "p", (int64_t)p->f);
}

static int lppool_2_1(ox_vctx *c, ox_node *n) {
  const ox_attr *p = ox_node_attr(n, "p");
  if (ox_v_attr_plain(c, n, p)) return c->e->code;
  return ox_v_attr_set_float(c, n, "p", (float)(p ? p->i : 2));
}

/* Constant-12 adds value_int(s)/value_float(s)/value_string(s); before, the
 * value is a tensor. */
static int constant_12_11(ox_vctx *c, ox_node *n) {
  for (size_t i = 0; i < n->n_attribute; i++) {
    const ox_attr *at = &n->attribute[i];
    if (strncmp(at->name, "value_", 6) != 0) continue;
    if (ox_v_attr_plain(c, n, at)) return c->e->code;
    ox_tensor *t = ox_arena_calloc(c->a, 1, sizeof *t);
    if (!t) return ox_v_oom(c);
    t->has_data_type = true;
    bool list =
        at->type == OX_ATTR_INTS || at->type == OX_ATTR_FLOATS || at->type == OX_ATTR_STRINGS;
    if (list) {
      t->dims = ox_arena_alloc(c->a, sizeof *t->dims);
      if (!t->dims) return ox_v_oom(c);
      t->n_dims = 1;
    }
    switch (at->type) {
      case OX_ATTR_INT:
      case OX_ATTR_INTS:
        t->data_type = OX_INT64;
        t->int64_data = list ? at->ints : ox_arena_memdup(c->a, &at->i, sizeof at->i);
        t->n_int64_data = list ? at->n_ints : 1;
        if (list) t->dims[0] = (int64_t)at->n_ints;
        break;
      case OX_ATTR_FLOAT:
      case OX_ATTR_FLOATS:
        t->data_type = OX_FLOAT;
        t->float_data = list ? at->floats : ox_arena_memdup(c->a, &at->f, sizeof at->f);
        t->n_float_data = list ? at->n_floats : 1;
        if (list) t->dims[0] = (int64_t)at->n_floats;
        break;
      case OX_ATTR_STRING:
      case OX_ATTR_STRINGS:
        t->data_type = OX_STRING;
        t->string_data = list ? at->strings : ox_arena_memdup(c->a, &at->s, sizeof at->s);
        t->n_string_data = list ? at->n_strings : 1;
        if (list) t->dims[0] = (int64_t)at->n_strings;
        break;
      default:
        return ox_vfail(c, n, "attribute '%s' has no equivalent in Constant-11", at->name);
    }
    char *name = at->name;
    ox_v_attr_del(n, name);
    ox_attr *v = ox_v_attr_set(c, n, "value", OX_ATTR_TENSOR);
    if (!v) return ox_v_oom(c);
    v->t = t;
    return OX_OK;
  }
  return OX_OK;
}

/* RoiAlign-10 maps coordinates as 'output_half_pixel'; -16 names the
 * choice and defaults to 'half_pixel'. */
static int roialign_15_16(ox_vctx *c, ox_node *n) {
  if (ox_node_attr(n, "coordinate_transformation_mode")) return OX_OK;
  return ox_v_attr_set_str(c, n, "coordinate_transformation_mode", "output_half_pixel");
}

static int roialign_16_15(ox_vctx *c, ox_node *n) {
  const char *m = ox_node_attr_str(n, "coordinate_transformation_mode", "half_pixel");
  if (strcmp(m, "output_half_pixel") != 0)
    return ox_vfail(c, n,
                    "coordinate_transformation_mode '%s' has no equivalent in RoiAlign-10 "
                    "(which is 'output_half_pixel')",
                    m);
  ox_v_attr_del(n, "coordinate_transformation_mode");
  return OX_OK;
}

/* (De)QuantizeLinear-13 add per-axis scales; before, scale is a scalar. */
static int qdq_13_12(ox_vctx *c, ox_node *n) {
  int64_t r = n->n_input > 1 ? ox_v_rank(c, n->input[1]) : -1;
  const ox_tensor *t = n->n_input > 1 ? ox_v_find_const(c, n->input[1]) : NULL;
  if (t) r = (int64_t)t->n_dims;
  if (r > 0 && t) {
    int64_t cnt;
    if (ox_numel(t->dims, t->n_dims, &cnt) && cnt == 1) r = 0;
  }
  if (r != 0)
    return ox_vfail(c, n,
                    "scale '%s' must be known to be a scalar before opset 13 (per-axis "
                    "quantization)",
                    n->n_input > 1 ? n->input[1] : "");
  ox_v_attr_del(n, "axis");
  return OX_OK;
}

/* Resize-11 and -12 take roi and scales as required inputs (empty when
 * unused); -13 lets them be absent. */
static int resize_13_12(ox_vctx *c, ox_node *n) {
  for (size_t k = 1; k <= 2; k++) {
    if (ox_v_has_input(n, k)) continue;
    const char *nm = ox_v_const_float(c, k == 1 ? "roi" : "scales", OX_FLOAT, NULL, 0, 1);
    if (!nm || ox_v_set_input(c, n, k, nm)) return ox_v_oom(c);
  }
  return OX_OK;
}

/* ------------------------------------------------------------ 6 <-> 7 broadcasting */

static int broadcast_6_7(ox_vctx *c, ox_node *n) {
  const ox_attr *bc = ox_node_attr(n, "broadcast");
  const ox_attr *ax = ox_node_attr(n, "axis");
  if (ox_v_attr_plain(c, n, bc) || ox_v_attr_plain(c, n, ax)) return c->e->code;
  bool on = bc && bc->i != 0;
  int64_t axis = ax ? ax->i : -1;
  ox_v_attr_del(n, "broadcast");
  ox_v_attr_del(n, "axis");
  if (!on || !ax || n->n_input < 2) return OX_OK;
  /* Legacy broadcasting aligns B at `axis` of A; numpy broadcasting aligns
   * trailing dims: pad B with trailing 1s when they differ. */
  int64_t ra = ox_v_rank(c, n->input[0]), rb = ox_v_rank(c, n->input[1]);
  if (ra < 0 || rb < 0)
    return ox_vfail(c, n,
                    "legacy broadcast with axis=%lld needs the ranks of both inputs, "
                    "which are not known",
                    (long long)axis);
  if (axis < 0) axis += ra;
  int64_t pad = ra - axis - rb;
  if (pad < 0) return ox_vfail(c, n, "broadcast axis %lld does not fit the ranks", (long long)axis);
  if (pad == 0) return OX_OK;
  int64_t axes[64];
  if (pad > 64) return ox_vfail(c, n, "rank too large");
  for (int64_t i = 0; i < pad; i++) axes[i] = rb + i;
  const char *out = ox_v_fresh(c, n->input[1]);
  ox_node *u = out ? ox_v_add_pre(c, "Unsqueeze") : NULL;
  if (!u || ox_node_add_input(c->a, u, n->input[1]) || ox_node_add_output(c->a, u, out) ||
      ox_v_attr_set_ints(c, u, "axes", axes, (size_t)pad))
    return ox_v_oom(c);
  u->name = (char *)out;
  return ox_v_set_input(c, n, 1, out);
}

/* Same dims (value or symbol) for dim ia of a and ib of b. */
static bool same_dim(const ox_type *a, size_t ia, const ox_type *b, size_t ib) {
  const ox_dim *x = &a->shape->dim[ia], *y = &b->shape->dim[ib];
  if (x->has_value && y->has_value) return x->value == y->value;
  return x->param && y->param && strcmp(x->param, y->param) == 0;
}

static const ox_type *shaped(const ox_vctx *c, const char *name) {
  const ox_type *t = ox_v_type(c, name);
  return t && t->kind == OX_TYPE_TENSOR && t->shape ? t : NULL;
}

static bool all_ones(const ox_type *t) {
  for (size_t i = 0; i < t->shape->n_dim; i++)
    if (!t->shape->dim[i].has_value || t->shape->dim[i].value != 1) return false;
  return true;
}

static int broadcast_7_6(ox_vctx *c, ox_node *n) {
  if (n->n_input < 2) return OX_OK;
  const ox_type *a = shaped(c, n->input[0]), *b = shaped(c, n->input[1]);
  if (!a || !b)
    return ox_vfail(c, n,
                    "the input shapes are not known, so numpy broadcasting cannot be "
                    "checked against opset 6's legacy broadcast");
  size_t ra = a->shape->n_dim, rb = b->shape->n_dim;
  bool equal = ra == rb;
  for (size_t i = 0; equal && i < ra; i++) equal = same_dim(a, i, b, i);
  if (equal) return OX_OK;
  bool suffix = rb <= ra;
  for (size_t i = 0; suffix && i < rb; i++) suffix = same_dim(a, ra - rb + i, b, i);
  if (suffix || all_ones(b)) return ox_v_attr_set_int(c, n, "broadcast", 1);
  return ox_vfail(c, n,
                  "the broadcasting of '%s' and '%s' cannot be written with opset 6's "
                  "legacy broadcast (B must match a suffix of A's shape)",
                  n->input[0], n->input[1]);
}

/* PRelu-6 applies a slope of shape (C) per channel (axis 1); PRelu-7
 * broadcasts slope to X numpy-style (trailing dims). */
static int prelu_6_7(ox_vctx *c, ox_node *n) {
  const ox_type *st = n->n_input > 1 ? shaped(c, n->input[1]) : NULL;
  int64_t rx = ox_v_rank(c, n->input[0]);
  if (!st || rx < 0)
    return ox_vfail(c, n,
                    "the shapes of X and slope must be known to write PRelu-6's "
                    "per-channel slope with numpy broadcasting");
  if (st->shape->n_dim != 1 || rx <= 2) return OX_OK;
  int64_t cnt = ox_v_dim(c, n->input[1], 0);
  if (cnt == 1) return OX_OK;
  int64_t axes[64];
  if (rx > 64) return ox_vfail(c, n, "rank too large");
  for (int64_t i = 0; i < rx - 2; i++) axes[i] = i + 1;
  const char *out = ox_v_fresh(c, n->input[1]);
  ox_node *u = out ? ox_v_add_pre(c, "Unsqueeze") : NULL;
  if (!u || ox_node_add_input(c->a, u, n->input[1]) || ox_node_add_output(c->a, u, out) ||
      ox_v_attr_set_ints(c, u, "axes", axes, (size_t)(rx - 2)))
    return ox_v_oom(c);
  u->name = (char *)out;
  return ox_v_set_input(c, n, 1, out);
}

static int prelu_7_6(ox_vctx *c, ox_node *n) {
  const ox_type *x = shaped(c, n->input[0]), *s = n->n_input > 1 ? shaped(c, n->input[1]) : NULL;
  if (x && s) {
    if (all_ones(s)) return OX_OK;
    bool eq = x->shape->n_dim == s->shape->n_dim;
    for (size_t i = 0; eq && i < x->shape->n_dim; i++) eq = same_dim(x, i, s, i);
    if (eq) return OX_OK;
  }
  return ox_vfail(c, n,
                  "slope must be known to have X's shape or one element to keep its "
                  "meaning in PRelu-6");
}

/* Pad-1 names the pads 'paddings'. */
static int pad_1_2(ox_vctx *c, ox_node *n) {
  const ox_attr *p = ox_node_attr(n, "paddings");
  if (!p) return OX_OK;
  if (ox_v_attr_plain(c, n, p)) return c->e->code;
  int64_t *v = p->ints;
  size_t k = p->n_ints;
  ox_v_attr_del(n, "paddings");
  return ox_v_attr_set_ints(c, n, "pads", v, k);
}

static int pad_2_1(ox_vctx *c, ox_node *n) {
  const ox_attr *p = ox_node_attr(n, "pads");
  if (!p) return OX_OK;
  if (ox_v_attr_plain(c, n, p)) return c->e->code;
  int64_t *v = p->ints;
  size_t k = p->n_ints;
  ox_v_attr_del(n, "pads");
  return ox_v_attr_set_ints(c, n, "paddings", v, k);
}

/* Gemm-7 broadcasts C unidirectionally; Gemm-6 only with broadcast=1. */
static int gemm_6_7(ox_vctx *c, ox_node *n) {
  (void)c;
  ox_v_attr_del(n, "broadcast");
  return OX_OK;
}

static int gemm_7_6(ox_vctx *c, ox_node *n) {
  const ox_type *ct = n->n_input > 2 ? shaped(c, n->input[2]) : NULL;
  if (ct && ct->shape->n_dim == 2 && ct->shape->dim[1].has_value && ct->shape->dim[1].value == 1 &&
      !(ct->shape->dim[0].has_value && ct->shape->dim[0].value == 1)) {
    int64_t nn = ox_v_dim(c, n->output[0], 1);
    if (nn != 1) return ox_vfail(c, n, "C of shape (M, 1) cannot be broadcast by Gemm-6");
  }
  return ox_v_attr_set_int(c, n, "broadcast", 1);
}

/* Sum/Max/Min/Mean-8 broadcast; the versions before need equal shapes. */
static int variadic_8_7(ox_vctx *c, ox_node *n) {
  const ox_type *t0 = n->n_input ? shaped(c, n->input[0]) : NULL;
  for (size_t k = 1; k < n->n_input; k++) {
    const ox_type *t = shaped(c, n->input[k]);
    bool eq = t0 && t && t->shape->n_dim == t0->shape->n_dim;
    for (size_t i = 0; eq && i < t->shape->n_dim; i++) eq = same_dim(t0, i, t, i);
    if (!eq)
      return ox_vfail(c, n,
                      "inputs must have equal, known shapes before opset 8 (no "
                      "broadcasting); '%s' and '%s' do not",
                      n->input[0], n->input[k]);
  }
  return OX_OK;
}

/* ------------------------------------------------------------ Reshape 4 <-> 5 */

static int reshape_4_5(ox_vctx *c, ox_node *n) {
  if (!ox_node_attr(n, "shape")) return ox_vfail(c, n, "Reshape-1 without a shape attribute");
  return ints_attr_to_input(c, n, "shape", 1);
}

static int reshape_5_4(ox_vctx *c, ox_node *n) {
  if (input_to_ints_attr(c, n, 1, "shape")) return c->e->code;
  ox_v_trim_inputs(n, 1);
  return OX_OK;
}

/* ------------------------------------------------------------ Upsample / Resize */

/* Upsample-1: height_scale/width_scale for NCHW; Upsample-7: scales. */
static int upsample_6_7(ox_vctx *c, ox_node *n) {
  const ox_attr *h = ox_node_attr(n, "height_scale"), *w = ox_node_attr(n, "width_scale");
  if (!h || !w) return ox_vfail(c, n, "Upsample-1 needs height_scale and width_scale");
  double s[4] = {1, 1, h->f, w->f};
  ox_v_attr_del(n, "height_scale");
  ox_v_attr_del(n, "width_scale");
  /* Upsample-1 says "bilinear", -7 "linear" */
  if (strcmp(ox_node_attr_str(n, "mode", "nearest"), "bilinear") == 0 &&
      ox_v_attr_set_str(c, n, "mode", "linear"))
    return c->e->code;
  return ox_v_attr_set_floats(c, n, "scales", s, 4);
}

static int upsample_7_6(ox_vctx *c, ox_node *n) {
  const ox_attr *s = ox_node_attr(n, "scales");
  if (ox_v_attr_plain(c, n, s)) return c->e->code;
  if (!s || s->n_floats != 4 || s->floats[0] != 1.0f || s->floats[1] != 1.0f)
    return ox_vfail(c, n, "Upsample-1 scales only the last two dims of a 4-D input");
  float hs = s->floats[2], ws = s->floats[3];
  ox_v_attr_del(n, "scales");
  if (strcmp(ox_node_attr_str(n, "mode", "nearest"), "linear") == 0 &&
      ox_v_attr_set_str(c, n, "mode", "bilinear"))
    return c->e->code;
  if (ox_v_attr_set_float(c, n, "height_scale", hs) || ox_v_attr_set_float(c, n, "width_scale", ws))
    return c->e->code;
  return OX_OK;
}

static int upsample_8_9(ox_vctx *c, ox_node *n) {
  const ox_attr *s = ox_node_attr(n, "scales");
  if (!s) return ox_vfail(c, n, "Upsample-7 without scales");
  if (ox_v_attr_plain(c, n, s)) return c->e->code;
  double v[64];
  if (s->n_floats > 64) return ox_vfail(c, n, "too many scales");
  for (size_t i = 0; i < s->n_floats; i++) v[i] = s->floats[i];
  const char *nm = ox_v_const_float(c, "scales", OX_FLOAT, v, s->n_floats, 1);
  if (!nm) return ox_v_oom(c);
  ox_v_attr_del(n, "scales");
  return ox_v_set_input(c, n, 1, nm);
}

static int upsample_9_8(ox_vctx *c, ox_node *n) {
  double *v;
  size_t cnt;
  if (ox_v_input_f64(c, n, 1, "scales", &v, &cnt)) return c->e->code;
  if (ox_v_attr_set_floats(c, n, "scales", v, cnt)) return c->e->code;
  ox_v_trim_inputs(n, 1);
  return OX_OK;
}

/* Upsample is deprecated at 10: Resize-10 has the same inputs and modes. */
static int upsample_9_10(ox_vctx *c, ox_node *n) {
  (void)c;
  n->op_type = "Resize";
  return OX_OK;
}

static int resize_10_9(ox_vctx *c, ox_node *n) {
  (void)c;
  n->op_type = "Upsample";
  return OX_OK;
}

/* Resize-10 maps output to input coordinates as x_in = x_out / scale
 * ("asymmetric") and rounds nearest down; Resize-11 takes roi before scales
 * and names both choices. */
static int resize_10_11(ox_vctx *c, ox_node *n) {
  if (n->n_input < 2) return ox_vfail(c, n, "Resize-10 needs scales");
  const char *scales = n->input[1];
  /* roi is not optional in Resize-11 (only used by tf_crop_and_resize) */
  const char *roi = ox_v_const_float(c, "roi", OX_FLOAT, NULL, 0, 1);
  if (!roi) return ox_v_oom(c);
  if (ox_v_set_input(c, n, 2, scales) || ox_v_set_input(c, n, 1, roi)) return c->e->code;
  if (ox_v_attr_set_str(c, n, "coordinate_transformation_mode", "asymmetric")) return c->e->code;
  const char *mode = ox_node_attr_str(n, "mode", "nearest");
  if (strcmp(mode, "nearest") == 0 && ox_v_attr_set_str(c, n, "nearest_mode", "floor"))
    return c->e->code;
  return OX_OK;
}

static int resize_11_10(ox_vctx *c, ox_node *n) {
  const char *mode = ox_node_attr_str(n, "mode", "nearest");
  const char *ctm = ox_node_attr_str(n, "coordinate_transformation_mode", "half_pixel");
  const char *nm = ox_node_attr_str(n, "nearest_mode", "round_prefer_floor");
  if (strcmp(ctm, "asymmetric") != 0)
    return ox_vfail(c, n,
                    "coordinate_transformation_mode '%s' has no equivalent in Resize-10 "
                    "(which is 'asymmetric')",
                    ctm);
  if (strcmp(mode, "nearest") == 0 && strcmp(nm, "floor") != 0)
    return ox_vfail(c, n, "nearest_mode '%s' has no equivalent in Resize-10 (which is 'floor')",
                    nm);
  if (strcmp(mode, "cubic") == 0) return ox_vfail(c, n, "mode 'cubic' does not exist in Resize-10");
  if (ox_v_has_input(n, 3)) return ox_vfail(c, n, "Resize-10 takes scales, not sizes");
  if (!ox_v_has_input(n, 2)) return ox_vfail(c, n, "Resize-10 needs scales");
  const ox_attr *ex = ox_node_attr(n, "exclude_outside");
  if (ex && ex->i) return ox_vfail(c, n, "exclude_outside=1 does not exist in Resize-10");
  const char *sc = n->input[2];
  ox_v_trim_inputs(n, 1);
  if (ox_v_set_input(c, n, 1, sc)) return c->e->code;
  ox_v_attr_del(n, "coordinate_transformation_mode");
  ox_v_attr_del(n, "nearest_mode");
  ox_v_attr_del(n, "cubic_coeff_a");
  ox_v_attr_del(n, "exclude_outside");
  ox_v_attr_del(n, "extrapolation_value");
  return OX_OK;
}

/* ------------------------------------------------------------ 9 <-> 10 */

static int slice_9_10(ox_vctx *c, ox_node *n) {
  if (!ox_node_attr(n, "starts") || !ox_node_attr(n, "ends"))
    return ox_vfail(c, n, "Slice-1 needs starts and ends");
  if (ints_attr_to_input(c, n, "starts", 1) || ints_attr_to_input(c, n, "ends", 2) ||
      ints_attr_to_input(c, n, "axes", 3))
    return c->e->code;
  return OX_OK;
}

static int slice_10_9(ox_vctx *c, ox_node *n) {
  if (ox_v_has_input(n, 4)) {
    int64_t *st;
    size_t cnt;
    if (ox_v_input_i64(c, n, 4, "steps", &st, &cnt)) return c->e->code;
    for (size_t i = 0; i < cnt; i++)
      if (st[i] != 1) return ox_vfail(c, n, "steps other than 1 do not exist in Slice-1");
  }
  if (input_to_ints_attr(c, n, 1, "starts") || input_to_ints_attr(c, n, 2, "ends") ||
      input_to_ints_attr(c, n, 3, "axes"))
    return c->e->code;
  ox_v_trim_inputs(n, 1);
  return OX_OK;
}

static int topk_9_10(ox_vctx *c, ox_node *n) {
  const ox_attr *k = ox_node_attr(n, "k");
  if (!k) return ox_vfail(c, n, "TopK-1 needs k");
  if (ox_v_attr_plain(c, n, k)) return c->e->code;
  const char *nm = ox_v_const_i64(c, "k", &k->i, 1, 1);
  if (!nm) return ox_v_oom(c);
  ox_v_attr_del(n, "k");
  return ox_v_set_input(c, n, 1, nm);
}

static int topk_10_9(ox_vctx *c, ox_node *n) {
  int64_t *v;
  size_t cnt;
  if (ox_v_input_i64(c, n, 1, "k", &v, &cnt)) return c->e->code;
  if (cnt != 1) return ox_vfail(c, n, "k must hold one value");
  if (ox_v_attr_set_int(c, n, "k", v[0])) return c->e->code;
  ox_v_trim_inputs(n, 1);
  return OX_OK;
}

/* Dropout-7's mask has the data's type, Dropout-10's is bool: an unused
 * mask is dropped, a used one refused. */
static int dropout_9_10(ox_vctx *c, ox_node *n) {
  if (n->n_output < 2 || !n->output[1][0]) return OX_OK;
  if (ox_v_is_used(c, n->output[1]))
    return ox_vfail(c, n, "mask '%s' changes type to bool at opset 10 and is used", n->output[1]);
  n->n_output = 1;
  return OX_OK;
}

static int dropout_10_9(ox_vctx *c, ox_node *n) {
  if (n->n_output < 2 || !n->output[1][0]) return OX_OK;
  if (ox_v_is_used(c, n->output[1]))
    return ox_vfail(c, n, "mask '%s' is bool at opset 10, of the data's type before, and is used",
                    n->output[1]);
  n->n_output = 1;
  return OX_OK;
}

/* ------------------------------------------------------------ 10 <-> 11 */

static int clip_10_11(ox_vctx *c, ox_node *n) {
  const ox_attr *mn = ox_node_attr(n, "min"), *mx = ox_node_attr(n, "max");
  if (!mn && !mx) return OX_OK;
  if (ox_v_attr_plain(c, n, mn) || ox_v_attr_plain(c, n, mx)) return c->e->code;
  int32_t dt;
  if (float_type_of(c, n, 0, &dt)) return c->e->code;
  if (mn) {
    double v = mn->f;
    const char *nm = ox_v_const_float(c, "min", dt, &v, 1, 0);
    if (!nm || ox_v_set_input(c, n, 1, nm)) return ox_v_oom(c);
  }
  if (mx) {
    double v = mx->f;
    const char *nm = ox_v_const_float(c, "max", dt, &v, 1, 0);
    if (!nm || ox_v_set_input(c, n, 2, nm)) return ox_v_oom(c);
  }
  ox_v_attr_del(n, "min");
  ox_v_attr_del(n, "max");
  return OX_OK;
}

static int clip_11_10(ox_vctx *c, ox_node *n) {
  if (input_to_float_attr(c, n, 1, "min") || input_to_float_attr(c, n, 2, "max")) return c->e->code;
  ox_v_trim_inputs(n, 1);
  return OX_OK;
}

static int pad_10_11(ox_vctx *c, ox_node *n) {
  const ox_attr *p = ox_node_attr(n, "pads");
  if (!p) return ox_vfail(c, n, "Pad-2 needs pads");
  if (ints_attr_to_input(c, n, "pads", 1)) return c->e->code;
  const ox_attr *v = ox_node_attr(n, "value");
  if (v) {
    if (ox_v_attr_plain(c, n, v)) return c->e->code;
    if (v->f != 0.0f) {
      int32_t dt;
      if (float_type_of(c, n, 0, &dt)) return c->e->code;
      double d = v->f;
      const char *nm = ox_v_const_float(c, "value", dt, &d, 1, 0);
      if (!nm || ox_v_set_input(c, n, 2, nm)) return ox_v_oom(c);
    }
    ox_v_attr_del(n, "value");
  }
  return OX_OK;
}

static int pad_11_10(ox_vctx *c, ox_node *n) {
  if (input_to_ints_attr(c, n, 1, "pads") || input_to_float_attr(c, n, 2, "value"))
    return c->e->code;
  ox_v_trim_inputs(n, 1);
  return OX_OK;
}

static int scatter_10_11(ox_vctx *c, ox_node *n) {
  (void)c;
  n->op_type = "ScatterElements";
  return OX_OK;
}

static int scatter_11_10(ox_vctx *c, ox_node *n) {
  (void)c;
  n->op_type = "Scatter";
  return OX_OK;
}

/* ------------------------------------------------------------ 11 <-> 12 */

static int dropout_11_12(ox_vctx *c, ox_node *n) {
  const ox_attr *r = ox_node_attr(n, "ratio");
  if (!r) return OX_OK;
  if (ox_v_attr_plain(c, n, r)) return c->e->code;
  double v = r->f;
  const char *nm = ox_v_const_float(c, "ratio", OX_FLOAT, &v, 1, 0);
  if (!nm) return ox_v_oom(c);
  ox_v_attr_del(n, "ratio");
  return ox_v_set_input(c, n, 1, nm);
}

static int dropout_12_11(ox_vctx *c, ox_node *n) {
  if (ox_v_has_input(n, 2)) {
    int64_t *v;
    size_t cnt;
    const ox_tensor *t = ox_v_find_const(c, n->input[2]);
    if (!t || t->data_type != OX_BOOL)
      return ox_vfail(c, n, "training_mode must be a constant false before opset 12");
    ox_bytes raw = ox_tensor_payload(t);
    bool on = raw.data ? raw.size && raw.data[0] : t->n_int32_data && t->int32_data[0];
    (void)v;
    (void)cnt;
    if (on) return ox_vfail(c, n, "training_mode=true has no equivalent before opset 12");
  }
  if (input_to_float_attr(c, n, 1, "ratio")) return c->e->code;
  ox_v_trim_inputs(n, 1);
  ox_v_attr_del(n, "seed"); /* only matters in training mode */
  return OX_OK;
}

/* ------------------------------------------------------------ 12 <-> 13 */

static int axes_attr_to_input_1(ox_vctx *c, ox_node *n) {
  return ints_attr_to_input(c, n, "axes", 1);
}

static int axes_input_to_attr_1(ox_vctx *c, ox_node *n) {
  if (input_to_ints_attr(c, n, 1, "axes")) return c->e->code;
  ox_v_trim_inputs(n, 1);
  return OX_OK;
}

static int split_12_13(ox_vctx *c, ox_node *n) { return ints_attr_to_input(c, n, "split", 1); }

static int split_13_12(ox_vctx *c, ox_node *n) {
  if (input_to_ints_attr(c, n, 1, "split")) return c->e->code;
  ox_v_trim_inputs(n, 1);
  return OX_OK;
}

static int split_17_18(ox_vctx *c, ox_node *n) {
  if (ox_v_has_input(n, 1) || ox_node_attr(n, "num_outputs")) return OX_OK;
  return ox_v_attr_set_int(c, n, "num_outputs", (int64_t)n->n_output);
}

static int split_18_17(ox_vctx *c, ox_node *n) {
  const ox_attr *no = ox_node_attr(n, "num_outputs");
  if (!no) return OX_OK;
  if (ox_v_attr_plain(c, n, no)) return c->e->code;
  int64_t axis = ox_node_attr_int(n, "axis", 0);
  int64_t d = ox_v_dim(c, n->input[0], axis);
  if (d < 0)
    return ox_vfail(c, n,
                    "num_outputs needs the split dimension to be known to write the split "
                    "sizes of Split-13");
  int64_t k = no->i > 0 ? no->i : 1, chunk = (d + k - 1) / k;
  if (d % k == 0) {
    ox_v_attr_del(n, "num_outputs");
    return OX_OK;
  }
  int64_t sizes[256];
  if (k > 256) return ox_vfail(c, n, "too many outputs");
  for (int64_t i = 0; i < k; i++) sizes[i] = i + 1 < k ? chunk : d - chunk * (k - 1);
  const char *nm = ox_v_const_i64(c, "split", sizes, (size_t)k, 1);
  if (!nm) return ox_v_oom(c);
  ox_v_attr_del(n, "num_outputs");
  return ox_v_set_input(c, n, 1, nm);
}

/* Softmax-1..11 flatten the input to 2-D at `axis` and normalize each row;
 * Softmax-13 normalizes along one axis. */
static int softmax_12_13(ox_vctx *c, ox_node *n) {
  const ox_attr *ax = ox_node_attr(n, "axis");
  if (ox_v_attr_plain(c, n, ax)) return c->e->code;
  int64_t axis = ax ? ax->i : 1, r = ox_v_rank(c, n->input[0]);
  if (r >= 0 && axis < 0) axis += r;
  if (r >= 0 && axis == r - 1) return ox_v_attr_set_int(c, n, "axis", -1);
  /* Flatten -> op(axis=-1) -> Reshape back to the input's shape. */
  const char *x = n->input[0], *y = n->output[0];
  const char *flat = ox_v_fresh(c, x), *shape = ox_v_fresh(c, x), *res = ox_v_fresh(c, y);
  if (!flat || !shape || !res) return ox_v_oom(c);
  ox_node *f = ox_v_add_pre(c, "Flatten");
  if (!f || ox_node_add_input(c->a, f, x) || ox_node_add_output(c->a, f, flat) ||
      ox_v_attr_set_int(c, f, "axis", ax ? ax->i : 1))
    return ox_v_oom(c);
  f->name = (char *)flat;
  ox_node *s = ox_v_add_pre(c, "Shape");
  if (!s || ox_node_add_input(c->a, s, x) || ox_node_add_output(c->a, s, shape)) return ox_v_oom(c);
  s->name = (char *)shape;
  ox_node *rs = ox_v_add_post(c, "Reshape");
  if (!rs || ox_node_add_input(c->a, rs, res) || ox_node_add_input(c->a, rs, shape) ||
      ox_node_add_output(c->a, rs, y))
    return ox_v_oom(c);
  rs->name = (char *)res;
  n->input[0] = (char *)flat;
  n->output[0] = (char *)res;
  return ox_v_attr_set_int(c, n, "axis", -1);
}

static int softmax_13_12(ox_vctx *c, ox_node *n) {
  const ox_attr *ax = ox_node_attr(n, "axis");
  if (ox_v_attr_plain(c, n, ax)) return c->e->code;
  int64_t axis = ax ? ax->i : -1, r = ox_v_rank(c, n->input[0]);
  if (r < 0)
    return ox_vfail(c, n,
                    "the rank of '%s' is not known, so axis %lld cannot be written with "
                    "the flattening axis of opset 12",
                    n->input[0], (long long)axis);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return ox_vfail(c, n, "axis out of range");
  if (axis == r - 1) return ox_v_attr_set_int(c, n, "axis", r - 1 > 0 ? r - 1 : 0);
  /* Transpose the axis to the end, normalize the last axis, transpose back. */
  int64_t perm[64], inv[64];
  if (r > 64) return ox_vfail(c, n, "rank too large");
  size_t j = 0;
  for (int64_t i = 0; i < r; i++)
    if (i != axis) perm[j++] = i;
  perm[j] = axis;
  for (int64_t i = 0; i < r; i++) inv[perm[i]] = i;
  const char *x = n->input[0], *y = n->output[0];
  const char *tin = ox_v_fresh(c, x), *tout = ox_v_fresh(c, y);
  if (!tin || !tout) return ox_v_oom(c);
  ox_node *t1 = ox_v_add_pre(c, "Transpose");
  if (!t1 || ox_node_add_input(c->a, t1, x) || ox_node_add_output(c->a, t1, tin) ||
      ox_v_attr_set_ints(c, t1, "perm", perm, (size_t)r))
    return ox_v_oom(c);
  t1->name = (char *)tin;
  ox_node *t2 = ox_v_add_post(c, "Transpose");
  if (!t2 || ox_node_add_input(c->a, t2, tout) || ox_node_add_output(c->a, t2, y) ||
      ox_v_attr_set_ints(c, t2, "perm", inv, (size_t)r))
    return ox_v_oom(c);
  t2->name = (char *)tout;
  n->input[0] = (char *)tin;
  n->output[0] = (char *)tout;
  return ox_v_attr_set_int(c, n, "axis", r - 1);
}

/* ------------------------------------------------------------ 13 <-> 14 */

/* BatchNormalization-9..13 trains when the optional outputs are present;
 * -14 says so with training_mode and has only three outputs. */
static int batchnorm_13_14(ox_vctx *c, ox_node *n) {
  if (n->n_output <= 1) return OX_OK;
  if (n->n_output > 3 && ((n->output[3][0]) || (n->n_output > 4 && n->output[4][0])))
    return ox_vfail(c, n, "the saved_mean/saved_var outputs have no equivalent at opset 14");
  if (n->n_output > 3) n->n_output = 3;
  return ox_v_attr_set_int(c, n, "training_mode", 1);
}

static int batchnorm_14_13(ox_vctx *c, ox_node *n) {
  const ox_attr *tm = ox_node_attr(n, "training_mode");
  if (ox_v_attr_plain(c, n, tm)) return c->e->code;
  bool training = tm && tm->i;
  bool outs = n->n_output > 1;
  if (training != outs)
    return ox_vfail(c, n,
                    "training_mode=%d with %zu outputs has no equivalent before opset 14 "
                    "(training there means the optional outputs are present)",
                    training ? 1 : 0, n->n_output);
  ox_v_attr_del(n, "training_mode");
  return OX_OK;
}

/* ------------------------------------------------------------ 17 <-> 18, 19 <-> 20 */

static int dft_19_20(ox_vctx *c, ox_node *n) {
  const ox_attr *ax = ox_node_attr(n, "axis");
  if (ox_v_attr_plain(c, n, ax)) return c->e->code;
  int64_t axis = ax ? ax->i : 1;
  const char *nm = ox_v_const_i64(c, "axis", &axis, 1, 0);
  if (!nm) return ox_v_oom(c);
  ox_v_attr_del(n, "axis");
  return ox_v_set_input(c, n, 2, nm);
}

static int dft_20_19(ox_vctx *c, ox_node *n) {
  int64_t axis = -2;
  if (ox_v_has_input(n, 2)) {
    int64_t *v;
    size_t cnt;
    if (ox_v_input_i64(c, n, 2, "axis", &v, &cnt)) return c->e->code;
    if (cnt != 1) return ox_vfail(c, n, "axis must be a scalar");
    axis = v[0];
  }
  ox_v_trim_inputs(n, 2);
  return ox_v_attr_set_int(c, n, "axis", axis);
}

static int gridsample_19_20(ox_vctx *c, ox_node *n) {
  const char *m = ox_node_attr_str(n, "mode", "bilinear");
  if (strcmp(m, "bilinear") == 0) return ox_v_attr_set_str(c, n, "mode", "linear");
  if (strcmp(m, "bicubic") == 0) return ox_v_attr_set_str(c, n, "mode", "cubic");
  return OX_OK;
}

static int gridsample_20_19(ox_vctx *c, ox_node *n) {
  int64_t r = ox_v_rank(c, n->input[0]);
  if (r != 4)
    return ox_vfail(c, n, "GridSample-16 takes 4-D input only (rank of '%s' is %s)", n->input[0],
                    r < 0 ? "not known" : "not 4");
  const char *m = ox_node_attr_str(n, "mode", "linear");
  if (strcmp(m, "linear") == 0) return ox_v_attr_set_str(c, n, "mode", "bilinear");
  if (strcmp(m, "cubic") == 0) return ox_v_attr_set_str(c, n, "mode", "bicubic");
  return OX_OK;
}

/* GroupNormalization-18 takes scale and bias per group, -21 per channel:
 * repeat each group's value C/G times. */
static int groupnorm_20_21(ox_vctx *c, ox_node *n) {
  int64_t g = ox_node_attr_int(n, "num_groups", 0), ch = ox_v_dim(c, n->input[0], 1);
  if (g <= 0 || ch <= 0 || ch % g)
    return ox_vfail(c, n,
                    "the channel count of '%s' must be known (and a multiple of "
                    "num_groups) to repeat scale and bias per channel",
                    n->input[0]);
  int64_t one = 1, eshape[2] = {g, ch / g};
  const char *axes = ox_v_const_i64(c, "axes", &one, 1, 1);
  const char *es = ox_v_const_i64(c, "expand_shape", eshape, 2, 1);
  const char *rsh = ox_v_const_i64(c, "channels", &ch, 1, 1);
  if (!axes || !es || !rsh) return ox_v_oom(c);
  for (size_t k = 1; k <= 2 && k < n->n_input; k++) {
    const char *u = ox_v_fresh(c, n->input[k]), *x = ox_v_fresh(c, n->input[k]),
               *r = ox_v_fresh(c, n->input[k]);
    if (!u || !x || !r) return ox_v_oom(c);
    ox_node *a = ox_v_add_pre(c, "Unsqueeze"), *b, *d;
    if (!a || ox_node_add_input(c->a, a, n->input[k]) || ox_node_add_input(c->a, a, axes) ||
        ox_node_add_output(c->a, a, u))
      return ox_v_oom(c);
    b = ox_v_add_pre(c, "Expand");
    if (!b || ox_node_add_input(c->a, b, u) || ox_node_add_input(c->a, b, es) ||
        ox_node_add_output(c->a, b, x))
      return ox_v_oom(c);
    d = ox_v_add_pre(c, "Reshape");
    if (!d || ox_node_add_input(c->a, d, x) || ox_node_add_input(c->a, d, rsh) ||
        ox_node_add_output(c->a, d, r))
      return ox_v_oom(c);
    n->input[k] = (char *)r;
  }
  return OX_OK;
}

/* Scan-8 has a batch axis 0 on every input and output (and an optional
 * sequence_lens first input); Scan-9 has none. With a batch of 1 the two
 * are the same up to Squeeze/Unsqueeze of that axis. */
static int wrap_axis0(ox_vctx *c, ox_node *n, size_t first_in, const char *in_op,
                      const char *out_op) {
  int64_t zero = 0;
  for (size_t k = first_in; k < n->n_input; k++) {
    const char *t = ox_v_fresh(c, n->input[k]);
    ox_node *q = t ? ox_v_add_pre(c, in_op) : NULL;
    if (!q || ox_node_add_input(c->a, q, n->input[k]) || ox_node_add_output(c->a, q, t) ||
        ox_v_attr_set_ints(c, q, "axes", &zero, 1))
      return ox_v_oom(c);
    n->input[k] = (char *)t;
  }
  for (size_t k = 0; k < n->n_output; k++) {
    if (!n->output[k][0]) continue;
    const char *t = ox_v_fresh(c, n->output[k]);
    ox_node *q = t ? ox_v_add_post(c, out_op) : NULL;
    if (!q || ox_node_add_input(c->a, q, t) || ox_node_add_output(c->a, q, n->output[k]) ||
        ox_v_attr_set_ints(c, q, "axes", &zero, 1))
      return ox_v_oom(c);
    n->output[k] = (char *)t;
  }
  return OX_OK;
}

static int scan_8_9(ox_vctx *c, ox_node *n) {
  if (ox_v_has_input(n, 0)) return ox_vfail(c, n, "sequence_lens has no equivalent in Scan-9");
  for (size_t k = 1; k < n->n_input; k++)
    if (ox_v_dim(c, n->input[k], 0) != 1)
      return ox_vfail(c, n, "the batch axis of '%s' must be known to be 1 to drop it for Scan-9",
                      n->input[k]);
  const ox_attr *d = ox_node_attr(n, "directions");
  if (ox_v_attr_plain(c, n, d)) return c->e->code;
  if (d) {
    int64_t *v = d->ints;
    size_t k = d->n_ints;
    ox_v_attr_del(n, "directions");
    if (ox_v_attr_set_ints(c, n, "scan_input_directions", v, k)) return c->e->code;
  }
  if (wrap_axis0(c, n, 1, "Squeeze", "Unsqueeze")) return c->e->code;
  /* drop the sequence_lens slot */
  memmove(n->input, n->input + 1, (n->n_input - 1) * sizeof *n->input);
  n->n_input--;
  return OX_OK;
}

static bool zeros_or_absent(const ox_node *n, const char *name) {
  const ox_attr *a = ox_node_attr(n, name);
  if (!a) return true;
  for (size_t i = 0; i < a->n_ints; i++)
    if (a->ints[i] != 0) return false;
  return !a->ref_attr_name;
}

static int scan_9_8(ox_vctx *c, ox_node *n) {
  if (!zeros_or_absent(n, "scan_input_axes") || !zeros_or_absent(n, "scan_output_axes") ||
      !zeros_or_absent(n, "scan_output_directions"))
    return ox_vfail(c, n,
                    "scan axes other than 0 and reversed scan outputs have no equivalent "
                    "in Scan-8");
  const ox_attr *d = ox_node_attr(n, "scan_input_directions");
  if (ox_v_attr_plain(c, n, d)) return c->e->code;
  ox_v_attr_del(n, "scan_input_axes");
  ox_v_attr_del(n, "scan_output_axes");
  ox_v_attr_del(n, "scan_output_directions");
  if (d) {
    int64_t *v = d->ints;
    size_t k = d->n_ints;
    ox_v_attr_del(n, "scan_input_directions");
    if (ox_v_attr_set_ints(c, n, "directions", v, k)) return c->e->code;
  }
  if (wrap_axis0(c, n, 0, "Unsqueeze", "Squeeze")) return c->e->code;
  /* an empty sequence_lens first */
  size_t cnt = n->n_input;
  if (ox_v_set_input(c, n, cnt, "")) return c->e->code;
  memmove(n->input + 1, n->input, cnt * sizeof *n->input);
  n->input[0] = "";
  return OX_OK;
}

/* Attribute values added or removed at a version (string enums). */
static int refuse_value(ox_vctx *c, ox_node *n, const char *attr, const char *dflt,
                        const char *value) {
  const char *v = ox_node_attr_str(n, attr, dflt);
  if (strcmp(v, value) == 0)
    return ox_vfail(c, n, "%s '%s' has no equivalent at opset %lld", attr, value, (long long)c->to);
  return OX_OK;
}

static int resize_12_13(ox_vctx *c, ox_node *n) {
  return refuse_value(c, n, "coordinate_transformation_mode", "half_pixel", "tf_half_pixel_for_nn");
}

static int resize_19_18(ox_vctx *c, ox_node *n) {
  return refuse_value(c, n, "coordinate_transformation_mode", "half_pixel", "half_pixel_symmetric");
}

static int pad_19_18(ox_vctx *c, ox_node *n) {
  return refuse_value(c, n, "mode", "constant", "wrap");
}

/* ScatterElements/ScatterND-18 add the reductions max and min. */
static int scatter_18_17(ox_vctx *c, ox_node *n) {
  if (refuse_value(c, n, "reduction", "none", "max")) return c->e->code;
  return refuse_value(c, n, "reduction", "none", "min");
}

static int refuse(ox_vctx *c, ox_node *n) {
  return ox_vfail(c, n, "no adapter: %s changed meaning between opsets %lld and %lld", n->op_type,
                  (long long)(c->from < c->to ? c->from : c->to),
                  (long long)(c->from < c->to ? c->to : c->from));
}

/* ------------------------------------------------------------ the table */

typedef struct {
  const char *op;
  int from, to;
  ox_vadapter fn;
} entry;

static const entry table[] = {
    {"Concat", 3, 4, concat_3_4},
    {"Cast", 5, 6, cast_5_6},
    {"Cast", 6, 5, cast_6_5},
    {"LpPool", 1, 2, lppool_1_2},
    {"LpPool", 2, 1, lppool_2_1},
    {"Constant", 12, 11, constant_12_11},
    {"RoiAlign", 15, 16, roialign_15_16},
    {"RoiAlign", 16, 15, roialign_16_15},
    {"QuantizeLinear", 13, 12, qdq_13_12},
    {"DequantizeLinear", 13, 12, qdq_13_12},
    {"Resize", 13, 12, resize_13_12},
    {"Resize", 12, 13, resize_12_13},
    {"Resize", 19, 18, resize_19_18},
    {"Pad", 19, 18, pad_19_18},
    {"ScatterElements", 18, 17, scatter_18_17},
    {"ScatterND", 18, 17, scatter_18_17},
    {"Add", 6, 7, broadcast_6_7},
    {"Sub", 6, 7, broadcast_6_7},
    {"Mul", 6, 7, broadcast_6_7},
    {"Div", 6, 7, broadcast_6_7},
    {"Pow", 6, 7, broadcast_6_7},
    {"And", 6, 7, broadcast_6_7},
    {"Or", 6, 7, broadcast_6_7},
    {"Xor", 6, 7, broadcast_6_7},
    {"Equal", 6, 7, broadcast_6_7},
    {"Greater", 6, 7, broadcast_6_7},
    {"Less", 6, 7, broadcast_6_7},
    {"Add", 7, 6, broadcast_7_6},
    {"Sub", 7, 6, broadcast_7_6},
    {"Mul", 7, 6, broadcast_7_6},
    {"Div", 7, 6, broadcast_7_6},
    {"Pow", 7, 6, broadcast_7_6},
    {"And", 7, 6, broadcast_7_6},
    {"Or", 7, 6, broadcast_7_6},
    {"Xor", 7, 6, broadcast_7_6},
    {"Equal", 7, 6, broadcast_7_6},
    {"Greater", 7, 6, broadcast_7_6},
    {"Less", 7, 6, broadcast_7_6},
    {"PRelu", 6, 7, prelu_6_7},
    {"PRelu", 7, 6, prelu_7_6},
    {"Pad", 1, 2, pad_1_2},
    {"Pad", 2, 1, pad_2_1},
    {"Gemm", 6, 7, gemm_6_7},
    {"Gemm", 7, 6, gemm_7_6},
    {"Sum", 8, 7, variadic_8_7},
    {"Max", 8, 7, variadic_8_7},
    {"Min", 8, 7, variadic_8_7},
    {"Mean", 8, 7, variadic_8_7},
    {"Reshape", 4, 5, reshape_4_5},
    {"Reshape", 5, 4, reshape_5_4},
    {"Upsample", 6, 7, upsample_6_7},
    {"Upsample", 7, 6, upsample_7_6},
    {"Upsample", 8, 9, upsample_8_9},
    {"Upsample", 9, 8, upsample_9_8},
    {"Upsample", 9, 10, upsample_9_10},
    {"Resize", 10, 9, resize_10_9},
    {"Resize", 10, 11, resize_10_11},
    {"Resize", 11, 10, resize_11_10},
    {"Scan", 8, 9, scan_8_9},
    {"Scan", 9, 8, scan_9_8},
    {"Slice", 9, 10, slice_9_10},
    {"Slice", 10, 9, slice_10_9},
    {"TopK", 9, 10, topk_9_10},
    {"TopK", 10, 9, topk_10_9},
    {"Dropout", 9, 10, dropout_9_10},
    {"Dropout", 10, 9, dropout_10_9},
    {"Clip", 10, 11, clip_10_11},
    {"Clip", 11, 10, clip_11_10},
    {"Pad", 10, 11, pad_10_11},
    {"Pad", 11, 10, pad_11_10},
    {"Scatter", 10, 11, scatter_10_11},
    {"ScatterElements", 11, 10, scatter_11_10},
    {"Dropout", 11, 12, dropout_11_12},
    {"Dropout", 12, 11, dropout_12_11},
    {"ReduceSum", 12, 13, axes_attr_to_input_1},
    {"ReduceSum", 13, 12, axes_input_to_attr_1},
    {"Squeeze", 12, 13, axes_attr_to_input_1},
    {"Squeeze", 13, 12, axes_input_to_attr_1},
    {"Unsqueeze", 12, 13, axes_attr_to_input_1},
    {"Unsqueeze", 13, 12, axes_input_to_attr_1},
    {"Split", 12, 13, split_12_13},
    {"Split", 13, 12, split_13_12},
    {"Softmax", 12, 13, softmax_12_13},
    {"Softmax", 13, 12, softmax_13_12},
    {"LogSoftmax", 12, 13, softmax_12_13},
    {"LogSoftmax", 13, 12, softmax_13_12},
    {"Hardmax", 12, 13, softmax_12_13},
    {"Hardmax", 13, 12, softmax_13_12},
    {"BatchNormalization", 13, 14, batchnorm_13_14},
    {"BatchNormalization", 14, 13, batchnorm_14_13},
    {"Split", 17, 18, split_17_18},
    {"Split", 18, 17, split_18_17},
    {"ReduceL1", 17, 18, axes_attr_to_input_1},
    {"ReduceL2", 17, 18, axes_attr_to_input_1},
    {"ReduceLogSum", 17, 18, axes_attr_to_input_1},
    {"ReduceLogSumExp", 17, 18, axes_attr_to_input_1},
    {"ReduceMax", 17, 18, axes_attr_to_input_1},
    {"ReduceMean", 17, 18, axes_attr_to_input_1},
    {"ReduceMin", 17, 18, axes_attr_to_input_1},
    {"ReduceProd", 17, 18, axes_attr_to_input_1},
    {"ReduceSumSquare", 17, 18, axes_attr_to_input_1},
    {"ReduceL1", 18, 17, axes_input_to_attr_1},
    {"ReduceL2", 18, 17, axes_input_to_attr_1},
    {"ReduceLogSum", 18, 17, axes_input_to_attr_1},
    {"ReduceLogSumExp", 18, 17, axes_input_to_attr_1},
    {"ReduceMax", 18, 17, axes_input_to_attr_1},
    {"ReduceMean", 18, 17, axes_input_to_attr_1},
    {"ReduceMin", 18, 17, axes_input_to_attr_1},
    {"ReduceProd", 18, 17, axes_input_to_attr_1},
    {"ReduceSumSquare", 18, 17, axes_input_to_attr_1},
    {"DFT", 19, 20, dft_19_20},
    {"DFT", 20, 19, dft_20_19},
    {"GridSample", 19, 20, gridsample_19_20},
    {"GridSample", 20, 19, gridsample_20_19},
    {"GroupNormalization", 20, 21, groupnorm_20_21},
    {"GroupNormalization", 21, 20, refuse},
};

ox_vadapter ox_v_find_adapter(const char *op, int64_t from, int64_t to) {
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (table[i].from == from && table[i].to == to && strcmp(table[i].op, op) == 0)
      return table[i].fn;
  return NULL;
}
