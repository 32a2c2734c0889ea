/* ops_random.c - the C generators of the random operators: RandomUniform,
 * RandomNormal, their *Like forms, Bernoulli and Multinomial, and the one
 * uniform draw they and Dropout's training mode (ops_training.c) share.
 *
 * The generated code has no state and must give the same output for the
 * same input (thread-safe, reproducible), so the draws come from a
 * counter-based generator: draw d of a node is splitmix64(key + (d + 1) *
 * golden gamma), its top 53 bits a double in [0, 1) (24 bits, a float, with
 * --float-only). The key is the node's `seed` attribute (an integral float
 * seed is that integer, another one its bits); without one, a hash of the
 * node's output name, so that two unseeded nodes draw different numbers
 * (the runtime draws a fresh key; a compiled model cannot). These are not
 * the runtime's Philox draws (src/ops/onnx/random.c), as the runtime's are
 * not numpy's: compiled models are checked by their statistics
 * (tests/compile/domains.py). The values are computed as the runtime does:
 * in double (float with --float-only), rounded once to the output type. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

unsigned long long cg_random_key(const ox_node *n) {
  const ox_attr *a = ox_node_attr(n, "seed");
  if (!a) {
    /* FNV-1a of the first output's name: unique in its graph, so two
     * unseeded nodes do not draw the same numbers */
    unsigned long long h = 0xcbf29ce484222325ULL;
    for (const char *s = n->n_output ? n->output[0] : ""; s && *s; s++)
      h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
  }
  if (a->type == OX_ATTR_FLOAT) {
    double v = a->f;
    if (v == (double)(long long)v && v > -9.0e18 && v < 9.0e18)
      return (unsigned long long)(long long)v;
    unsigned long long bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
  }
  return (unsigned long long)(int64_t)a->i;
}

void cg_emit_uniform(cg_ctx *c, const char *ind, const char *u, unsigned long long key,
                     const char *draw) {
  cg_printf(c, "%suint64_t %s_z = 0x%llxULL + (uint64_t)((%s) + 1) * 0x9e3779b97f4a7c15ULL;\n", ind,
            u, key, draw);
  cg_printf(c, "%s%s_z = (%s_z ^ (%s_z >> 30)) * 0xbf58476d1ce4e5b9ULL;\n", ind, u, u, u);
  cg_printf(c, "%s%s_z = (%s_z ^ (%s_z >> 27)) * 0x94d049bb133111ebULL;\n", ind, u, u, u);
  cg_printf(c, "%s%s_z ^= %s_z >> 31;\n", ind, u, u);
  if (c->o->float_only)
    cg_printf(c, "%sconst float %s = (float)(%s_z >> 40) * 0x1p-24f;\n", ind, u, u);
  else
    cg_printf(c, "%sconst double %s = (double)(%s_z >> 11) * 0x1p-53;\n", ind, u, u);
}

/* The float types the random operators produce and read. */
static bool rnd_float(int32_t dt) {
  return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

/* Element `e` of array type dt as a value of the accumulation type A. */
static const char *rnd_load(cg_ctx *c, int32_t dt, const char *e, const char *A) {
  if (cg_is_small_float(dt)) return ox_arena_printf(c->a, "(%s)%s", A, cg_load(c, dt, e));
  return ox_arena_printf(c->a, "(%s)%s", A, e);
}

/* Accumulation-type expression `e` stored as type dt. */
static const char *rnd_store(cg_ctx *c, int32_t dt, const char *e) {
  if (cg_is_small_float(dt)) return cg_store(c, dt, ox_arena_printf(c->a, "(float)(%s)", e), false);
  return cg_store(c, dt, e, false);
}

/* RandomUniform(Like): low + (high - low) * u; a value that rounds to high
 * in the output type becomes low, keeping [low, high) as the runtime does.
 * RandomNormal(Like): mean + scale * z with z = sqrt(-2 ln(1 - u1)) *
 * cos(2 pi u2), one normal per pair of draws (2i, 2i + 1): the Box-Muller
 * transform, exact for exact uniforms (1 - u1 lies in (0, 1], so the log is
 * finite). */
static int gen_fill(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out, bool normal, bool like) {
  (void)n_out;
  const cg_val *Y = out[0];
  if (like && (n_in < 1 || !in[0])) return cg_fail(c, OX_EMODEL, "input is missing");
  if (!rnd_float(Y->dtype))
    return cg_fail(c, OX_EUNSUPPORTED, "output type %s is not a float type", cg_type_str(c, Y));
  if (like && in[0]->numel != Y->numel)
    return cg_fail(c, OX_EMODEL, "output must have the input's shape");
  double p0 = ox_node_attr_float(n, normal ? "mean" : "low", 0.0f);
  double p1 = ox_node_attr_float(n, normal ? "scale" : "high", 1.0f);
  if (!normal && !(p1 >= p0))
    return cg_fail(c, OX_EMODEL, "high (%g) must not be below low (%g)", p1, p0);
  if (!Y->numel) return OX_OK;
  bool fo = c->o->float_only;
  const char *A = fo ? "float" : "double";
  int32_t adt = fo ? OX_FLOAT : OX_DOUBLE;
  char a0[48], a1[48];
  cg_float_lit(a0, sizeof a0, p0, fo);
  cg_float_lit(a1, sizeof a1, p1, fo);
  unsigned long long key = cg_random_key(n);
  cg_printf(c, "  for (long long i = 0; i < %lld; i++) {\n", (long long)Y->numel);
  if (normal) {
    char two[48], tau[48], one[48];
    cg_float_lit(two, sizeof two, -2.0, fo);
    cg_float_lit(tau, sizeof tau, 6.283185307179586, fo);
    cg_float_lit(one, sizeof one, 1.0, fo);
    cg_emit_uniform(c, "    ", "u1", key, "2 * i");
    cg_emit_uniform(c, "    ", "u2", key, "2 * i + 1");
    cg_printf(c, "    const %s z = %s(%s * %s(%s - u1)) * %s(%s * u2);\n", A,
              cg_mathfn(c, adt, "sqrt"), two, cg_mathfn(c, adt, "log"), one,
              cg_mathfn(c, adt, "cos"), tau);
    cg_printf(c, "    Y0[i] = %s;\n  }\n",
              rnd_store(c, Y->dtype, ox_arena_printf(c->a, "%s + %s * z", a0, a1)));
    return OX_OK;
  }
  cg_emit_uniform(c, "    ", "u", key, "i");
  const char *T = cg_ctype(Y->dtype);
  cg_printf(c, "    %s y = %s;\n", T,
            rnd_store(c, Y->dtype, ox_arena_printf(c->a, "%s + (%s - %s) * u", a0, a1, a0)));
  if (p1 > p0)
    cg_printf(c, "    if (%s >= %s) y = %s;\n", rnd_load(c, Y->dtype, "y", A), a1,
              rnd_store(c, Y->dtype, a0));
  cg_printf(c, "    Y0[i] = y;\n  }\n");
  return OX_OK;
}

static int gen_uniform(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                       size_t n_out) {
  return gen_fill(c, n, in, n_in, out, n_out, false, false);
}
static int gen_normal(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                      size_t n_out) {
  return gen_fill(c, n, in, n_in, out, n_out, true, false);
}
static int gen_uniform_like(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                            size_t n_out) {
  return gen_fill(c, n, in, n_in, out, n_out, false, true);
}
static int gen_normal_like(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                           size_t n_out) {
  return gen_fill(c, n, in, n_in, out, n_out, true, true);
}

/* Bernoulli: Y[i] = 1 where draw i < p[i], else 0, in the output type (the
 * dtype attribute, else the input's). A p that is NaN or outside [0, 1],
 * which the runtime refuses, cannot fail here: NaN and p < 0 give 0, p > 1
 * gives 1. */
static int gen_bernoulli(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                         size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *P = in[0], *Y = out[0];
  if (!rnd_float(P->dtype))
    return cg_fail(c, OX_EUNSUPPORTED, "input type %s is not a float type", cg_type_str(c, P));
  if (Y->numel != P->numel) return cg_fail(c, OX_EMODEL, "output must have the input's shape");
  if (!cg_ctype(Y->dtype) || cg_packed_bits(Y->dtype) ||
      (cg_is_small_float(Y->dtype) && !rnd_float(Y->dtype)))
    return cg_fail(c, OX_EUNSUPPORTED, "output type %s is not compiled", cg_type_str(c, Y));
  if (!Y->numel) return OX_OK;
  const char *A = c->o->float_only ? "float" : "double";
  cg_printf(c, "  for (long long i = 0; i < %lld; i++) {\n", (long long)Y->numel);
  cg_emit_uniform(c, "    ", "u", cg_random_key(n), "i");
  cg_printf(c, "    const int one = u < %s;\n", rnd_load(c, P->dtype, "X0[i]", A));
  cg_printf(c, "    Y0[i] = %s;\n  }\n", rnd_store(c, Y->dtype, "one"));
  return OX_OK;
}

/* Multinomial: per batch row, the softmax of the log-probabilities as the
 * runtime computes it (exp(x - max) summed in class order, in double), then
 * for draw k of row b (draw index b * sample_size + k) the first class
 * whose running sum exceeds u * sum (the last class if none: rounding). The
 * running sums are recomputed per draw, in the same order, rather than
 * stored: no scratch, and the same numbers. A row with a NaN or without a
 * finite maximum, which the runtime refuses, gives class 0 for its draws. */
static int gen_multinomial(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                           size_t n_out) {
  (void)n_in, (void)n_out;
  const cg_val *X = in[0], *Y = out[0];
  if (!rnd_float(X->dtype))
    return cg_fail(c, OX_EUNSUPPORTED, "input type %s is not a float type", cg_type_str(c, X));
  if (X->rank != 2) return cg_fail(c, OX_EMODEL, "input must be 2-D [batch_size, class_size]");
  if (Y->dtype != OX_INT32 && Y->dtype != OX_INT64)
    return cg_fail(c, OX_EMODEL, "output type must be int32 or int64");
  int64_t batch = X->dims[0], classes = X->dims[1];
  int64_t ss = ox_node_attr_int(n, "sample_size", 1);
  if (ss < 1) return cg_fail(c, OX_EMODEL, "sample_size %lld must be at least 1", (long long)ss);
  if (Y->rank != 2 || Y->dims[0] != batch || Y->dims[1] != ss)
    return cg_fail(c, OX_EMODEL, "output must be [batch_size, sample_size]");
  if (classes < 1 && batch > 0) return cg_fail(c, OX_EMODEL, "class_size must be at least 1");
  if (!Y->numel) return OX_OK;
  bool fo = c->o->float_only;
  const char *A = fo ? "float" : "double", *ex = cg_mathfn(c, fo ? OX_FLOAT : OX_DOUBLE, "exp");
  const char *T = cg_ctype(Y->dtype);
  const char *x =
      rnd_load(c, X->dtype, ox_arena_printf(c->a, "X0[b * %lld + k]", (long long)classes), A);
  cg_printf(c, "  for (long long b = 0; b < %lld; b++) {\n", (long long)batch);
  cg_printf(c, "    %s m = -INFINITY, sum = 0;\n    int bad = 0;\n", A);
  cg_printf(c, "    for (long long k = 0; k < %lld; k++) {\n", (long long)classes);
  cg_printf(c,
            "      const %s v = %s;\n      if (v != v) bad = 1;\n      if (v > m) m = v;\n    }\n",
            A, x);
  cg_printf(c, "    if (bad || m == -INFINITY || m == INFINITY) { /* refused by the runtime */\n");
  cg_printf(c, "      for (long long k = 0; k < %lld; k++) Y0[b * %lld + k] = 0;\n", (long long)ss,
            (long long)ss);
  cg_printf(c, "      continue;\n    }\n");
  cg_printf(c, "    for (long long k = 0; k < %lld; k++) sum += %s(%s - m);\n", (long long)classes,
            ex, x);
  cg_printf(c, "    for (long long s = 0; s < %lld; s++) {\n", (long long)ss);
  cg_emit_uniform(c, "      ", "u", cg_random_key(n),
                  ox_arena_printf(c->a, "b * %lld + s", (long long)ss));
  cg_printf(c, "      const %s t = u * sum;\n      %s acc = 0;\n      long long k = 0;\n", A, A);
  cg_printf(c, "      for (; k < %lld; k++) {\n", (long long)classes - 1);
  cg_printf(c, "        acc += %s(%s - m);\n        if (acc > t) break;\n      }\n", ex, x);
  cg_printf(c, "      Y0[b * %lld + s] = (%s)k;\n    }\n  }\n", (long long)ss, T);
  return OX_OK;
}

const cg_op ox_cg_ops_random[] = {
    {"RandomUniform", gen_uniform},
    {"RandomNormal", gen_normal},
    {"RandomUniformLike", gen_uniform_like},
    {"RandomNormalLike", gen_normal_like},
    {"Bernoulli", gen_bernoulli},
    {"Multinomial", gen_multinomial},
    {NULL, NULL},
};
