/* parse_value.c - the text parser's types, headers (`<key: value, ...>`),
 * tensor literals, sparse tensors and value infos (parse_int.h). */
#include <ctype.h>
#include <string.h>

#include "../base/floatconv.h"
#include "parse_int.h"

/* ---- types ---- */

static ox_shape *parse_shape_suffix(tp_parser *p, bool *has) {
  *has = false;
  if (!tp_accept(p, '[')) {
    ox_shape *sh = ox_arena_alloc(p->a, sizeof *sh);
    CHK(sh);
    return sh; /* scalar: shape with no dims */
  }
  if (tp_accept(p, ']')) return NULL; /* unknown rank */
  *has = true;
  ox_shape *sh = ox_arena_alloc(p->a, sizeof *sh);
  CHK(sh);
  do {
    ox_dim *d = OX_VEC_PUSH(p->a, sh->dim, sh->n_dim);
    CHK(d);
    int c = tp_peek(p);
    if (c == '?') {
      p->pos++;
    } else if (c == '"' || c == '_' || (c >= 0 && isalpha(c))) {
      d->param = tp_take_qid(p, "a dimension");
    } else if (tp_at_number(p)) {
      d->value = tp_lit_i64(p, tp_take_number(p, "a dimension"));
      d->has_value = true;
    } else {
      tp_fail_expected(p, "a dimension (a number, a name or '?')");
    }
  } while (tp_accept(p, ','));
  tp_expect(p, ']', "after the dimensions");
  return sh;
}

static ox_type *parse_type_after(tp_parser *p, const char *w, size_t wn, size_t at) {
  ox_type *t = ox_arena_alloc(p->a, sizeof *t);
  CHK(t);
  int32_t dt = tp_dtype_of(w, wn);
  bool has;
  if (dt) {
    t->kind = OX_TYPE_TENSOR;
    t->elem_type = dt;
    t->has_elem_type = true;
    t->shape = parse_shape_suffix(p, &has);
    return t;
  }
  if (tp_word_eq(w, wn, "undefined")) return t; /* an empty TypeProto */
  tp_enter(p);
  if (tp_word_eq(w, wn, "seq") || tp_word_eq(w, wn, "optional")) {
    t->kind = w[0] == 's' ? OX_TYPE_SEQUENCE : OX_TYPE_OPTIONAL;
    tp_expect(p, '(', "after seq/optional");
    t->elem = tp_parse_type(p);
    tp_expect(p, ')', "after the element type");
  } else if (tp_word_eq(w, wn, "map")) {
    t->kind = OX_TYPE_MAP;
    tp_expect(p, '(', "after map");
    const char *k;
    size_t kn = tp_peek_id(p, &k);
    int32_t kt = tp_dtype_of(k, kn);
    if (!kt) tp_fail_expected(p, "a key type name");
    p->pos += kn;
    t->elem_type = kt;
    t->has_elem_type = true;
    tp_expect(p, ',', "after the map key type");
    t->elem = tp_parse_type(p);
    tp_expect(p, ')', "after the map value type");
  } else if (tp_word_eq(w, wn, "sparse_tensor")) {
    t->kind = OX_TYPE_SPARSE_TENSOR;
    tp_expect(p, '(', "after sparse_tensor");
    const char *k;
    size_t kn = tp_peek_id(p, &k);
    int32_t et = tp_dtype_of(k, kn);
    if (!et) tp_fail_expected(p, "an element type name");
    p->pos += kn;
    t->elem_type = et;
    t->has_elem_type = true;
    t->shape = parse_shape_suffix(p, &has);
    tp_expect(p, ')', "after the sparse tensor type");
  } else if (tp_word_eq(w, wn, "opaque")) {
    t->kind = OX_TYPE_OPAQUE;
    tp_expect(p, '(', "after opaque");
    if (!tp_accept(p, ')')) {
      /* qualified-id or quoted strings; opaque(name) or opaque(domain, name) */
      char *first;
      if (tp_peek(p) == '"') {
        first = tp_take_name_str(p);
      } else {
        size_t st = p->pos;
        tp_take_id(p, "an opaque type name");
        while (tp_peek(p) == '.') {
          p->pos++;
          tp_take_id(p, "a name after '.'");
        }
        first = ox_arena_strndup(p->a, p->s + st, p->pos - st);
        CHK(first);
        /* whitespace may sit around the dots: drop it */
        char *o = first;
        for (char *q = first; *q; q++)
          if (!isspace((unsigned char)*q)) *o++ = *q;
        *o = 0;
      }
      if (tp_accept(p, ',')) {
        t->opaque_domain = first;
        t->opaque_name = tp_take_qid(p, "an opaque type name");
      } else {
        t->opaque_name = first;
      }
      tp_expect(p, ')', "after the opaque type");
    }
  } else {
    tp_fail_at(p, at, "unknown type '%.*s'", (int)wn, w);
  }
  p->depth--;
  return t;
}

ox_type *tp_parse_type(tp_parser *p) {
  const char *w;
  size_t wn = tp_peek_id(p, &w);
  size_t at = p->pos;
  if (!wn || !tp_is_type_keyword(w, wn)) tp_fail_expected(p, "a type");
  p->pos += wn;
  return parse_type_after(p, w, wn, at);
}

bool tp_at_type(tp_parser *p) {
  const char *w;
  size_t wn = tp_peek_id(p, &w);
  return wn && tp_is_type_keyword(w, wn);
}

/* ---- headers ---- */
/* `[{tensor_name: "t", quant_parameter_tensor_names: ["k": "v"]}, ...]` */
static void parse_quant_annotations(tp_parser *p, ox_tensor_annotation **arr, size_t *n) {
  tp_expect(p, '[', "to open the quantization annotations");
  if (tp_accept(p, ']')) return;
  do {
    ox_tensor_annotation *q = OX_VEC_PUSH(p->a, *arr, *n);
    CHK(q);
    tp_expect(p, '{', "to open a quantization annotation");
    if (!tp_accept(p, '}')) {
      do {
        if (tp_accept_word(p, "tensor_name")) {
          tp_expect(p, ':', "after tensor_name");
          q->tensor_name = tp_take_name_str(p);
        } else if (tp_accept_word(p, "quant_parameter_tensor_names")) {
          tp_expect(p, ':', "after quant_parameter_tensor_names");
          tp_parse_str_pairs(p, &q->quant_parameter_tensor_names,
                             &q->n_quant_parameter_tensor_names, true);
        } else {
          tp_fail_expected(p, "tensor_name or quant_parameter_tensor_names");
        }
      } while (tp_accept(p, ','));
      tp_expect(p, '}', "after the quantization annotation");
    }
  } while (tp_accept(p, ','));
  tp_expect(p, ']', "after the quantization annotations");
}

/* true when '<' at the cursor opens a header rather than an attribute list:
 * `<key: value` where value does not look like `type =`. */
bool tp_at_header(tp_parser *p) {
  if (tp_peek(p) != '<') return false;
  size_t save = p->pos;
  p->pos++;
  bool r = false;
  const char *w;
  size_t wn = tp_peek_id(p, &w);
  if (wn) {
    p->pos += wn;
    if (tp_accept(p, ':')) {
      const char *v;
      size_t vn = tp_peek_id(p, &v);
      if (!vn) {
        r = true;
      } else {
        p->pos += vn;
        r = tp_peek(p) != '=';
      }
    }
  }
  p->pos = save;
  return r;
}

void tp_parse_header(tp_parser *p, tp_hdr *h) {
  memset(h, 0, sizeof *h);
  tp_ws(p);
  h->at = p->pos;
  tp_expect(p, '<', "to open a header");
  if (tp_accept(p, '>')) return;
  do {
    size_t kat = (tp_ws(p), p->pos);
    const char *k;
    size_t kn = tp_peek_id(p, &k);
    if (!kn) tp_fail_expected(p, "a header key");
    p->pos += kn;
    tp_expect(p, ':', "after the header key");
    if (tp_word_eq(k, kn, "doc_string")) {
      h->doc = tp_take_name_str(p);
      h->has |= TP_H_DOC;
    } else if (tp_word_eq(k, kn, "metadata_props")) {
      tp_parse_str_pairs(p, &h->meta, &h->n_meta, true);
      h->has |= TP_H_META;
    } else if (tp_word_eq(k, kn, "raw_data")) {
      if (tp_accept_word(p, "true")) {
        h->raw = true;
      } else if (tp_accept_word(p, "false")) {
        h->raw = false;
      } else {
        tp_fail_expected(p, "true or false");
      }
      h->has |= TP_H_RAW;
    } else if (tp_word_eq(k, kn, "data_location")) {
      int64_t v = tp_lit_i64(p, tp_take_number(p, "a data location number"));
      if (v < INT32_MIN || v > INT32_MAX) tp_fail_at(p, kat, "data_location out of range");
      h->location = (int32_t)v;
      h->has |= TP_H_LOC;
    } else if (tp_word_eq(k, kn, "sparse_initializer")) {
      tp_expect(p, '[', "to open the sparse initializer list");
      if (!tp_accept(p, ']')) {
        do {
          if (!tp_accept_word(p, "sparse_tensor")) tp_fail_expected(p, "sparse_tensor");
          ox_sparse_tensor *st = OX_VEC_PUSH(p->a, h->sparse, h->n_sparse);
          CHK(st);
          tp_parse_sparse_body(p, st);
        } while (tp_accept(p, ','));
        tp_expect(p, ']', "after the sparse initializer list");
      }
      h->has |= TP_H_SPARSE;
    } else if (tp_word_eq(k, kn, "quantization_annotation")) {
      parse_quant_annotations(p, &h->qa, &h->n_qa);
      h->has |= TP_H_QA;
    } else if (tp_word_eq(k, kn, "segment")) {
      tp_expect(p, '[', "to open the segment");
      h->seg[0] = tp_lit_i64(p, tp_take_number(p, "the segment begin"));
      tp_expect(p, ',', "after the segment begin");
      h->seg[1] = tp_lit_i64(p, tp_take_number(p, "the segment end"));
      tp_expect(p, ']', "after the segment");
      h->has |= TP_H_SEG;
    } else if (tp_word_eq(k, kn, "denotation")) {
      h->denotation = tp_take_name_str(p);
      h->has |= TP_H_DEN;
    } else {
      tp_fail_at(p, kat, "unknown header key '%.*s'", (int)kn, k);
    }
  } while (tp_accept(p, ','));
  tp_expect(p, '>', "after the header");
}

void tp_header_allow(tp_parser *p, const tp_hdr *h, unsigned allowed, const char *what) {
  if (h->has & ~allowed)
    tp_fail_at(p, h->at, "this header has a key that does not apply to %s", what);
}

/* ---- tensors ---- */
typedef struct tbuild {
  ox_buf *b; /* element values as int64, uint64, float or double */
} tbuild;

static void scratch_put(tp_parser *p, const void *v, size_t n) {
  ox_buf_append(&p->scratch, v, n);
  if (p->scratch.failed) tp_oom(p);
}

static void *arena_copy(tp_parser *p, const void *src, size_t n) {
  if (n == 0) {
    void *r = ox_arena_alloc(p->a, 1);
    CHK(r);
    return r;
  }
  void *r = ox_arena_memdup(p->a, src, n);
  CHK(r);
  return r;
}

/* range of an integer element type, or false if not integral */
static bool int_range(int32_t dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
    case OX_INT8:
      *lo = INT8_MIN, *hi = INT8_MAX;
      return true;
    case OX_UINT8:
      *lo = 0, *hi = UINT8_MAX;
      return true;
    case OX_INT16:
      *lo = INT16_MIN, *hi = INT16_MAX;
      return true;
    case OX_UINT16:
      *lo = 0, *hi = UINT16_MAX;
      return true;
    case OX_INT32:
      *lo = INT32_MIN, *hi = INT32_MAX;
      return true;
    case OX_INT4:
      *lo = -8, *hi = 7;
      return true;
    case OX_UINT4:
      *lo = 0, *hi = 15;
      return true;
    case OX_INT2:
      *lo = -2, *hi = 1;
      return true;
    case OX_UINT2:
      *lo = 0, *hi = 3;
      return true;
    case OX_BOOL:
      *lo = 0, *hi = 1;
      return true;
    default:
      return false;
  }
}

bool ox_text_is_small_float(int32_t dt) {
  return dt == OX_FLOAT16 || dt == OX_BFLOAT16 || dt == OX_FLOAT8E4M3FN ||
         dt == OX_FLOAT8E4M3FNUZ || dt == OX_FLOAT8E5M2 || dt == OX_FLOAT8E5M2FNUZ ||
         dt == OX_FLOAT8E8M0 || dt == OX_FLOAT4E2M1;
}

uint32_t ox_text_small_float_bits(int32_t dt, float f) {
  switch (dt) {
    case OX_FLOAT16:
      return ox_f32_to_f16(f);
    case OX_BFLOAT16:
      return ox_f32_to_bf16(f);
    case OX_FLOAT8E8M0:
      return ox_f32_to_e8m0(f, false, 2);
    case OX_FLOAT4E2M1:
      return ox_f32_to_f4(f);
    default:
      return ox_f32_to_f8(f, dt, true);
  }
}

/* Parses `{ v, v, ... }` for a tensor of type dt into t (typed fields, or
 * raw_data when raw). */
static void parse_tensor_data(tp_parser *p, ox_tensor *t, int32_t dt, bool raw) {
  size_t open = (tp_ws(p), p->pos);
  tp_expect(p, '{', "to open the tensor data");
  p->scratch.size = 0;
  size_t count = 0;
  const ox_dtype_info *di = ox_dtype_get(dt);
  if (!di || dt == OX_UNDEFINED) tp_fail_at(p, open, "a tensor literal needs a known element type");
  if (dt == OX_STRING && raw) tp_fail_at(p, open, "string tensors cannot use raw_data");
  if (tp_peek(p) != '}') {
    do {
      tp_ws(p);
      size_t at = p->pos;
      if (dt == OX_STRING) {
        size_t len;
        char *s = tp_take_qstr(p, &len);
        ox_bytes b = tp_to_bytes(s, len);
        scratch_put(p, &b, sizeof b);
      } else if (dt == OX_FLOAT || dt == OX_COMPLEX64) {
        float f = tp_lit_f32(p, tp_take_number(p, "a number"));
        scratch_put(p, &f, sizeof f);
      } else if (dt == OX_DOUBLE || dt == OX_COMPLEX128) {
        double d = tp_lit_f64(p, tp_take_number(p, "a number"));
        scratch_put(p, &d, sizeof d);
      } else if (dt == OX_INT64) {
        int64_t v = tp_lit_i64(p, tp_take_number(p, "an integer"));
        scratch_put(p, &v, sizeof v);
      } else if (dt == OX_UINT32 || dt == OX_UINT64) {
        uint64_t v = tp_lit_u64(p, tp_take_number(p, "an integer"));
        if (dt == OX_UINT32 && v > UINT32_MAX) tp_fail_at(p, at, "value out of range of uint32");
        scratch_put(p, &v, sizeof v);
      } else if (ox_text_is_small_float(dt)) {
        tp_lit l = tp_take_number(p, "a number");
        int64_t bits;
        if (l.is_float) {
          bits = ox_text_small_float_bits(dt, tp_lit_f32(p, l));
        } else {
          bits = tp_lit_i64(p, l); /* a bit pattern, as the reference reads it */
          if (bits < 0 || bits >= (int64_t)1 << di->bits)
            tp_fail_at(p, at, "bit pattern out of range of %s", di->name);
        }
        scratch_put(p, &bits, sizeof bits);
      } else {
        int64_t lo, hi, v;
        if (!int_range(dt, &lo, &hi)) tp_fail_at(p, open, "no literal syntax for %s", di->name);
        if (dt == OX_BOOL && tp_accept_word(p, "true")) {
          v = 1;
        } else if (dt == OX_BOOL && tp_accept_word(p, "false")) {
          v = 0;
        } else {
          v = tp_lit_i64(p, tp_take_number(p, "an integer"));
        }
        if (v < lo || v > hi) tp_fail_at(p, at, "value out of range of %s", di->name);
        scratch_put(p, &v, sizeof v);
      }
      count++;
    } while (tp_accept(p, ','));
  }
  tp_expect(p, '}', "after the tensor data");
  const uint8_t *sc = p->scratch.data;
  if (count == 0 && !raw) return; /* `{}`: no data */
  if (dt == OX_STRING) {
    t->string_data = arena_copy(p, sc, count * sizeof(ox_bytes));
    t->n_string_data = count;
    return;
  }
  if (raw) {
    size_t nb = 0; /* for complex types, count is twice the element count */
    if (di->is_complex)
      nb = count * (dt == OX_COMPLEX64 ? 4 : 8);
    else if (!ox_dtype_nbytes(dt, (int64_t)count, &nb))
      tp_oom(p);
    uint8_t *r = ox_arena_alloc(p->a, nb ? nb : 1);
    CHK(r);
    if (di->bits < 8) {
      unsigned per = 8u / di->bits, mask = (1u << di->bits) - 1;
      for (size_t i = 0; i < count; i++) {
        int64_t v;
        memcpy(&v, sc + i * 8, 8);
        r[i / per] |= (uint8_t)(((unsigned)v & mask) << (di->bits * (i % per)));
      }
    } else if (dt == OX_FLOAT || dt == OX_COMPLEX64 || dt == OX_DOUBLE || dt == OX_COMPLEX128) {
      if (nb) memcpy(r, sc, nb); /* little-endian hosts; sc is NULL for {} (fuzz_text) */
    } else {
      size_t w = di->bits / 8u;
      for (size_t i = 0; i < count; i++) {
        uint64_t v;
        memcpy(&v, sc + i * 8, 8);
        for (size_t k = 0; k < w; k++) r[i * w + k] = (uint8_t)(v >> (8 * k));
      }
    }
    t->raw_data.data = r;
    t->raw_data.size = nb;
    return;
  }
  if (dt == OX_FLOAT || dt == OX_COMPLEX64) {
    t->float_data = arena_copy(p, sc, count * 4);
    t->n_float_data = count;
  } else if (dt == OX_DOUBLE || dt == OX_COMPLEX128) {
    t->double_data = arena_copy(p, sc, count * 8);
    t->n_double_data = count;
  } else if (dt == OX_INT64) {
    t->int64_data = arena_copy(p, sc, count * 8);
    t->n_int64_data = count;
  } else if (dt == OX_UINT32 || dt == OX_UINT64) {
    t->uint64_data = arena_copy(p, sc, count * 8);
    t->n_uint64_data = count;
  } else {
    /* int32_data; 4-bit types two per entry, 2-bit types four per entry */
    unsigned per = di->bits < 8 ? 8u / di->bits : 1, mask = di->bits < 8 ? (1u << di->bits) - 1 : 0;
    size_t ne = (count + per - 1) / per;
    int32_t *d = ox_arena_calloc(p->a, ne ? ne : 1, sizeof *d);
    CHK(d);
    for (size_t i = 0; i < count; i++) {
      int64_t v;
      memcpy(&v, sc + i * 8, 8);
      if (per == 1)
        d[i] = (int32_t)v;
      else
        d[i / per] |= (int32_t)(((unsigned)v & mask) << (di->bits * (i % per)));
    }
    t->int32_data = d;
    t->n_int32_data = ne;
  }
}

void tp_apply_tensor_header(tp_parser *p, const tp_hdr *h, ox_tensor *t) {
  tp_header_allow(p, h, TP_H_DOC | TP_H_META | TP_H_RAW | TP_H_LOC | TP_H_SEG, "a tensor");
  if (h->has & TP_H_DOC) t->doc_string = h->doc;
  if (h->has & TP_H_SEG) {
    t->segment = ox_arena_alloc(p->a, sizeof *t->segment);
    CHK(t->segment);
    t->segment->begin = h->seg[0], t->segment->end = h->seg[1];
    t->segment->has_begin = t->segment->has_end = true;
  }
  if (h->has & TP_H_META) t->metadata_props = h->meta, t->n_metadata_props = h->n_meta;
  if (h->has & TP_H_LOC) t->data_location = h->location, t->has_data_location = true;
}

/* tensor-body after the type and name: `{...}`, `[...]` (external) or none.
 * Returns false when there is no body. */
bool tp_parse_tensor_body(tp_parser *p, ox_tensor *t, const tp_hdr *h) {
  int c = tp_peek(p);
  if (c == '{') {
    parse_tensor_data(p, t, t->data_type, (h->has & TP_H_RAW) && h->raw);
    return true;
  }
  if (c == '[') {
    tp_parse_str_pairs(p, &t->external_data, &t->n_external_data, false);
    if (!(h->has & TP_H_LOC)) t->data_location = 1, t->has_data_location = true;
    return true;
  }
  return false;
}

/* sets data_type and dims of t from a tensor type; the type must be concrete */
void tp_tensor_from_type(tp_parser *p, ox_tensor *t, const ox_type *ty, size_t at) {
  if (ty->kind != OX_TYPE_TENSOR) tp_fail_at(p, at, "a tensor literal needs a tensor type");
  t->data_type = ty->elem_type;
  t->has_data_type = true;
  if (!ty->shape) tp_fail_at(p, at, "a tensor literal needs a shape (not [])");
  if (ty->shape->n_dim) {
    t->dims = ox_arena_calloc(p->a, ty->shape->n_dim, sizeof *t->dims);
    CHK(t->dims);
    for (size_t i = 0; i < ty->shape->n_dim; i++) {
      if (!ty->shape->dim[i].has_value)
        tp_fail_at(p, at, "a tensor literal needs numeric dimensions");
      t->dims[i] = ty->shape->dim[i].value;
    }
    t->n_dims = ty->shape->n_dim;
  }
}

/* tensor-constant: [header] type name? '='? body */
void tp_parse_tensor_const(tp_parser *p, ox_tensor *t) {
  tp_hdr h = {0};
  if (tp_peek(p) == '<') tp_parse_header(p, &h);
  tp_ws(p);
  size_t at = p->pos;
  ox_type *ty = tp_parse_type(p);
  tp_tensor_from_type(p, t, ty, at);
  tp_apply_tensor_header(p, &h, t);
  if (tp_at_qid(p)) t->name = tp_take_qid(p, "a tensor name");
  tp_accept(p, '=');
  tp_parse_tensor_body(p, t, &h);
}

/* `{ dims: [..], values: T, indices: T }` after `sparse_tensor` */
ox_sparse_tensor *tp_parse_sparse_body(tp_parser *p, ox_sparse_tensor *st) {
  tp_enter(p);
  tp_expect(p, '{', "to open the sparse tensor");
  if (!tp_accept(p, '}')) {
    do {
      size_t kat = (tp_ws(p), p->pos);
      const char *k;
      size_t kn = tp_peek_id(p, &k);
      if (!kn) tp_fail_expected(p, "dims, values or indices");
      p->pos += kn;
      tp_expect(p, ':', "after the key");
      if (tp_word_eq(k, kn, "dims")) {
        tp_expect(p, '[', "to open the dims");
        if (!tp_accept(p, ']')) {
          do {
            int64_t *d = OX_VEC_PUSH(p->a, st->dims, st->n_dims);
            CHK(d);
            *d = tp_lit_i64(p, tp_take_number(p, "a dimension"));
          } while (tp_accept(p, ','));
          tp_expect(p, ']', "after the dims");
        }
      } else if (tp_word_eq(k, kn, "values") || tp_word_eq(k, kn, "indices")) {
        ox_tensor *t = ox_arena_alloc(p->a, sizeof *t);
        CHK(t);
        tp_parse_tensor_const(p, t);
        if (k[0] == 'v')
          st->values = t;
        else
          st->indices = t;
      } else {
        tp_fail_at(p, kat, "unknown sparse tensor key '%.*s'", (int)kn, k);
      }
    } while (tp_accept(p, ','));
    tp_expect(p, '}', "after the sparse tensor");
  }
  p->depth--;
  return st;
}

/* ---- value infos ---- */
void tp_apply_vi_header(tp_parser *p, const tp_hdr *h, ox_value_info *v) {
  tp_header_allow(p, h, TP_H_DOC | TP_H_META | TP_H_DEN, "a value");
  if (h->has & TP_H_DOC) v->doc_string = h->doc;
  if (h->has & TP_H_DEN) {
    if (!v->type) tp_fail_at(p, h->at, "a denotation needs a type");
    v->type->denotation = h->denotation;
  }
  if (h->has & TP_H_META) v->metadata_props = h->meta, v->n_metadata_props = h->n_meta;
}

/* [header] type? name */
void tp_parse_value_info(tp_parser *p, ox_value_info *v, tp_hdr *h) {
  memset(h, 0, sizeof *h);
  if (tp_peek(p) == '<') tp_parse_header(p, h);
  if (tp_at_type(p)) v->type = tp_parse_type(p);
  v->name = tp_take_qid(p, "a value name");
}
