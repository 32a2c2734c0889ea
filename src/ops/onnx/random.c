/* random.c - RandomNormal, RandomUniform, RandomNormalLike,
 * RandomUniformLike, Multinomial, Bernoulli and Dropout.
 *
 * Numbers come from the Philox4x32-10 generator of rng.h. With a `seed`
 * attribute the key is the seed and every run of the node gives the same
 * tensor (on every platform and thread count). Without one the key is drawn
 * at prepare time from the clock and the state's address, and each run uses
 * a new stream number (an atomic counter in the prepared state), so
 * successive runs differ. Values cannot match other implementations' numpy or
 * Mersenne-Twister streams bit for bit; they are tested by their statistics.
 *
 * Dropout: versions 1 to 11 have no training switch a runtime can honour
 * (versions 1 and 6 carry is_test, which exported inference models leave at
 * either value); they run in inference mode: Y = X, and the optional mask is
 * all ones (of type T before version 10, bool from 10). From version 12 the
 * optional inputs ratio (default 0.5) and training_mode (default false)
 * select training mode, where mask = (u >= ratio) with u uniform in [0, 1)
 * and Y = X * mask / (1 - ratio). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../datamove.h"
#include "../opcore.h"
#include "rng.h"

enum { RK_NORMAL, RK_UNIFORM, RK_NORMAL_LIKE, RK_UNIFORM_LIKE, RK_MULTINOMIAL, RK_BERNOULLI };

typedef struct rnd_state {
  int kind;
  int64_t since;
  bool seeded;
  uint64_t key;
  _Atomic uint64_t runs;
  int32_t dtype; /* OX_UNDEFINED: from the input */
  double p0, p1; /* mean/scale or low/high */
  int64_t *shape;
  size_t rank;
  int64_t sample_size;
  /* Dropout before 12 */
  float ratio;
} rnd_state;

static const char *dt_name(int32_t dt) {
  const ox_dtype_info *d = ox_dtype_get(dt);
  return d ? d->name : "?";
}

/* Element types of the float tensors of the random ops: float16, float,
 * double, plus bfloat16 from version 22. */
static bool rnd_float_ok(int32_t dt, int64_t since) {
  return dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16 ||
         (dt == OX_BFLOAT16 && since >= 22);
}

/* Bernoulli outputs: the 8- to 64-bit integers, the float types and bool. */
static bool bern_out_ok(int32_t dt) {
  return rnd_float_ok(dt, 22) || dt == OX_BOOL ||
         (oc_is_int(dt) && dt != OX_INT4 && dt != OX_UINT4 && dt != OX_INT2 && dt != OX_UINT2);
}

/* Key from the seed attribute (float for the Random* ops, int for Dropout),
 * or an auto-generated one. */
static void rnd_seed(const ox_kinfo *info, rnd_state *s) {
  const ox_attr *a = ox_node_attr(info->node, "seed");
  if (a && (a->type == OX_ATTR_FLOAT || a->has_f)) {
    double v = a->f;
    if (v == floor(v) && fabs(v) < 9.0e18) {
      s->key = (uint64_t)(int64_t)v;
    } else {
      uint64_t bits;
      memcpy(&bits, &v, sizeof bits);
      s->key = ox_rng_mix(bits);
    }
    s->seeded = true;
  } else if (a && (a->type == OX_ATTR_INT || a->has_i)) {
    s->key = (uint64_t)a->i;
    s->seeded = true;
  } else {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    uint64_t z = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    s->key = ox_rng_mix(z ^ ox_rng_mix((uint64_t)(uintptr_t)s));
    s->seeded = false;
  }
  atomic_init(&s->runs, 0);
}

/* Prepared state of a random node, seeded; NULL with *e set on OOM. */
static rnd_state *rnd_new(const ox_kinfo *info, int kind, ox_err *e) {
  rnd_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) {
    ox_err_set(e, OX_ENOMEM, "out of memory");
    return NULL;
  }
  s->kind = kind;
  s->since = info->since_version;
  rnd_seed(info, s);
  return s;
}

static uint64_t rnd_stream(rnd_state *s) {
  if (s->seeded) return 0;
  return atomic_fetch_add(&s->runs, 1) + 1;
}

/* out[k] = uniform element (first + k), k < n, two per generator block. */
static void rnd_uniforms(uint64_t key, uint64_t stream, uint64_t first, int64_t n, double *out) {
  int64_t k = 0;
  uint64_t w[2];
  if (n > 0 && (first & 1)) {
    ox_rng_block(key, stream, first >> 1, w);
    out[k++] = ox_rng_unit(w[1]);
  }
  for (; k + 1 < n; k += 2) {
    ox_rng_block(key, stream, (first + (uint64_t)k) >> 1, w);
    out[k] = ox_rng_unit(w[0]);
    out[k + 1] = ox_rng_unit(w[1]);
  }
  if (k < n) {
    ox_rng_block(key, stream, (first + (uint64_t)k) >> 1, w);
    out[k] = ox_rng_unit(w[0]);
  }
}

static void rnd_normals(uint64_t key, uint64_t stream, uint64_t first, int64_t n, double *out) {
  for (int64_t k = 0; k < n; k++) out[k] = ox_rng_normal(key, stream, first + (uint64_t)k);
}

/* ------------------------------------------------------------------ */
/* RandomNormal / RandomUniform and their *Like forms                  */

static int rnd_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const char *op = info->node->op_type;
  int kind = !strcmp(op, "RandomNormal")       ? RK_NORMAL
             : !strcmp(op, "RandomUniform")    ? RK_UNIFORM
             : !strcmp(op, "RandomNormalLike") ? RK_NORMAL_LIKE
                                               : RK_UNIFORM_LIKE;
  rnd_state *s = rnd_new(info, kind, e);
  if (!s) return OX_ENOMEM;
  bool normal = kind == RK_NORMAL || kind == RK_NORMAL_LIKE;
  if (normal) {
    s->p0 = ox_node_attr_float(info->node, "mean", 0.0f);
    s->p1 = ox_node_attr_float(info->node, "scale", 1.0f);
  } else {
    s->p0 = ox_node_attr_float(info->node, "low", 0.0f);
    s->p1 = ox_node_attr_float(info->node, "high", 1.0f);
    if (!(s->p1 >= s->p0))
      return oc_prep_fail(info, e, "high (%g) must not be below low (%g)", s->p1, s->p0);
  }
  bool like = kind == RK_NORMAL_LIKE || kind == RK_UNIFORM_LIKE;
  const ox_attr *dt = ox_node_attr(info->node, "dtype");
  s->dtype = dt ? (int32_t)dt->i : (like ? OX_UNDEFINED : OX_FLOAT);
  if (s->dtype != OX_UNDEFINED && !rnd_float_ok(s->dtype, s->since))
    return oc_prep_fail(info, e, "dtype %d (%s) is not a supported output type", (int)s->dtype,
                        dt_name(s->dtype));
  if (!like) {
    const ox_attr *sh = ox_node_attr(info->node, "shape");
    if (!sh || sh->type != OX_ATTR_INTS)
      return oc_prep_fail(info, e, "required attribute 'shape' (list of ints) is missing");
    if (sh->n_ints > OC_MAXRANK)
      return oc_prep_fail(info, e, "shape has rank %zu, more than %d", sh->n_ints, OC_MAXRANK);
    for (size_t i = 0; i < sh->n_ints; i++)
      if (sh->ints[i] < 0)
        return oc_prep_fail(info, e, "shape[%zu] = %lld is negative", i, (long long)sh->ints[i]);
    int64_t n;
    if (!ox_numel(sh->ints, sh->n_ints, &n))
      return oc_prep_fail(info, e, "shape has too many elements");
    s->shape = sh->ints;
    s->rank = sh->n_ints;
  }
  *state = s;
  return OX_OK;
}
typedef struct fill_job {
  const rnd_state *s;
  uint64_t stream;
  int32_t dt;
  void *y;
} fill_job;

enum { FILL_CHUNK = 256 };

static void fill_chunk(void *arg, int64_t b, int64_t e) {
  const fill_job *j = arg;
  const rnd_state *s = j->s;
  bool normal = s->kind == RK_NORMAL || s->kind == RK_NORMAL_LIKE;
  double buf[FILL_CHUNK];
  for (int64_t i = b; i < e; i += FILL_CHUNK) {
    int64_t n = e - i < FILL_CHUNK ? e - i : FILL_CHUNK;
    if (normal) {
      rnd_normals(s->key, j->stream, (uint64_t)i, n, buf);
      for (int64_t k = 0; k < n; k++) buf[k] = s->p0 + s->p1 * buf[k];
    } else {
      rnd_uniforms(s->key, j->stream, (uint64_t)i, n, buf);
      for (int64_t k = 0; k < n; k++) buf[k] = s->p0 + (s->p1 - s->p0) * buf[k];
    }
    if (j->dt == OX_DOUBLE) {
      memcpy((double *)j->y + i, buf, (size_t)n * sizeof(double));
    } else if (j->dt == OX_FLOAT) {
      float *y = (float *)j->y + i;
      for (int64_t k = 0; k < n; k++) y[k] = (float)buf[k];
    } else {
      for (int64_t k = 0; k < n; k++) oc_set(j->y, j->dt, i + k, buf[k]);
    }
    if (!normal && s->p1 > s->p0) {
      /* keep the half-open range [low, high) after rounding to the type */
      for (int64_t k = 0; k < n; k++)
        if (oc_get(j->y, j->dt, i + k) >= s->p1) oc_set(j->y, j->dt, i + k, s->p0);
    }
  }
}

static int rnd_run(ox_kctx *ctx, void *state) {
  rnd_state *s = state;
  const int64_t *dims = s->shape;
  size_t rank = s->rank;
  int32_t dt = s->dtype;
  if (s->kind == RK_NORMAL_LIKE || s->kind == RK_UNIFORM_LIKE) {
    ox_value *x = ox_kctx_input(ctx, 0);
    if (!x || x->kind != OX_VAL_TENSOR)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
    dims = x->dims;
    rank = x->rank;
    if (dt == OX_UNDEFINED) {
      dt = x->dtype;
      if (!rnd_float_ok(dt, s->since))
        return ox_kctx_fail(ctx, OX_ERUNTIME,
                            "input type %s is not a valid output type; set the dtype attribute",
                            dt_name(dt));
    }
  }
  ox_value *y = ox_kctx_output(ctx, 0, dt, dims, rank);
  if (!y) return OX_ENOMEM;
  fill_job j = {s, rnd_stream(s), dt, y->data};
  ox_parallel_for(ox_kctx_pool(ctx), y->numel, 4096, fill_chunk, &j);
  return OX_OK;
}

/* Input 0 as a float tensor of the version's types; NULL with the error set. */
static ox_value *rnd_float_input(ox_kctx *ctx, const rnd_state *s) {
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR) {
    ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
    return NULL;
  }
  if (!rnd_float_ok(x->dtype, s->since)) {
    ox_kctx_fail(ctx, OX_ERUNTIME, "input type %s is not supported", dt_name(x->dtype));
    return NULL;
  }
  return x;
}

/* ------------------------------------------------------------------ */
/* Bernoulli                                                            */

static int prep_bernoulli(const ox_kinfo *info, void **state, ox_err *e) {
  rnd_state *s = rnd_new(info, RK_BERNOULLI, e);
  if (!s) return OX_ENOMEM;
  const ox_attr *dt = ox_node_attr(info->node, "dtype");
  s->dtype = dt ? (int32_t)dt->i : OX_UNDEFINED;
  if (s->dtype != OX_UNDEFINED && !bern_out_ok(s->dtype))
    return oc_prep_fail(info, e, "dtype %d (%s) is not a supported output type", (int)s->dtype,
                        dt_name(s->dtype));
  *state = s;
  return OX_OK;
}

typedef struct bern_job {
  const rnd_state *s;
  uint64_t stream;
  const ox_value *x;
  ox_value *y;
  atomic_bool bad;
} bern_job;

static void bern_chunk(void *arg, int64_t b, int64_t e) {
  bern_job *j = arg;
  double buf[FILL_CHUNK];
  for (int64_t i = b; i < e; i += FILL_CHUNK) {
    int64_t n = e - i < FILL_CHUNK ? e - i : FILL_CHUNK;
    rnd_uniforms(j->s->key, j->stream, (uint64_t)i, n, buf);
    for (int64_t k = 0; k < n; k++) {
      double p = oc_get(j->x->data, j->x->dtype, i + k);
      if (!(p >= 0.0 && p <= 1.0)) atomic_store(&j->bad, true);
      oc_set(j->y->data, j->y->dtype, i + k, buf[k] < p ? 1.0 : 0.0);
    }
  }
}

static int bern_run(ox_kctx *ctx, void *state) {
  rnd_state *s = state;
  ox_value *x = rnd_float_input(ctx, s);
  if (!x) return OX_ERUNTIME;
  int32_t dt = s->dtype == OX_UNDEFINED ? x->dtype : s->dtype;
  ox_value *y = ox_kctx_output(ctx, 0, dt, x->dims, x->rank);
  if (!y) return OX_ENOMEM;
  bern_job j = {s, rnd_stream(s), x, y, false};
  ox_parallel_for(ox_kctx_pool(ctx), y->numel, 4096, bern_chunk, &j);
  if (atomic_load(&j.bad))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input probabilities must lie in [0, 1]");
  return OX_OK;
}

/* ------------------------------------------------------------------ */
/* Multinomial                                                          */

static int prep_multinomial(const ox_kinfo *info, void **state, ox_err *e) {
  rnd_state *s = rnd_new(info, RK_MULTINOMIAL, e);
  if (!s) return OX_ENOMEM;
  s->dtype = (int32_t)ox_node_attr_int(info->node, "dtype", OX_INT32);
  if (s->dtype != OX_INT32 && s->dtype != OX_INT64)
    return oc_prep_fail(info, e, "dtype %d (%s) must be int32 or int64", (int)s->dtype,
                        dt_name(s->dtype));
  s->sample_size = ox_node_attr_int(info->node, "sample_size", 1);
  if (s->sample_size < 1)
    return oc_prep_fail(info, e, "sample_size %lld must be at least 1", (long long)s->sample_size);
  *state = s;
  return OX_OK;
}

static int multinomial_run(ox_kctx *ctx, void *state) {
  rnd_state *s = state;
  ox_value *x = rnd_float_input(ctx, s);
  if (!x) return OX_ERUNTIME;
  if (x->rank != 2)
    return ox_kctx_fail(ctx, OX_ERUNTIME,
                        "input must be 2-D [batch_size, class_size], got rank %zu", x->rank);
  int64_t batch = x->dims[0], classes = x->dims[1];
  if (classes < 1 && batch > 0)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "class_size must be at least 1");
  int64_t od[2] = {batch, s->sample_size};
  int64_t total;
  if (!ox_numel(od, 2, &total)) return ox_kctx_fail(ctx, OX_ENOMEM, "output too large");
  ox_value *y = ox_kctx_output(ctx, 0, s->dtype, od, 2);
  if (!y) return OX_ENOMEM;
  if (total == 0) return OX_OK;
  double *cdf = malloc((size_t)classes * sizeof *cdf);
  if (!cdf) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
  uint64_t stream = rnd_stream(s);
  for (int64_t b = 0; b < batch; b++) {
    double m = -INFINITY;
    for (int64_t c = 0; c < classes; c++) {
      double v = oc_get(x->data, x->dtype, b * classes + c);
      if (isnan(v)) {
        free(cdf);
        return ox_kctx_fail(ctx, OX_ERUNTIME, "NaN log-probability at [%lld, %lld]", (long long)b,
                            (long long)c);
      }
      if (v > m) m = v;
    }
    if (m == -INFINITY || m == INFINITY) {
      free(cdf);
      return ox_kctx_fail(ctx, OX_ERUNTIME, "row %lld has no finite maximum log-probability",
                          (long long)b);
    }
    double acc = 0;
    for (int64_t c = 0; c < classes; c++) {
      acc += exp(oc_get(x->data, x->dtype, b * classes + c) - m);
      cdf[c] = acc;
    }
    for (int64_t k = 0; k < s->sample_size; k++) {
      int64_t i = b * s->sample_size + k;
      double u = ox_rng_uniform(s->key, stream, (uint64_t)i) * acc;
      int64_t lo = 0, hi = classes - 1; /* first c with cdf[c] > u */
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > u)
          hi = mid;
        else
          lo = mid + 1;
      }
      oc_set_i64(y->data, s->dtype, i, lo);
    }
  }
  free(cdf);
  return OX_OK;
}

/* ------------------------------------------------------------------ */
/* Dropout                                                              */

static int prep_dropout(const ox_kinfo *info, void **state, ox_err *e) {
  rnd_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->since = info->since_version;
  s->ratio = ox_node_attr_float(info->node, "ratio", 0.5f);
  if (s->since < 12 && !(s->ratio >= 0.0f && s->ratio < 1.0f))
    return oc_prep_fail(info, e, "ratio %g must lie in [0, 1)", (double)s->ratio);
  if (s->since >= 12) rnd_seed(info, s);
  *state = s;
  return OX_OK;
}

static bool dropout_type_ok(int32_t dt, int64_t since) {
  if (dt == OX_FLOAT || dt == OX_DOUBLE || dt == OX_FLOAT16) return true;
  if (dt == OX_BFLOAT16) return since >= 13;
  if (dt == OX_FLOAT8E4M3FN || dt == OX_FLOAT8E4M3FNUZ || dt == OX_FLOAT8E5M2 ||
      dt == OX_FLOAT8E5M2FNUZ)
    return since >= 22;
  return false;
}

typedef struct drop_job {
  uint64_t key, stream;
  double ratio, scale;
  const ox_value *x;
  ox_value *y;
  uint8_t *mask;
} drop_job;

static void drop_chunk(void *arg, int64_t b, int64_t e) {
  const drop_job *j = arg;
  double buf[FILL_CHUNK];
  int32_t dt = j->x->dtype;
  for (int64_t i = b; i < e; i += FILL_CHUNK) {
    int64_t n = e - i < FILL_CHUNK ? e - i : FILL_CHUNK;
    rnd_uniforms(j->key, j->stream, (uint64_t)i, n, buf);
    for (int64_t k = 0; k < n; k++) {
      bool keep = buf[k] >= j->ratio;
      if (j->mask) j->mask[i + k] = keep;
      if (dt == OX_FLOAT) {
        const float *x = j->x->data;
        ((float *)j->y->data)[i + k] = keep ? (float)(x[i + k] * j->scale) : 0.0f * x[i + k];
      } else if (dt == OX_DOUBLE) {
        const double *x = j->x->data;
        ((double *)j->y->data)[i + k] = keep ? x[i + k] * j->scale : 0.0 * x[i + k];
      } else {
        double v = oc_get(j->x->data, dt, i + k);
        oc_set(j->y->data, dt, i + k, keep ? v * j->scale : 0.0 * v);
      }
    }
  }
}

static int dropout_run(ox_kctx *ctx, void *state) {
  rnd_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
  if (!dropout_type_ok(x->dtype, s->since))
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input type %s is not supported", dt_name(x->dtype));
  bool training = false;
  double ratio = 0.5;
  if (s->since >= 12) {
    ox_value *r = ox_kctx_input(ctx, 1), *t = ox_kctx_input(ctx, 2);
    if (r) {
      if (r->kind != OX_VAL_TENSOR || r->numel != 1 || !dropout_type_ok(r->dtype, s->since))
        return ox_kctx_fail(ctx, OX_ERUNTIME, "ratio must be a floating-point scalar");
      ratio = oc_get(r->data, r->dtype, 0);
    }
    if (t) {
      if (t->kind != OX_VAL_TENSOR || t->numel != 1 || t->dtype != OX_BOOL)
        return ox_kctx_fail(ctx, OX_ERUNTIME, "training_mode must be a bool scalar");
      training = ((const uint8_t *)t->data)[0] != 0;
    }
    if (training && !(ratio >= 0.0 && ratio < 1.0))
      return ox_kctx_fail(ctx, OX_ERUNTIME, "ratio %g must lie in [0, 1)", ratio);
    if (ratio == 0.0) training = false;
  }
  ox_value *y = NULL;
  if (training) {
    y = ox_kctx_output(ctx, 0, x->dtype, x->dims, x->rank);
    if (!y) return OX_ENOMEM;
  } else { /* inference: the input itself */
    int rc = ox_dm_view_out(ctx, 0, x, x->dims, x->rank);
    if (rc) return rc;
  }
  ox_value *mask = NULL;
  if (ox_kctx_n_outputs(ctx) > 1 && ox_kctx_output_wanted(ctx, 1)) {
    int32_t mdt = s->since < 10 ? x->dtype : OX_BOOL;
    mask = ox_kctx_output(ctx, 1, mdt, x->dims, x->rank);
    if (!mask) return OX_ENOMEM;
  }
  if (!training) {
    if (mask) {
      if (mask->dtype == OX_BOOL)
        memset(mask->data, 1, (size_t)mask->numel);
      else
        for (int64_t i = 0; i < mask->numel; i++) oc_set(mask->data, mask->dtype, i, 1.0);
    }
    return OX_OK;
  }
  drop_job j = {
      s->key, rnd_stream(s), ratio, 1.0 / (1.0 - ratio), x, y, mask ? (uint8_t *)mask->data : NULL};
  ox_parallel_for(ox_kctx_pool(ctx), x->numel, 4096, drop_chunk, &j);
  return OX_OK;
}

const ox_kernel_def ox_ops_random[] = {
    {"", "RandomNormal", 1, 21, rnd_prepare, rnd_run, NULL},
    {"", "RandomNormal", 22, 1000, rnd_prepare, rnd_run, NULL},
    {"", "RandomUniform", 1, 21, rnd_prepare, rnd_run, NULL},
    {"", "RandomUniform", 22, 1000, rnd_prepare, rnd_run, NULL},
    {"", "RandomNormalLike", 1, 21, rnd_prepare, rnd_run, NULL},
    {"", "RandomNormalLike", 22, 1000, rnd_prepare, rnd_run, NULL},
    {"", "RandomUniformLike", 1, 21, rnd_prepare, rnd_run, NULL},
    {"", "RandomUniformLike", 22, 1000, rnd_prepare, rnd_run, NULL},
    {"", "Bernoulli", 15, 21, prep_bernoulli, bern_run, NULL},
    {"", "Bernoulli", 22, 1000, prep_bernoulli, bern_run, NULL},
    {"", "Multinomial", 7, 21, prep_multinomial, multinomial_run, NULL},
    {"", "Multinomial", 22, 1000, prep_multinomial, multinomial_run, NULL},
    {"", "Dropout", 1, 5, prep_dropout, dropout_run, NULL},
    {"", "Dropout", 6, 6, prep_dropout, dropout_run, NULL},
    {"", "Dropout", 7, 9, prep_dropout, dropout_run, NULL},
    {"", "Dropout", 10, 11, prep_dropout, dropout_run, NULL},
    {"", "Dropout", 12, 12, prep_dropout, dropout_run, NULL},
    {"", "Dropout", 13, 21, prep_dropout, dropout_run, NULL},
    {"", "Dropout", 22, 1000, prep_dropout, dropout_run, NULL},
    {0},
};
