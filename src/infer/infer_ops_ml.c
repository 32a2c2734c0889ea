/* infer_ops_ml.c - shape functions of the ai.onnx.ml domain and of the
 * training operators (ai.onnx.preview.training). */
#include <string.h>

#include "infer_impl.h"

static int lp_like_identity(ox_ictx *c) { return ix_same_as_input0(c); }

static ox_dim batch_dim(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  if (ix_shape(c, 0, &x, &r) && r >= 1) return r == 1 ? ox_dim_known(1) : x[0];
  return ox_dim_unknown();
}

static int ml_same_float(ox_ictx *c) { return ix_same_shape_as(c, 0, 0, OX_FLOAT); }

static int ml_same(ox_ictx *c) { return ix_same_shape_as(c, 0, 0, ix_elem(c, 0)); }

static int array_feature_extractor(ox_ictx *c) {
  const ox_dim *x, *y;
  size_t r, yr;
  if (!ix_shape(c, 0, &x, &r) || r == 0) return ix_set_tensor(c, 0, ix_elem(c, 0), NULL, -1), OX_OK;
  ox_dim n = ox_dim_known(1);
  if (ix_shape(c, 1, &y, &yr))
    for (size_t k = 0; k < yr; k++) n = ox_dim_mul(c->a, n, y[k]);
  else
    n = ox_dim_unknown();
  ox_dim *o = ix_dims_new(c, r == 1 ? 2 : r);
  if (!o) return OX_ENOMEM;
  if (r == 1) {
    o[0] = ox_dim_known(1);
    o[1] = n;
    ix_set_tensor(c, 0, ix_elem(c, 0), o, 2);
  } else {
    if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
    o[r - 1] = n;
    ix_set_tensor(c, 0, ix_elem(c, 0), o, (int64_t)r);
  }
  return OX_OK;
}

static int category_mapper(ox_ictx *c) {
  return ix_same_shape_as(c, 0, 0, ix_elem(c, 0) == OX_STRING ? OX_INT64 : OX_STRING);
}

static int label_encoder(ox_ictx *c) {
  int32_t el = OX_UNDEFINED;
  const ox_attr *a;
  if ((a = ix_attr(c, "values_tensor")) && a->t)
    el = a->t->data_type;
  else if (ix_attr(c, "values_strings"))
    el = OX_STRING;
  else if (ix_attr(c, "values_int64s"))
    el = OX_INT64;
  else if (ix_attr(c, "values_floats"))
    el = OX_FLOAT;
  else if (c->since < 2)
    el = ix_elem(c, 0) == OX_STRING ? OX_INT64 : OX_STRING;
  return ix_same_shape_as(c, 0, 0, el);
}

static int classifier(ox_ictx *c, ox_dim classes) {
  const ox_attr *ls = ix_attr(c, "classlabels_strings");
  ox_dim n = batch_dim(c);
  ix_set_tensor(c, 0, ls && ls->n_strings ? OX_STRING : OX_INT64, &n, 1);
  ox_dim z[2] = {n, classes};
  ix_set_tensor(c, 1, OX_FLOAT, z, 2);
  return OX_OK;
}

static ox_dim n_labels(ox_ictx *c) {
  const ox_attr *ls = ix_attr(c, "classlabels_strings"), *li = ix_attr(c, "classlabels_ints");
  if (ls && ls->n_strings) return ox_dim_known((int64_t)ls->n_strings);
  if (li && li->n_ints) return ox_dim_known((int64_t)li->n_ints);
  return ox_dim_unknown();
}

static int linear_classifier(ox_ictx *c) {
  ox_dim k = n_labels(c);
  if (k.has_value && k.value == 1) k = ox_dim_known(ix_attr_int(c, "multi_class", 0) ? 1 : 2);
  return classifier(c, k);
}

static int svm_classifier(ox_ictx *c) { return classifier(c, n_labels(c)); }

static int tree_classifier(ox_ictx *c) {
  ox_dim k = n_labels(c);
  if (k.has_value && k.value == 1) k = ox_dim_known(2);
  return classifier(c, k);
}

static int regressor(ox_ictx *c, const char *attr, int64_t dflt) {
  ox_dim o[2] = {batch_dim(c), ox_dim_known(ix_attr_int(c, attr, dflt))};
  ix_set_tensor(c, 0, OX_FLOAT, o, 2);
  return OX_OK;
}

static int linear_regressor(ox_ictx *c) { return regressor(c, "targets", 1); }

static int tree_regressor(ox_ictx *c) { return regressor(c, "n_targets", 1); }

static int svm_regressor(ox_ictx *c) {
  ox_dim o[2] = {batch_dim(c), ox_dim_known(1)};
  ix_set_tensor(c, 0, OX_FLOAT, o, 2);
  return OX_OK;
}

static int tree_ensemble(ox_ictx *c) {
  ox_dim o[2] = {batch_dim(c), ox_dim_known(ix_attr_int(c, "n_targets", 1))};
  ix_set_tensor(c, 0, ix_elem(c, 0), o, 2);
  return OX_OK;
}

static int one_hot_encoder(ox_ictx *c) {
  const ox_dim *x;
  size_t r;
  const ox_attr *cs = ix_attr(c, "cats_strings"), *ci = ix_attr(c, "cats_int64s");
  ox_dim n = cs && cs->n_strings ? ox_dim_known((int64_t)cs->n_strings)
             : ci && ci->n_ints  ? ox_dim_known((int64_t)ci->n_ints)
                                 : ox_dim_unknown();
  if (!ix_shape(c, 0, &x, &r)) return ix_set_tensor(c, 0, OX_FLOAT, NULL, -1), OX_OK;
  ox_dim *o = ix_dims_new(c, r + 1);
  if (!o) return OX_ENOMEM;
  if (r) memcpy(o, x, r * sizeof *o); /* x is NULL for a scalar */
  o[r] = n;
  ix_set_tensor(c, 0, OX_FLOAT, o, (int64_t)r + 1);
  return OX_OK;
}

static int feature_vectorizer(ox_ictx *c) {
  const int64_t *d;
  size_t n;
  ox_dim o[2] = {batch_dim(c), ox_dim_unknown()};
  if (ix_attr_ints(c, "inputdimensions", &d, &n)) {
    int64_t s = 0;
    for (size_t k = 0; k < n; k++) s += d[k];
    o[1] = ox_dim_known(s);
  }
  ix_set_tensor(c, 0, OX_FLOAT, o, 2);
  return OX_OK;
}

static int dict_vectorizer(ox_ictx *c) {
  const ox_attr *s = ix_attr(c, "string_vocabulary"), *i = ix_attr(c, "int64_vocabulary");
  ox_dim o[2] = {ox_dim_known(1), s && s->n_strings ? ox_dim_known((int64_t)s->n_strings)
                                  : i && i->n_ints  ? ox_dim_known((int64_t)i->n_ints)
                                                    : ox_dim_unknown()};
  int32_t el = OX_UNDEFINED;
  if (c->in[0] && c->in[0]->kind == OX_TYPE_MAP && c->in[0]->elem) el = c->in[0]->elem->elem_type;
  ix_set_tensor(c, 0, el, o, 2);
  return OX_OK;
}

static int cast_map(ox_ictx *c) {
  const ox_attr *ct = ix_attr(c, "cast_to");
  const char *to = ct && ct->s.data ? (const char *)ct->s.data : "TO_FLOAT";
  int32_t el = strcmp(to, "TO_STRING") == 0  ? OX_STRING
               : strcmp(to, "TO_INT64") == 0 ? OX_INT64
                                             : OX_FLOAT;
  const ox_attr *mv = ix_attr(c, "map_form");
  const char *form = mv && mv->s.data ? (const char *)mv->s.data : "DENSE";
  ox_dim o[2] = {ox_dim_known(1), ox_dim_unknown()};
  if (strcmp(form, "SPARSE") == 0) o[1] = ox_dim_known(ix_attr_int(c, "max_map", 1));
  ix_set_tensor(c, 0, el, o, 2);
  return OX_OK;
}

static int zipmap(ox_ictx *c) {
  const ox_attr *ls = ix_attr(c, "classlabels_strings");
  ox_type *v = ox_type_new_tensor(c->a, OX_FLOAT, NULL, 0);
  ox_type *m = ox_arena_alloc(c->a, sizeof *m), *s = ox_arena_alloc(c->a, sizeof *s);
  if (!v || !m || !s) return OX_ENOMEM;
  m->kind = OX_TYPE_MAP;
  m->elem_type = ls && ls->n_strings ? OX_STRING : OX_INT64;
  m->has_elem_type = true;
  m->elem = v;
  s->kind = OX_TYPE_SEQUENCE;
  s->elem = m;
  c->out[0] = s;
  return OX_OK;
}

/* outputs are new values of inputs: optimizer inputs are R, T, then groups */
static int optimizer(ox_ictx *c) {
  size_t groups = strcmp(c->node->op_type, "Adam") == 0 ? 4 : 3; /* X, G, (V,) H */
  size_t n = c->n_in >= 2 ? (c->n_in - 2) / groups : 0;
  size_t out_groups = groups - 1; /* X_new, (V_new,) H_new */
  for (size_t o = 0; o < c->n_out; o++) {
    size_t g = o / (n ? n : 1), k = o % (n ? n : 1);
    size_t in_group = g == 0 ? 0 : g + 1; /* skip G */
    if (g >= out_groups) break;
    size_t in = 2 + in_group * n + k;
    if (in < c->n_in) ix_copy_type(c, o, in);
  }
  return OX_OK;
}

static int gradient(ox_ictx *c) {
  const ox_attr *xs = ix_attr(c, "xs");
  if (!xs) return OX_OK;
  for (size_t o = 0; o < c->n_out && o < xs->n_strings; o++)
    for (size_t i = 0; i < c->n_in; i++)
      if (strcmp(c->node->input[i], (const char *)xs->strings[o].data) == 0) ix_copy_type(c, o, i);
  return OX_OK;
}

const ox_infer_def ox_infer_defs_ml[] = {
    {"ai.onnx.ml", "Binarizer", 1, 1000, lp_like_identity},
    {"ai.onnx.ml", "ArrayFeatureExtractor", 1, 1000, array_feature_extractor},
    {"ai.onnx.ml", "CategoryMapper", 1, 1000, category_mapper},
    {"ai.onnx.ml", "LabelEncoder", 1, 1000, label_encoder},
    {"ai.onnx.ml", "Imputer", 1, 1000, ml_same},
    {"ai.onnx.ml", "Normalizer", 1, 1000, ml_same_float},
    {"ai.onnx.ml", "Scaler", 1, 1000, ml_same_float},
    {"ai.onnx.ml", "LinearClassifier", 1, 1000, linear_classifier},
    {"ai.onnx.ml", "SVMClassifier", 1, 1000, svm_classifier},
    {"ai.onnx.ml", "TreeEnsembleClassifier", 1, 1000, tree_classifier},
    {"ai.onnx.ml", "LinearRegressor", 1, 1000, linear_regressor},
    {"ai.onnx.ml", "SVMRegressor", 1, 1000, svm_regressor},
    {"ai.onnx.ml", "TreeEnsembleRegressor", 1, 1000, tree_regressor},
    {"ai.onnx.ml", "TreeEnsemble", 1, 1000, tree_ensemble},
    {"ai.onnx.ml", "OneHotEncoder", 1, 1000, one_hot_encoder},
    {"ai.onnx.ml", "FeatureVectorizer", 1, 1000, feature_vectorizer},
    {"ai.onnx.ml", "DictVectorizer", 1, 1000, dict_vectorizer},
    {"ai.onnx.ml", "CastMap", 1, 1000, cast_map},
    {"ai.onnx.ml", "ZipMap", 1, 1000, zipmap},
    {"ai.onnx.preview.training", "Adagrad", 1, 1000, optimizer},
    {"ai.onnx.preview.training", "Adam", 1, 1000, optimizer},
    {"ai.onnx.preview.training", "Momentum", 1, 1000, optimizer},
    {"ai.onnx.preview.training", "Gradient", 1, 1000, gradient},
    {NULL, NULL, 0, 0, NULL},
};
