/* ops_control.c - If, Loop and Scan as C control flow. The bodies' nodes get
 * functions of their own (codegen.c's subgraph walk); the node's function
 * runs them in an if/else or a for loop, copying the loop-carried values
 * between the body's outputs and inputs and the scan slices in and out.
 * Every body value has its own place in the static arena for the node's
 * whole call, and the values of enclosing graphs a body reads are passed in
 * as extra operands (V<k>). */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

static const ox_graph *body_attr(const ox_node *n, const char *name) {
  const ox_attr *a = ox_node_attr(n, name);
  return a ? a->g : NULL;
}

static size_t elem_size(const cg_val *v) {
  size_t nb = 0;
  ox_dtype_nbytes(v->dtype, 1, &nb);
  return nb;
}

/* The value a body output names, checked to have dst's element type and,
 * unless numel is -1, numel elements. */
static cg_val *body_out(cg_ctx *c, const ox_graph *b, size_t k, int32_t dtype, int64_t numel,
                        const char *what) {
  cg_val *v = cg_find(c, b->output[k].name);
  if (!v) {
    cg_fail(c, OX_EMODEL, "body output '%s' is produced by no node", b->output[k].name);
    return NULL;
  }
  if (v->dtype != dtype || (numel >= 0 && v->numel != numel)) {
    cg_fail(c, OX_EUNSUPPORTED, "%s: body output '%s' is %s, not of the type and size expected",
            what, v->name, cg_type_str(c, v));
    return NULL;
  }
  return v;
}

static int branch(cg_ctx *c, const ox_graph *b, cg_val **out, size_t n_out, const char *which) {
  if (b->n_output != n_out)
    return cg_fail(c, OX_EMODEL, "the %s branch has %zu outputs, the node %zu", which,
                   b->n_output, n_out);
  int rc = cg_body_run(c, b, "    ");
  for (size_t j = 0; j < n_out && !rc; j++) {
    if (!out[j] || !out[j]->nbytes) continue;
    /* the branches may differ in shape; the node's output is static, so
     * only a branch of the same size is compiled */
    cg_val *v = body_out(c, b, j, out[j]->dtype, out[j]->numel, which);
    if (!v) return c->e->code;
    const char *r = cg_ref(c, v);
    if (!r) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    cg_printf(c, "    memcpy(Y%zu, %s, %zu);\n", j, r, out[j]->nbytes);
  }
  return rc;
}

/* Whether branch b's outputs have the inferred static sizes of the node's. */
static bool fits(cg_ctx *c, const ox_graph *b, cg_val **out, size_t n_out) {
  if (b->n_output != n_out) return false;
  for (size_t j = 0; j < n_out; j++) {
    uintptr_t u;
    if (!out[j]) continue;
    if (!ox_map_get(c->types, b->output[j].name, &u)) return false;
    const ox_type *t = (const ox_type *)u;
    if (!t || t->kind != OX_TYPE_TENSOR || !t->shape || t->elem_type != out[j]->dtype) return false;
    int64_t numel = 1;
    for (size_t d = 0; d < t->shape->n_dim; d++) {
      if (!t->shape->dim[d].has_value) return false;
      numel *= t->shape->dim[d].value;
    }
    if (numel != out[j]->numel) return false;
  }
  return true;
}

/* If: both branches compiled, the condition read at run time. */
static int gen_if(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                  size_t n_out) {
  const ox_graph *tb = body_attr(n, "then_branch"), *eb = body_attr(n, "else_branch");
  if (!tb || !eb || n_in < 1) return cg_fail(c, OX_EMODEL, "needs a condition and two branches");
  double k;
  if (cg_const_scalar(in[0], &k)) {
    /* a condition known when compiling (expanded functions test shapes this
     * way): only the branch taken, whose shapes are the node's */
    cg_printf(c, "  {\n    /* the condition is the constant %s */\n", k != 0 ? "true" : "false");
    int rc = branch(c, k != 0 ? tb : eb, out, n_out, k != 0 ? "then" : "else");
    cg_printf(c, "  }\n");
    return rc;
  }
  bool tfit = fits(c, tb, out, n_out), efit = fits(c, eb, out, n_out);
  if (tfit != efit) {
    /* shape inference chose the branch from shapes alone (the branches'
     * outputs differ in size, and the node's is that of one of them): the
     * other one cannot be taken */
    cg_printf(c, "  (void)X0; /* only the %s branch has the output sizes the shapes fix */\n  {\n",
              tfit ? "then" : "else");
    int rc = branch(c, tfit ? tb : eb, out, n_out, tfit ? "then" : "else");
    cg_printf(c, "  }\n");
    return rc;
  }
  cg_printf(c, "  if (X0[0]) {\n");
  int rc = branch(c, tb, out, n_out, "then");
  if (rc) return rc;
  cg_printf(c, "  } else {\n");
  rc = branch(c, eb, out, n_out, "else");
  cg_printf(c, "  }\n");
  return rc;
}

/* The loop-carried values: body inputs bin[first..first+n) start as the
 * node's inputs X<xfirst..>; after each iteration the body outputs
 * bout[ofirst..] are copied back into them. */
static int carry_in(cg_ctx *c, cg_val **bin, size_t first, cg_val **in, size_t xfirst, size_t n) {
  for (size_t k = 0; k < n; k++) {
    cg_val *b = bin[first + k], *x = in[xfirst + k];
    if (!x) return cg_fail(c, OX_EMODEL, "loop-carried input %zu is missing", k);
    if (b->dtype != x->dtype || b->numel != x->numel)
      return cg_fail(c, OX_EUNSUPPORTED,
                     "loop-carried value %zu is %s in the body and %s outside (it must keep "
                     "its shape)",
                     k, cg_type_str(c, b), cg_type_str(c, x));
    const char *r = cg_ref(c, b);
    if (!r) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    if (b->nbytes) cg_printf(c, "  memcpy(%s, X%zu, %zu);\n", r, xfirst + k, b->nbytes);
  }
  return OX_OK;
}

static int carry_back(cg_ctx *c, const ox_graph *body, cg_val **bin, size_t n_bin, size_t first,
                      size_t ofirst, size_t n) {
  for (size_t k = 0; k < n; k++) {
    cg_val *b = bin[first + k];
    cg_val *v = body_out(c, body, ofirst + k, b->dtype, b->numel, "loop-carried value");
    if (!v) return c->e->code;
    if (v == b || !b->nbytes) continue;
    /* a body input passed to another slot would be overwritten before it is read */
    for (size_t j = 0; j < n_bin; j++)
      if (bin[j] == v)
        return cg_fail(c, OX_EUNSUPPORTED,
                       "body output '%s' is another loop-carried input (a permutation of the "
                       "carried values is not compiled)",
                       v->name);
    const char *rb = cg_ref(c, b), *rv = cg_ref(c, v);
    if (!rb || !rv) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    cg_printf(c, "    memcpy(%s, %s, %zu);\n", rb, rv, b->nbytes);
  }
  return OX_OK;
}

static int carry_out(cg_ctx *c, cg_val **bin, size_t first, cg_val **out, size_t n) {
  for (size_t k = 0; k < n; k++) {
    if (!out[k] || !out[k]->nbytes) continue;
    const char *r = cg_ref(c, bin[first + k]);
    if (!r) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    cg_printf(c, "  memcpy(Y%zu, %s, %zu);\n", k, r, out[k]->nbytes);
  }
  return OX_OK;
}

static cg_val **body_inputs(cg_ctx *c, const ox_graph *body) {
  cg_val **bin = ox_arena_calloc(c->a, body->n_input + 1, sizeof *bin);
  if (!bin) {
    ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    return NULL;
  }
  for (size_t k = 0; k < body->n_input; k++)
    if (!(bin[k] = cg_body_input(c, &body->input[k]))) {
      cg_fail(c, c->e->code ? c->e->code : OX_EUNSUPPORTED, "body input '%s': %s",
              body->input[k].name, c->e->msg);
      return NULL;
    }
  return bin;
}

/* Whether a constant value holds a nonzero first element. */
static bool const_true(const cg_val *v) {
  if (!v || v->kind != CG_CONST || !v->cv || v->numel < 1) return false;
  return ((const uint8_t *)v->cv->data)[0] != 0;
}

/* Whether the body's condition output is a true constant or (through
 * Identity nodes) the body's own condition input: the condition then never
 * changes inside the loop, which runs every iteration of its trip count or,
 * when the initial condition is false, none. Called after the body's
 * values exist. */
static bool body_cond_kept(cg_ctx *c, const ox_graph *body) {
  const char *name = body->output[0].name;
  for (size_t hop = 0; hop <= body->n_node; hop++) {
    if (strcmp(name, body->input[1].name) == 0) return true;
    cg_val *v = cg_find(c, name);
    if (v && v->kind == CG_CONST) return const_true(v);
    const ox_node *p = NULL;
    for (size_t i = 0; i < body->n_node && !p; i++)
      for (size_t j = 0; j < body->node[i].n_output; j++)
        if (strcmp(body->node[i].output[j], name) == 0) p = &body->node[i];
    if (!p || strcmp(p->op_type, "Identity") != 0 || p->n_input < 1) return false;
    name = p->input[0];
  }
  return false;
}

/* Loop: a trip count and/or a condition, loop-carried values, scan outputs
 * whose length the shapes fix (inference bound it from a constant trip
 * count). ONNX gives the scan outputs the length of the iterations actually
 * run, so a loop with scan outputs must keep its condition: a body that
 * computes it could stop at any iteration, and such a Loop is refused. An
 * initial condition read at run time (the expanded Range's "any iteration
 * at all") runs all of them or none; the slots of the iterations not run
 * are left zero (docs/compile.md, "Control flow"). */
static int gen_loop(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  const ox_graph *body = body_attr(n, "body");
  if (!body || n_in < 2) return cg_fail(c, OX_EMODEL, "needs M, cond and a body");
  size_t N = n_in - 2, K = n_out >= N ? n_out - N : 0;
  if (body->n_input != 2 + N || body->n_output != 1 + N + K)
    return cg_fail(c, OX_EMODEL, "the body has %zu inputs and %zu outputs for %zu carried values",
                   body->n_input, body->n_output, N);
  cg_val **bin = body_inputs(c, body);
  if (!bin) return c->e->code;
  if (bin[0]->numel != 1 || bin[1]->numel != 1 || bin[1]->dtype != OX_BOOL)
    return cg_fail(c, OX_EMODEL, "the body's first inputs must be the iteration and condition");
  if (in[0]) cg_printf(c, "  const int64_t trip = (int64_t)X0[0];\n");
  cg_printf(c, "  uint8_t go = %s;\n", in[1] ? "X1[0] != 0" : "1");
  int rc = carry_in(c, bin, 2, in, 2, N);
  if (rc) return rc;
  const char *ri = cg_ref(c, bin[0]), *rc_ = cg_ref(c, bin[1]);
  if (!ri || !rc_) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  /* An initial condition or a trip count read at run time may run fewer
   * iterations than the static length of the scan outputs (the runtime's
   * outputs would then be shorter): the slots not written stay zero. */
  bool short_run = (in[1] && !const_true(in[1])) || (in[0] && in[0]->kind != CG_CONST);
  for (size_t k = 0; k < K && short_run; k++)
    if (out[N + k] && out[N + k]->nbytes)
      cg_printf(c, "  memset(Y%zu, 0, %zu); /* for the iterations not run */\n", N + k,
                out[N + k]->nbytes);
  cg_printf(c, "  for (int64_t it = 0; %sgo; it++) {\n", in[0] ? "it < trip && " : "");
  cg_printf(c, "    %s[0] = (%s)it;\n    %s[0] = go;\n", ri, cg_ctype(bin[0]->dtype), rc_);
  if ((rc = cg_body_run(c, body, "    "))) return rc;
  cg_val *cv = body_out(c, body, 0, OX_BOOL, 1, "the condition");
  const char *rcv = cv ? cg_ref(c, cv) : NULL;
  if (!rcv) return c->e->code ? c->e->code : OX_ENOMEM;
  bool scans = false;
  for (size_t k = 0; k < K; k++) scans |= out[N + k] && out[N + k]->numel;
  if (scans && !body_cond_kept(c, body))
    return cg_fail(c, OX_EUNSUPPORTED,
                   "its scan outputs' length is the number of iterations run, and its body's "
                   "condition (computed at run time) may end the loop before the trip count: a "
                   "Loop with scan outputs compiles only when the body passes its condition on "
                   "or makes it constant true");
  for (size_t k = 0; k < K; k++) {
    cg_val *y = out[N + k];
    if (!y || !y->numel) continue;
    int64_t L = y->rank ? y->dims[0] : 0;
    cg_val *v = body_out(c, body, 1 + N + k, y->dtype, L ? y->numel / L : 0, "scan output");
    if (!v) return c->e->code;
    const char *rv = cg_ref(c, v);
    if (!rv) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    cg_printf(c, "    if (it < %lld) memcpy(Y%zu + it * %lld, %s, %zu);\n", (long long)L, N + k,
              (long long)v->numel, rv, v->nbytes);
  }
  /* the condition is read before the carried values are copied back: the
   * body output may be one of them */
  cg_printf(c, "    go = %s[0] != 0;\n", rcv);
  if ((rc = carry_back(c, body, bin, body->n_input, 2, 1, N))) return rc;
  cg_printf(c, "  }\n");
  return carry_out(c, bin, 2, out, N < n_out ? N : n_out);
}

/* Scan-8: input 0 the optional sequence_lens, then the states and the scan
 * inputs, all with a batch axis 0 (the scan inputs' time axis is 1); every
 * batch entry runs its own scan (states from its slice, its scan outputs
 * [T, ...] at its place of [B, T, ...]), as the runtime does. The runtime
 * refuses a sequence length other than T; the generated function, which
 * cannot fail, leaves that entry's outputs zero. */
static int gen_scan8(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                     size_t n_out) {
  const ox_graph *body = body_attr(n, "body");
  size_t M = (size_t)ox_node_attr_int(n, "num_scan_inputs", 0);
  if (!body || M == 0 || M + 1 > n_in) return cg_fail(c, OX_EMODEL, "bad num_scan_inputs or body");
  size_t N = n_in - 1 - M, K = n_out >= N ? n_out - N : 0;
  if (body->n_input != N + M || body->n_output != N + K)
    return cg_fail(c, OX_EMODEL, "the body has %zu inputs and %zu outputs, the node %zu and %zu",
                   body->n_input, body->n_output, n_in, n_out);
  int64_t dirs[CG_MAX_RANK * 4];
  size_t n_dirs = 0;
  if (M > CG_MAX_RANK * 4) return cg_fail(c, OX_EUNSUPPORTED, "too many scan inputs");
  cg_attr_ints(n, "directions", dirs, M, &n_dirs);
  cg_val **bin = body_inputs(c, body);
  if (!bin) return c->e->code;
  const cg_val *lens = in[0];
  int64_t B = -1, T = -1;
  for (size_t j = 0; j < M; j++) {
    const cg_val *x = in[1 + N + j];
    if (!x || x->rank < 2) return cg_fail(c, OX_EMODEL, "scan input %zu must be [batch, seq, ...]", j);
    if ((B >= 0 && x->dims[0] != B) || (T >= 0 && x->dims[1] != T))
      return cg_fail(c, OX_EMODEL, "scan inputs differ in batch size or sequence length");
    B = x->dims[0], T = x->dims[1];
    if (bin[N + j]->dtype != x->dtype || bin[N + j]->numel * B * T != x->numel)
      return cg_fail(c, OX_EMODEL, "scan input %zu is %s, its body input %s", j,
                     cg_type_str(c, x), cg_type_str(c, bin[N + j]));
  }
  if (lens && (lens->numel != B || (lens->dtype != OX_INT32 && lens->dtype != OX_INT64)))
    return cg_fail(c, OX_EMODEL, "sequence_lens must be int32 or int64 [batch]");
  for (size_t k = 0; k < N; k++) {
    const cg_val *x = in[1 + k];
    if (!x || x->dtype != bin[k]->dtype || x->numel != bin[k]->numel * B)
      return cg_fail(c, OX_EUNSUPPORTED, "state %zu must be [batch] + its body input's shape", k);
  }
  for (size_t k = 0; k < n_out; k++)
    if (out[k] && out[k]->nbytes) cg_printf(c, "  memset(Y%zu, 0, %zu);\n", k, out[k]->nbytes);
  cg_printf(c, "  for (long long b = 0; b < %lld; b++) {\n", (long long)B);
  if (lens)
    cg_printf(c, "    if ((long long)X0[b] != %lld) continue; /* refused by the runtime */\n",
              (long long)T);
  for (size_t k = 0; k < N; k++) {
    const char *r = cg_ref(c, bin[k]);
    if (!r) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    if (bin[k]->nbytes)
      cg_printf(c, "    memcpy(%s, X%zu + b * %lld, %zu);\n", r, 1 + k, (long long)bin[k]->numel,
                bin[k]->nbytes);
  }
  cg_printf(c, "    for (long long t = 0; t < %lld; t++) {\n", (long long)T);
  for (size_t j = 0; j < M; j++) {
    cg_val *v = bin[N + j];
    const char *r = cg_ref(c, v);
    if (!r) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    bool rev = j < n_dirs && dirs[j];
    cg_printf(c, "      memcpy(%s, X%zu + (b * %lld + %s%s) * %lld, %zu);\n", r, 1 + N + j,
              (long long)T, rev ? ox_arena_printf(c->a, "%lld - ", (long long)T - 1) : "", "t",
              (long long)v->numel, v->nbytes);
  }
  int rc = cg_body_run(c, body, "      ");
  if (rc) return rc;
  for (size_t k = 0; k < K; k++) {
    cg_val *y = out[N + k];
    if (!y || !y->numel) continue;
    if (y->rank < 2 || y->dims[0] != B || y->dims[1] != T)
      return cg_fail(c, OX_EMODEL, "scan output %zu must be [batch, seq, ...]", k);
    cg_val *v = body_out(c, body, N + k, y->dtype, y->numel / (B * T), "scan output");
    const char *rv = v ? cg_ref(c, v) : NULL;
    if (!rv) return c->e->code ? c->e->code : OX_ENOMEM;
    cg_printf(c, "      memcpy(Y%zu + (b * %lld + t) * %lld, %s, %zu);\n", N + k, (long long)T,
              (long long)v->numel, rv, v->nbytes);
  }
  if ((rc = carry_back(c, body, bin, body->n_input, 0, 0, N))) return rc;
  cg_printf(c, "    }\n");
  for (size_t k = 0; k < N && k < n_out; k++) {
    if (!out[k] || !out[k]->nbytes) continue;
    if (out[k]->numel != bin[k]->numel * B)
      return cg_fail(c, OX_EMODEL, "output %zu must be [batch] + the state's shape", k);
    const char *r = cg_ref(c, bin[k]);
    if (!r) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    cg_printf(c, "    memcpy(Y%zu + b * %lld, %s, %zu);\n", k, (long long)bin[k]->numel, r,
              bin[k]->nbytes);
  }
  cg_printf(c, "  }\n");
  return OX_OK;
}

/* Scan (opset 9 on): loop-carried states and scan inputs sliced along their
 * axes (forwards or backwards), scan outputs stacked along theirs. */
static int gen_scan(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                    size_t n_out) {
  if (c->opset < 9) return gen_scan8(c, n, in, n_in, out, n_out);
  const ox_graph *body = body_attr(n, "body");
  size_t M = (size_t)ox_node_attr_int(n, "num_scan_inputs", 0);
  if (!body || M == 0 || M > n_in) return cg_fail(c, OX_EMODEL, "bad num_scan_inputs or body");
  size_t N = n_in - M, K = n_out >= N ? n_out - N : 0;
  if (body->n_input != N + M || body->n_output != N + K)
    return cg_fail(c, OX_EMODEL, "the body has %zu inputs and %zu outputs, the node %zu and %zu",
                   body->n_input, body->n_output, n_in, n_out);
  int64_t iax[CG_MAX_RANK * 4], idir[CG_MAX_RANK * 4], oax[CG_MAX_RANK * 4],
      odir[CG_MAX_RANK * 4];
  size_t n_iax = 0, n_idir = 0, n_oax = 0, n_odir = 0;
  if (M > CG_MAX_RANK * 4 || K > CG_MAX_RANK * 4)
    return cg_fail(c, OX_EUNSUPPORTED, "too many scan inputs or outputs");
  cg_attr_ints(n, "scan_input_axes", iax, M, &n_iax);
  cg_attr_ints(n, "scan_input_directions", idir, M, &n_idir);
  cg_attr_ints(n, "scan_output_axes", oax, K, &n_oax);
  cg_attr_ints(n, "scan_output_directions", odir, K, &n_odir);
  cg_val **bin = body_inputs(c, body);
  if (!bin) return c->e->code;
  int64_t T = -1;
  size_t ax_in[CG_MAX_RANK * 4];
  for (size_t j = 0; j < M; j++) {
    const cg_val *x = in[N + j];
    if (!x || !cg_axis(j < n_iax ? iax[j] : 0, x->rank, &ax_in[j]))
      return cg_fail(c, OX_EMODEL, "scan input %zu: missing or bad axis", j);
    int64_t len = x->dims[ax_in[j]];
    if (T >= 0 && len != T)
      return cg_fail(c, OX_EMODEL, "scan inputs of %lld and %lld steps", (long long)T,
                     (long long)len);
    T = len;
    if (bin[N + j]->dtype != x->dtype || bin[N + j]->numel * len != x->numel)
      return cg_fail(c, OX_EMODEL, "scan input %zu is %s, its body input %s", j,
                     cg_type_str(c, x), cg_type_str(c, bin[N + j]));
  }
  int rc = carry_in(c, bin, 0, in, 0, N);
  if (rc) return rc;
  cg_printf(c, "  for (long long t = 0; t < %lld; t++) {\n", (long long)T);
  for (size_t j = 0; j < M; j++) {
    const cg_val *x = in[N + j];
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < ax_in[j]; d++) outer *= x->dims[d];
    for (size_t d = ax_in[j] + 1; d < x->rank; d++) inner *= x->dims[d];
    const char *rb = cg_ref(c, bin[N + j]);
    if (!rb) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    bool rev = j < n_idir && idir[j];
    char at[48];
    snprintf(at, sizeof at, rev ? "(%lld - t)" : "t", (long long)T - 1);
    cg_printf(c, "    for (long long o = 0; o < %lld; o++) /* slice %zu of scan input %zu */\n",
              (long long)outer, ax_in[j], j);
    cg_printf(c, "      memcpy(%s + o * %lld, X%zu + (o * %lld + %s) * %lld, %zu);\n", rb,
              (long long)inner, N + j, (long long)T, at,
              (long long)inner, (size_t)inner * elem_size(x));
  }
  if ((rc = cg_body_run(c, body, "    "))) return rc;
  for (size_t k = 0; k < K; k++) {
    cg_val *y = out[N + k];
    if (!y || !y->numel) continue;
    size_t ax;
    if (!cg_axis(k < n_oax ? oax[k] : 0, y->rank, &ax) || y->dims[ax] != T)
      return cg_fail(c, OX_EMODEL, "scan output %zu: bad axis or length", k);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < ax; d++) outer *= y->dims[d];
    for (size_t d = ax + 1; d < y->rank; d++) inner *= y->dims[d];
    cg_val *v = body_out(c, body, N + k, y->dtype, outer * inner, "scan output");
    if (!v) return c->e->code;
    const char *rv = cg_ref(c, v);
    if (!rv) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    bool rev = k < n_odir && odir[k];
    char at[48];
    snprintf(at, sizeof at, rev ? "(%lld - t)" : "t", (long long)T - 1);
    cg_printf(c, "    for (long long o = 0; o < %lld; o++) /* into scan output %zu */\n",
              (long long)outer, k);
    cg_printf(c, "      memcpy(Y%zu + (o * %lld + %s) * %lld, %s + o * %lld, %zu);\n", N + k,
              (long long)T, at, (long long)inner, rv, (long long)inner,
              (size_t)inner * elem_size(y));
  }
  if ((rc = carry_back(c, body, bin, body->n_input, 0, 0, N))) return rc;
  cg_printf(c, "  }\n");
  return carry_out(c, bin, 0, out, N < n_out ? N : n_out);
}

const cg_op ox_cg_ops_control[] = {
    {"If", gen_if},
    {"Loop", gen_loop},
    {"Scan", gen_scan},
    {NULL, NULL},
};
