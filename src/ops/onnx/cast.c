/* cast.c - Cast and CastLike between every pair of element types, including
 * the float8 kinds (saturate), float8e8m0 (round_mode), 4/2-bit types and
 * strings (parsed and printed). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../opcore.h"

typedef struct cast_state {
  int32_t to; /* OX_UNDEFINED for CastLike */
  bool saturate;
  int round_mode; /* 0 up, 1 down, 2 nearest */
} cast_state;

static const char *dt_name(int32_t dt) {
  const ox_dtype_info *i = ox_dtype_get(dt);
  return i ? i->name : "?";
}

static bool castable(int32_t dt) {
  return dt > OX_UNDEFINED && dt < OX_DTYPE_COUNT && dt != OX_COMPLEX64 && dt != OX_COMPLEX128;
}

static int cast_prepare_common(const ox_kinfo *info, void **state, ox_err *e, bool like) {
  cast_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  const ox_node *n = info->node;
  if (!like) {
    const ox_attr *to = ox_node_attr(n, "to");
    if (!to) return oc_prep_fail(info, e, "attribute 'to' is required");
    if (to->type == OX_ATTR_STRING || (to->s.data && !to->has_i)) {
      /* Cast-1: the type name as a string ("FLOAT") */
      char name[32];
      size_t k = 0;
      for (; k < to->s.size && k + 1 < sizeof name; k++) name[k] = (char)tolower(to->s.data[k]);
      name[k] = 0;
      s->to = ox_dtype_from_name(name);
    } else
      s->to = (int32_t)to->i;
    if (!castable(s->to)) return oc_prep_fail(info, e, "'to' is not a castable data type");
  }
  s->saturate = ox_node_attr_int(n, "saturate", 1) != 0;
  const char *rm = ox_node_attr_str(n, "round_mode", "up");
  if (strcmp(rm, "up") == 0)
    s->round_mode = 0;
  else if (strcmp(rm, "down") == 0)
    s->round_mode = 1;
  else if (strcmp(rm, "nearest") == 0)
    s->round_mode = 2;
  else
    return oc_prep_fail(info, e, "round_mode must be up, down or nearest, not '%s'", rm);
  *state = s;
  return OX_OK;
}

static int cast_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return cast_prepare_common(info, state, e, false);
}
static int castlike_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  return cast_prepare_common(info, state, e, true);
}

/* ---- strings ---- */

static char *format_elem(const void *data, int32_t dt, int64_t i) {
  char buf[64];
  if (dt == OX_BOOL) {
    snprintf(buf, sizeof buf, "%s", ((const uint8_t *)data)[i] ? "True" : "False");
  } else if (oc_is_int(dt)) {
    if (dt == OX_UINT64)
      snprintf(buf, sizeof buf, "%llu", (unsigned long long)((const uint64_t *)data)[i]);
    else
      snprintf(buf, sizeof buf, "%lld", (long long)oc_get_i64(data, dt, i));
  } else {
    double v = oc_get(data, dt, i);
    if (isnan(v))
      snprintf(buf, sizeof buf, "nan");
    else if (isinf(v))
      snprintf(buf, sizeof buf, v > 0 ? "inf" : "-inf");
    else {
      /* shortest representation that reads back to the same value */
      int maxp = dt == OX_DOUBLE ? 17 : 9;
      for (int p = 1; p <= maxp; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        double r = strtod(buf, NULL);
        if (dt == OX_DOUBLE ? r == v : (float)r == (float)v) break;
      }
    }
  }
  return strdup(buf);
}

static bool ieq(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
  return *a == *b;
}

static double parse_double(const char *s) {
  while (isspace((unsigned char)*s)) s++;
  if (ieq(s, "inf") || ieq(s, "+inf") || ieq(s, "infinity")) return INFINITY;
  if (ieq(s, "-inf") || ieq(s, "-infinity")) return -INFINITY;
  if (ieq(s, "nan") || ieq(s, "+nan") || ieq(s, "-nan")) return NAN;
  if (ieq(s, "true")) return 1;
  if (ieq(s, "false")) return 0;
  return strtod(s, NULL);
}

static void parse_into(void *out, int32_t dt, int64_t i, const char *s, bool sat, int rm) {
  if (!s) s = "";
  if (oc_is_int(dt) && !strpbrk(s, ".eEnNiI")) {
    if (dt == OX_UINT64)
      ((uint64_t *)out)[i] = strtoull(s, NULL, 10);
    else
      oc_set_i64(out, dt, i, strtoll(s, NULL, 10));
    return;
  }
  double v = parse_double(s);
  if (dt >= OX_FLOAT8E4M3FN && dt <= OX_FLOAT8E5M2FNUZ)
    ((uint8_t *)out)[i] = ox_f32_to_f8((float)v, dt, sat);
  else if (dt == OX_FLOAT8E8M0)
    ((uint8_t *)out)[i] = ox_f32_to_e8m0((float)v, sat, rm);
  else
    oc_set(out, dt, i, v);
}

/* ---- numeric fast paths between C types ---- */

/* clang-format off */
#define CT_LIST(X)                                                             \
  X(OX_FLOAT, float) X(OX_DOUBLE, double) X(OX_INT8, int8_t)                    \
  X(OX_INT16, int16_t) X(OX_INT32, int32_t) X(OX_INT64, int64_t)                \
  X(OX_UINT8, uint8_t) X(OX_UINT16, uint16_t) X(OX_UINT32, uint32_t)            \
  X(OX_UINT64, uint64_t)
/* the same list again: a macro cannot expand itself inside its own expansion */
#define CT_LIST2(X)                                                            \
  X(OX_FLOAT, float) X(OX_DOUBLE, double) X(OX_INT8, int8_t)                    \
  X(OX_INT16, int16_t) X(OX_INT32, int32_t) X(OX_INT64, int64_t)                \
  X(OX_UINT8, uint8_t) X(OX_UINT16, uint16_t) X(OX_UINT32, uint32_t)            \
  X(OX_UINT64, uint64_t)
/* clang-format on */

/* int -> int (wrap), int -> float, float -> float: plain C conversion */
#define INNER(DT2, T2)                               \
  case DT2: {                                        \
    T2 *o = out;                                     \
    for (int64_t i = 0; i < n; i++) o[i] = (T2)a[i]; \
    return true;                                     \
  }
#define OUTER(DT1, T1)                                                                \
  case DT1: {                                                                         \
    const T1 *a = in;                                                                 \
    if ((DT1 == OX_FLOAT || DT1 == OX_DOUBLE) && dst != OX_FLOAT && dst != OX_DOUBLE) \
      return false;                                                                   \
    switch (dst) { CT_LIST2(INNER) default : return false; }                          \
  }

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wfloat-conversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#endif
static bool cast_fast(const void *in, int32_t src, void *out, int32_t dst, int64_t n) {
  switch (src) {
    CT_LIST(OUTER)
    default:
      return false;
  }
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* double -> integer with wrap-around like a C conversion on x86 (out of range
 * values are undefined by the spec) */
static int64_t f2i(double v) {
  if (isnan(v) || isinf(v)) return INT64_MIN;
  if (v >= 9223372036854775808.0 || v < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

static void cast_elems(const void *in, int32_t src, void *out, int32_t dst, int64_t n, bool sat,
                       int rm) {
  /* float32 <-> float16 / bfloat16 (the boundary Casts of 16-bit models):
   * the array conversions */
  bool half_src = src == OX_FLOAT16 || src == OX_BFLOAT16;
  bool half_dst = dst == OX_FLOAT16 || dst == OX_BFLOAT16;
  if (src == OX_FLOAT && half_dst) {
    oc_from_f32(in, dst, out, n);
    return;
  }
  if (half_src && dst == OX_FLOAT) {
    oc_to_f32(in, src, out, n);
    return;
  }
  if (cast_fast(in, src, out, dst, n)) return;
  bool src_int = oc_is_int(src) || src == OX_BOOL;
  bool dst_int = oc_is_int(dst) || dst == OX_BOOL;
  for (int64_t i = 0; i < n; i++) {
    if (src_int && dst_int) {
      if (dst == OX_BOOL)
        ((uint8_t *)out)[i] = oc_get_i64(in, src, i) != 0;
      else
        oc_set_i64(out, dst, i, oc_get_i64(in, src, i));
      continue;
    }
    double v = oc_get(in, src, i);
    if (dst == OX_BOOL)
      ((uint8_t *)out)[i] = v != 0;
    else if (dst_int) {
      if (dst == OX_UINT64 && v >= 9223372036854775808.0 && v < 18446744073709551616.0)
        ((uint64_t *)out)[i] = (uint64_t)v;
      else
        oc_set_i64(out, dst, i, f2i(v));
    } else if (dst >= OX_FLOAT8E4M3FN && dst <= OX_FLOAT8E5M2FNUZ)
      ((uint8_t *)out)[i] = ox_f32_to_f8((float)v, dst, sat);
    else if (dst == OX_FLOAT8E8M0)
      ((uint8_t *)out)[i] = ox_f32_to_e8m0((float)v, sat, rm);
    else if (dst == OX_FLOAT16 && src == OX_DOUBLE)
      ((uint16_t *)out)[i] = ox_f32_to_f16((float)v); /* double rounding is negligible here */
    else
      oc_set(out, dst, i, v);
  }
}

typedef struct cast_job {
  const void *in;
  void *out;
  int32_t src, dst;
  size_t ses, des;
  bool sat;
  int rm;
} cast_job;

static void cast_chunk(void *arg, int64_t b, int64_t e) {
  const cast_job *j = arg;
  cast_elems((const uint8_t *)j->in + (size_t)b * j->ses, j->src,
             (uint8_t *)j->out + (size_t)b * j->des, j->dst, e - b, j->sat, j->rm);
}

static int cast_run(ox_kctx *ctx, void *state) {
  const cast_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "input must be a tensor");
  int32_t to = s->to;
  if (to == OX_UNDEFINED) {
    ox_value *like = ox_kctx_input(ctx, 1);
    if (!like || like->kind != OX_VAL_TENSOR)
      return ox_kctx_fail(ctx, OX_ERUNTIME, "target_type must be a tensor");
    to = like->dtype;
  }
  int32_t src = x->dtype;
  if (!castable(src) || !castable(to))
    return ox_kctx_fail(ctx, OX_EUNSUPPORTED, "cast from %s to %s is not supported", dt_name(src),
                        dt_name(to));
  ox_value *y = ox_kctx_output(ctx, 0, to, x->dims, x->rank);
  if (!y) return OX_ENOMEM;
  int64_t n = x->numel;
  if (to == OX_STRING) {
    char **o = y->data;
    for (int64_t i = 0; i < n; i++) {
      if (src == OX_STRING) {
        const char *v = ((char *const *)x->data)[i];
        o[i] = strdup(v ? v : "");
      } else
        o[i] = format_elem(x->data, src, i);
      if (!o[i]) return ox_kctx_fail(ctx, OX_ENOMEM, "out of memory");
    }
    return OX_OK;
  }
  if (src == OX_STRING) {
    char *const *a = x->data;
    for (int64_t i = 0; i < n; i++) parse_into(y->data, to, i, a[i], s->saturate, s->round_mode);
    return OX_OK;
  }
  if (src == to) {
    memcpy(y->data, x->data, (size_t)n * ox_value_elem_size(src));
    return OX_OK;
  }
  cast_job j = {x->data,     y->data,      src, to, ox_value_elem_size(src), ox_value_elem_size(to),
                s->saturate, s->round_mode};
  ox_parallel_for(ox_kctx_pool(ctx), n, 32768, cast_chunk, &j);
  return OX_OK;
}

const ox_kernel_def ox_ops_cast[] = {
    {"", "Cast", 1, 5, cast_prepare, cast_run, NULL},
    {"", "Cast", 6, 1000, cast_prepare, cast_run, NULL},
    {"", "CastLike", 15, 1000, castlike_prepare, cast_run, NULL},
    {0},
};
