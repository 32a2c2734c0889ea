/* ml_common.h - helpers shared by the ai.onnx.ml kernels (ml.c, ml_linear.c,
 * ml_tree.c): attribute reading into the session arena, tensor attributes
 * as double/int64/string arrays, key look-up tables, score post-transforms,
 * map input access. */
#ifndef OX_ML_COMMON_H
#define OX_ML_COMMON_H

#include "../opcore.h"

#define ML_DOMAIN "ai.onnx.ml"

/* list attributes (NULL and *n = 0 when absent) */
const float *mlc_floats(const ox_node *n, const char *name, size_t *cnt);
const int64_t *mlc_ints(const ox_node *n, const char *name, size_t *cnt);
/* strings copied NUL-terminated into the arena; *ok false on OOM */
char **mlc_strings(const ox_kinfo *info, const char *name, size_t *cnt, bool *ok);
bool mlc_has(const ox_node *n, const char *name);
/* truncation toward zero; 0 for NaN and values outside int64 */
int64_t mlc_to_i64(double v);

/* A tensor attribute read as numbers (d, and i for integer types) or
 * strings; dtype is the attribute tensor's type. present false if absent. */
typedef struct mlc_tarr {
  bool present;
  int32_t dtype;
  size_t n;
  double *d;
  int64_t *i;
  char **s;
} mlc_tarr;
int mlc_tensor_attr(const ox_kinfo *info, const char *name, mlc_tarr *out, ox_err *e);

/* post_transform */
typedef enum mlc_post {
  MLC_NONE = 0,
  MLC_SOFTMAX = 1,
  MLC_LOGISTIC = 2,
  MLC_SOFTMAX_ZERO = 3,
  MLC_PROBIT = 4
} mlc_post;
int mlc_post_parse(const ox_kinfo *info, const char *s, mlc_post *out, ox_err *e);
/* Applies the transform to one row of scores in place. */
void mlc_post_apply(mlc_post p, double *s, size_t n);
double mlc_probit(double p); /* sqrt(2) * erfinv(2p - 1) */

/* Key look-up: sorted copy of keys for binary search; the last duplicate
 * wins. Kinds: string, int64, double (NaN keys match any NaN). */
typedef enum mlc_kkind { MLC_KSTR, MLC_KINT, MLC_KDBL } mlc_kkind;
typedef struct mlc_kent {
  const char *s;
  int64_t i;
  double d;
  size_t idx;
} mlc_kent;
typedef struct mlc_lookup {
  mlc_kkind kind;
  size_t n;
  mlc_kent *e;
} mlc_lookup;
int mlc_lookup_build(ox_arena *a, mlc_lookup *lk, mlc_kkind kind, char *const *s, const int64_t *i,
                     const double *d, size_t n);
/* index of the key, or -1 */
int64_t mlc_lookup_str(const mlc_lookup *lk, const char *s);
int64_t mlc_lookup_int(const mlc_lookup *lk, int64_t v);
int64_t mlc_lookup_dbl(const mlc_lookup *lk, double v);

/* Numeric input tensor checks: rank 1 [C] (treated as [1,C]) or 2 [N,C]. */
int mlc_input_2d(ox_kctx *ctx, const ox_value *x, int64_t *N, int64_t *C);
bool mlc_is_numeric_in(int32_t dt); /* float, double, int32, int64 */

/* Map inputs: keys tensor and value i (vals: 1-D tensor or sequence of scalars). */
int mlc_map_check(ox_kctx *ctx, const ox_value *m, int64_t *n);
int32_t mlc_map_val_dtype(const ox_value *m);
double mlc_map_val_num(const ox_value *m, int64_t i);
const char *mlc_map_val_str(const ox_value *m, int64_t i);

/* Sets a string element of an owned string tensor (malloc'd copy). */
int mlc_set_str(ox_kctx *ctx, ox_value *t, int64_t i, const char *s);

#endif
