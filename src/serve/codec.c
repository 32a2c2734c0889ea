/* codec.c - tensors in the protocol's JSON: datatypes, request inputs (flat or
 * nested "data") to onnxc values, and output data back to JSON text.
 *
 * Requests are parsed with jansson. Responses are written as text directly:
 * it is faster than building a jansson tree for large outputs, and it prints
 * every UINT64 exactly (jansson's integers are signed 64-bit). */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

/* ---------------------------------------------------------------- buffer */

static bool grow(ox_serve_buf *b, size_t extra) {
  if (b->oom) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) {
    if (cap > SIZE_MAX / 2) {
      b->oom = true;
      return false;
    }
    cap *= 2;
  }
  char *p = realloc(b->data, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->data = p;
  b->cap = cap;
  return true;
}

void ox_serve_buf_put(ox_serve_buf *b, const void *p, size_t n) {
  if (!n || !grow(b, n)) return;
  memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = 0;
}

void ox_serve_buf_puts(ox_serve_buf *b, const char *s) { ox_serve_buf_put(b, s, strlen(s)); }

void ox_serve_buf_printf(ox_serve_buf *b, const char *fmt, ...) {
  va_list ap;
  if (!grow(b, 64)) return;
  va_start(ap, fmt);
  int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= b->cap - b->len) { /* did not fit: grow and print again */
    if (!grow(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
  }
  b->len += (size_t)n;
}

void ox_serve_buf_json_str(ox_serve_buf *b, const char *s, size_t n) {
  ox_serve_buf_put(b, "\"", 1);
  size_t run = 0; /* bytes copied as they are, in one go */
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\') {
      run++;
      continue;
    }
    ox_serve_buf_put(b, s + i - run, run);
    run = 0;
    switch (c) {
      case '"':
        ox_serve_buf_put(b, "\\\"", 2);
        break;
      case '\\':
        ox_serve_buf_put(b, "\\\\", 2);
        break;
      case '\n':
        ox_serve_buf_put(b, "\\n", 2);
        break;
      case '\t':
        ox_serve_buf_put(b, "\\t", 2);
        break;
      case '\r':
        ox_serve_buf_put(b, "\\r", 2);
        break;
      default:
        ox_serve_buf_printf(b, "\\u%04x", c);
    }
  }
  ox_serve_buf_put(b, s + n - run, run);
  ox_serve_buf_put(b, "\"", 1);
}

void ox_serve_reply_error(ox_serve_reply *rep, int status, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  rep->status = status;
  rep->content_type = "application/json";
  rep->header_length = -1;
  rep->body.len = 0;
  rep->body.oom = false;
  ox_serve_buf_puts(&rep->body, "{\"error\":");
  ox_serve_buf_json_str(&rep->body, msg, strlen(msg));
  ox_serve_buf_puts(&rep->body, "}");
}

/* ---------------------------------------------------------------- datatypes */

static const struct {
  const char *name;
  int32_t dtype;
  size_t size;
} dtypes[] = {
    {"BOOL", 9, 1}, {"UINT8", 2, 1}, {"UINT16", 4, 2}, {"UINT32", 12, 4}, {"UINT64", 13, 8},
    {"INT8", 3, 1}, {"INT16", 5, 2}, {"INT32", 6, 4},  {"INT64", 7, 8},   {"FP16", 10, 2},
    {"FP32", 1, 4}, {"FP64", 11, 8}, {"BYTES", 8, 0},  {"BF16", 16, 2},
};

int32_t ox_serve_dtype_from_name(const char *name) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strcmp(dtypes[i].name, name) == 0) return dtypes[i].dtype;
  return 0;
}

const char *ox_serve_dtype_name(int32_t dtype) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (dtypes[i].dtype == dtype) return dtypes[i].name;
  return NULL;
}

size_t ox_serve_dtype_size(int32_t dtype) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (dtypes[i].dtype == dtype) return dtypes[i].size;
  return 0;
}

/* IEEE half and bfloat16, round to nearest even (the public API stores them
   as uint16_t and leaves conversion to the caller) */
static uint16_t f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504 */
  if (ax < 0x38800000u) { /* below 2^-14: a multiple of 2^-24 (exact scaling by 2^24) */
    float a;
    memcpy(&a, &ax, 4);
    return (uint16_t)(sign | (uint16_t)nearbyintf(a * 16777216.0f));
  }
  uint32_t h = ((((ax >> 23) - 127u + 15u) << 10) | ((ax & 0x7fffffu) >> 13));
  uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* a carry into the exponent is right */
  return (uint16_t)(sign | h);
}

static float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
  if (e == 0) {
    float f = ldexpf((float)m, -24);
    return sign ? -f : f;
  }
  if (e == 31)
    x = sign | 0x7f800000u | (m << 13);
  else
    x = sign | ((e - 15u + 127u) << 23) | (m << 13);
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static uint16_t f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static float bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* ---------------------------------------------------------------- request inputs */

int ox_serve_input_parse(json_t *j, ox_serve_input *in, char *err, size_t errsz) {
  memset(in, 0, sizeof *in);
  in->binary_size = -1;
  if (!json_is_object(j)) {
    snprintf(err, errsz, "each element of \"inputs\" must be an object");
    return -1;
  }
  json_t *name = json_object_get(j, "name"), *dt = json_object_get(j, "datatype"),
         *shape = json_object_get(j, "shape"), *params = json_object_get(j, "parameters");
  if (!json_is_string(name)) {
    snprintf(err, errsz, "an input has no \"name\" string");
    return -1;
  }
  in->name = json_string_value(name);
  if (!json_is_string(dt)) {
    snprintf(err, errsz, "input '%s': no \"datatype\" string", in->name);
    return -1;
  }
  in->dtype = ox_serve_dtype_from_name(json_string_value(dt));
  if (!in->dtype) {
    snprintf(err, errsz, "input '%s': unknown datatype '%s'", in->name, json_string_value(dt));
    return -1;
  }
  if (!json_is_array(shape) || json_array_size(shape) > 16) {
    snprintf(err, errsz, "input '%s': \"shape\" must be an array of at most 16 dims", in->name);
    return -1;
  }
  in->rank = json_array_size(shape);
  in->numel = 1;
  for (size_t i = 0; i < in->rank; i++) {
    json_t *d = json_array_get(shape, i);
    if (!json_is_integer(d) || json_integer_value(d) < 0) {
      snprintf(err, errsz, "input '%s': shape[%zu] is not a non-negative integer", in->name, i);
      return -1;
    }
    in->dims[i] = json_integer_value(d);
    /* 2^40 elements is far beyond any body the server accepts: a bound that
       keeps the products below overflow */
    if (in->dims[i] > ((int64_t)1 << 40) ||
        (in->dims[i] && in->numel > ((int64_t)1 << 40) / in->dims[i])) {
      snprintf(err, errsz, "input '%s': shape has too many elements", in->name);
      return -1;
    }
    in->numel *= in->dims[i];
  }
  if (params && !json_is_object(params)) {
    snprintf(err, errsz, "input '%s': \"parameters\" must be an object", in->name);
    return -1;
  }
  json_t *bsz = params ? json_object_get(params, "binary_data_size") : NULL;
  if (bsz) {
    if (!json_is_integer(bsz) || json_integer_value(bsz) < 0) {
      snprintf(err, errsz, "input '%s': binary_data_size must be a non-negative integer", in->name);
      return -1;
    }
    in->binary_size = json_integer_value(bsz);
  }
  in->data = json_object_get(j, "data");
  if (in->binary_size < 0 && !in->data) {
    snprintf(err, errsz, "input '%s': no \"data\" and no binary_data_size", in->name);
    return -1;
  }
  if (in->binary_size >= 0 && in->data) {
    snprintf(err, errsz, "input '%s': both \"data\" and binary_data_size", in->name);
    return -1;
  }
  return 0;
}

/* leaves of nested arrays, in order; -1 when something is neither an array
   nor a scalar */
static int64_t count_leaves(json_t *j) {
  if (!json_is_array(j)) return json_is_object(j) ? -1 : 1;
  int64_t n = 0;
  for (size_t i = 0; i < json_array_size(j); i++) {
    int64_t k = count_leaves(json_array_get(j, i));
    if (k < 0) return -1;
    n += k;
  }
  return n;
}

typedef struct fill_ctx {
  const ox_serve_input *in;
  unsigned char *out; /* numeric storage */
  const char **strs;  /* BYTES */
  size_t *lens;
  int64_t at;
  char *err;
  size_t errsz;
} fill_ctx;

static bool float_of(json_t *j, double *v) {
  if (json_is_number(j)) {
    *v = json_number_value(j);
    return true;
  }
  /* JSON has no NaN or infinity: the server writes them as these strings and
     reads them back */
  const char *s = json_string_value(j);
  if (!s) return false;
  if (strcmp(s, "NaN") == 0 || strcmp(s, "nan") == 0)
    *v = NAN;
  else if (strcmp(s, "Inf") == 0 || strcmp(s, "Infinity") == 0 || strcmp(s, "inf") == 0)
    *v = INFINITY;
  else if (strcmp(s, "-Inf") == 0 || strcmp(s, "-Infinity") == 0 || strcmp(s, "-inf") == 0)
    *v = -INFINITY;
  else
    return false;
  return true;
}

static int fill_leaf(fill_ctx *c, json_t *j) {
  const ox_serve_input *in = c->in;
  int64_t i = c->at++;
  unsigned char *p = c->out ? c->out + (size_t)i * ox_serve_dtype_size(in->dtype) : NULL;
  double d;
  switch (in->dtype) {
    case 8:
      if (!json_is_string(j)) goto bad;
      c->strs[i] = json_string_value(j);
      c->lens[i] = json_string_length(j);
      if (memchr(c->strs[i], 0, c->lens[i])) {
        snprintf(c->err, c->errsz, "input '%s': element %lld holds a NUL byte", in->name,
                 (long long)i);
        return -1;
      }
      return 0;
    case 9:
      if (json_is_boolean(j))
        *p = json_is_true(j) ? 1 : 0;
      else if (json_is_integer(j) && (json_integer_value(j) == 0 || json_integer_value(j) == 1))
        *p = (unsigned char)json_integer_value(j);
      else
        goto bad;
      return 0;
    case 1:
    case 10:
    case 11:
    case 16:
      if (!float_of(j, &d)) goto bad;
      if (in->dtype == 11) {
        memcpy(p, &d, 8);
      } else {
        float f = (float)d;
        if (in->dtype == 1) {
          memcpy(p, &f, 4);
        } else {
          uint16_t h = in->dtype == 10 ? f32_to_f16(f) : f32_to_bf16(f);
          memcpy(p, &h, 2);
        }
      }
      return 0;
    default: {
      if (!json_is_integer(j)) goto bad;
      json_int_t v = json_integer_value(j);
      int64_t lo, hi;
      switch (in->dtype) {
        case 2:
          lo = 0, hi = UINT8_MAX;
          break;
        case 4:
          lo = 0, hi = UINT16_MAX;
          break;
        case 12:
          lo = 0, hi = UINT32_MAX;
          break;
        case 13:
          lo = 0, hi = INT64_MAX;
          break;
        case 3:
          lo = INT8_MIN, hi = INT8_MAX;
          break;
        case 5:
          lo = INT16_MIN, hi = INT16_MAX;
          break;
        case 6:
          lo = INT32_MIN, hi = INT32_MAX;
          break;
        default:
          lo = INT64_MIN, hi = INT64_MAX;
      }
      if (v < lo || v > hi) {
        snprintf(c->err, c->errsz, "input '%s': element %lld (%lld) is out of range for %s",
                 in->name, (long long)i, (long long)v, ox_serve_dtype_name(in->dtype));
        return -1;
      }
      size_t sz = ox_serve_dtype_size(in->dtype);
      /* little-endian hosts: the low bytes of the value are the element */
      if (sz == 1) {
        uint8_t b = (uint8_t)v;
        memcpy(p, &b, 1);
      } else if (sz == 2) {
        uint16_t b = (uint16_t)v;
        memcpy(p, &b, 2);
      } else if (sz == 4) {
        uint32_t b = (uint32_t)v;
        memcpy(p, &b, 4);
      } else {
        int64_t b = v;
        memcpy(p, &b, 8);
      }
      return 0;
    }
  }
bad:
  snprintf(c->err, c->errsz, "input '%s': element %lld is not a %s value", in->name, (long long)i,
           ox_serve_dtype_name(in->dtype));
  return -1;
}

static int fill(fill_ctx *c, json_t *j) {
  if (!json_is_array(j)) return fill_leaf(c, j);
  for (size_t i = 0; i < json_array_size(j); i++)
    if (fill(c, json_array_get(j, i))) return -1;
  return 0;
}

onnxc_value *ox_serve_input_value(const ox_serve_input *in, char *err, size_t errsz) {
  if (in->binary_size >= 0) return ox_serve_binary_value(in, err, errsz);
  int64_t n = count_leaves(in->data);
  if (n < 0) {
    snprintf(err, errsz, "input '%s': \"data\" holds an object", in->name);
    return NULL;
  }
  if (n != in->numel) {
    snprintf(err, errsz, "input '%s': shape needs %lld elements but \"data\" has %lld", in->name,
             (long long)in->numel, (long long)n);
    return NULL;
  }
  onnxc_error e = {0};
  fill_ctx c = {.in = in, .err = err, .errsz = errsz};
  if (in->dtype == 8) {
    c.strs = calloc((size_t)n + 1, sizeof *c.strs);
    c.lens = calloc((size_t)n + 1, sizeof *c.lens);
    onnxc_value *v = NULL;
    if (!c.strs || !c.lens)
      snprintf(err, errsz, "out of memory");
    else if (fill(&c, in->data) == 0) {
      v = onnxc_tensor_create_strings(in->dims, in->rank, c.strs, c.lens, &e);
      if (!v) snprintf(err, errsz, "input '%s': %s", in->name, e.msg);
    }
    free(c.strs);
    free(c.lens);
    return v;
  }
  onnxc_value *v = onnxc_tensor_create(in->dtype, in->dims, in->rank, &e);
  if (!v) {
    snprintf(err, errsz, "input '%s': %s", in->name, e.msg);
    return NULL;
  }
  c.out = onnxc_tensor_data(v);
  if (fill(&c, in->data)) {
    onnxc_value_free(v);
    return NULL;
  }
  return v;
}

/* ---------------------------------------------------------------- output data */

/* appends one number printed by snprintf straight into the buffer */
#define PUT_NUM(b, fmt, val)                                                           \
  do {                                                                                 \
    if (grow(b, 40)) (b)->len += (size_t)snprintf((b)->data + (b)->len, 40, fmt, val); \
  } while (0)

static void put_float(ox_serve_buf *b, double v, bool single) {
  if (isnan(v))
    ox_serve_buf_puts(b, "\"NaN\"");
  else if (isinf(v))
    ox_serve_buf_puts(b, v > 0 ? "\"Inf\"" : "\"-Inf\"");
  else if (single) /* 9 significant digits give back the same float */
    PUT_NUM(b, "%.9g", v);
  else
    PUT_NUM(b, "%.17g", v);
}

/* element i of an integer tensor widened to 64 bits; *is_unsigned for the
   unsigned types (UINT64 needs it to print above 2^63) */
static int64_t int_at(const unsigned char *p, int32_t dt, size_t i, bool *is_unsigned) {
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  int64_t v;
  *is_unsigned = dt == 2 || dt == 4 || dt == 12 || dt == 13;
  switch (ox_serve_dtype_size(dt)) {
    case 1:
      memcpy(&u8, p + i, 1);
      return dt == 3 ? (int8_t)u8 : u8;
    case 2:
      memcpy(&u16, p + 2 * i, 2);
      return dt == 5 ? (int16_t)u16 : u16;
    case 4:
      memcpy(&u32, p + 4 * i, 4);
      return dt == 6 ? (int32_t)u32 : (int64_t)u32;
    default:
      memcpy(&v, p + 8 * i, 8);
      return v;
  }
}

bool ox_serve_json_data(ox_serve_buf *b, const onnxc_value *v) {
  if (onnxc_value_kind(v) != ONNXC_TYPE_TENSOR) return false;
  int32_t dt = onnxc_tensor_dtype(v);
  if (!ox_serve_dtype_name(dt)) return false;
  size_t n = (size_t)onnxc_tensor_numel(v);
  const unsigned char *p = onnxc_tensor_data_const(v);
  ox_serve_buf_put(b, "[", 1);
  for (size_t i = 0; i < n; i++) {
    if (i) ox_serve_buf_put(b, ",", 1);
    if (dt == 8) {
      size_t len = 0;
      const char *s = onnxc_tensor_string(v, i, &len);
      ox_serve_buf_json_str(b, s ? s : "", s ? len : 0);
    } else if (dt == 9) {
      ox_serve_buf_puts(b, p[i] ? "true" : "false");
    } else if (dt == 10 || dt == 16) {
      uint16_t x;
      memcpy(&x, p + 2 * i, 2);
      put_float(b, dt == 10 ? f16_to_f32(x) : bf16_to_f32(x), true);
    } else if (dt == 1) {
      float x;
      memcpy(&x, p + 4 * i, 4);
      put_float(b, x, true);
    } else if (dt == 11) {
      double x;
      memcpy(&x, p + 8 * i, 8);
      put_float(b, x, false);
    } else {
      bool u;
      int64_t x = int_at(p, dt, i, &u);
      if (u)
        PUT_NUM(b, "%llu", (unsigned long long)x);
      else
        PUT_NUM(b, "%lld", (long long)x);
    }
  }
  ox_serve_buf_put(b, "]", 1);
  return true;
}
