/* training.c - optimizer kernels of ai.onnx.preview.training: Adagrad, Adam,
 * Momentum (standard and Nesterov). The formulas are those of Operators.md;
 * arithmetic is done in double and rounded to the type of X (float or
 * double). Every optimized tensor X_i comes with its gradient G_i and its
 * state tensors (H_i; V_i and H_i; V_i), all of X_i's shape (a state or
 * gradient with one element is broadcast).
 *
 * Gradient has no kernel: the runtime rewrites it into a backward graph at
 * session creation (src/runtime/training.c). */
#include <math.h>
#include <string.h>

#include "../../runtime/kernel.h"

enum { OPT_ADAGRAD, OPT_ADAM, OPT_MOMENTUM };

typedef struct opt_attrs {
  int kind;
  double decay_factor, epsilon, norm_coefficient, norm_coefficient_post, alpha, beta;
  bool nesterov;
  size_t groups; /* input tensors per optimized X: X, G and the states */
} opt_attrs;

static int opt_prepare(const ox_kinfo *info, void **state, int kind, ox_err *e) {
  const ox_node *n = info->node;
  const char *nm = n->name ? n->name : "";
  opt_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  a->kind = kind;
  a->norm_coefficient = ox_node_attr_float(n, "norm_coefficient", 0.0f);
  a->epsilon = ox_node_attr_float(n, "epsilon", 0.0f);
  if (kind == OPT_ADAGRAD) {
    a->decay_factor = ox_node_attr_float(n, "decay_factor", 0.0f);
    a->groups = 3;
  } else if (kind == OPT_ADAM) {
    a->alpha = ox_node_attr_float(n, "alpha", 0.9f);
    a->beta = ox_node_attr_float(n, "beta", 0.999f);
    a->norm_coefficient_post = ox_node_attr_float(n, "norm_coefficient_post", 0.0f);
    a->groups = 4;
  } else {
    static const char *const req[] = {"alpha", "beta", "mode", "norm_coefficient"};
    for (size_t i = 0; i < 4; i++)
      if (!ox_node_attr(n, req[i]))
        return ox_err_set(e, OX_EMODEL, "node '%s' (Momentum): required attribute '%s' is missing",
                          nm, req[i]);
    a->alpha = ox_node_attr_float(n, "alpha", 0.0f);
    a->beta = ox_node_attr_float(n, "beta", 0.0f);
    const char *mode = ox_node_attr_str(n, "mode", "");
    if (strcmp(mode, "nesterov") == 0)
      a->nesterov = true;
    else if (strcmp(mode, "standard") != 0)
      return ox_err_set(
          e, OX_EMODEL,
          "node '%s' (Momentum): mode must be \"nesterov\" or \"standard\", not \"%s\"", nm, mode);
    a->groups = 3;
  }
  size_t nin = info->n_inputs;
  if (nin < 2 + a->groups || (nin - 2) % a->groups != 0)
    return ox_err_set(e, OX_EMODEL,
                      "node '%s' (%s): expected R, T and %zu groups of n tensors, got %zu inputs",
                      nm, n->op_type, a->groups, nin);
  size_t nx = (nin - 2) / a->groups, nout_groups = a->groups - 1;
  if (info->n_outputs > nx * nout_groups)
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): %zu outputs for %zu optimized tensors", nm,
                      n->op_type, info->n_outputs, nx);
  *state = a;
  return OX_OK;
}

static int adagrad_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return opt_prepare(info, state, OPT_ADAGRAD, e);
}
static int adam_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return opt_prepare(info, state, OPT_ADAM, e);
}
static int momentum_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return opt_prepare(info, state, OPT_MOMENTUM, e);
}

static double get_f(const ox_value *v, int64_t i) {
  if (v->numel == 1) i = 0;
  return v->dtype == OX_DOUBLE ? ((const double *)v->data)[i] : (double)((const float *)v->data)[i];
}

static void set_f(ox_value *v, int64_t i, double x) {
  if (v->dtype == OX_DOUBLE)
    ((double *)v->data)[i] = x;
  else
    ((float *)v->data)[i] = (float)x;
}

static int opt_run(ox_kctx *c, void *state) {
  const opt_attrs *a = state;
  ox_value *R = ox_kctx_input(c, 0), *T = ox_kctx_input(c, 1);
  if (!R || !T) return ox_kctx_fail(c, OX_ERUNTIME, "inputs R and T are required");
  if ((R->dtype != OX_FLOAT && R->dtype != OX_DOUBLE) || R->numel != 1)
    return ox_kctx_fail(c, OX_ERUNTIME, "R must be a float or double scalar");
  if (T->dtype != OX_INT64 || T->numel != 1)
    return ox_kctx_fail(c, OX_ERUNTIME, "T must be an int64 scalar");
  double r = get_f(R, 0);
  int64_t t = ((const int64_t *)T->data)[0];
  size_t nx = (ox_kctx_n_inputs(c) - 2) / a->groups, nst = a->groups - 2;
  double r_eff = r;
  if (a->kind == OPT_ADAGRAD) r_eff = r / (1.0 + (double)t * a->decay_factor);
  if (a->kind == OPT_ADAM && t > 0)
    r_eff = r * sqrt(1.0 - pow(a->beta, (double)t)) / (1.0 - pow(a->alpha, (double)t));
  double beta_adj = (a->kind == OPT_MOMENTUM && t <= 0) ? 1.0 : a->beta;
  for (size_t i = 0; i < nx; i++) {
    ox_value *X = ox_kctx_input(c, 2 + i), *G = ox_kctx_input(c, 2 + nx + i);
    ox_value *S[2] = {NULL, NULL}, *O[3] = {NULL, NULL, NULL};
    if (!X || !G)
      return ox_kctx_fail(c, OX_ERUNTIME, "optimized tensor %zu or its gradient is missing", i);
    if (X->dtype != OX_FLOAT && X->dtype != OX_DOUBLE)
      return ox_kctx_fail(c, OX_ERUNTIME, "optimized tensor %zu must be float or double", i);
    for (size_t k = 0; k < nst; k++) {
      S[k] = ox_kctx_input(c, 2 + (2 + k) * nx + i);
      if (!S[k]) return ox_kctx_fail(c, OX_ERUNTIME, "state tensor %zu of X_%zu is missing", k, i);
    }
    ox_value *chk[3] = {G, S[0], S[1]};
    for (size_t k = 0; k < 3; k++) {
      if (!chk[k]) continue;
      if (chk[k]->dtype != X->dtype)
        return ox_kctx_fail(c, OX_ERUNTIME, "inputs of X_%zu must all have X's type", i);
      if (chk[k]->numel != X->numel && chk[k]->numel != 1)
        return ox_kctx_fail(c, OX_ERUNTIME,
                            "gradient and state tensors of X_%zu must have X's shape", i);
    }
    for (size_t k = 0; k <= nst; k++) {
      size_t oi = k * nx + i;
      if (oi >= ox_kctx_n_outputs(c) || !ox_kctx_output_wanted(c, oi)) continue;
      O[k] = ox_kctx_output(c, oi, X->dtype, X->dims, X->rank);
      if (!O[k]) return OX_ERUNTIME;
    }
    for (int64_t j = 0; j < X->numel; j++) {
      double x = get_f(X, j), g = a->norm_coefficient * x + get_f(G, j), xn = x;
      double s0 = 0.0, s1 = 0.0;
      if (a->kind == OPT_ADAGRAD) {
        s0 = get_f(S[0], j) + g * g;
        xn = x - r_eff * g / (sqrt(s0) + a->epsilon);
      } else if (a->kind == OPT_ADAM) {
        s0 = a->alpha * get_f(S[0], j) + (1.0 - a->alpha) * g;
        s1 = a->beta * get_f(S[1], j) + (1.0 - a->beta) * g * g;
        xn = x - r_eff * s0 / (sqrt(s1) + a->epsilon);
        xn = (1.0 - a->norm_coefficient_post) * xn;
      } else {
        s0 = a->alpha * get_f(S[0], j) + beta_adj * g;
        xn = a->nesterov ? x - r * (g + a->alpha * s0) : x - r * s0;
      }
      if (O[0]) set_f(O[0], j, xn);
      if (O[1]) set_f(O[1], j, s0);
      if (O[2]) set_f(O[2], j, s1);
    }
  }
  return OX_OK;
}

#define TR "ai.onnx.preview.training"
const ox_kernel_def ox_ops_training[] = {
    {TR, "Adagrad", 1, 1000, adagrad_prepare, opt_run, NULL},
    {TR, "Adam", 1, 1000, adam_prepare, opt_run, NULL},
    {TR, "Momentum", 1, 1000, momentum_prepare, opt_run, NULL},
    {0},
};
