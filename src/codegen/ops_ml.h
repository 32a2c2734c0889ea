/* ops_ml.h - what the ai.onnx.ml generators share: ops_ml.c (the table,
 * the element-wise and feature operators), ops_ml_tree.c (the tree
 * ensembles) and ops_ml_linear.c (the linear and SVM models). They compute
 * in double where the runtime does (src/ops/ml/), in float with
 * --float-only. */
#ifndef OX_CG_OPS_ML_H
#define OX_CG_OPS_ML_H

#include "cg_impl.h"

/* The accumulation type: double as the runtime, float with --float-only. */
bool cg_ml_acc_float(const cg_ctx *c);
const char *cg_ml_acc(const cg_ctx *c);
/* An exact literal of v in the accumulation type. */
void cg_ml_lit(const cg_ctx *c, char *buf, size_t size, double v);

/* An attribute tensor's elements as doubles (and as int64 in ints, when
 * ints is not NULL); *present false when absent. Strings refused. */
int cg_ml_tensor_attr(cg_ctx *c, const ox_node *n, const char *name, double **d, int64_t **ints,
                      size_t *cnt, int32_t *dtype, bool *present);
/* A float list attribute, or its NAME_as_tensor form, as doubles (NULL and
 * *cnt 0 when absent; both set is an error). */
int cg_ml_doubles(cg_ctx *c, const ox_node *n, const char *name, double **out, size_t *cnt);
/* Static constant tables in the node's function: doubles in the
 * accumulation type, integers in `type`. */
void cg_ml_table_d(cg_ctx *c, const char *name, const double *v, size_t n);
void cg_ml_table_i(cg_ctx *c, const char *type, const char *name, const int64_t *v, size_t n);

/* post_transform: 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT */
enum { CG_ML_NONE, CG_ML_SOFTMAX, CG_ML_LOGISTIC, CG_ML_SOFTMAX_ZERO, CG_ML_PROBIT };
/* The string form of the classic operators' attribute (default NONE). */
int cg_ml_post_parse(cg_ctx *c, const ox_node *n, int *post);
/* Writes, indented by ind, the transform of the t scores of array `sc`
 * (the accumulation type) in place, as mlc_post_apply. */
void cg_ml_post(cg_ctx *c, int post, const char *sc, int64_t t, const char *ind);
/* The PROBIT of expression p (sqrt(2) erfinv(2p - 1), erfinv by Newton
 * steps on erf as the runtime) into lvalue `dst`, indented by ind. */
void cg_ml_probit(cg_ctx *c, const char *dst, const char *p, const char *ind);

/* X of the classic operators: float, double, int32 or int64, [C] (one row)
 * or [N, C]. */
int cg_ml_input_2d(cg_ctx *c, const cg_val *x, int64_t *N, int64_t *C);
/* The class labels of a classifier (classlabels_<ints>; strings refused). */
int cg_ml_labels(cg_ctx *c, const ox_node *n, const char *ints, const int64_t **li, size_t *nl);

/* the generators of ops_ml_tree.c and ops_ml_linear.c (ops_ml.c's table) */
int cg_ml_gen_tree_ensemble(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                            size_t n_out);
int cg_ml_gen_tree_classifier(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                              cg_val **out, size_t n_out);
int cg_ml_gen_tree_regressor(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                             size_t n_out);
int cg_ml_gen_linear_classifier(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                                cg_val **out, size_t n_out);
int cg_ml_gen_linear_regressor(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in,
                               cg_val **out, size_t n_out);
int cg_ml_gen_svm_classifier(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                             size_t n_out);
int cg_ml_gen_svm_regressor(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, cg_val **out,
                            size_t n_out);

#endif
