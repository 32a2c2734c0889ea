/* ml_tree.c - ai.onnx.ml tree ensembles: TreeEnsemble-5 and the
 * TreeEnsembleClassifier / TreeEnsembleRegressor 1 and 3 (deprecated at 5,
 * so they cover 1..4).
 *
 * All three are compiled at prepare time into one form: nodes with a
 * feature, a comparison, a threshold (or a member set), and two children
 * coded as >= 0 (node index) or < 0 (leaf -(l+1)); leaves carry a list of
 * (target, weight) votes. Per row every tree is walked to its leaf; the
 * votes are aggregated per target (SUM, AVERAGE = sum / trees, MIN, MAX; a
 * target without votes is 0), the base values added, the post transform
 * applied.
 *
 * A NaN feature takes the true branch when missing_value_tracks_true is set
 * for the node, else the comparison decides (false for every comparison but
 * NEQ). Classifier with two labels where every vote goes to one class id
 * (binary case): with s that class's score, the scores are (1 - s, s) for
 * NONE and PROBIT, (-s, s) otherwise, before the post transform. The label
 * is the first maximum of the transformed scores (as in ONNX's reference
 * evaluator). */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ml_common.h"

enum { M_LEQ, M_LT, M_GTE, M_GT, M_EQ, M_NEQ, M_MEMBER, M_LEAF };
enum { AGG_AVERAGE, AGG_SUM, AGG_MIN, AGG_MAX };

typedef struct te_node {
  int64_t feature;
  int mode;
  bool missing_true;
  double split;
  size_t set_off, set_len; /* member set in members[] */
  int64_t t, f;            /* child codes */
} te_node;

typedef struct te_model {
  size_t n_nodes, n_leaves, n_trees, n_votes;
  te_node *nodes;
  int64_t *roots; /* child codes */
  size_t *leaf_off, *leaf_cnt;
  int64_t *vote_target;
  double *vote_w;
  double *members;
  int64_t n_targets;
  int64_t max_feature;
  int agg;
  mlc_post post;
  double *base; /* n_targets or NULL */
  /* classifier */
  bool classifier, binary;
  int64_t bin_id; /* binary case: the only class id with votes */
  char **labels_s;
  const int64_t *labels_i;
  int v5;
} te_model;

static int te_mode_parse(const char *s) {
  static const char *const nm[] = {"BRANCH_LEQ", "BRANCH_LT",  "BRANCH_GTE",    "BRANCH_GT",
                                   "BRANCH_EQ",  "BRANCH_NEQ", "BRANCH_MEMBER", "LEAF"};
  for (int k = 0; k < 8; k++)
    if (!strcmp(s, nm[k])) return k;
  return -1;
}

static bool te_cond(const te_model *m, const te_node *n, double x) {
  if (isnan(x) && n->missing_true) return true;
  switch (n->mode) {
    case M_LEQ:
      return x <= n->split;
    case M_LT:
      return x < n->split;
    case M_GTE:
      return x >= n->split;
    case M_GT:
      return x > n->split;
    case M_EQ:
      return x == n->split;
    case M_NEQ:
      return x != n->split;
    default:
      for (size_t k = 0; k < n->set_len; k++)
        if (m->members[n->set_off + k] == x) return true;
      return false;
  }
}

/* walks one tree; -1 when the walk does not end (a cycle) */
static int64_t te_walk(const te_model *m, int64_t code, const double *x) {
  for (size_t steps = 0; code >= 0; steps++) {
    if (steps > m->n_nodes) return -1;
    const te_node *n = &m->nodes[code];
    code = te_cond(m, n, x[n->feature]) ? n->t : n->f;
  }
  return -code - 1;
}

/* scores of one row (n_targets), before base values and post transform */
static int te_scores(const te_model *m, const double *x, double *sc, bool *has) {
  for (int64_t t = 0; t < m->n_targets; t++) {
    sc[t] = 0;
    has[t] = false;
  }
  for (size_t tr = 0; tr < m->n_trees; tr++) {
    int64_t leaf = te_walk(m, m->roots[tr], x);
    if (leaf < 0) return -1;
    for (size_t v = m->leaf_off[leaf]; v < m->leaf_off[leaf] + m->leaf_cnt[leaf]; v++) {
      int64_t t = m->vote_target[v];
      double w = m->vote_w[v];
      if (!has[t])
        sc[t] = w;
      else if (m->agg == AGG_MIN)
        sc[t] = w < sc[t] ? w : sc[t];
      else if (m->agg == AGG_MAX)
        sc[t] = w > sc[t] ? w : sc[t];
      else
        sc[t] += w;
      has[t] = true;
    }
  }
  for (int64_t t = 0; t < m->n_targets; t++) {
    if (m->agg == AGG_AVERAGE && m->n_trees) sc[t] /= (double)m->n_trees;
    if (m->base) sc[t] += m->base[t];
  }
  return 0;
}

/* ---- building from the v1/v3 attributes ---- */
typedef struct te_key {
  int64_t tree, node;
  size_t idx;
} te_key;
static int te_key_cmp(const void *a, const void *b) {
  const te_key *x = a, *y = b;
  if (x->tree != y->tree) return x->tree < y->tree ? -1 : 1;
  if (x->node != y->node) return x->node < y->node ? -1 : 1;
  return 0;
}
static int64_t te_find(const te_key *keys, size_t n, int64_t tree, int64_t node) {
  te_key k = {tree, node, 0};
  const te_key *r = bsearch(&k, keys, n, sizeof k, te_key_cmp);
  return r ? (int64_t)r->idx : -1;
}

/* reads a float list attribute or its _as_tensor form as doubles */
static int te_doubles(const ox_kinfo *info, const char *name, double **out, size_t *n, ox_err *e) {
  char tn[64];
  size_t nf;
  const float *f = mlc_floats(info->node, name, &nf);
  snprintf(tn, sizeof tn, "%s_as_tensor", name);
  mlc_tarr t;
  if (mlc_tensor_attr(info, tn, &t, e)) return e->code;
  if (t.present && info->since_version < 3)
    return oc_prep_fail(info, e, "attribute '%s' needs opset 3", tn);
  if (t.present && mlc_has(info->node, name))
    return oc_prep_fail(info, e, "'%s' and '%s' are both set", name, tn);
  if (t.present) {
    if (t.dtype == OX_STRING) return oc_prep_fail(info, e, "'%s' must be numeric", tn);
    *out = t.d;
    *n = t.n;
    return OX_OK;
  }
  *n = nf;
  *out = ox_arena_calloc(info->arena, nf ? nf : 1, sizeof **out);
  if (!*out) return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t i = 0; i < nf; i++) (*out)[i] = f[i];
  return OX_OK;
}

static int te_build_v1(const ox_kinfo *info, te_model *m, bool cls, ox_err *e) {
  const ox_node *nd = info->node;
  size_t nt, nn, nfe, ntr, nfa, nmv;
  const int64_t *treeids = mlc_ints(nd, "nodes_treeids", &nt);
  const int64_t *nodeids = mlc_ints(nd, "nodes_nodeids", &nn);
  const int64_t *feats = mlc_ints(nd, "nodes_featureids", &nfe);
  const int64_t *tids = mlc_ints(nd, "nodes_truenodeids", &ntr);
  const int64_t *fids = mlc_ints(nd, "nodes_falsenodeids", &nfa);
  const int64_t *mvt = mlc_ints(nd, "nodes_missing_value_tracks_true", &nmv);
  size_t nm, nv;
  bool ok;
  char **modes = mlc_strings(info, "nodes_modes", &nm, &ok);
  if (!ok) return ox_err_set(e, OX_ENOMEM, "out of memory");
  double *vals;
  if (te_doubles(info, "nodes_values", &vals, &nv, e)) return e->code;
  size_t n = nt;
  if (!n) return oc_prep_fail(info, e, "nodes_treeids is empty");
  if (nn != n || nfe != n || ntr != n || nfa != n || nm != n || (nv && nv != n) ||
      (nmv && nmv != n))
    return oc_prep_fail(info, e, "the nodes_* attributes must all have %zu entries", n);
  te_key *keys = ox_arena_calloc(info->arena, n, sizeof *keys);
  int *mode = ox_arena_calloc(info->arena, n, sizeof *mode);
  m->nodes = ox_arena_calloc(info->arena, n, sizeof *m->nodes);
  int64_t *leaf_of = ox_arena_calloc(info->arena, n, sizeof *leaf_of);
  if (!keys || !mode || !m->nodes || !leaf_of) return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    keys[i] = (te_key){treeids[i], nodeids[i], i};
    mode[i] = te_mode_parse(modes[i]);
    if (mode[i] < 0 || mode[i] == M_MEMBER)
      return oc_prep_fail(info, e, "nodes_modes[%zu] = '%s' is not a valid mode", i, modes[i]);
  }
  qsort(keys, n, sizeof *keys, te_key_cmp);
  for (size_t i = 1; i < n; i++)
    if (!te_key_cmp(&keys[i - 1], &keys[i]))
      return oc_prep_fail(info, e, "node id %lld appears twice in tree %lld",
                          (long long)keys[i].node, (long long)keys[i].tree);
  /* leaves first: index of each LEAF node */
  m->n_leaves = 0;
  for (size_t i = 0; i < n; i++) leaf_of[i] = mode[i] == M_LEAF ? (int64_t)m->n_leaves++ : -1;
  /* node indices: interior nodes keep their attribute position (leaves unused) */
  m->n_nodes = n;
  m->max_feature = -1;
  for (size_t i = 0; i < n; i++) {
    te_node *x = &m->nodes[i];
    x->mode = mode[i];
    if (mode[i] == M_LEAF) continue;
    x->feature = feats[i];
    if (feats[i] < 0) return oc_prep_fail(info, e, "nodes_featureids[%zu] is negative", i);
    if (feats[i] > m->max_feature) m->max_feature = feats[i];
    x->split = nv ? vals[i] : 0;
    x->missing_true = nmv && mvt[i];
    int64_t c[2] = {tids[i], fids[i]};
    for (int k = 0; k < 2; k++) {
      int64_t j = te_find(keys, n, treeids[i], c[k]);
      if (j < 0)
        return oc_prep_fail(info, e, "node %lld of tree %lld: %s child %lld does not exist",
                            (long long)nodeids[i], (long long)treeids[i], k ? "false" : "true",
                            (long long)c[k]);
      int64_t code = leaf_of[j] >= 0 ? -leaf_of[j] - 1 : j;
      if (k == 0)
        x->t = code;
      else
        x->f = code;
    }
  }
  /* roots: first node of every tree in attribute order */
  m->roots = ox_arena_calloc(info->arena, n, sizeof *m->roots);
  if (!m->roots) return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++) seen = treeids[j] == treeids[i];
    if (!seen) m->roots[m->n_trees++] = leaf_of[i] >= 0 ? -leaf_of[i] - 1 : (int64_t)i;
  }
  /* votes */
  const char *p = cls ? "class" : "target";
  char nm1[32], nm2[32], nm3[32], nm4[32];
  snprintf(nm1, sizeof nm1, "%s_treeids", p);
  snprintf(nm2, sizeof nm2, "%s_nodeids", p);
  snprintf(nm3, sizeof nm3, "%s_ids", p);
  snprintf(nm4, sizeof nm4, "%s_weights", p);
  size_t a1, a2, a3, a4;
  const int64_t *vt = mlc_ints(nd, nm1, &a1);
  const int64_t *vn = mlc_ints(nd, nm2, &a2);
  const int64_t *vi = mlc_ints(nd, nm3, &a3);
  double *vw;
  if (te_doubles(info, nm4, &vw, &a4, e)) return e->code;
  if (a2 != a1 || a3 != a1 || a4 != a1)
    return oc_prep_fail(info, e, "the %s_* attributes must all have %zu entries", p, a1);
  m->n_votes = a1;
  m->leaf_off = ox_arena_calloc(info->arena, m->n_leaves + 1, sizeof *m->leaf_off);
  m->leaf_cnt = ox_arena_calloc(info->arena, m->n_leaves + 1, sizeof *m->leaf_cnt);
  m->vote_target = ox_arena_calloc(info->arena, a1 + 1, sizeof *m->vote_target);
  m->vote_w = ox_arena_calloc(info->arena, a1 + 1, sizeof *m->vote_w);
  int64_t *vleaf = ox_arena_calloc(info->arena, a1 + 1, sizeof *vleaf);
  if (!m->leaf_off || !m->leaf_cnt || !m->vote_target || !m->vote_w || !vleaf)
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t v = 0; v < a1; v++) {
    int64_t j = te_find(keys, n, vt[v], vn[v]);
    if (j < 0 || leaf_of[j] < 0)
      return oc_prep_fail(info, e, "%s vote %zu: node %lld of tree %lld is not a leaf", p, v,
                          (long long)vn[v], (long long)vt[v]);
    if (vi[v] < 0 || vi[v] >= m->n_targets)
      return oc_prep_fail(info, e, "%s_ids[%zu] = %lld outside [0, %lld)", p, v, (long long)vi[v],
                          (long long)m->n_targets);
    vleaf[v] = leaf_of[j];
    m->leaf_cnt[vleaf[v]]++;
  }
  for (size_t l = 1; l <= m->n_leaves; l++)
    m->leaf_off[l] = m->leaf_off[l - 1] + m->leaf_cnt[l - 1];
  size_t *fill = ox_arena_calloc(info->arena, m->n_leaves + 1, sizeof *fill);
  if (!fill) return ox_err_set(e, OX_ENOMEM, "out of memory");
  bool single = a1 > 0;
  for (size_t v = 0; v < a1; v++) {
    size_t at = m->leaf_off[vleaf[v]] + fill[vleaf[v]]++;
    m->vote_target[at] = vi[v];
    m->vote_w[at] = vw[v];
    if (vi[v] != vi[0]) single = false;
  }
  m->binary = cls && m->n_targets == 2 && single;
  m->bin_id = single ? vi[0] : 0;
  /* base values */
  double *bv;
  size_t nb;
  if (te_doubles(info, "base_values", &bv, &nb, e)) return e->code;
  if (nb && (int64_t)nb != m->n_targets)
    return oc_prep_fail(info, e, "base_values has %zu entries for %lld %s", nb,
                        (long long)m->n_targets, cls ? "classes" : "targets");
  m->base = nb ? bv : NULL;
  return OX_OK;
}

static int te_prepare_v1(const ox_kinfo *info, void **st, bool cls, ox_err *e) {
  te_model *m = ox_arena_calloc(info->arena, 1, sizeof *m);
  if (!m) return ox_err_set(e, OX_ENOMEM, "out of memory");
  m->classifier = cls;
  if (mlc_post_parse(info, ox_node_attr_str(info->node, "post_transform", "NONE"), &m->post, e))
    return e->code;
  if (cls) {
    size_t ns, ni;
    bool ok;
    m->labels_s = mlc_strings(info, "classlabels_strings", &ns, &ok);
    m->labels_i = mlc_ints(info->node, "classlabels_int64s", &ni);
    if (!ok) return ox_err_set(e, OX_ENOMEM, "out of memory");
    if ((ns > 0) == (ni > 0))
      return oc_prep_fail(info, e,
                          "exactly one of classlabels_strings and classlabels_int64s must be set");
    m->n_targets = (int64_t)(ns ? ns : ni);
    m->agg = AGG_SUM;
  } else {
    m->n_targets = ox_node_attr_int(info->node, "n_targets", 1);
    if (m->n_targets < 1 || m->n_targets > INT32_MAX)
      return oc_prep_fail(info, e, "n_targets must be >= 1");
    const char *a = ox_node_attr_str(info->node, "aggregate_function", "SUM");
    if (!strcmp(a, "AVERAGE"))
      m->agg = AGG_AVERAGE;
    else if (!strcmp(a, "SUM"))
      m->agg = AGG_SUM;
    else if (!strcmp(a, "MIN"))
      m->agg = AGG_MIN;
    else if (!strcmp(a, "MAX"))
      m->agg = AGG_MAX;
    else
      return oc_prep_fail(info, e, "unknown aggregate_function '%s'", a);
  }
  if (te_build_v1(info, m, cls, e)) return e->code;
  *st = m;
  return OX_OK;
}
static int tec_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  return te_prepare_v1(info, st, true, e);
}
static int ter_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  return te_prepare_v1(info, st, false, e);
}

/* ---- TreeEnsemble-5 ---- */
static int te5_prepare(const ox_kinfo *info, void **st, ox_err *e) {
  const ox_node *nd = info->node;
  te_model *m = ox_arena_calloc(info->arena, 1, sizeof *m);
  if (!m) return ox_err_set(e, OX_ENOMEM, "out of memory");
  m->v5 = 1;
  int64_t pt = ox_node_attr_int(nd, "post_transform", 0);
  if (pt < 0 || pt > 4)
    return oc_prep_fail(info, e, "post_transform %lld is not in 0..4", (long long)pt);
  m->post = (mlc_post)pt;
  m->agg = (int)ox_node_attr_int(nd, "aggregate_function", 1);
  if (m->agg < 0 || m->agg > 3)
    return oc_prep_fail(info, e, "aggregate_function %d is not in 0..3", m->agg);
  m->n_targets = ox_node_attr_int(nd, "n_targets", -1);
  if (m->n_targets < 1 || m->n_targets > INT32_MAX)
    return oc_prep_fail(info, e, "n_targets must be set and >= 1");
  size_t nfl, nfn, nfe, ntl, ntn, nmv, nr, nlt;
  const int64_t *fl = mlc_ints(nd, "nodes_falseleafs", &nfl);
  const int64_t *fn = mlc_ints(nd, "nodes_falsenodeids", &nfn);
  const int64_t *fe = mlc_ints(nd, "nodes_featureids", &nfe);
  const int64_t *tl = mlc_ints(nd, "nodes_trueleafs", &ntl);
  const int64_t *tn = mlc_ints(nd, "nodes_truenodeids", &ntn);
  const int64_t *mv = mlc_ints(nd, "nodes_missing_value_tracks_true", &nmv);
  const int64_t *roots = mlc_ints(nd, "tree_roots", &nr);
  const int64_t *lt = mlc_ints(nd, "leaf_targetids", &nlt);
  mlc_tarr modes, splits, lw, mem;
  if (mlc_tensor_attr(info, "nodes_modes", &modes, e) ||
      mlc_tensor_attr(info, "nodes_splits", &splits, e) ||
      mlc_tensor_attr(info, "leaf_weights", &lw, e) ||
      mlc_tensor_attr(info, "membership_values", &mem, e))
    return e->code;
  size_t n = nfe;
  if (!n || !nr) return oc_prep_fail(info, e, "nodes_featureids and tree_roots must be set");
  if (nfl != n || nfn != n || ntl != n || ntn != n || (nmv && nmv != n) || modes.n != n ||
      splits.n != n)
    return oc_prep_fail(info, e, "the nodes_* attributes must all have %zu entries", n);
  if (modes.dtype == OX_STRING || splits.dtype == OX_STRING || lw.dtype == OX_STRING ||
      (mem.present && mem.dtype == OX_STRING))
    return oc_prep_fail(info, e, "nodes_modes, nodes_splits, leaf_weights must be numeric");
  if (!lw.present || lw.n != nlt)
    return oc_prep_fail(info, e, "leaf_targetids (%zu) and leaf_weights (%zu) differ in length",
                        nlt, lw.n);
  m->n_nodes = n;
  m->n_leaves = nlt;
  m->n_votes = nlt;
  m->nodes = ox_arena_calloc(info->arena, n, sizeof *m->nodes);
  m->leaf_off = ox_arena_calloc(info->arena, nlt + 1, sizeof *m->leaf_off);
  m->leaf_cnt = ox_arena_calloc(info->arena, nlt + 1, sizeof *m->leaf_cnt);
  m->vote_target = ox_arena_calloc(info->arena, nlt + 1, sizeof *m->vote_target);
  m->vote_w = ox_arena_calloc(info->arena, nlt + 1, sizeof *m->vote_w);
  m->roots = ox_arena_calloc(info->arena, nr, sizeof *m->roots);
  if (!m->nodes || !m->leaf_off || !m->leaf_cnt || !m->vote_target || !m->vote_w || !m->roots)
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t l = 0; l < nlt; l++) {
    if (lt[l] < 0 || lt[l] >= m->n_targets)
      return oc_prep_fail(info, e, "leaf_targetids[%zu] = %lld outside [0, %lld)", l,
                          (long long)lt[l], (long long)m->n_targets);
    m->leaf_off[l] = l;
    m->leaf_cnt[l] = 1;
    m->vote_target[l] = lt[l];
    m->vote_w[l] = lw.d[l];
  }
  m->members = mem.present ? mem.d : NULL;
  size_t mpos = 0;
  m->max_feature = -1;
  for (size_t i = 0; i < n; i++) {
    te_node *x = &m->nodes[i];
    x->mode = (int)modes.i[i];
    if (x->mode < M_LEQ || x->mode > M_MEMBER)
      return oc_prep_fail(info, e, "nodes_modes[%zu] = %d is not in 0..6", i, x->mode);
    x->feature = fe[i];
    if (fe[i] < 0) return oc_prep_fail(info, e, "nodes_featureids[%zu] is negative", i);
    if (fe[i] > m->max_feature) m->max_feature = fe[i];
    x->split = splits.d[i];
    x->missing_true = nmv && mv[i];
    if (x->mode == M_MEMBER) {
      if (!mem.present || mpos > mem.n)
        return oc_prep_fail(info, e,
                            "node %zu is BRANCH_MEMBER but membership_values has no set "
                            "for it",
                            i);
      x->set_off = mpos;
      while (mpos < mem.n && !isnan(mem.d[mpos])) mpos++;
      x->set_len = mpos - x->set_off;
      mpos++; /* the NaN delimiter */
    }
    int64_t c[2] = {tn[i], fn[i]}, isl[2] = {tl[i], fl[i]};
    for (int k = 0; k < 2; k++) {
      int64_t lim = isl[k] ? (int64_t)nlt : (int64_t)n;
      if (c[k] < 0 || c[k] >= lim)
        return oc_prep_fail(info, e, "node %zu: %s child %lld outside [0, %lld)", i,
                            k ? "false" : "true", (long long)c[k], (long long)lim);
      int64_t code = isl[k] ? -c[k] - 1 : c[k];
      if (k == 0)
        x->t = code;
      else
        x->f = code;
    }
  }
  for (size_t r = 0; r < nr; r++) {
    if (roots[r] < 0 || roots[r] >= (int64_t)n)
      return oc_prep_fail(info, e, "tree_roots[%zu] = %lld outside [0, %zu)", r,
                          (long long)roots[r], n);
    m->roots[r] = roots[r];
  }
  m->n_trees = nr;
  *st = m;
  return OX_OK;
}

/* ---- run ---- */
typedef struct te_job {
  const te_model *m;
  const ox_value *x;
  ox_value *y;
  int64_t *best; /* per row, classifiers */
  int64_t F, T;
  atomic_int status; /* 0 ok, 1 out of memory, 2 cycle */
} te_job;

/* final scores of one row in sc (2 entries at least); returns the label index */
static int64_t te_finish_row(const te_model *m, double *sc, int64_t T) {
  if (m->classifier && m->binary) {
    double s1 = sc[m->bin_id];
    sc[1] = s1;
    sc[0] = m->post == MLC_NONE || m->post == MLC_PROBIT ? 1.0 - s1 : -s1;
    T = 2;
  }
  mlc_post_apply(m->post, sc, (size_t)T);
  int64_t best = 0;
  for (int64_t t = 1; t < T; t++)
    if (sc[t] > sc[best]) best = t;
  return best;
}

static void te_rows(void *arg, int64_t begin, int64_t end) {
  te_job *j = arg;
  const te_model *m = j->m;
  int64_t F = j->F, T = j->T;
  double *buf = malloc((size_t)(F + 2 * T + 2) * sizeof *buf);
  bool *has = malloc((size_t)(T + 1) * sizeof *has);
  if (!buf || !has) {
    atomic_store(&j->status, 1);
    free(buf);
    free(has);
    return;
  }
  double *xr = buf, *sc = buf + F;
  for (int64_t r = begin; r < end; r++) {
    for (int64_t c = 0; c < F; c++) xr[c] = oc_get(j->x->data, j->x->dtype, r * F + c);
    if (te_scores(m, xr, sc, has)) {
      atomic_store(&j->status, 2);
      break;
    }
    int64_t b = te_finish_row(m, sc, T);
    if (j->best) j->best[r] = b;
    if (j->y)
      for (int64_t t = 0; t < T; t++) oc_set(j->y->data, j->y->dtype, r * T + t, sc[t]);
  }
  free(buf);
  free(has);
}

static int te_run(ox_kctx *ctx, void *st) {
  te_model *m = st;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR) return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be a tensor");
  int64_t N, F;
  if (m->v5) {
    if (x->dtype != OX_FLOAT && x->dtype != OX_DOUBLE && x->dtype != OX_FLOAT16)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be float, double or float16");
    if (x->rank != 2 && x->rank != 1)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "X must be [N, F], got rank %zu", x->rank);
    N = x->rank == 2 ? x->dims[0] : 1;
    F = x->dims[x->rank - 1];
  } else if (mlc_input_2d(ctx, x, &N, &F)) {
    return OX_ERUNTIME;
  }
  if (m->max_feature >= F)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "feature id %lld but X has %lld features",
                        (long long)m->max_feature, (long long)F);
  int64_t T = m->n_targets;
  int64_t ydims[2] = {N, T};
  ox_value *y = NULL, *lab = NULL;
  if (m->classifier) {
    int64_t ld = N;
    lab = ox_kctx_output(ctx, 0, m->labels_s ? OX_STRING : OX_INT64, &ld, 1);
    if (!lab) return OX_ERUNTIME;
    if (ox_kctx_output_wanted(ctx, 1)) {
      y = ox_kctx_output(ctx, 1, OX_FLOAT, ydims, 2);
      if (!y) return OX_ERUNTIME;
    }
  } else {
    y = ox_kctx_output(ctx, 0, m->v5 ? x->dtype : OX_FLOAT, ydims, 2);
    if (!y) return OX_ERUNTIME;
  }
  int64_t *best = NULL;
  if (lab) {
    best = malloc((size_t)(N ? N : 1) * sizeof *best);
    if (!best) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  }
  te_job job = {m, x, y, best, F, T, 0};
  /* rows in parallel: a row costs about (trees * depth) node visits */
  int64_t cost = (int64_t)(m->n_trees ? m->n_trees : 1) * 8;
  ox_parallel_for(ox_kctx_pool(ctx), N, cost >= 4096 ? 1 : 4096 / cost, te_rows, &job);
  int rc = OX_OK;
  if (atomic_load(&job.status) == 1)
    rc = ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  else if (atomic_load(&job.status) == 2)
    rc = ox_kctx_fail(ctx, OX_ERUNTIME, "a tree has a cycle");
  for (int64_t r = 0; lab && r < N && !rc; r++) {
    if (m->labels_s)
      rc = mlc_set_str(ctx, lab, r, m->labels_s[best[r]]);
    else
      ((int64_t *)lab->data)[r] = m->labels_i[best[r]];
  }
  free(best);
  return rc;
}

const ox_kernel_def ox_ops_ml_tree[] = {
    {ML_DOMAIN, "TreeEnsemble", 5, 1000, te5_prepare, te_run, NULL},
    {ML_DOMAIN, "TreeEnsembleClassifier", 1, 4, tec_prepare, te_run, NULL},
    {ML_DOMAIN, "TreeEnsembleRegressor", 1, 4, ter_prepare, te_run, NULL},
    {0},
};
