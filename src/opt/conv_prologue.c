/* conv_prologue.c - per-channel affine maps and a Relu before a 1 x 1
 * convolution become the convolution's prologue.
 *
 * DenseNet applies BatchNormalization (and, as converted from Caffe, a
 * per-channel Mul and Add) and Relu to the concatenation of all earlier
 * layers before each 1 x 1 convolution: two passes over a growing tensor
 * per layer, written out and read back, about a ninth of the model's time.
 * The chain X -> [BatchNormalization] -> [Mul c] -> [Add c] -> [Relu] -> Conv
 * (each step optional, at least one, each value read only by the next)
 * becomes the convolution with attributes pre_scale = a, pre_bias = b and
 * pre_relu: X[c] -> max(fma(X[c], a[c], b[c]), 0), applied as the GEMM
 * reads X (src/ops/conv.c). a and b compose the maps in double: like
 * folding BatchNormalization into the convolution's weights, the result
 * rounds differently from the nodes run one by one. Runs after
 * conv_epilogue.c has made FusedConv epilogues. */
#include <math.h>
#include <string.h>

#include "pass.h"

#define CP_MAX_STEPS 4

/* a float32 constant for the channels of a rank-r NCHW... tensor: one
 * element, or C along axis 1 (ones elsewhere); its values in *vals */
static bool channel_values(const ox_pass_view *v, const char *name, int64_t C, size_t r,
                           const float **vals, bool *scalar) {
  ox_pass_floats c;
  if (!v->float_const(v, name, &c) || c.rank > r) return false;
  if (c.numel == 1) {
    *vals = c.data;
    *scalar = true;
    return true;
  }
  for (size_t d = 0; d < c.rank; d++) {
    size_t axis = r - c.rank + d;
    if (c.dims[d] != (axis == 1 ? C : 1)) return false;
  }
  *vals = c.data;
  *scalar = false;
  return true;
}

/* Output 0 of node p is read only by node `by`. */
static bool feeds_only(const ox_pass_view *v, int64_t p, size_t by) {
  const ox_node *n = &v->nodes[p];
  return n->n_output >= 1 && n->output[0] && *n->output[0] &&
         v->sole_reader(v, n->output[0]) == (int64_t)by;
}

/* BatchNormalization in inference mode with C float constants: a, b such
 * that it is x * a + b. */
static bool bn_affine(const ox_pass_view *v, size_t at, int64_t C, double *a, double *b) {
  const ox_node *n = &v->nodes[at];
  int64_t ver = v->opsets[at];
  if (n->n_input != 5 || ver < 7) return false;
  for (size_t o = 1; o < n->n_output; o++)
    if (n->output[o] && *n->output[o]) return false;
  if (ver >= 14 && ox_node_attr_int(n, "training_mode", 0) != 0) return false;
  if (ver < 9 && ox_node_attr_int(n, "spatial", 1) != 1) return false;
  const float *p[4];
  for (size_t k = 0; k < 4; k++) {
    ox_pass_floats c;
    if (!v->float_const(v, n->input[k + 1], &c) || c.rank != 1 || c.numel != C) return false;
    p[k] = c.data;
  }
  double eps = ox_node_attr_float(n, "epsilon", 1e-5f);
  for (int64_t c = 0; c < C; c++) {
    double s = (double)p[0][c] / sqrt((double)p[3][c] + eps);
    a[c] = s;
    b[c] = (double)p[1][c] - (double)p[2][c] * s;
  }
  return true;
}

/* The convolution node i (its FusedConv replacement when there is one):
 * 1 x 1, stride 1, no padding, one group, constant float W; *C its input
 * channels, *r its rank. */
static const ox_node *pointwise_conv(const ox_pass_view *v, size_t i, int64_t *C, size_t *r) {
  if (v->drop[i]) return NULL;
  const ox_node *n = v->repl[i] ? v->repl[i] : &v->nodes[i];
  bool fused =
      n->domain && strcmp(n->domain, OX_ONNXC_DOMAIN) == 0 && strcmp(n->op_type, "FusedConv") == 0;
  if (!fused && !(ox_opt_op_is(n, "Conv") && !v->repl[i])) return NULL;
  if (n->n_input < 2 || n->n_output != 1 || ox_node_attr(n, "pre_scale")) return NULL;
  ox_pass_floats w;
  if (!v->float_const(v, n->input[1], &w) || w.rank < 3 || w.rank > 5) return NULL;
  for (size_t d = 2; d < w.rank; d++)
    if (w.dims[d] != 1) return NULL;
  if (ox_node_attr_int(n, "group", 1) != 1) return NULL;
  const ox_attr *ap = ox_node_attr(n, "auto_pad");
  if (ap && ap->s.size && !(ap->s.size == 6 && memcmp(ap->s.data, "NOTSET", 6) == 0) &&
      !(ap->s.size == 5 && memcmp(ap->s.data, "VALID", 5) == 0))
    return NULL;
  const ox_attr *st = ox_node_attr(n, "strides"), *pd = ox_node_attr(n, "pads");
  for (size_t k = 0; st && k < st->n_ints; k++)
    if (st->ints[k] != 1) return NULL;
  for (size_t k = 0; pd && k < pd->n_ints; k++)
    if (pd->ints[k] != 0) return NULL;
  *C = w.dims[1];
  *r = w.rank;
  return n;
}

static ox_attr *add_floats(ox_pass_view *v, ox_node *n, const char *name, const double *x,
                           int64_t C) {
  float *f = ox_arena_calloc(v->a, (size_t)C, sizeof *f);
  if (!f) return NULL;
  for (int64_t c = 0; c < C; c++) f[c] = (float)x[c];
  ox_attr *at = &n->attribute[n->n_attribute++];
  memset(at, 0, sizeof *at);
  at->name = (char *)name;
  at->type = OX_ATTR_FLOATS;
  at->has_type = true;
  at->floats = f;
  at->n_floats = (size_t)C;
  return at;
}

static int fuse_at(ox_pass_view *v, size_t i) {
  int64_t C;
  size_t r;
  const ox_node *cv = pointwise_conv(v, i, &C, &r);
  if (!cv || C < 1) return OX_OK;
  /* back from X: Relu, Add, Mul, BatchNormalization, in that order, each optional */
  static const char *const order[CP_MAX_STEPS] = {"Relu", "Add", "Mul", "BatchNormalization"};
  int64_t step_node[CP_MAX_STEPS];
  size_t consumer = i;
  const char *x = cv->input[0];
  int found = 0;
  for (int k = 0; k < CP_MAX_STEPS; k++) step_node[k] = -1;
  for (int k = 0; k < CP_MAX_STEPS; k++) {
    int64_t p = ox_opt_producer(v, x, consumer);
    if (p < 0 || !feeds_only(v, p, consumer)) break;
    if (!ox_opt_op_is(&v->nodes[p], order[k])) continue; /* this step absent: try the next */
    const ox_node *pn = &v->nodes[p];
    const char *in = NULL;
    if (k == 1 || k == 2) { /* Add / Mul: X and a per-channel constant, either side */
      const float *vals;
      bool scalar;
      bool c0 = pn->n_input == 2 && channel_values(v, pn->input[0], C, r, &vals, &scalar);
      bool c1 = pn->n_input == 2 && channel_values(v, pn->input[1], C, r, &vals, &scalar);
      if (pn->n_output == 1 && v->opsets[p] >= 7 && c0 != c1) in = c0 ? pn->input[1] : pn->input[0];
    } else if (k == 0) {
      if (pn->n_input == 1 && pn->n_output == 1) in = pn->input[0];
    } else if (pn->n_input == 5) {
      in = pn->input[0]; /* BatchNormalization: checked when composed */
    }
    if (!in || !*in) break; /* a step of another form ends the chain */
    step_node[k] = p;
    x = in;
    consumer = (size_t)p;
    found++;
  }
  if (!found) return OX_OK;
  /* compose forward: BatchNormalization, Mul, Add (x * a + b throughout) */
  double *a = ox_arena_calloc(v->a, (size_t)C, sizeof *a);
  double *b = ox_arena_calloc(v->a, (size_t)C, sizeof *b);
  if (!a || !b) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  for (int64_t c = 0; c < C; c++) a[c] = 1.0, b[c] = 0.0;
  if (step_node[3] >= 0 && !bn_affine(v, (size_t)step_node[3], C, a, b)) return OX_OK;
  for (int k = 2; k >= 1; k--) {
    if (step_node[k] < 0) continue;
    const ox_node *pn = &v->nodes[step_node[k]];
    const float *vals = NULL;
    bool scalar = false;
    if (!channel_values(v, pn->input[0], C, r, &vals, &scalar) &&
        !channel_values(v, pn->input[1], C, r, &vals, &scalar))
      return OX_OK; /* cannot happen: the walk found the constant side */
    for (int64_t c = 0; c < C; c++) {
      double m = vals[scalar ? 0 : c];
      if (k == 2)
        a[c] *= m, b[c] *= m;
      else
        b[c] += m;
    }
  }
  for (int64_t c = 0; c < C; c++)
    if (!isfinite((float)a[c]) || !isfinite((float)b[c])) return OX_OK;
  ox_node *fn = ox_opt_new_node(v, cv, "FusedConv", cv->n_input, 3);
  if (!fn) return v->e->code;
  for (size_t q = 0; q < cv->n_input; q++) fn->input[q] = cv->input[q];
  fn->input[0] = (char *)x;
  fn->output[0] = cv->output[0];
  if (!add_floats(v, fn, "pre_scale", a, C) || !add_floats(v, fn, "pre_bias", b, C))
    return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  ox_opt_add_int_attr(fn, "pre_relu", step_node[0] >= 0);
  for (int k = 0; k < CP_MAX_STEPS; k++)
    if (step_node[k] >= 0) v->drop[step_node[k]] = true;
  v->reads(v, x, i);
  v->repl[i] = fn;
  return OX_OK;
}

int ox_opt_conv_prologue(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    int rc = fuse_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
