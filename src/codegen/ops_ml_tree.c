/* ops_ml_tree.c - the C generators of the ai.onnx.ml tree ensembles:
 * TreeEnsemble (opset 5) and the classic TreeEnsembleClassifier /
 * TreeEnsembleRegressor (opsets 1 to 4, the form scikit-learn models
 * converted by skl2onnx have). The semantics are the runtime's
 * (src/ops/ml/ml_tree.c).
 *
 * Both forms become one: constant tables per node (feature, mode,
 * threshold, the two children coded as >= 0 a node, < 0 the leaf
 * -(code+1), whether a NaN takes the true branch, its member set) and per
 * leaf a range of (target, weight) votes, walked per row to the leaves; the
 * votes aggregated per target (AVERAGE, SUM, MIN, MAX; a target without a
 * vote is 0), the base values added and the post transform applied, in
 * double as the runtime. A tree with a cycle is refused here (the runtime
 * fails the run when a row reaches it). The classifier's label is the
 * first best score among the int64 class labels; string labels are
 * refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_ml.h"

enum { M_LEQ, M_LT, M_GTE, M_GT, M_EQ, M_NEQ, M_MEMBER, M_LEAF };
enum { AGG_AVERAGE, AGG_SUM, AGG_MIN, AGG_MAX };

typedef struct forest {
  size_t nn, nl, nr, nv, nmem;
  int64_t *feat, *mode, *tc, *fc, *miss, *soff, *slen;
  const int64_t *roots; /* codes */
  double *split, *mem;
  bool has_miss, any_member;
  int64_t *loff, *vt; /* leaf l's votes: [loff[l], loff[l+1]) */
  double *vw;
  int64_t T;
  int agg, post;
  double *base; /* T values or NULL */
} forest;

static int oom(cg_ctx *c) { return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory"); }

static const int64_t *ints_attr(const ox_node *n, const char *name, size_t *cnt) {
  const ox_attr *a = ox_node_attr(n, name);
  *cnt = a ? a->n_ints : 0;
  return a ? a->ints : NULL;
}

static int forest_alloc(cg_ctx *c, forest *f, size_t nn, size_t nl, size_t nv) {
  f->nn = nn, f->nl = nl, f->nv = nv;
  int64_t **iv[] = {&f->feat, &f->mode, &f->tc, &f->fc, &f->miss, &f->soff, &f->slen};
  for (size_t k = 0; k < sizeof iv / sizeof iv[0]; k++)
    if (!(*iv[k] = ox_arena_calloc(c->a, nn + 1, sizeof(int64_t)))) return oom(c);
  f->split = ox_arena_calloc(c->a, nn + 1, sizeof *f->split);
  f->loff = ox_arena_calloc(c->a, nl + 1, sizeof *f->loff);
  f->vt = ox_arena_calloc(c->a, nv + 1, sizeof *f->vt);
  f->vw = ox_arena_calloc(c->a, nv + 1, sizeof *f->vw);
  if (!f->split || !f->loff || !f->vt || !f->vw) return oom(c);
  return OX_OK;
}

/* whether a walk can loop: a node-to-node edge cycle (Kahn's count) */
static bool has_cycle(cg_ctx *c, const int64_t *tcode, const int64_t *fcode, size_t n) {
  size_t *indeg = ox_arena_calloc(c->a, n + 1, sizeof *indeg);
  size_t *stack = ox_arena_calloc(c->a, n + 1, sizeof *stack);
  if (!indeg || !stack) return true;
  for (size_t i = 0; i < n; i++) {
    if (tcode[i] >= 0) indeg[tcode[i]]++;
    if (fcode[i] >= 0) indeg[fcode[i]]++;
  }
  size_t top = 0, done = 0;
  for (size_t i = 0; i < n; i++)
    if (!indeg[i]) stack[top++] = i;
  while (top) {
    size_t i = stack[--top];
    done++;
    int64_t ch[2] = {tcode[i], fcode[i]};
    for (int k = 0; k < 2; k++)
      if (ch[k] >= 0 && --indeg[ch[k]] == 0) stack[top++] = (size_t)ch[k];
  }
  return done != n;
}

/* Writes the tables and the row loop up to the final scores `sc` (T
 * entries, room for 2) of row r: the walk, the aggregation, the base
 * values. The caller writes the rest of the loop body and closes it. */
static int forest_emit(cg_ctx *c, const forest *f, const cg_val *X, int64_t N, int64_t F) {
  if (has_cycle(c, f->tc, f->fc, f->nn))
    return c->e->code ? c->e->code : cg_fail(c, OX_EMODEL, "a tree has a cycle (its walk would not end)");
  const char *A = cg_ml_acc(c);
  size_t nn = f->nn;
  cg_ml_table_i(c, "int32_t", "feat", f->feat, nn);
  cg_ml_table_i(c, "uint8_t", "mode", f->mode, nn);
  cg_ml_table_d(c, "split", f->split, nn);
  cg_ml_table_i(c, "int32_t", "tcode", f->tc, nn);
  cg_ml_table_i(c, "int32_t", "fcode", f->fc, nn);
  if (f->has_miss) cg_ml_table_i(c, "uint8_t", "miss", f->miss, nn);
  if (f->any_member) {
    cg_ml_table_i(c, "int32_t", "soff", f->soff, nn);
    cg_ml_table_i(c, "int32_t", "slen", f->slen, nn);
    cg_ml_table_d(c, "members", f->mem, f->nmem);
  }
  cg_ml_table_i(c, "int32_t", "roots", f->roots, f->nr);
  cg_ml_table_i(c, "int32_t", "leaf_off", f->loff, f->nl + 1);
  cg_ml_table_i(c, "int32_t", "vote_t", f->vt, f->nv);
  cg_ml_table_d(c, "vote_w", f->vw, f->nv);
  if (f->base) cg_ml_table_d(c, "base", f->base, (size_t)f->T);
  char zero[48];
  cg_ml_lit(c, zero, sizeof zero, 0.0);
  int64_t T = f->T, room = T < 2 ? 2 : T;
  cg_printf(c, "  for (size_t r = 0; r < %lld; r++) {\n", (long long)N);
  cg_printf(c, "    %s sc[%lld];\n    uint8_t has[%lld];\n", A, (long long)room, (long long)room);
  cg_printf(c, "    for (size_t t = 0; t < %lld; t++) sc[t] = %s, has[t] = 0;\n", (long long)room,
            zero);
  cg_printf(c, "    for (size_t tr = 0; tr < %zu; tr++) {\n", f->nr);
  cg_printf(c, "      int32_t code = roots[tr];\n");
  cg_printf(c, "      while (code >= 0) {\n");
  /* float16 loads through float; the other types as they are */
  const char *xa = ox_arena_printf(c->a, "X0[r * %lld + (size_t)feat[code]]", (long long)F);
  const char *xe = xa && cg_is_small_float(X->dtype) ? cg_load(c, X->dtype, xa) : xa;
  if (!xe) return oom(c);
  cg_printf(c, "        const %s x = (%s)%s, s = split[code];\n", A, A, xe);
  cg_printf(c, "        int cond;\n");
  if (f->has_miss) cg_printf(c, "        if (x != x && miss[code]) cond = 1;\n        else\n");
  cg_printf(c, "        switch (mode[code]) {\n");
  cg_printf(c, "          case %d: cond = x <= s; break;\n", M_LEQ);
  cg_printf(c, "          case %d: cond = x < s; break;\n", M_LT);
  cg_printf(c, "          case %d: cond = x >= s; break;\n", M_GTE);
  cg_printf(c, "          case %d: cond = x > s; break;\n", M_GT);
  cg_printf(c, "          case %d: cond = x == s; break;\n", M_EQ);
  cg_printf(c, "          case %d: cond = x != s; break;\n", M_NEQ);
  if (f->any_member) {
    cg_printf(c, "          default:\n            cond = 0;\n");
    cg_printf(c, "            for (int32_t k = 0; k < slen[code]; k++)\n");
    cg_printf(c, "              if (members[soff[code] + k] == x) cond = 1;\n");
    cg_printf(c, "            break;\n");
  } else {
    cg_printf(c, "          default: cond = 0; break;\n");
  }
  cg_printf(c, "        }\n");
  cg_printf(c, "        code = cond ? tcode[code] : fcode[code];\n");
  cg_printf(c, "      }\n");
  cg_printf(c, "      const int32_t leaf = -code - 1;\n");
  cg_printf(c, "      for (int32_t v = leaf_off[leaf]; v < leaf_off[leaf + 1]; v++) {\n");
  cg_printf(c, "        const int32_t t = vote_t[v];\n        const %s w = vote_w[v];\n", A);
  if (f->agg == AGG_MIN)
    cg_printf(c, "        sc[t] = !has[t] || w < sc[t] ? w : sc[t];\n");
  else if (f->agg == AGG_MAX)
    cg_printf(c, "        sc[t] = !has[t] || w > sc[t] ? w : sc[t];\n");
  else
    cg_printf(c, "        sc[t] = has[t] ? sc[t] + w : w;\n");
  cg_printf(c, "        has[t] = 1;\n      }\n    }\n");
  if (f->agg == AGG_AVERAGE) {
    char nt[48];
    cg_ml_lit(c, nt, sizeof nt, (double)f->nr);
    cg_printf(c, "    for (size_t t = 0; t < %lld; t++) sc[t] /= %s;\n", (long long)T, nt);
  }
  if (f->base) cg_printf(c, "    for (size_t t = 0; t < %lld; t++) sc[t] += base[t];\n", (long long)T);
  return OX_OK;
}

/* ---- TreeEnsemble (opset 5) ---- */
int cg_ml_gen_tree_ensemble(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                            size_t n_out) {
  (void)n_in, (void)n_out;
  if (!out[0]) return OX_OK; /* its only output unused */
  const cg_val *X = in[0], *Y = out[0];
  if (X->dtype != OX_FLOAT && X->dtype != OX_DOUBLE && X->dtype != OX_FLOAT16)
    return cg_fail(c, OX_EMODEL, "X must be float, double or float16");
  if (X->rank != 1 && X->rank != 2) return cg_fail(c, OX_EMODEL, "X must be [N, F]");
  forest f = {0};
  int64_t pt = ox_node_attr_int(n, "post_transform", 0);
  int64_t agg = ox_node_attr_int(n, "aggregate_function", 1);
  f.T = ox_node_attr_int(n, "n_targets", -1);
  if (pt < 0 || pt > 4) return cg_fail(c, OX_EMODEL, "post_transform %lld is not in 0..4", (long long)pt);
  if (agg < 0 || agg > 3)
    return cg_fail(c, OX_EMODEL, "aggregate_function %lld is not in 0..3", (long long)agg);
  if (f.T < 1 || f.T > INT32_MAX) return cg_fail(c, OX_EMODEL, "n_targets must be set and >= 1");
  f.post = (int)pt, f.agg = (int)agg;
  int64_t N = X->rank == 2 ? X->dims[0] : 1, F = X->dims[X->rank - 1], T = f.T;
  if (Y->dtype != X->dtype || Y->numel != N * T)
    return cg_fail(c, OX_EMODEL, "the output must be X's type, [%lld, %lld]", (long long)N,
                   (long long)T);
  size_t nn, nfl, nfn, ntl, ntn, nmv, nlt, nmodes = 0, nsplits = 0, nlw = 0;
  const int64_t *fl = ints_attr(n, "nodes_falseleafs", &nfl);
  const int64_t *fn = ints_attr(n, "nodes_falsenodeids", &nfn);
  const int64_t *fe = ints_attr(n, "nodes_featureids", &nn);
  const int64_t *tl = ints_attr(n, "nodes_trueleafs", &ntl);
  const int64_t *tn = ints_attr(n, "nodes_truenodeids", &ntn);
  const int64_t *mv = ints_attr(n, "nodes_missing_value_tracks_true", &nmv);
  const int64_t *roots = ints_attr(n, "tree_roots", &f.nr);
  const int64_t *lt = ints_attr(n, "leaf_targetids", &nlt);
  double *modes, *splits, *lw;
  int64_t *imodes;
  int32_t dt;
  bool pm, ps, pl, pmem;
  int rc;
  if ((rc = cg_ml_tensor_attr(c, n, "nodes_modes", &modes, &imodes, &nmodes, &dt, &pm)) ||
      (rc = cg_ml_tensor_attr(c, n, "nodes_splits", &splits, NULL, &nsplits, &dt, &ps)) ||
      (rc = cg_ml_tensor_attr(c, n, "leaf_weights", &lw, NULL, &nlw, &dt, &pl)) ||
      (rc = cg_ml_tensor_attr(c, n, "membership_values", &f.mem, NULL, &f.nmem, &dt, &pmem)))
    return rc;
  if (!nn || !f.nr) return cg_fail(c, OX_EMODEL, "nodes_featureids and tree_roots must be set");
  if (nfl != nn || nfn != nn || ntl != nn || ntn != nn || (nmv && nmv != nn) || nmodes != nn ||
      nsplits != nn)
    return cg_fail(c, OX_EMODEL, "the nodes_* attributes must all have %zu entries", nn);
  if (!pl || nlw != nlt)
    return cg_fail(c, OX_EMODEL, "leaf_targetids (%zu) and leaf_weights (%zu) differ in length",
                   nlt, nlw);
  if ((rc = forest_alloc(c, &f, nn, nlt, nlt))) return rc;
  for (size_t l = 0; l < nlt; l++) {
    if (lt[l] < 0 || lt[l] >= T)
      return cg_fail(c, OX_EMODEL, "leaf_targetids[%zu] = %lld outside [0, %lld)", l,
                     (long long)lt[l], (long long)T);
    f.loff[l + 1] = (int64_t)l + 1, f.vt[l] = lt[l], f.vw[l] = lw[l];
  }
  f.has_miss = nmv > 0;
  size_t mpos = 0;
  for (size_t i = 0; i < nn; i++) {
    f.mode[i] = modes[i] == (double)imodes[i] ? imodes[i] : -1; /* 1.5, NaN: refused */
    if (f.mode[i] < M_LEQ || f.mode[i] > M_MEMBER)
      return cg_fail(c, OX_EMODEL, "nodes_modes[%zu] = %lld is not in 0..6", i, (long long)f.mode[i]);
    if (fe[i] < 0) return cg_fail(c, OX_EMODEL, "nodes_featureids[%zu] is negative", i);
    if (fe[i] >= F)
      return cg_fail(c, OX_EMODEL, "feature id %lld but X has %lld features", (long long)fe[i],
                     (long long)F);
    f.feat[i] = fe[i];
    f.split[i] = splits[i];
    f.miss[i] = nmv && mv[i];
    if (f.mode[i] == M_MEMBER) {
      if (!pmem || mpos > f.nmem)
        return cg_fail(c, OX_EMODEL, "node %zu is BRANCH_MEMBER but membership_values has no set for it", i);
      f.soff[i] = (int64_t)mpos;
      while (mpos < f.nmem && !isnan(f.mem[mpos])) mpos++;
      f.slen[i] = (int64_t)mpos - f.soff[i];
      mpos++; /* the NaN delimiter */
      f.any_member = true;
    }
    int64_t ch[2] = {tn[i], fn[i]}, isl[2] = {tl[i], fl[i]};
    for (int k = 0; k < 2; k++) {
      int64_t lim = isl[k] ? (int64_t)nlt : (int64_t)nn;
      if (ch[k] < 0 || ch[k] >= lim)
        return cg_fail(c, OX_EMODEL, "node %zu: %s child %lld outside [0, %lld)", i,
                       k ? "false" : "true", (long long)ch[k], (long long)lim);
      (k ? f.fc : f.tc)[i] = isl[k] ? -ch[k] - 1 : ch[k];
    }
  }
  for (size_t r = 0; r < f.nr; r++)
    if (roots[r] < 0 || roots[r] >= (int64_t)nn)
      return cg_fail(c, OX_EMODEL, "tree_roots[%zu] = %lld outside [0, %zu)", r,
                     (long long)roots[r], nn);
  f.roots = roots;
  if ((rc = forest_emit(c, &f, X, N, F))) return rc;
  cg_ml_post(c, f.post, "sc", T, "    ");
  /* float16 output: the double score rounded to float, then to float16 (as
   * the runtime's store) */
  const char *st = cg_store(c, Y->dtype, Y->dtype == OX_FLOAT16 ? "(float)sc[t]" : "sc[t]", false);
  if (!st) return oom(c);
  cg_printf(c, "    for (size_t t = 0; t < %lld; t++) Y0[r * %lld + t] = %s;\n", (long long)T,
            (long long)T, st);
  cg_printf(c, "  }\n");
  return OX_OK;
}

/* ---- TreeEnsembleClassifier / TreeEnsembleRegressor (opsets 1 to 4) ----
 * Nodes are named by (tree id, node id); modes are strings; the LEAF nodes
 * carry the votes (class_* or target_* attributes). A node keeps its
 * attribute position; the roots are each tree's first node in attribute
 * order. */
typedef struct v1_key {
  int64_t tree, node;
  size_t idx;
} v1_key;
static int key_cmp(const void *a, const void *b) {
  const v1_key *x = a, *y = b;
  if (x->tree != y->tree) return x->tree < y->tree ? -1 : 1;
  if (x->node != y->node) return x->node < y->node ? -1 : 1;
  return 0;
}
static int64_t key_find(const v1_key *keys, size_t n, int64_t tree, int64_t node) {
  v1_key k = {tree, node, 0};
  const v1_key *r = bsearch(&k, keys, n, sizeof k, key_cmp);
  return r ? (int64_t)r->idx : -1;
}

static int mode_parse(const ox_attr *a, size_t i) {
  static const char *const nm[] = {"BRANCH_LEQ", "BRANCH_LT",  "BRANCH_GTE",    "BRANCH_GT",
                                   "BRANCH_EQ",  "BRANCH_NEQ", "BRANCH_MEMBER", "LEAF"};
  const char *s = (const char *)a->strings[i].data;
  for (int k = 0; s && k < 8; k++)
    if (!strcmp(s, nm[k])) return k;
  return -1;
}

static int v1_build(cg_ctx *c, const ox_node *nd, forest *f, bool cls, int64_t F) {
  size_t n, nn, nfe, ntr, nfa, nmv, nv;
  const int64_t *treeids = ints_attr(nd, "nodes_treeids", &n);
  const int64_t *nodeids = ints_attr(nd, "nodes_nodeids", &nn);
  const int64_t *feats = ints_attr(nd, "nodes_featureids", &nfe);
  const int64_t *tids = ints_attr(nd, "nodes_truenodeids", &ntr);
  const int64_t *fids = ints_attr(nd, "nodes_falsenodeids", &nfa);
  const int64_t *mvt = ints_attr(nd, "nodes_missing_value_tracks_true", &nmv);
  const ox_attr *ma = ox_node_attr(nd, "nodes_modes");
  double *vals;
  int rc = cg_ml_doubles(c, nd, "nodes_values", &vals, &nv);
  if (rc) return rc;
  if (!n) return cg_fail(c, OX_EMODEL, "nodes_treeids is empty");
  if (nn != n || nfe != n || ntr != n || nfa != n || !ma || ma->n_strings != n ||
      (nv && nv != n) || (nmv && nmv != n))
    return cg_fail(c, OX_EMODEL, "the nodes_* attributes must all have %zu entries", n);
  /* votes */
  const char *p = cls ? "class" : "target";
  char nm[4][32];
  const char *sfx[4] = {"treeids", "nodeids", "ids", "weights"};
  for (int k = 0; k < 4; k++) snprintf(nm[k], sizeof nm[k], "%s_%s", p, sfx[k]);
  size_t a1, a2, a3, a4;
  const int64_t *vtr = ints_attr(nd, nm[0], &a1), *vn = ints_attr(nd, nm[1], &a2),
                *vi = ints_attr(nd, nm[2], &a3);
  double *vw;
  if ((rc = cg_ml_doubles(c, nd, nm[3], &vw, &a4))) return rc;
  if (a2 != a1 || a3 != a1 || a4 != a1)
    return cg_fail(c, OX_EMODEL, "the %s_* attributes must all have %zu entries", p, a1);
  v1_key *keys = ox_arena_calloc(c->a, n, sizeof *keys);
  int64_t *leaf_of = ox_arena_calloc(c->a, n, sizeof *leaf_of);
  int64_t *vleaf = ox_arena_calloc(c->a, a1 + 1, sizeof *vleaf);
  int64_t *fill = ox_arena_calloc(c->a, n + 1, sizeof *fill);
  if (!keys || !leaf_of || !vleaf || !fill) return oom(c);
  size_t nl = 0;
  for (size_t i = 0; i < n; i++) {
    keys[i] = (v1_key){treeids[i], nodeids[i], i};
    int m = mode_parse(ma, i);
    if (m < 0)
      return cg_fail(c, OX_EMODEL, "nodes_modes[%zu] = '%s' is not a valid mode", i,
                     ma->strings[i].data ? (const char *)ma->strings[i].data : "");
    if (m == M_MEMBER)
      return cg_fail(c, OX_EMODEL, "nodes_modes[%zu]: BRANCH_MEMBER needs TreeEnsemble-5", i);
    leaf_of[i] = m == M_LEAF ? (int64_t)nl++ : -1;
  }
  qsort(keys, n, sizeof *keys, key_cmp);
  for (size_t i = 1; i < n; i++)
    if (!key_cmp(&keys[i - 1], &keys[i]))
      return cg_fail(c, OX_EMODEL, "node id %lld appears twice in tree %lld",
                     (long long)keys[i].node, (long long)keys[i].tree);
  if ((rc = forest_alloc(c, f, n, nl, a1))) return rc;
  f->has_miss = nmv > 0;
  for (size_t i = 0; i < n; i++) {
    f->tc[i] = f->fc[i] = -1; /* a LEAF entry: no edges, never walked */
    if (leaf_of[i] >= 0) continue;
    f->mode[i] = mode_parse(ma, i);
    if (feats[i] < 0) return cg_fail(c, OX_EMODEL, "nodes_featureids[%zu] is negative", i);
    if (feats[i] >= F)
      return cg_fail(c, OX_EMODEL, "feature id %lld but X has %lld features",
                     (long long)feats[i], (long long)F);
    f->feat[i] = feats[i];
    f->split[i] = nv ? vals[i] : 0;
    f->miss[i] = nmv && mvt[i];
    int64_t ch[2] = {tids[i], fids[i]};
    for (int k = 0; k < 2; k++) {
      int64_t j = key_find(keys, n, treeids[i], ch[k]);
      if (j < 0)
        return cg_fail(c, OX_EMODEL, "node %lld of tree %lld: %s child %lld does not exist",
                       (long long)nodeids[i], (long long)treeids[i], k ? "false" : "true",
                       (long long)ch[k]);
      (k ? f->fc : f->tc)[i] = leaf_of[j] >= 0 ? -leaf_of[j] - 1 : j;
    }
  }
  int64_t *roots = ox_arena_calloc(c->a, n, sizeof *roots);
  if (!roots) return oom(c);
  /* a tree's root: its first node in attribute order (keys are sorted by
   * tree, so a tree's nodes are one run of them); the trees in that order */
  uint8_t *first = ox_arena_calloc(c->a, n, 1);
  if (!first) return oom(c);
  for (size_t k = 0, run = 0; k < n; k++) {
    if (k && keys[k].tree != keys[k - 1].tree) run = k;
    if (k + 1 == n || keys[k + 1].tree != keys[k].tree) {
      size_t lo = keys[run].idx;
      for (size_t q = run; q <= k; q++) lo = keys[q].idx < lo ? keys[q].idx : lo;
      first[lo] = 1;
    }
  }
  for (size_t i = 0; i < n; i++)
    if (first[i]) roots[f->nr++] = leaf_of[i] >= 0 ? -leaf_of[i] - 1 : (int64_t)i;
  f->roots = roots;
  /* votes grouped by leaf, in attribute order within a leaf (the order the
   * runtime adds them) */
  int64_t *cnt = ox_arena_calloc(c->a, nl + 1, sizeof *cnt);
  if (!cnt) return oom(c);
  for (size_t v = 0; v < a1; v++) {
    int64_t j = key_find(keys, n, vtr[v], vn[v]);
    if (j < 0 || leaf_of[j] < 0)
      return cg_fail(c, OX_EMODEL, "%s vote %zu: node %lld of tree %lld is not a leaf", p, v,
                     (long long)vn[v], (long long)vtr[v]);
    if (vi[v] < 0 || vi[v] >= f->T)
      return cg_fail(c, OX_EMODEL, "%s_ids[%zu] = %lld outside [0, %lld)", p, v, (long long)vi[v],
                     (long long)f->T);
    vleaf[v] = leaf_of[j];
    cnt[vleaf[v]]++;
  }
  for (size_t l = 0; l < nl; l++) f->loff[l + 1] = f->loff[l] + cnt[l];
  for (size_t v = 0; v < a1; v++) {
    int64_t at = f->loff[vleaf[v]] + fill[vleaf[v]]++;
    f->vt[at] = vi[v];
    f->vw[at] = vw[v];
  }
  double *bv;
  size_t nb;
  if ((rc = cg_ml_doubles(c, nd, "base_values", &bv, &nb))) return rc;
  if (nb && (int64_t)nb != f->T)
    return cg_fail(c, OX_EMODEL, "base_values has %zu entries for %lld %s", nb, (long long)f->T,
                   cls ? "classes" : "targets");
  f->base = nb ? bv : NULL;
  return OX_OK;
}

int cg_ml_gen_tree_regressor(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                             size_t n_out) {
  (void)n_in, (void)n_out;
  if (!out[0]) return OX_OK; /* its only output unused */
  const cg_val *X = in[0], *Y = out[0];
  int64_t N, F;
  int rc = cg_ml_input_2d(c, X, &N, &F);
  if (rc) return rc;
  forest f = {0};
  if ((rc = cg_ml_post_parse(c, n, &f.post))) return rc;
  f.T = ox_node_attr_int(n, "n_targets", 1);
  if (f.T < 1 || f.T > INT32_MAX) return cg_fail(c, OX_EMODEL, "n_targets must be >= 1");
  const char *a = ox_node_attr_str(n, "aggregate_function", "SUM");
  static const char *const aggs[] = {"AVERAGE", "SUM", "MIN", "MAX"};
  f.agg = -1;
  for (int k = 0; k < 4; k++)
    if (!strcmp(a, aggs[k])) f.agg = k;
  if (f.agg < 0) return cg_fail(c, OX_EMODEL, "unknown aggregate_function '%s'", a);
  if (Y->dtype != OX_FLOAT || Y->numel != N * f.T)
    return cg_fail(c, OX_EMODEL, "the output must be float [%lld, %lld]", (long long)N,
                   (long long)f.T);
  if ((rc = v1_build(c, n, &f, false, F)) || (rc = forest_emit(c, &f, X, N, F))) return rc;
  cg_ml_post(c, f.post, "sc", f.T, "    ");
  cg_printf(c, "    for (size_t t = 0; t < %lld; t++) Y0[r * %lld + t] = (float)sc[t];\n",
            (long long)f.T, (long long)f.T);
  cg_printf(c, "  }\n");
  return OX_OK;
}

/* The classifier's votes are summed. With two labels where every vote goes
 * to one class (the binary case), with s that class's score, the scores are
 * (1 - s, s) for NONE and PROBIT, (-s, s) otherwise, before the transform.
 * The label is the first maximum of the transformed scores. */
int cg_ml_gen_tree_classifier(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                              cg_val **out, size_t n_out) {
  (void)n_in;
  const cg_val *X = in[0], *L = out[0], *Z = n_out > 1 ? out[1] : NULL;
  int64_t N, F;
  int rc = cg_ml_input_2d(c, X, &N, &F);
  if (rc) return rc;
  forest f = {0};
  const int64_t *labels;
  size_t nl;
  if ((rc = cg_ml_post_parse(c, n, &f.post)) ||
      (rc = cg_ml_labels(c, n, "classlabels_int64s", &labels, &nl)))
    return rc;
  if (nl > INT32_MAX) return cg_fail(c, OX_EMODEL, "too many class labels");
  f.T = (int64_t)nl;
  f.agg = AGG_SUM;
  if (L && (L->dtype != OX_INT64 || L->numel != N))
    return cg_fail(c, OX_EMODEL, "the label output must be int64 [%lld]", (long long)N);
  if (Z && (Z->dtype != OX_FLOAT || Z->numel != N * f.T))
    return cg_fail(c, OX_EMODEL, "the scores output must be float [%lld, %lld]", (long long)N,
                   (long long)f.T);
  if ((rc = v1_build(c, n, &f, true, F))) return rc;
  bool single = f.nv > 0;
  for (size_t v = 1; v < f.nv; v++) single = single && f.vt[v] == f.vt[0];
  bool binary = f.T == 2 && single;
  if (L) cg_ml_table_i(c, "int64_t", "labels", labels, nl);
  if ((rc = forest_emit(c, &f, X, N, F))) return rc;
  if (binary) {
    char one[48];
    cg_ml_lit(c, one, sizeof one, 1.0);
    bool minus = f.post == CG_ML_NONE || f.post == CG_ML_PROBIT;
    cg_printf(c, "    sc[1] = sc[%lld];\n    sc[0] = %s%ssc[1];\n", (long long)f.vt[0],
              minus ? one : "", minus ? " - " : "-");
  }
  cg_ml_post(c, f.post, "sc", f.T, "    ");
  cg_printf(c, "    size_t best = 0;\n");
  cg_printf(c, "    for (size_t t = 1; t < %lld; t++)\n      if (sc[t] > sc[best]) best = t;\n",
            (long long)f.T);
  if (L)
    cg_printf(c, "    Y0[r] = labels[best];\n");
  else
    cg_printf(c, "    (void)best; /* the label output is unused */\n");
  if (Z)
    cg_printf(c, "    for (size_t t = 0; t < %lld; t++) Y1[r * %lld + t] = (float)sc[t];\n",
              (long long)f.T, (long long)f.T);
  cg_printf(c, "  }\n");
  return OX_OK;
}
