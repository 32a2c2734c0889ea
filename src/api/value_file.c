/* value_file.c - values in files, for onnxc_value_read_file /
 * onnxc_value_write_file / onnxc_value_summary of include/onnxc.h: the
 * protobuf messages of ONNX's test data (TensorProto, SequenceProto,
 * MapProto, OptionalProto, chosen by the declared type), NumPy's .npy, and
 * a one-line summary of a value. An onnxc_value is an ox_value. */
#define _GNU_SOURCE /* open_memstream */
#include <onnxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/floatconv.h"
#include "../proto/proto.h"
#include "../runtime/value.h"

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

/* ---------------------------------------------------------------- .npy */

static ox_value *read_npy(const char *path, const uint8_t *d, size_t n, ox_err *e) {
  if (n < 10 || memcmp(d, "\x93NUMPY", 6) != 0)
    return ox_err_set(e, OX_EPARSE, "%s: not a .npy file", path), NULL;
  size_t hlen, off;
  if (d[6] == 1) {
    hlen = (size_t)d[8] | (size_t)d[9] << 8;
    off = 10;
  } else {
    if (n < 12) return ox_err_set(e, OX_EPARSE, "%s: truncated .npy header", path), NULL;
    hlen = (size_t)d[8] | (size_t)d[9] << 8 | (size_t)d[10] << 16 | (size_t)d[11] << 24;
    off = 12;
  }
  if (hlen > n - off) return ox_err_set(e, OX_EPARSE, "%s: truncated .npy header", path), NULL;
  char *h = malloc(hlen + 1);
  if (!h) return ox_err_set(e, OX_ENOMEM, "out of memory"), NULL;
  memcpy(h, d + off, hlen);
  h[hlen] = 0;
  ox_value *v = NULL;
  const char *descr = strstr(h, "'descr'"), *fo = strstr(h, "'fortran_order'"),
             *sh = strstr(h, "'shape'");
  if (!descr || !fo || !sh) {
    ox_err_set(e, OX_EPARSE, "%s: .npy header lacks descr, fortran_order or shape", path);
    goto done;
  }
  const char *fo_colon = strchr(fo, ':');
  if (!fo_colon) { /* found by fuzz_tensorio: a key with no value after it */
    ox_err_set(e, OX_EPARSE, "%s: .npy header: 'fortran_order' has no value", path);
    goto done;
  }
  if (strncmp(fo_colon + 1 + strspn(fo_colon + 1, " "), "True", 4) == 0) {
    ox_err_set(e, OX_EUNSUPPORTED, "%s: Fortran-order .npy arrays are not supported", path);
    goto done;
  }
  const char *q = strchr(descr + 7, '\'');
  if (!q) {
    ox_err_set(e, OX_EPARSE, "%s: bad descr", path);
    goto done;
  }
  char ds[16] = {0};
  size_t dl = strcspn(q + 1, "'");
  if (dl >= sizeof ds) dl = sizeof ds - 1;
  memcpy(ds, q + 1, dl);
  static const struct {
    const char *d;
    int32_t t;
  } kinds[] = {{"f4", OX_FLOAT},     {"f8", OX_DOUBLE},     {"f2", OX_FLOAT16}, {"i1", OX_INT8},
               {"i2", OX_INT16},     {"i4", OX_INT32},      {"i8", OX_INT64},   {"u1", OX_UINT8},
               {"u2", OX_UINT16},    {"u4", OX_UINT32},     {"u8", OX_UINT64},  {"b1", OX_BOOL},
               {"c8", OX_COMPLEX64}, {"c16", OX_COMPLEX128}};
  int32_t dt = 0;
  if (ds[0] == '>' && strcmp(ds + 1, "i1") && strcmp(ds + 1, "u1") && strcmp(ds + 1, "b1")) {
    ox_err_set(e, OX_EUNSUPPORTED, "%s: big-endian .npy data", path);
    goto done;
  }
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strcmp(ds + 1, kinds[i].d) == 0) dt = kinds[i].t;
  if (!dt) {
    ox_err_set(e, OX_EUNSUPPORTED, "%s: .npy dtype '%s' is not supported", path, ds);
    goto done;
  }
  int64_t dims[64];
  size_t rank = 0;
  const char *p = strchr(sh, '(');
  if (!p) {
    ox_err_set(e, OX_EPARSE, "%s: bad shape", path);
    goto done;
  }
  p++;
  while (*p && *p != ')') {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    char *end;
    long long x = strtoll(p, &end, 10);
    if (end == p || rank == 64 || x < 0) {
      ox_err_set(e, OX_EPARSE, "%s: bad shape", path);
      goto done;
    }
    dims[rank++] = x;
    p = end;
  }
  /* the data the header promises must be there before anything is
   * allocated for it (found by fuzz_tensorio: a small file claiming GBs) */
  size_t body = off + hlen;
  int64_t count;
  size_t need;
  if (!ox_numel(dims, rank, &count) ||
      !ox_mul_size((size_t)count, ox_value_elem_size(dt), &need) || need != n - body) {
    ox_err_set(e, OX_EPARSE, "%s: .npy data holds %zu bytes, not what the shape needs", path,
               n - body);
    goto done;
  }
  v = ox_tensor_new_uninit(dt, dims, rank, e);
  if (!v) goto done;
  if (n - body != v->nbytes) {
    ox_err_set(e, OX_EPARSE, "%s: .npy data holds %zu bytes, the shape needs %zu", path, n - body,
               v->nbytes);
    ox_value_unref(v);
    v = NULL;
    goto done;
  }
  if (v->nbytes) memcpy(v->data, d + body, v->nbytes);
done:
  free(h);
  return v;
}

/* ---------------------------------------------------------------- .pb */

static ox_value *read_value(const char *path, const ox_type *declared, ox_err *e) {
  uint8_t *d = NULL;
  size_t n = 0;
  if (ox_file_read_all(path, &d, &n, e)) return NULL;
  ox_value *v = NULL;
  if (ends_with(path, ".npy")) {
    v = read_npy(path, d, n, e);
    free(d);
    return v;
  }
  ox_arena *a = ox_arena_new();
  if (!a) {
    free(d);
    return ox_err_set(e, OX_ENOMEM, "out of memory"), NULL;
  }
  ox_type_kind kind = declared ? declared->kind : OX_TYPE_TENSOR;
  int rc = OX_OK;
  switch (kind) {
    case OX_TYPE_SEQUENCE: {
      ox_sequence_data *s;
      rc = ox_pb_decode_sequence(d, n, a, &s, e);
      if (!rc) v = ox_value_from_sequence_data(s, e);
      break;
    }
    case OX_TYPE_MAP: {
      ox_map_data *m;
      rc = ox_pb_decode_map(d, n, a, &m, e);
      if (!rc) v = ox_value_from_map_data(m, e);
      break;
    }
    case OX_TYPE_OPTIONAL: {
      ox_optional_data *o;
      rc = ox_pb_decode_optional(d, n, a, &o, e);
      if (!rc) v = ox_value_from_optional_data(o, e);
      break;
    }
    default: {
      ox_tensor *t;
      rc = ox_pb_decode_tensor(d, n, a, &t, e);
      if (!rc) v = ox_value_from_tensor_proto(t, false, e);
      break;
    }
  }
  if (!v) ox_err_prefix(e, "%s", path);
  ox_arena_free(a);
  free(d);
  return v;
}

static int write_value(const char *path, const ox_value *v, const char *name, ox_err *e) {
  ox_arena *a = ox_arena_new();
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  ox_buf b = {0};
  int rc = OX_OK;
  char *nm = name ? ox_arena_strdup(a, name) : NULL;
  switch (v ? v->kind : OX_VAL_OPTIONAL) {
    case OX_VAL_TENSOR: {
      ox_tensor t;
      rc = ox_value_to_tensor_proto(v, a, &t, e);
      t.name = nm;
      if (!rc) rc = ox_pb_encode_tensor(&t, &b, e);
      break;
    }
    case OX_VAL_SEQUENCE: {
      ox_sequence_data s;
      rc = ox_value_to_sequence_data(v, a, &s, e);
      s.name = nm;
      if (!rc) rc = ox_pb_encode_sequence(&s, &b, e);
      break;
    }
    case OX_VAL_MAP: {
      ox_map_data m;
      rc = ox_value_to_map_data(v, a, &m, e);
      m.name = nm;
      if (!rc) rc = ox_pb_encode_map(&m, &b, e);
      break;
    }
    default: {
      ox_optional_data o;
      rc = ox_value_to_optional_data(v, a, &o, e);
      o.name = nm;
      if (!rc) rc = ox_pb_encode_optional(&o, &b, e);
      break;
    }
  }
  if (!rc && b.failed) rc = ox_err_set(e, OX_ENOMEM, "out of memory encoding %s", path);
  if (!rc) rc = ox_file_write_all(path, b.data, b.size, e);
  ox_buf_free(&b);
  ox_arena_free(a);
  return rc;
}

/* ---------------------------------------------------------------- summary */

static void print_elem(FILE *f, const ox_value *v, int64_t i) {
  const char *p = (const char *)v->data;
  switch (v->dtype) {
    case OX_FLOAT:
      fprintf(f, "%g", ((const float *)p)[i]);
      break;
    case OX_DOUBLE:
      fprintf(f, "%g", ((const double *)p)[i]);
      break;
    case OX_FLOAT16:
      fprintf(f, "%g", ox_f16_to_f32(((const uint16_t *)p)[i]));
      break;
    case OX_BFLOAT16:
      fprintf(f, "%g", ox_bf16_to_f32(((const uint16_t *)p)[i]));
      break;
    case OX_INT8:
    case OX_INT4:
    case OX_INT2:
      fprintf(f, "%d", ((const int8_t *)p)[i]);
      break;
    case OX_INT16:
      fprintf(f, "%d", ((const int16_t *)p)[i]);
      break;
    case OX_INT32:
      fprintf(f, "%d", ((const int32_t *)p)[i]);
      break;
    case OX_INT64:
      fprintf(f, "%lld", (long long)((const int64_t *)p)[i]);
      break;
    case OX_UINT16:
      fprintf(f, "%u", ((const uint16_t *)p)[i]);
      break;
    case OX_UINT32:
      fprintf(f, "%u", ((const uint32_t *)p)[i]);
      break;
    case OX_UINT64:
      fprintf(f, "%llu", (unsigned long long)((const uint64_t *)p)[i]);
      break;
    case OX_BOOL:
      fprintf(f, "%s", ((const uint8_t *)p)[i] ? "true" : "false");
      break;
    case OX_STRING: {
      const char *s = ((char *const *)p)[i];
      fprintf(f, "\"%s\"", s ? s : "");
      break;
    }
    case OX_COMPLEX64:
      fprintf(f, "%g%+gi", ((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]);
      break;
    case OX_COMPLEX128:
      fprintf(f, "%g%+gi", ((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]);
      break;
    default:
      fprintf(f, "%u", ((const uint8_t *)p)[i]);
      break;
  }
}

static void print_body(FILE *f, const ox_value *v, int depth) {
  char d[256];
  ox_value_describe(v, d, sizeof d);
  if (!v) {
    fprintf(f, "none");
    return;
  }
  switch (v->kind) {
    case OX_VAL_TENSOR: {
      fprintf(f, "%s = [", d);
      int64_t lim = v->numel < 10 ? v->numel : 10;
      for (int64_t i = 0; i < lim; i++) {
        if (i) fprintf(f, ", ");
        print_elem(f, v, i);
      }
      fprintf(f, "%s]", v->numel > lim ? ", ..." : "");
      break;
    }
    case OX_VAL_SEQUENCE:
      fprintf(f, "sequence(%zu) [", v->n_items);
      for (size_t i = 0; i < v->n_items && i < 4 && depth < 3; i++) {
        if (i) fprintf(f, "; ");
        print_body(f, v->items[i], depth + 1);
      }
      fprintf(f, "%s]", v->n_items > 4 ? "; ..." : "");
      break;
    case OX_VAL_OPTIONAL:
      fprintf(f, "optional(");
      print_body(f, v->elem, depth + 1);
      fprintf(f, ")");
      break;
    case OX_VAL_MAP:
      fprintf(f, "map keys ");
      print_body(f, v->keys, depth + 1);
      break;
    default:
      fprintf(f, "%s", d);
      break;
  }
}

/* ---------------------------------------------------------------- public */

static onnxc_status fail(onnxc_error *err, const ox_err *e) {
  if (err) {
    err->code = e->code;
    memcpy(err->msg, e->msg, sizeof err->msg);
  }
  return (onnxc_status)e->code;
}

onnxc_status onnxc_value_read_file(const char *path, const onnxc_type *declared,
                                   onnxc_value **out, onnxc_error *err) {
  ox_err e = {0};
  if (!path || !out) {
    ox_err_set(&e, OX_EINVAL, "onnxc_value_read_file: bad arguments");
    return fail(err, &e);
  }
  *out = (onnxc_value *)read_value(path, (const ox_type *)declared, &e);
  return *out ? ONNXC_OK : fail(err, &e);
}

onnxc_status onnxc_value_write_file(const char *path, const onnxc_value *v, const char *name,
                                    onnxc_error *err) {
  ox_err e = {0};
  if (!path) {
    ox_err_set(&e, OX_EINVAL, "onnxc_value_write_file: path is NULL");
    return fail(err, &e);
  }
  return write_value(path, (const ox_value *)v, name, &e) ? fail(err, &e) : ONNXC_OK;
}

char *onnxc_value_summary(const onnxc_value *v) {
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (!f) return NULL;
  print_body(f, (const ox_value *)v, 0);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}
