/* ops_training.c - the C generators of the optimizers of
 * ai.onnx.preview.training: Adagrad, Adam and Momentum (standard and
 * Nesterov). Inputs: the learning rate R (float or double scalar), the step
 * count T (int64 scalar), then n optimized tensors X_i, their gradients G_i
 * and their state tensors (H_i for Adagrad; V_i and H_i for Adam; V_i for
 * Momentum); outputs: the new X_i, then the new states, group by group. The
 * arithmetic is the runtime's (src/ops/training/training.c): in double,
 * rounded once to X's type, the attributes read as float and widened; a
 * gradient or state of one element is broadcast. With --float-only it is
 * done in float instead. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

enum { OPT_ADAGRAD, OPT_ADAM, OPT_MOMENTUM };

typedef struct opt_gen {
  int kind;
  bool nesterov;
  size_t groups; /* input tensors per optimized X: X, G and the states */
  double decay, eps, norm, norm_post, alpha, beta;
} opt_gen;

/* attributes as the runtime reads them (float, widened) */
static int opt_attrs(cg_ctx *c, const ox_node *n, int kind, opt_gen *a) {
  memset(a, 0, sizeof *a);
  a->kind = kind;
  a->norm = ox_node_attr_float(n, "norm_coefficient", 0.0f);
  a->eps = ox_node_attr_float(n, "epsilon", 0.0f);
  if (kind == OPT_ADAGRAD) {
    a->decay = ox_node_attr_float(n, "decay_factor", 0.0f);
    a->groups = 3;
  } else if (kind == OPT_ADAM) {
    a->alpha = ox_node_attr_float(n, "alpha", 0.9f);
    a->beta = ox_node_attr_float(n, "beta", 0.999f);
    a->norm_post = ox_node_attr_float(n, "norm_coefficient_post", 0.0f);
    a->groups = 4;
  } else {
    static const char *const req[] = {"alpha", "beta", "mode", "norm_coefficient"};
    for (size_t i = 0; i < 4; i++)
      if (!ox_node_attr(n, req[i]))
        return cg_fail(c, OX_EMODEL, "required attribute '%s' is missing", req[i]);
    a->alpha = ox_node_attr_float(n, "alpha", 0.0f);
    a->beta = ox_node_attr_float(n, "beta", 0.0f);
    const char *mode = ox_node_attr_str(n, "mode", "");
    if (strcmp(mode, "nesterov") == 0)
      a->nesterov = true;
    else if (strcmp(mode, "standard") != 0)
      return cg_fail(c, OX_EMODEL, "mode must be \"nesterov\" or \"standard\", not \"%s\"", mode);
    a->groups = 3;
  }
  return OX_OK;
}

static int gen_opt(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                   size_t n_out, int kind) {
  opt_gen a;
  int rc = opt_attrs(c, n, kind, &a);
  if (rc) return rc;
  if (n_in < 2 + a.groups || (n_in - 2) % a.groups != 0)
    return cg_fail(c, OX_EMODEL, "expected R, T and %zu groups of n tensors, got %zu inputs",
                   a.groups, n_in);
  size_t nx = (n_in - 2) / a.groups, nst = a.groups - 2;
  if (n_out > nx * (a.groups - 1))
    return cg_fail(c, OX_EMODEL, "%zu outputs for %zu optimized tensors", n_out, nx);
  for (size_t i = 0; i < n_in; i++)
    if (!in[i]) return cg_fail(c, OX_EMODEL, "input %zu is missing", i);
  const cg_val *R = in[0], *T = in[1];
  if ((R->dtype != OX_FLOAT && R->dtype != OX_DOUBLE) || R->numel != 1)
    return cg_fail(c, OX_EMODEL, "R must be a float or double scalar");
  if (T->dtype != OX_INT64 || T->numel != 1)
    return cg_fail(c, OX_EMODEL, "T must be an int64 scalar");
  for (size_t i = 0; i < nx; i++) {
    const cg_val *X = in[2 + i];
    if ((rc = cg_need_float(c, X))) return rc;
    for (size_t k = 1; k < a.groups; k++) {
      const cg_val *v = in[2 + k * nx + i];
      if (v->dtype != X->dtype)
        return cg_fail(c, OX_EMODEL, "inputs of X_%zu must all have X's type", i);
      if (v->numel != X->numel && v->numel != 1)
        return cg_fail(c, OX_EMODEL, "gradient and state tensors of X_%zu must have X's shape", i);
    }
    for (size_t k = 0; k <= nst; k++) {
      size_t oi = k * nx + i;
      if (oi < n_out && out[oi] && (out[oi]->dtype != X->dtype || out[oi]->numel != X->numel))
        return cg_fail(c, OX_EMODEL, "output %zu must have X_%zu's type and shape", oi, i);
    }
  }
  /* the accumulation type: double as the runtime, float with --float-only */
  bool fl = c->o->float_only;
  int32_t adt = fl ? OX_FLOAT : OX_DOUBLE;
  const char *A = fl ? "float" : "double", *sq = cg_mathfn(c, adt, "sqrt"),
             *pw = cg_mathfn(c, adt, "pow");
  char one[48], norm[48], eps[48], al[48], be[48], dec[48], post[48];
  cg_float_lit(one, sizeof one, 1.0, fl);
  cg_float_lit(norm, sizeof norm, a.norm, fl);
  cg_float_lit(eps, sizeof eps, a.eps, fl);
  cg_float_lit(al, sizeof al, a.alpha, fl);
  cg_float_lit(be, sizeof be, a.beta, fl);
  cg_float_lit(dec, sizeof dec, a.decay, fl);
  cg_float_lit(post, sizeof post, 1.0 - a.norm_post, fl);
  cg_printf(c, "  const %s r = (%s)X0[0];\n  const int64_t t = X1[0];\n  (void)r, (void)t;\n", A,
            A);
  if (kind == OPT_ADAGRAD) {
    cg_printf(c, "  const %s r_eff = r / (%s + (%s)t * %s);\n  (void)r_eff;\n", A, one, A, dec);
  } else if (kind == OPT_ADAM) {
    cg_printf(c, "  %s r_eff = r;\n", A);
    cg_printf(c, "  if (t > 0) r_eff = r * %s(%s - %s(%s, (%s)t)) / (%s - %s(%s, (%s)t));\n", sq,
              one, pw, be, A, one, pw, al, A);
    cg_printf(c, "  (void)r_eff;\n");
  } else {
    cg_printf(c, "  const %s beta_adj = t <= 0 ? %s : %s;\n  (void)beta_adj;\n", A, one, be);
  }
  for (size_t i = 0; i < nx; i++) {
    const cg_val *X = in[2 + i];
    if (!X->numel) continue;
    const char *ct = cg_ctype(X->dtype);
    size_t gi = 2 + nx + i, s0 = 2 + 2 * nx + i, s1 = 2 + 3 * nx + i;
    cg_printf(c, "  for (size_t j = 0; j < %lld; j++) {\n", (long long)X->numel);
    cg_printf(c, "    const %s x = (%s)X%zu[j];\n", A, A, 2 + i);
    cg_printf(c, "    const %s g = %s * x + (%s)X%zu[%s];\n", A, norm, A, gi,
              in[gi]->numel == 1 ? "0" : "j");
    const char *j0 = in[s0]->numel == 1 ? "0" : "j";
    if (kind == OPT_ADAGRAD) {
      cg_printf(c, "    const %s h = (%s)X%zu[%s] + g * g;\n", A, A, s0, j0);
      cg_printf(c, "    const %s xn = x - r_eff * g / (%s(h) + %s);\n", A, sq, eps);
    } else if (kind == OPT_ADAM) {
      cg_printf(c, "    const %s v = %s * (%s)X%zu[%s] + (%s - %s) * g;\n", A, al, A, s0, j0, one,
                al);
      cg_printf(c, "    const %s h = %s * (%s)X%zu[%s] + (%s - %s) * g * g;\n", A, be, A, s1,
                in[s1]->numel == 1 ? "0" : "j", one, be);
      cg_printf(c, "    const %s xn = %s * (x - r_eff * v / (%s(h) + %s));\n", A, post, sq, eps);
    } else {
      cg_printf(c, "    const %s v = %s * (%s)X%zu[%s] + beta_adj * g;\n", A, al, A, s0, j0);
      if (a.nesterov)
        cg_printf(c, "    const %s xn = x - r * (g + %s * v);\n", A, al);
      else
        cg_printf(c, "    const %s xn = x - r * v;\n", A);
    }
    /* the outputs: X_i's new value, then its states (Adagrad: h; Adam: v, h;
     * Momentum: v) */
    const char *states[3] = {"xn", kind == OPT_ADAGRAD ? "h" : "v", "h"};
    for (size_t k = 0; k <= nst; k++) {
      size_t oi = k * nx + i;
      if (oi < n_out && out[oi]) cg_printf(c, "    Y%zu[j] = (%s)%s;\n", oi, ct, states[k]);
    }
    cg_printf(c, "  }\n");
  }
  return OX_OK;
}

static int gen_adagrad(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  return gen_opt(c, n, in, n_in, out, n_out, OPT_ADAGRAD);
}
static int gen_adam(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  return gen_opt(c, n, in, n_in, out, n_out, OPT_ADAM);
}
static int gen_momentum(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                        size_t n_out) {
  return gen_opt(c, n, in, n_in, out, n_out, OPT_MOMENTUM);
}

/* Dropout (opset 12 on) whose training_mode is not a constant false (a
 * graph input, or a constant true): whether it draws is decided at run
 * time, as the runtime (src/ops/onnx/random.c) decides it. training_mode
 * false, or a ratio of 0: the input copied and an all-true mask. Else each
 * element is kept when its uniform draw u in [0, 1) is at least the ratio,
 * and scaled by 1 / (1 - ratio); dropped elements are 0 * x (NaN stays
 * NaN). A ratio outside [0, 1), which the runtime refuses, gives zeros. The
 * draws come from the counter-based generator of the random operators
 * (cg_emit_uniform in ops_random.c), keyed by the seed attribute (a hash of
 * the output's name without one): a compiled model gives the same output
 * for the same input; u of element i is draw i. They are not the runtime's
 * draws, as the runtime's are not onnxruntime's or numpy's: a random
 * Dropout case matches its reference only by chance (the conformance lists
 * mark those "random"). */
int cg_gen_dropout_train(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  const cg_val *X = in[0], *R = n_in > 1 ? in[1] : NULL, *Tm = n_in > 2 ? in[2] : NULL;
  const cg_val *Y = out[0], *Mk = n_out > 1 ? out[1] : NULL;
  if (X->dtype != OX_FLOAT && X->dtype != OX_DOUBLE)
    return cg_fail(c, OX_EUNSUPPORTED,
                   "training mode read at run time is compiled for float32 and float64 only");
  if (R && (R->numel != 1 || (R->dtype != OX_FLOAT && R->dtype != OX_DOUBLE)))
    return cg_fail(c, OX_EUNSUPPORTED, "ratio must be a float32 or float64 scalar");
  if (!Tm || Tm->numel != 1 || Tm->dtype != OX_BOOL)
    return cg_fail(c, OX_EMODEL, "training_mode must be a bool scalar");
  if (Y->numel != X->numel || Y->dtype != X->dtype || (Mk && Mk->dtype != OX_BOOL))
    return cg_fail(c, OX_EMODEL, "outputs must be X's shape and type and a bool mask");
  bool fo = c->o->float_only;
  const char *A = fo ? "float" : "double", *T = cg_ctype(X->dtype);
  unsigned long long key = cg_random_key(n);
  long long cnt = (long long)X->numel;
  cg_printf(c, "  const %s ratio = %s;\n", A, R ? ox_arena_printf(c->a, "(%s)X1[0]", A) : "0.5");
  cg_printf(c, "  const int training = X2[0] != 0 && ratio != 0;\n");
  cg_printf(c, "  if (!training) { /* inference: the input and an all-true mask */\n");
  cg_printf(c, "    memcpy(Y0, X0, %zu);\n", Y->nbytes);
  if (Mk && Mk->nbytes) cg_printf(c, "    memset(Y1, 1, %zu);\n", Mk->nbytes);
  cg_printf(c, "    return;\n  }\n");
  cg_printf(c, "  if (!(ratio >= 0 && ratio < 1)) { /* refused by the runtime */\n");
  cg_printf(c, "    memset(Y0, 0, %zu);\n", Y->nbytes);
  if (Mk && Mk->nbytes) cg_printf(c, "    memset(Y1, 0, %zu);\n", Mk->nbytes);
  cg_printf(c, "    return;\n  }\n");
  cg_printf(c, "  const %s scale = 1 / (1 - ratio);\n", A);
  cg_printf(c, "  for (long long i = 0; i < %lld; i++) {\n", cnt);
  cg_emit_uniform(c, "    ", "u", key, "i");
  cg_printf(c, "    const int keep = u >= ratio;\n");
  if (Mk && Mk->nbytes) cg_printf(c, "    Y1[i] = (uint8_t)keep;\n");
  cg_printf(c, "    Y0[i] = keep ? (%s)((%s)X0[i] * scale) : (%s)0 * X0[i];\n  }\n", T, A, T);
  return OX_OK;
}

const cg_op ox_cg_ops_training[] = {
    {CG_DOMAIN_TRAINING ":Adagrad", gen_adagrad},
    {CG_DOMAIN_TRAINING ":Adam", gen_adam},
    {CG_DOMAIN_TRAINING ":Momentum", gen_momentum},
    {NULL, NULL},
};
