/* print.c - printer of the ONNX textual syntax. The output parses back (with
 * parse.c) to the same model, apart from the fields listed in
 * docs/text-format.md. Fields the reference syntax has no place for are
 * written in a header `<key: value, ...>` before the thing they belong to. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/floatconv.h"
#include "text.h"
#include "text_int.h"

#define IND 3 /* spaces per level, as the reference printer */

typedef struct W {
  ox_buf *b;
  ox_err *e;
  int rc;
} W;

static void fail(W *w, int code, const char *fmt, const char *what) {
  if (w->rc == OX_OK) w->rc = ox_err_set(w->e, code, fmt, what ? what : "");
}

static void puts_(W *w, const char *s) { ox_buf_puts(w->b, s); }
static void putc_(W *w, char c) { ox_buf_putc(w->b, c); }

static void indent(W *w, int lvl) {
  if (!ox_buf_reserve(w->b, (size_t)lvl * IND + 1)) return;
  memset(w->b->data + w->b->size, ' ', (size_t)lvl * IND);
  w->b->size += (size_t)lvl * IND;
}

static void nl(W *w, int lvl) {
  putc_(w, '\n');
  indent(w, lvl);
}

/* "..." with \ and " escaped */
static void put_qbytes(W *w, const uint8_t *s, size_t n) {
  if (!ox_buf_reserve(w->b, 2 * n + 2)) return;
  uint8_t *d = w->b->data + w->b->size, *d0 = d;
  *d++ = '"';
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"' || s[i] == '\\') *d++ = '\\';
    *d++ = s[i];
  }
  *d++ = '"';
  w->b->size += (size_t)(d - d0);
}

static void put_qstr(W *w, const char *s) { put_qbytes(w, (const uint8_t *)s, strlen(s)); }

/* a name, bare when it is an identifier (and, if strict, not a reserved word) */
static void put_name(W *w, const char *s, bool strict) {
  if (!s) s = "";
  size_t n = strlen(s);
  if (ox_text_is_id(s, n) && !(strict && ox_text_is_reserved(s, n)))
    ox_buf_append(w->b, s, n);
  else
    put_qbytes(w, (const uint8_t *)s, n);
}

static void put_i64(W *w, int64_t v) {
  char buf[24];
  int k = snprintf(buf, sizeof buf, "%lld", (long long)v);
  ox_buf_append(w->b, buf, (size_t)k);
}

/* ---- numbers ---- */
static const double pow10_tab[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* appends ".0" when s would read as an integer */
static int floatify(char *s, int n) {
  for (int i = 0; i < n; i++)
    if (s[i] == '.' || s[i] == 'e' || s[i] == 'n' || s[i] == 'i') return n;
  s[n++] = '.';
  s[n++] = '0';
  s[n] = 0;
  return n;
}

/* writes the digits m (an integer < 1e17) times 10^x in %g-like style */
static int fmt_digits(char *out, bool neg, uint64_t m, int x) {
  char dig[24];
  int nd = 0;
  while (m) dig[nd++] = (char)('0' + m % 10), m /= 10;
  /* dig is reversed; drop trailing zeros (leading in dig) */
  int lo = 0;
  while (lo < nd - 1 && dig[lo] == '0') lo++, x++;
  int len = nd - lo;   /* significant digits */
  int e = x + len - 1; /* exponent of the leading digit */
  char *o = out;
  if (neg) *o++ = '-';
  if (e < -5 || e >= 17) {
    *o++ = dig[nd - 1];
    if (len > 1) {
      *o++ = '.';
      for (int i = nd - 2; i >= lo; i--) *o++ = dig[i];
    }
    o += sprintf(o, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
  } else if (e >= 0) {
    for (int i = 0; i <= e; i++) *o++ = i < len ? dig[nd - 1 - i] : '0';
    *o++ = '.';
    if (len > e + 1)
      for (int i = e + 1; i < len; i++) *o++ = dig[nd - 1 - i];
    else
      *o++ = '0';
  } else {
    *o++ = '0';
    *o++ = '.';
    for (int i = 0; i < -e - 1; i++) *o++ = '0';
    for (int i = 0; i < len; i++) *o++ = dig[nd - 1 - i];
  }
  *o = 0;
  return (int)(o - out);
}

/* shortest decimal (up to 9 digits) that reads back as exactly f; always
 * looks like a float literal (has '.', 'e', or is inf/nan) */
static int fmt_f32(char *out, float f) {
  if (isnan(f)) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    uint32_t pl = bits & 0x7FFFFFu;
    if (pl == 0x400000u) return sprintf(out, signbit(f) ? "-nan" : "nan");
    return sprintf(out, "%snan(0x%x)", signbit(f) ? "-" : "", (unsigned)pl);
  }
  if (isinf(f)) return sprintf(out, f < 0 ? "-inf" : "inf");
  if (f == 0) return sprintf(out, signbit(f) ? "-0.0" : "0.0");
  double v = fabs((double)f);
  int e2;
  frexp(v, &e2);
  /* decimal exponent of the leading digit: floor(log10(v)), maybe one too low */
  int e10 = (int)floor((e2 - 1) * 0.30102999566398120);
  int k = e10 + 1;
  if (k >= 0 ? k <= 22 && v >= pow10_tab[k] : -k <= 22 && v * pow10_tab[-k] >= 1.0) e10++;
  /* the n-digit rounding of v reads back as f for all n >= the shortest such
   * n (a longer rounding is never farther away): search downwards from 9 */
  uint64_t best = 0;
  int best_s = 0;
  for (int prec = 9; prec >= 1; prec--) {
    int s = prec - 1 - e10;
    if (s > 22 || s < -22) break;
    double m = s >= 0 ? v * pow10_tab[s] : v / pow10_tab[-s];
    m = (double)(uint64_t)(m + 0.5);
    double back = s >= 0 ? m / pow10_tab[s] : m * pow10_tab[-s];
    float fb = (float)back;
    if (fb != (float)v) break;
    /* reject exact float midpoints (25 significant bits: the low 29 bits of the
     * double's significand are 1 followed by zeros): strtof could round them
     * the other way */
    uint64_t bits;
    memcpy(&bits, &back, 8);
    if ((bits & 0x1FFFFFFFu) == 0x10000000u) break;
    best = (uint64_t)m;
    best_s = s;
  }
  if (best) return fmt_digits(out, f < 0, best, -best_s);
  int n = sprintf(out, "%.9g", (double)f);
  return floatify(out, n);
}

static int fmt_f64(char *out, double d) {
  if (isnan(d)) {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    uint64_t pl = bits & 0xFFFFFFFFFFFFFull;
    if (pl == 0x8000000000000ull) return sprintf(out, signbit(d) ? "-nan" : "nan");
    return sprintf(out, "%snan(0x%llx)", signbit(d) ? "-" : "", (unsigned long long)pl);
  }
  if (isinf(d)) return sprintf(out, d < 0 ? "-inf" : "inf");
  int n = sprintf(out, "%.15g", d);
  if (strtod(out, NULL) != d) n = sprintf(out, "%.17g", d);
  return floatify(out, n);
}

static void put_f32(W *w, float f) {
  char buf[48];
  int n = fmt_f32(buf, f);
  ox_buf_append(w->b, buf, (size_t)n);
}

static void put_f64(W *w, double d) {
  char buf[48];
  int n = fmt_f64(buf, d);
  ox_buf_append(w->b, buf, (size_t)n);
}

/* a float16/bfloat16/float8/float4 element: a decimal when it reads back to
 * the same bits, else the bit pattern */
static void put_small_float(W *w, int32_t dt, uint32_t bits) {
  float f;
  switch (dt) {
    case OX_FLOAT16:
      f = ox_f16_to_f32((uint16_t)bits);
      break;
    case OX_BFLOAT16:
      f = ox_bf16_to_f32((uint16_t)bits);
      break;
    case OX_FLOAT8E8M0:
      f = ox_e8m0_to_f32((uint8_t)bits);
      break;
    case OX_FLOAT4E2M1:
      f = ox_f4_to_f32((uint8_t)bits);
      break;
    default:
      f = ox_f8_to_f32((uint8_t)bits, dt);
      break;
  }
  if (!isnan(f) && ox_text_small_float_bits(dt, f) == bits)
    put_f32(w, f);
  else
    put_i64(w, (int64_t)bits);
}

/* ---- types ---- */
static bool put_type(W *w, const ox_type *t);

static bool put_elem(W *w, int32_t dt, bool has) {
  const ox_dtype_info *di = ox_dtype_get(dt);
  if (!has || !di || dt == OX_UNDEFINED) {
    fail(w, OX_EUNSUPPORTED, "a type without an element type has no text form%s", NULL);
    return false;
  }
  puts_(w, di->name);
  return true;
}

static void put_shape(W *w, const ox_shape *sh) {
  if (!sh) {
    puts_(w, "[]");
    return;
  }
  if (!sh->n_dim) return;
  putc_(w, '[');
  for (size_t i = 0; i < sh->n_dim; i++) {
    if (i) putc_(w, ',');
    const ox_dim *d = &sh->dim[i];
    if (d->has_value)
      put_i64(w, d->value);
    else if (d->param)
      put_name(w, d->param, false);
    else
      putc_(w, '?');
  }
  putc_(w, ']');
}

/* an opaque name: bare when it is a dotted identifier */
static void put_dotted(W *w, const char *s) {
  size_t n = strlen(s), st = 0;
  bool ok = n > 0;
  for (size_t i = 0; i <= n && ok; i++)
    if (i == n || s[i] == '.') {
      ok = ox_text_is_id(s + st, i - st) && !ox_text_is_reserved(s + st, i - st);
      st = i + 1;
    }
  if (ok)
    puts_(w, s);
  else
    put_qstr(w, s);
}

static bool put_type(W *w, const ox_type *t) {
  switch (t->kind) {
    case OX_TYPE_TENSOR:
      if (!put_elem(w, t->elem_type, t->has_elem_type)) return false;
      put_shape(w, t->shape);
      return true;
    case OX_TYPE_SPARSE_TENSOR:
      puts_(w, "sparse_tensor(");
      if (!put_elem(w, t->elem_type, t->has_elem_type)) return false;
      put_shape(w, t->shape);
      putc_(w, ')');
      return true;
    case OX_TYPE_SEQUENCE:
    case OX_TYPE_OPTIONAL:
      puts_(w, t->kind == OX_TYPE_SEQUENCE ? "seq(" : "optional(");
      if (!t->elem) {
        fail(w, OX_EUNSUPPORTED, "a seq/optional type without element type has no text form%s",
             NULL);
        return false;
      }
      if (!put_type(w, t->elem)) return false;
      putc_(w, ')');
      return true;
    case OX_TYPE_MAP:
      puts_(w, "map(");
      if (!put_elem(w, t->elem_type, t->has_elem_type)) return false;
      puts_(w, ", ");
      if (!t->elem) {
        fail(w, OX_EUNSUPPORTED, "a map type without value type has no text form%s", NULL);
        return false;
      }
      if (!put_type(w, t->elem)) return false;
      putc_(w, ')');
      return true;
    case OX_TYPE_OPAQUE:
      puts_(w, "opaque(");
      if (t->opaque_domain) {
        put_dotted(w, t->opaque_domain);
        puts_(w, ", ");
        put_name(w, t->opaque_name ? t->opaque_name : "", false);
      } else if (t->opaque_name) {
        put_dotted(w, t->opaque_name);
      }
      putc_(w, ')');
      return true;
    case OX_TYPE_NONE:
      puts_(w, "undefined");
      return true;
    default:
      fail(w, OX_EUNSUPPORTED, "a TypeProto of an unknown kind has no text form%s", NULL);
      return false;
  }
}

/* ---- headers ---- */
static void put_pairs(W *w, const ox_str_pair *kv, size_t n) {
  putc_(w, '[');
  for (size_t i = 0; i < n; i++) {
    if (i) puts_(w, ", ");
    put_qstr(w, kv[i].key ? kv[i].key : "");
    puts_(w, ": ");
    put_qstr(w, kv[i].value ? kv[i].value : "");
  }
  putc_(w, ']');
}

typedef struct hdr_out {
  int n;
} hdr_out;

static void hkey(W *w, hdr_out *h, const char *key) {
  puts_(w, h->n++ ? ", " : "<");
  puts_(w, key);
  puts_(w, ": ");
}

static void hend(W *w, hdr_out *h) {
  if (h->n) puts_(w, "> ");
}

static void put_doc_meta(W *w, hdr_out *h, const char *doc, const ox_str_pair *meta, size_t n) {
  if (doc) hkey(w, h, "doc_string"), put_qstr(w, doc);
  if (n) hkey(w, h, "metadata_props"), put_pairs(w, meta, n);
}

/* ---- tensors ---- */
static bool is_external(const ox_tensor *t) {
  return (t->has_data_location && t->data_location == 1) || t->n_external_data;
}

static void put_tensor_header(W *w, const ox_tensor *t) {
  hdr_out h = {0};
  put_doc_meta(w, &h, t->doc_string, t->metadata_props, t->n_metadata_props);
  if (t->raw_data.data && !is_external(t)) hkey(w, &h, "raw_data"), puts_(w, "true");
  if (t->has_data_location && !(t->data_location == 1 && t->n_external_data))
    hkey(w, &h, "data_location"), put_i64(w, t->data_location);
  if (t->segment && t->segment->has_begin && t->segment->has_end) {
    hkey(w, &h, "segment");
    putc_(w, '[');
    put_i64(w, t->segment->begin);
    puts_(w, ", ");
    put_i64(w, t->segment->end);
    putc_(w, ']');
  }
  hend(w, &h);
}

static bool put_tensor_type(W *w, const ox_tensor *t) {
  if (!put_elem(w, t->data_type, t->has_data_type)) return false;
  if (t->n_dims) {
    putc_(w, '[');
    for (size_t i = 0; i < t->n_dims; i++) {
      if (i) putc_(w, ',');
      put_i64(w, t->dims[i]);
    }
    putc_(w, ']');
  }
  return true;
}

static uint64_t rd_le(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static int64_t sext(uint64_t v, unsigned bits) {
  uint64_t m = (uint64_t)1 << (bits - 1);
  v &= bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
  return (int64_t)((v ^ m) - m);
}

/* one element given as an integer value or bit pattern */
static void put_int_elem(W *w, int32_t dt, uint64_t v) {
  const ox_dtype_info *di = ox_dtype_get(dt);
  if (ox_text_is_small_float(dt))
    put_small_float(w, dt, (uint32_t)v);
  else if (di->is_signed && dt != OX_BOOL)
    put_i64(w, sext(v, di->bits));
  else if (dt == OX_UINT64 && v > INT64_MAX) {
    char buf[24];
    int k = snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    ox_buf_append(w->b, buf, (size_t)k);
  } else
    put_i64(w, (int64_t)v);
}

static void sep(W *w, size_t i) {
  if (i) puts_(w, ", ");
}

/* the `{...}` data of a tensor that is not external */
static void put_tensor_data(W *w, const ox_tensor *t) {
  int32_t dt = t->data_type;
  const ox_dtype_info *di = ox_dtype_get(dt);
  int64_t numel = -1;
  if (!ox_numel(t->dims, t->n_dims, &numel)) numel = -1;
  putc_(w, '{');
  if (t->raw_data.data) {
    const uint8_t *r = t->raw_data.data;
    size_t n = t->raw_data.size;
    if (dt == OX_STRING) {
      fail(w, OX_EUNSUPPORTED, "tensor '%s': a string tensor with raw_data has no text form",
           t->name);
    } else if (di->bits < 8) {
      unsigned per = 8u / di->bits, mask = (1u << di->bits) - 1;
      size_t cnt = n * per;
      /* print the element count of the dims when the padding is zero */
      if (numel >= 0 && (size_t)(numel + per - 1) / per == n && (size_t)numel < cnt &&
          (r[n - 1] >> (di->bits * (numel % per))) == 0)
        cnt = (size_t)numel;
      for (size_t i = 0; i < cnt; i++) {
        sep(w, i);
        put_int_elem(w, dt, (r[i / per] >> (di->bits * (i % per))) & mask);
      }
    } else {
      size_t es = di->is_complex ? di->bits / 16u : di->bits / 8u;
      if (n % es) {
        fail(w, OX_EUNSUPPORTED, "tensor '%s': raw_data size is not a multiple of the element size",
             t->name);
      } else if (dt == OX_FLOAT || dt == OX_COMPLEX64) {
        for (size_t i = 0; i < n / 4; i++) {
          float f;
          memcpy(&f, r + 4 * i, 4);
          sep(w, i);
          put_f32(w, f);
        }
      } else if (dt == OX_DOUBLE || dt == OX_COMPLEX128) {
        for (size_t i = 0; i < n / 8; i++) {
          double d;
          memcpy(&d, r + 8 * i, 8);
          sep(w, i);
          put_f64(w, d);
        }
      } else {
        for (size_t i = 0; i < n / es; i++) {
          sep(w, i);
          put_int_elem(w, dt, rd_le(r + i * es, es));
        }
      }
    }
  } else if (dt == OX_FLOAT || dt == OX_COMPLEX64) {
    for (size_t i = 0; i < t->n_float_data; i++) sep(w, i), put_f32(w, t->float_data[i]);
  } else if (dt == OX_DOUBLE || dt == OX_COMPLEX128) {
    for (size_t i = 0; i < t->n_double_data; i++) sep(w, i), put_f64(w, t->double_data[i]);
  } else if (dt == OX_INT64) {
    for (size_t i = 0; i < t->n_int64_data; i++) sep(w, i), put_i64(w, t->int64_data[i]);
  } else if (dt == OX_UINT32 || dt == OX_UINT64) {
    for (size_t i = 0; i < t->n_uint64_data; i++) sep(w, i), put_int_elem(w, dt, t->uint64_data[i]);
  } else if (dt == OX_STRING) {
    for (size_t i = 0; i < t->n_string_data; i++) {
      sep(w, i);
      const ox_bytes *s = &t->string_data[i];
      put_qbytes(w, s->data ? s->data : (const uint8_t *)"", s->size);
    }
  } else if (di->bits < 8) {
    unsigned per = 8u / di->bits, mask = (1u << di->bits) - 1;
    size_t n = t->n_int32_data, cnt = n * per;
    if (numel >= 0 && (size_t)(numel + per - 1) / per == n && (size_t)numel < cnt &&
        (((uint32_t)t->int32_data[n - 1] & 0xffu) >> (di->bits * (numel % per))) == 0)
      cnt = (size_t)numel;
    for (size_t i = 0; i < cnt; i++) {
      sep(w, i);
      put_int_elem(w, dt, ((uint32_t)t->int32_data[i / per] >> (di->bits * (i % per))) & mask);
    }
  } else {
    for (size_t i = 0; i < t->n_int32_data; i++) {
      sep(w, i);
      int32_t v = t->int32_data[i];
      if (ox_text_is_small_float(dt))
        put_small_float(w, dt, (uint32_t)v);
      else
        put_i64(w, v);
    }
  }
  putc_(w, '}');
}

static void put_tensor_body(W *w, const ox_tensor *t) {
  if (is_external(t)) {
    put_pairs(w, t->external_data, t->n_external_data);
    return;
  }
  put_tensor_data(w, t);
}

/* a tensor constant: [header] type [name] body (attribute values, sparse parts) */
static void put_tensor_const(W *w, const ox_tensor *t) {
  put_tensor_header(w, t);
  if (!put_tensor_type(w, t)) return;
  putc_(w, ' ');
  if (t->name) put_name(w, t->name, false), putc_(w, ' ');
  put_tensor_body(w, t);
}

static void put_sparse(W *w, const ox_sparse_tensor *s) {
  puts_(w, "sparse_tensor {");
  int k = 0;
  if (s->n_dims) {
    puts_(w, "dims: [");
    for (size_t i = 0; i < s->n_dims; i++) {
      if (i) puts_(w, ", ");
      put_i64(w, s->dims[i]);
    }
    putc_(w, ']');
    k++;
  }
  if (s->values) {
    puts_(w, k++ ? ", values: " : "values: ");
    put_tensor_const(w, s->values);
  }
  if (s->indices) {
    puts_(w, k++ ? ", indices: " : "indices: ");
    put_tensor_const(w, s->indices);
  }
  putc_(w, '}');
}

/* ---- value infos ---- */
static void put_value_info(W *w, const ox_value_info *v) {
  hdr_out h = {0};
  put_doc_meta(w, &h, v->doc_string, v->metadata_props, v->n_metadata_props);
  if (v->type && v->type->denotation) hkey(w, &h, "denotation"), put_qstr(w, v->type->denotation);
  hend(w, &h);
  if (v->type) {
    if (!put_type(w, v->type)) return;
    putc_(w, ' ');
  }
  put_name(w, v->name, true);
}

static void put_vi_list(W *w, const ox_value_info *v, size_t n) {
  putc_(w, '(');
  for (size_t i = 0; i < n; i++) {
    if (i) puts_(w, ", ");
    put_value_info(w, &v[i]);
  }
  putc_(w, ')');
}

/* ---- graphs, nodes, attributes ---- */
static void put_graph(W *w, const ox_graph *g, int lvl, bool in_attr);

static bool attr_needs_annotation(const ox_attr *a) {
  if (!a->has_type) return false;
  switch (a->type) {
    case OX_ATTR_FLOAT:
    case OX_ATTR_INT:
    case OX_ATTR_STRING:
    case OX_ATTR_TENSOR:
    case OX_ATTR_GRAPH:
      return a->ref_attr_name != NULL;
    case OX_ATTR_FLOATS:
      return a->ref_attr_name || !a->n_floats;
    case OX_ATTR_INTS:
      return a->ref_attr_name || !a->n_ints;
    case OX_ATTR_STRINGS:
      return a->ref_attr_name || !a->n_strings;
    default:
      return true;
  }
}

/* the type to print the value as: the declared one, or a guess from the set field */
static int attr_kind(const ox_attr *a) {
  if (a->has_type && a->type > 0 && a->type <= OX_ATTR_TYPE_PROTOS) return a->type;
  if (a->has_f) return OX_ATTR_FLOAT;
  if (a->has_i) return OX_ATTR_INT;
  if (a->s.data) return OX_ATTR_STRING;
  if (a->t) return OX_ATTR_TENSOR;
  if (a->g) return OX_ATTR_GRAPH;
  if (a->sparse_tensor) return OX_ATTR_SPARSE_TENSOR;
  if (a->tp) return OX_ATTR_TYPE_PROTO;
  if (a->n_floats) return OX_ATTR_FLOATS;
  if (a->n_ints) return OX_ATTR_INTS;
  if (a->n_strings) return OX_ATTR_STRINGS;
  if (a->n_tensors) return OX_ATTR_TENSORS;
  if (a->n_graphs) return OX_ATTR_GRAPHS;
  if (a->n_sparse_tensors) return OX_ATTR_SPARSE_TENSORS;
  if (a->n_type_protos) return OX_ATTR_TYPE_PROTOS;
  return 0;
}

static void put_attr(W *w, const ox_attr *a, int lvl) {
  if (a->doc_string) {
    puts_(w, "<doc_string: ");
    put_qstr(w, a->doc_string);
    puts_(w, "> ");
  }
  put_name(w, a->name, false);
  int k = attr_kind(a);
  if (attr_needs_annotation(a) && a->type > 0 && a->type <= OX_ATTR_TYPE_PROTOS) {
    puts_(w, ": ");
    puts_(w, ox_text_attr_type_names[a->type]);
  }
  puts_(w, " = ");
  if (a->ref_attr_name) {
    putc_(w, '@');
    put_name(w, a->ref_attr_name, false);
    return;
  }
  switch (k) {
    case OX_ATTR_FLOAT:
      put_f32(w, a->f);
      break;
    case OX_ATTR_INT:
      put_i64(w, a->i);
      break;
    case OX_ATTR_STRING:
      put_qbytes(w, a->s.data ? a->s.data : (const uint8_t *)"", a->s.size);
      break;
    case OX_ATTR_TENSOR:
      if (a->t)
        put_tensor_const(w, a->t);
      else
        fail(w, OX_EUNSUPPORTED, "attribute '%s' of type tensor has no tensor", a->name);
      break;
    case OX_ATTR_GRAPH:
      if (a->g)
        put_graph(w, a->g, lvl, true);
      else
        fail(w, OX_EUNSUPPORTED, "attribute '%s' of type graph has no graph", a->name);
      break;
    case OX_ATTR_SPARSE_TENSOR:
      if (a->sparse_tensor)
        put_sparse(w, a->sparse_tensor);
      else
        fail(w, OX_EUNSUPPORTED, "attribute '%s' has no sparse tensor", a->name);
      break;
    case OX_ATTR_TYPE_PROTO:
      if (a->tp)
        put_type(w, a->tp);
      else
        fail(w, OX_EUNSUPPORTED, "attribute '%s' has no type", a->name);
      break;
    case OX_ATTR_FLOATS:
      putc_(w, '[');
      for (size_t i = 0; i < a->n_floats; i++) sep(w, i), put_f32(w, a->floats[i]);
      putc_(w, ']');
      break;
    case OX_ATTR_INTS:
      putc_(w, '[');
      for (size_t i = 0; i < a->n_ints; i++) sep(w, i), put_i64(w, a->ints[i]);
      putc_(w, ']');
      break;
    case OX_ATTR_STRINGS:
      putc_(w, '[');
      for (size_t i = 0; i < a->n_strings; i++) {
        sep(w, i);
        put_qbytes(w, a->strings[i].data ? a->strings[i].data : (const uint8_t *)"",
                   a->strings[i].size);
      }
      putc_(w, ']');
      break;
    case OX_ATTR_TENSORS:
      putc_(w, '[');
      for (size_t i = 0; i < a->n_tensors; i++) sep(w, i), put_tensor_const(w, &a->tensors[i]);
      putc_(w, ']');
      break;
    case OX_ATTR_GRAPHS:
      putc_(w, '[');
      for (size_t i = 0; i < a->n_graphs; i++) {
        if (i) putc_(w, ',');
        nl(w, lvl + 1);
        put_graph(w, &a->graphs[i], lvl + 1, true);
      }
      putc_(w, ']');
      break;
    case OX_ATTR_SPARSE_TENSORS:
      putc_(w, '[');
      for (size_t i = 0; i < a->n_sparse_tensors; i++)
        sep(w, i), put_sparse(w, &a->sparse_tensors[i]);
      putc_(w, ']');
      break;
    case OX_ATTR_TYPE_PROTOS:
      putc_(w, '[');
      for (size_t i = 0; i < a->n_type_protos; i++) sep(w, i), put_type(w, &a->type_protos[i]);
      putc_(w, ']');
      break;
    default:
      fail(w, OX_EUNSUPPORTED, "attribute '%s' has no value", a->name);
  }
}

static void put_operands(W *w, char *const *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i) puts_(w, ", ");
    put_name(w, v[i], false);
  }
}

/* a domain that prints bare before '.Op': dotted identifiers */
static bool domain_is_dotted(const char *s) {
  size_t n = strlen(s), st = 0;
  if (!n) return false;
  for (size_t i = 0; i <= n; i++)
    if (i == n || s[i] == '.') {
      if (!ox_text_is_id(s + st, i - st)) return false;
      st = i + 1;
    }
  return true;
}

static void put_node(W *w, const ox_node *nd, int lvl) {
  indent(w, lvl);
  hdr_out h = {0};
  put_doc_meta(w, &h, nd->doc_string, nd->metadata_props, nd->n_metadata_props);
  hend(w, &h);
  if (nd->name) {
    putc_(w, '[');
    if (*nd->name) put_name(w, nd->name, false);
    puts_(w, "] ");
  }
  put_operands(w, nd->output, nd->n_output);
  puts_(w, nd->n_output ? " = " : "= ");
  if (nd->domain) {
    if (!*nd->domain)
      ;
    else if (domain_is_dotted(nd->domain))
      puts_(w, nd->domain);
    else
      put_qstr(w, nd->domain);
    putc_(w, '.');
  }
  put_name(w, nd->op_type ? nd->op_type : "", false);
  if (nd->overload) putc_(w, ':'), put_name(w, nd->overload, false);
  bool graphs = false;
  for (size_t i = 0; i < nd->n_attribute; i++)
    if (attr_kind(&nd->attribute[i]) == OX_ATTR_GRAPH ||
        attr_kind(&nd->attribute[i]) == OX_ATTR_GRAPHS)
      graphs = true;
  if (nd->n_attribute && !graphs) {
    putc_(w, ' ');
    putc_(w, '<');
    for (size_t i = 0; i < nd->n_attribute; i++) {
      if (i) puts_(w, ", ");
      put_attr(w, &nd->attribute[i], lvl);
    }
    putc_(w, '>');
  }
  puts_(w, " (");
  put_operands(w, nd->input, nd->n_input);
  putc_(w, ')');
  if (graphs) {
    puts_(w, " <");
    for (size_t i = 0; i < nd->n_attribute; i++) {
      if (i) putc_(w, ',');
      nl(w, lvl + 1);
      put_attr(w, &nd->attribute[i], lvl + 1);
    }
    putc_(w, '>');
  }
  putc_(w, '\n');
}

static void put_node_list(W *w, const ox_node *n, size_t cnt, int lvl) {
  puts_(w, "{\n");
  for (size_t i = 0; i < cnt && w->rc == OX_OK && !w->b->failed; i++) put_node(w, &n[i], lvl + 1);
  indent(w, lvl);
  putc_(w, '}');
}

static void put_graph(W *w, const ox_graph *g, int lvl, bool in_attr) {
  hdr_out h = {0};
  put_doc_meta(w, &h, g->doc_string, g->metadata_props, g->n_metadata_props);
  if (g->n_sparse_initializer) {
    hkey(w, &h, "sparse_initializer");
    putc_(w, '[');
    for (size_t i = 0; i < g->n_sparse_initializer; i++) {
      sep(w, i);
      put_sparse(w, &g->sparse_initializer[i]);
    }
    putc_(w, ']');
  }
  if (g->n_quantization_annotation) {
    hkey(w, &h, "quantization_annotation");
    putc_(w, '[');
    for (size_t i = 0; i < g->n_quantization_annotation; i++) {
      const ox_tensor_annotation *q = &g->quantization_annotation[i];
      sep(w, i);
      putc_(w, '{');
      if (q->tensor_name) puts_(w, "tensor_name: "), put_qstr(w, q->tensor_name);
      if (q->n_quant_parameter_tensor_names) {
        puts_(w, q->tensor_name ? ", quant_parameter_tensor_names: "
                                : "quant_parameter_tensor_names: ");
        put_pairs(w, q->quant_parameter_tensor_names, q->n_quant_parameter_tensor_names);
      }
      putc_(w, '}');
    }
    putc_(w, ']');
  }
  hend(w, &h);
  put_name(w, g->name ? g->name : "", in_attr);
  putc_(w, ' ');
  put_vi_list(w, g->input, g->n_input);
  puts_(w, " => ");
  put_vi_list(w, g->output, g->n_output);
  if (g->n_initializer || g->n_value_info) {
    nl(w, lvl);
    putc_(w, '<');
    size_t k = 0;
    for (size_t i = 0; i < g->n_initializer; i++, k++) {
      const ox_tensor *t = &g->initializer[i];
      if (k) putc_(w, ',');
      nl(w, lvl + 1);
      put_tensor_header(w, t);
      if (!put_tensor_type(w, t)) return;
      putc_(w, ' ');
      put_name(w, t->name ? t->name : "", false);
      puts_(w, " = ");
      put_tensor_body(w, t);
    }
    for (size_t i = 0; i < g->n_value_info; i++, k++) {
      if (k) putc_(w, ',');
      nl(w, lvl + 1);
      put_value_info(w, &g->value_info[i]);
    }
    nl(w, lvl);
    putc_(w, '>');
  }
  nl(w, lvl);
  put_node_list(w, g->node, g->n_node, lvl);
}

/* ---- functions and models ---- */
static void put_opsets(W *w, const ox_opset *o, size_t n) {
  putc_(w, '[');
  for (size_t i = 0; i < n; i++) {
    if (i) puts_(w, ", ");
    if (o[i].domain) put_qstr(w, o[i].domain), puts_(w, " : ");
    put_i64(w, o[i].version);
  }
  putc_(w, ']');
}

static void hline(W *w, int *k, const char *key) {
  puts_(w, (*k)++ ? ",\n" : "<\n");
  indent(w, 1);
  puts_(w, key);
  puts_(w, ": ");
}

static bool vi_plain(const ox_value_info *v) {
  return v->type && !v->doc_string && !v->n_metadata_props;
}

static void put_function_(W *w, const ox_function *f) {
  int k = 0;
  if (f->domain) hline(w, &k, "domain"), put_qstr(w, f->domain);
  if (f->overload) hline(w, &k, "overload"), put_qstr(w, f->overload);
  if (f->n_opset_import)
    hline(w, &k, "opset_import"), put_opsets(w, f->opset_import, f->n_opset_import);
  if (f->doc_string) hline(w, &k, "doc_string"), put_qstr(w, f->doc_string);
  if (f->n_metadata_props)
    hline(w, &k, "metadata_props"), put_pairs(w, f->metadata_props, f->n_metadata_props);
  if (k) puts_(w, "\n>\n");
  put_name(w, f->name, false);
  if (f->n_attribute || f->n_attribute_proto) {
    puts_(w, " <");
    for (size_t i = 0; i < f->n_attribute; i++) {
      if (i) puts_(w, ", ");
      put_name(w, f->attribute[i], false);
    }
    for (size_t i = 0; i < f->n_attribute_proto; i++) {
      if (i || f->n_attribute) puts_(w, ", ");
      put_attr(w, &f->attribute_proto[i], 1);
    }
    putc_(w, '>');
  }
  /* typed inputs/outputs carry value_info entries in order */
  size_t vi = 0;
  for (int io = 0; io < 2; io++) {
    char *const *names = io ? f->output : f->input;
    size_t n = io ? f->n_output : f->n_input;
    puts_(w, io ? " => (" : " (");
    for (size_t i = 0; i < n; i++) {
      if (i) puts_(w, ", ");
      const ox_value_info *v = vi < f->n_value_info ? &f->value_info[vi] : NULL;
      if (v && vi_plain(v) && v->name && strcmp(v->name, names[i]) == 0) {
        put_value_info(w, v);
        vi++;
      } else {
        put_name(w, names[i], true);
      }
    }
    putc_(w, ')');
  }
  if (vi < f->n_value_info) {
    puts_(w, "\n<");
    for (size_t i = vi; i < f->n_value_info; i++) {
      if (i > vi) putc_(w, ',');
      nl(w, 1);
      put_value_info(w, &f->value_info[i]);
    }
    puts_(w, "\n>");
  }
  putc_(w, '\n');
  put_node_list(w, f->node, f->n_node, 0);
  putc_(w, '\n');
}

static void put_model_(W *w, const ox_model_proto *m) {
  int k = 0;
  if (m->has_ir_version) hline(w, &k, "ir_version"), put_i64(w, m->ir_version);
  if (m->n_opset_import)
    hline(w, &k, "opset_import"), put_opsets(w, m->opset_import, m->n_opset_import);
  if (m->producer_name) hline(w, &k, "producer_name"), put_qstr(w, m->producer_name);
  if (m->producer_version) hline(w, &k, "producer_version"), put_qstr(w, m->producer_version);
  if (m->domain) hline(w, &k, "domain"), put_qstr(w, m->domain);
  if (m->has_model_version) hline(w, &k, "model_version"), put_i64(w, m->model_version);
  if (m->doc_string) hline(w, &k, "doc_string"), put_qstr(w, m->doc_string);
  if (m->n_metadata_props)
    hline(w, &k, "metadata_props"), put_pairs(w, m->metadata_props, m->n_metadata_props);
  if (m->n_configuration) {
    hline(w, &k, "configuration");
    putc_(w, '[');
    for (size_t i = 0; i < m->n_configuration; i++) {
      const ox_device_config *c = &m->configuration[i];
      sep(w, i);
      putc_(w, '{');
      int f = 0;
      if (c->name) puts_(w, "name: "), put_qstr(w, c->name), f++;
      if (c->has_num_devices) {
        puts_(w, f++ ? ", num_devices: " : "num_devices: ");
        put_i64(w, c->num_devices);
      }
      if (c->n_device) {
        puts_(w, f++ ? ", device: [" : "device: [");
        for (size_t j = 0; j < c->n_device; j++) sep(w, j), put_qstr(w, c->device[j]);
        putc_(w, ']');
      }
      putc_(w, '}');
    }
    putc_(w, ']');
  }
  puts_(w, k ? "\n>\n" : "<>\n");
  if (!m->graph) {
    fail(w, OX_EUNSUPPORTED, "a model without a graph has no text form%s", NULL);
    return;
  }
  put_graph(w, m->graph, 0, false);
  putc_(w, '\n');
  for (size_t i = 0; i < m->n_training_info && w->rc == OX_OK; i++) {
    const ox_training_info *t = &m->training_info[i];
    puts_(w, "\ntraining {");
    int f = 0;
    if (t->initialization) {
      nl(w, 1);
      puts_(w, "initialization: ");
      put_graph(w, t->initialization, 1, true);
      f++;
    }
    if (t->algorithm) {
      if (f++) putc_(w, ',');
      nl(w, 1);
      puts_(w, "algorithm: ");
      put_graph(w, t->algorithm, 1, true);
    }
    if (t->n_initialization_binding) {
      if (f++) putc_(w, ',');
      nl(w, 1);
      puts_(w, "initialization_binding: ");
      put_pairs(w, t->initialization_binding, t->n_initialization_binding);
    }
    if (t->n_update_binding) {
      if (f++) putc_(w, ',');
      nl(w, 1);
      puts_(w, "update_binding: ");
      put_pairs(w, t->update_binding, t->n_update_binding);
    }
    puts_(w, "\n}\n");
  }
  for (size_t i = 0; i < m->n_functions && w->rc == OX_OK; i++) {
    putc_(w, '\n');
    put_function_(w, &m->functions[i]);
  }
}

typedef enum { P_MODEL, P_GRAPH, P_FUNCTION } pwhat;

static int print_any(pwhat what, const void *x, ox_buf *out, ox_err *e) {
  W w = {out, e, OX_OK};
  locale_t cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  locale_t old = cloc ? uselocale(cloc) : (locale_t)0;
  size_t start = out->size;
  if (what == P_MODEL)
    put_model_(&w, x);
  else if (what == P_GRAPH)
    put_graph(&w, x, 0, false), putc_(&w, '\n');
  else
    put_function_(&w, x);
  if (cloc) {
    uselocale(old);
    freelocale(cloc);
  }
  if (w.rc == OX_OK && out->failed) w.rc = ox_err_set(e, OX_ENOMEM, "out of memory while printing");
  if (w.rc != OX_OK && !out->failed) out->size = start;
  return w.rc;
}

int ox_text_print_model(const ox_model_proto *m, ox_buf *out, ox_err *e) {
  return print_any(P_MODEL, m, out, e);
}

int ox_text_print_graph(const ox_graph *g, ox_buf *out, ox_err *e) {
  return print_any(P_GRAPH, g, out, e);
}

int ox_text_print_function(const ox_function *f, ox_buf *out, ox_err *e) {
  return print_any(P_FUNCTION, f, out, e);
}
