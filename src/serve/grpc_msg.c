/* grpc_msg.c - the KServe v2 gRPC messages (grpc_service.proto beside this
 * file) in the protobuf wire format, both ways, with no generated code.
 *
 * src/proto has a wire codec, but it is internal to the library and the
 * server is a client of the public API only (DESIGN.md's layers), so the few
 * wire primitives these messages need are here: varints, fixed 32/64-bit
 * values and length-delimited fields; groups (wire types 3 and 4) are
 * refused. Decoding keeps pointers into the request (strings are copied, to
 * be NUL-terminated); every error names the field at fault, as the client
 * wrote it ("inputs[1].shape"). Unknown fields are skipped, as protobuf
 * requires for compatibility. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

/* ---------------------------------------------------------------- reading */

typedef struct rd {
  const uint8_t *p, *end;
} rd;

/* a reader of n bytes at p; an empty message may come as (NULL, 0), and
 * NULL + 0 is undefined in C (UBSan found it through fuzz_serve) */
static rd rd_of(const uint8_t *p, size_t n) { return (rd){p, p ? p + n : p}; }

static bool rd_varint(rd *r, uint64_t *v) {
  uint64_t x = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p == r->end) return false;
    uint8_t b = *r->p++;
    x |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = x;
      return true;
    }
  }
  return false; /* more than 10 bytes */
}

/* one field: its number, wire type, and the value (varint or fixed) or the
   bytes (length-delimited) */
typedef struct field {
  uint32_t num;
  int wt;
  uint64_t v;
  const uint8_t *data;
  size_t len;
} field;

/* the next field of r: 1, 0 at the end, -1 when malformed */
static int rd_field(rd *r, field *f) {
  if (r->p == r->end) return 0;
  uint64_t key;
  if (!rd_varint(r, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) return -1;
  f->num = (uint32_t)(key >> 3);
  f->wt = (int)(key & 7);
  /* a varint has no bytes to point at: none, rather than the last field's */
  f->data = NULL;
  f->len = 0;
  switch (f->wt) {
    case 0:
      return rd_varint(r, &f->v) ? 1 : -1;
    case 1:
    case 5: {
      size_t n = f->wt == 1 ? 8 : 4;
      if ((size_t)(r->end - r->p) < n) return -1;
      f->v = 0;
      for (size_t i = 0; i < n; i++) f->v |= (uint64_t)r->p[i] << (8 * i);
      f->data = r->p;
      f->len = n;
      r->p += n;
      return 1;
    }
    case 2: {
      uint64_t n;
      if (!rd_varint(r, &n) || n > (uint64_t)(r->end - r->p)) return -1;
      f->data = r->p;
      f->len = (size_t)n;
      r->p += n;
      return 1;
    }
    default:
      return -1; /* groups and reserved wire types */
  }
}

#define FAIL(...)                      \
  do {                                 \
    snprintf(err, errsz, __VA_ARGS__); \
    return -1;                         \
  } while (0)

/* a string field as a NUL-terminated copy (replacing an earlier one, as a
   repeated singular field is merged in protobuf) */
static int take_str(const field *f, char **out, const char *what, char *err, size_t errsz) {
  if (f->wt != 2) FAIL("%s: wire type %d, a string is length-delimited (2)", what, f->wt);
  if (memchr(f->data, 0, f->len)) FAIL("%s: holds a NUL byte", what);
  char *s = malloc(f->len + 1);
  if (!s) FAIL("out of memory");
  memcpy(s, f->data, f->len);
  s[f->len] = 0;
  free(*out);
  *out = s;
  return 0;
}

/* appends one element to a growing array */
static void *grow(void *arr, size_t *n, size_t *cap, size_t size) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 4;
    void *p = realloc(arr, c * size);
    if (!p) return NULL;
    arr = p;
    *cap = c;
  }
  memset((char *)arr + *n * size, 0, size);
  (*n)++;
  return arr;
}

/* a repeated int64 (packed or not) appended to dims[] */
static int take_dims(const field *f, int64_t *dims, size_t *rank, const char *what, char *err,
                     size_t errsz) {
  uint64_t v = f->v;
  bool packed = f->wt == 2;
  if (!packed && f->wt != 0) FAIL("%s: wire type %d, int64 values are varints", what, f->wt);
  /* only a packed field has bytes to read (fuzz_serve found a reader made
     from an unpacked one's unset pointer: undefined, though never read) */
  rd r = packed ? rd_of(f->data, f->len) : rd_of(NULL, 0);
  while (packed ? r.p < r.end : true) {
    if (packed && !rd_varint(&r, &v)) FAIL("%s: a malformed packed varint", what);
    if (*rank == OX_SERVE_GRPC_MAX_RANK) FAIL("%s: over %d dims", what, OX_SERVE_GRPC_MAX_RANK);
    if ((int64_t)v < 0) FAIL("%s: dim %zu is %lld, not >= 0", what, *rank, (long long)(int64_t)v);
    dims[(*rank)++] = (int64_t)v;
    if (!packed) break;
  }
  return 0;
}

void ox_serve_grpc_infer_free(ox_serve_grpc_infer *q) {
  for (size_t i = 0; i < q->n_inputs; i++) {
    free(q->inputs[i].name);
    free(q->inputs[i].datatype);
  }
  for (size_t i = 0; i < q->n_outputs; i++) free(q->outputs[i]);
  free(q->inputs);
  free(q->outputs);
  free(q->raw);
  free(q->model_name);
  free(q->model_version);
  free(q->id);
  memset(q, 0, sizeof *q);
}

static int decode_input(const uint8_t *p, size_t n, ox_serve_grpc_tensor *t, size_t i, char *err,
                        size_t errsz) {
  rd r = rd_of(p, n);
  field f;
  int rc;
  char what[64];
  while ((rc = rd_field(&r, &f)) > 0) {
    switch (f.num) {
      case 1:
        snprintf(what, sizeof what, "inputs[%zu].name", i);
        if (take_str(&f, &t->name, what, err, errsz)) return -1;
        break;
      case 2:
        snprintf(what, sizeof what, "inputs[%zu].datatype", i);
        if (take_str(&f, &t->datatype, what, err, errsz)) return -1;
        break;
      case 3:
        snprintf(what, sizeof what, "inputs[%zu].shape", i);
        if (take_dims(&f, t->dims, &t->rank, what, err, errsz)) return -1;
        break;
      case 5:
        if (f.wt != 2) FAIL("inputs[%zu].contents: wire type %d, a message is 2", i, f.wt);
        t->contents = f.data;
        t->contents_len = f.len;
        t->has_contents = true;
        break;
      default: /* 4: parameters (none is acted on), unknown fields */
        break;
    }
  }
  if (rc < 0) FAIL("inputs[%zu]: malformed protobuf", i);
  if (!t->name || !t->name[0]) FAIL("inputs[%zu].name is missing", i);
  if (!t->datatype) FAIL("inputs[%zu].datatype is missing (input '%s')", i, t->name);
  return 0;
}

static int decode_output(const uint8_t *p, size_t n, char **name, size_t i, char *err,
                         size_t errsz) {
  rd r = rd_of(p, n);
  field f;
  int rc;
  char what[64];
  snprintf(what, sizeof what, "outputs[%zu].name", i);
  while ((rc = rd_field(&r, &f)) > 0)
    if (f.num == 1 && take_str(&f, name, what, err, errsz)) return -1;
  if (rc < 0) FAIL("outputs[%zu]: malformed protobuf", i);
  if (!*name || !**name) FAIL("outputs[%zu].name is missing", i);
  return 0;
}

int ox_serve_grpc_infer_decode(const uint8_t *p, size_t n, ox_serve_grpc_infer *q, char *err,
                               size_t errsz) {
  memset(q, 0, sizeof *q);
  rd r = rd_of(p, n);
  field f;
  int rc;
  size_t cap_in = 0, cap_out = 0, cap_raw = 0;
  while ((rc = rd_field(&r, &f)) > 0) {
    switch (f.num) {
      case 1:
        if (take_str(&f, &q->model_name, "model_name", err, errsz)) return -1;
        break;
      case 2:
        if (take_str(&f, &q->model_version, "model_version", err, errsz)) return -1;
        break;
      case 3:
        if (take_str(&f, &q->id, "id", err, errsz)) return -1;
        break;
      case 5: {
        if (f.wt != 2) FAIL("inputs[%zu]: wire type %d, a message is 2", q->n_inputs, f.wt);
        if (q->n_inputs == OX_SERVE_GRPC_MAX_TENSORS)
          FAIL("inputs: over %d tensors", OX_SERVE_GRPC_MAX_TENSORS);
        void *a = grow(q->inputs, &q->n_inputs, &cap_in, sizeof *q->inputs);
        if (!a) FAIL("out of memory");
        q->inputs = a;
        if (decode_input(f.data, f.len, &q->inputs[q->n_inputs - 1], q->n_inputs - 1, err, errsz))
          return -1;
        break;
      }
      case 6: {
        if (f.wt != 2) FAIL("outputs[%zu]: wire type %d, a message is 2", q->n_outputs, f.wt);
        if (q->n_outputs == OX_SERVE_GRPC_MAX_TENSORS)
          FAIL("outputs: over %d tensors", OX_SERVE_GRPC_MAX_TENSORS);
        void *a = grow(q->outputs, &q->n_outputs, &cap_out, sizeof *q->outputs);
        if (!a) FAIL("out of memory");
        q->outputs = a;
        if (decode_output(f.data, f.len, &q->outputs[q->n_outputs - 1], q->n_outputs - 1, err,
                          errsz))
          return -1;
        break;
      }
      case 7: {
        if (f.wt != 2) FAIL("raw_input_contents[%zu]: wire type %d, bytes are 2", q->n_raw, f.wt);
        if (q->n_raw == OX_SERVE_GRPC_MAX_TENSORS)
          FAIL("raw_input_contents: over %d entries", OX_SERVE_GRPC_MAX_TENSORS);
        void *a = grow(q->raw, &q->n_raw, &cap_raw, sizeof *q->raw);
        if (!a) FAIL("out of memory");
        q->raw = a;
        q->raw[q->n_raw - 1].p = f.data;
        q->raw[q->n_raw - 1].n = f.len;
        break;
      }
      default: /* 4: parameters (none is acted on), unknown fields */
        break;
    }
  }
  if (rc < 0) FAIL("ModelInferRequest: malformed protobuf");
  if (!q->model_name || !q->model_name[0]) FAIL("model_name is missing");
  return 0;
}

int ox_serve_grpc_names_decode(const uint8_t *p, size_t n, uint32_t name_field,
                               uint32_t version_field, char **name, char **version, char *err,
                               size_t errsz) {
  *name = *version = NULL;
  rd r = rd_of(p, n);
  field f;
  int rc;
  while ((rc = rd_field(&r, &f)) > 0) {
    if (f.num == name_field &&
        take_str(&f, name, name_field == 2 ? "model_name" : "name", err, errsz))
      return -1;
    if (version_field && f.num == version_field && take_str(&f, version, "version", err, errsz))
      return -1;
  }
  if (rc < 0) FAIL("malformed protobuf");
  return 0;
}

int ox_serve_grpc_bool_decode(const uint8_t *p, size_t n, uint32_t num, bool *out, char *err,
                              size_t errsz) {
  *out = false;
  rd r = rd_of(p, n);
  field f;
  int rc;
  while ((rc = rd_field(&r, &f)) > 0)
    if (f.num == num) {
      if (f.wt != 0) FAIL("field %u: wire type %d, a bool is a varint", num, f.wt);
      *out = f.v != 0;
    }
  if (rc < 0) FAIL("malformed protobuf");
  return 0;
}

/* ---------------------------------------------------------------- typed contents -> raw bytes */

/* the InferTensorContents field of each datatype (0: none, raw only) */
static uint32_t contents_field(int32_t dtype) {
  switch (dtype) {
    case 9:
      return 1; /* BOOL: bool_contents */
    case 3:
    case 5:
    case 6:
      return 2; /* INT8, INT16, INT32: int_contents */
    case 7:
      return 3; /* INT64 */
    case 2:
    case 4:
    case 12:
      return 4; /* UINT8, UINT16, UINT32: uint_contents */
    case 13:
      return 5; /* UINT64 */
    case 1:
      return 6; /* FP32 */
    case 11:
      return 7; /* FP64 */
    case 8:
      return 8; /* BYTES */
    default:
      return 0; /* FP16, BF16 */
  }
}

static const char *const contents_names[9] = {"",
                                              "bool_contents",
                                              "int_contents",
                                              "int64_contents",
                                              "uint_contents",
                                              "uint64_contents",
                                              "fp32_contents",
                                              "fp64_contents",
                                              "bytes_contents"};

const char *ox_serve_grpc_contents_name(int32_t dtype) {
  return contents_names[contents_field(dtype)];
}

/* one value into the raw layout, range-checked for the narrow types */
static int put_value(ox_serve_buf *b, int32_t dtype, uint64_t v, const char *where, size_t k,
                     char *err, size_t errsz) {
  size_t size = ox_serve_dtype_size(dtype);
  if (dtype == 3 || dtype == 5 || dtype == 6) {
    int64_t s = (int32_t)(uint32_t)v; /* int32 varints carry their sign in 64 bits */
    int64_t lo = dtype == 3 ? -128 : dtype == 5 ? -32768 : INT32_MIN;
    int64_t hi = dtype == 3 ? 127 : dtype == 5 ? 32767 : INT32_MAX;
    if ((int64_t)v != s && (uint64_t)v >> 32) FAIL("%s[%zu] is not an int32", where, k);
    if (s < lo || s > hi)
      FAIL("%s[%zu] is %lld, out of range for %s", where, k, (long long)s,
           ox_serve_dtype_name(dtype));
    v = (uint64_t)s;
  } else if (dtype == 2 || dtype == 4 || dtype == 12) {
    uint64_t hi = dtype == 2 ? 255 : dtype == 4 ? 65535 : UINT32_MAX;
    if (v > hi)
      FAIL("%s[%zu] is %llu, out of range for %s", where, k, (unsigned long long)v,
           ox_serve_dtype_name(dtype));
  } else if (dtype == 9) {
    v = v != 0;
  }
  uint8_t le[8];
  for (size_t i = 0; i < size; i++) le[i] = (uint8_t)(v >> (8 * i));
  ox_serve_buf_put(b, le, size);
  return 0;
}

int ox_serve_grpc_contents_raw(const ox_serve_grpc_tensor *t, int32_t dtype, size_t i,
                               ox_serve_buf *out, size_t *count, char *err, size_t errsz) {
  uint32_t want = contents_field(dtype);
  if (!want)
    FAIL(
        "inputs[%zu] ('%s'): %s has no field in InferTensorContents; send it in "
        "raw_input_contents",
        i, t->name, ox_serve_dtype_name(dtype));
  char where[96];
  snprintf(where, sizeof where, "inputs[%zu].contents.%s", i, contents_names[want]);
  int wire = want == 6 ? 5 : want == 7 ? 1 : want == 8 ? 2 : 0;
  rd r = rd_of(t->contents, t->contents_len);
  field f;
  int rc;
  size_t k = 0;
  while ((rc = rd_field(&r, &f)) > 0) {
    if (f.num >= 1 && f.num <= 8 && f.num != want)
      FAIL("inputs[%zu].contents.%s is set but input '%s' is %s (its field is %s)", i,
           contents_names[f.num], t->name, ox_serve_dtype_name(dtype), contents_names[want]);
    if (f.num != want) continue;
    if (want == 8) { /* bytes: one element per field */
      if (f.wt != 2) FAIL("%s[%zu]: wire type %d, bytes are 2", where, k, f.wt);
      if (f.len > UINT32_MAX) FAIL("%s[%zu]: over 4 GB", where, k);
      uint8_t le[4] = {(uint8_t)f.len, (uint8_t)(f.len >> 8), (uint8_t)(f.len >> 16),
                       (uint8_t)(f.len >> 24)};
      ox_serve_buf_put(out, le, 4);
      ox_serve_buf_put(out, f.data, f.len);
      k++;
    } else if (f.wt == wire) {
      if (put_value(out, dtype, f.v, where, k++, err, errsz)) return -1;
    } else if (f.wt == 2) { /* packed */
      rd pr = rd_of(f.data, f.len);
      size_t fixed = wire == 5 ? 4 : wire == 1 ? 8 : 0;
      if (fixed && f.len % fixed)
        FAIL("%s: %zu packed bytes, not a multiple of %zu", where, f.len, fixed);
      while (pr.p < pr.end) {
        uint64_t v = 0;
        if (fixed) {
          for (size_t b = 0; b < fixed; b++) v |= (uint64_t)pr.p[b] << (8 * b);
          pr.p += fixed;
        } else if (!rd_varint(&pr, &v)) {
          FAIL("%s: a malformed packed varint", where);
        }
        if (put_value(out, dtype, v, where, k++, err, errsz)) return -1;
      }
    } else {
      FAIL("%s: wire type %d does not hold its values", where, f.wt);
    }
    if (out->oom) FAIL("out of memory");
  }
  if (rc < 0) FAIL("inputs[%zu].contents: malformed protobuf", i);
  *count = k;
  return 0;
}

/* ---------------------------------------------------------------- writing */

void ox_serve_pb_varint(ox_serve_buf *b, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  do {
    tmp[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    v >>= 7;
  } while (v);
  ox_serve_buf_put(b, tmp, n);
}

void ox_serve_pb_tag(ox_serve_buf *b, uint32_t num, int wt) {
  ox_serve_pb_varint(b, (uint64_t)num << 3 | (uint64_t)wt);
}

void ox_serve_pb_bytes(ox_serve_buf *b, uint32_t num, const void *p, size_t n) {
  ox_serve_pb_tag(b, num, 2);
  ox_serve_pb_varint(b, n);
  ox_serve_buf_put(b, p, n);
}

void ox_serve_pb_str(ox_serve_buf *b, uint32_t num, const char *s) {
  ox_serve_pb_bytes(b, num, s, strlen(s));
}

void ox_serve_pb_bool(ox_serve_buf *b, uint32_t num, bool v) {
  ox_serve_pb_tag(b, num, 0);
  ox_serve_pb_varint(b, v);
}

/* a sub-message written into sub, appended to b as field num */
void ox_serve_pb_sub(ox_serve_buf *b, uint32_t num, ox_serve_buf *sub) {
  ox_serve_pb_bytes(b, num, sub->data ? sub->data : "", sub->len);
  b->oom |= sub->oom;
  free(sub->data);
  *sub = (ox_serve_buf){0};
}

void ox_serve_pb_dims(ox_serve_buf *b, uint32_t num, const int64_t *dims, size_t rank) {
  ox_serve_buf packed = {0};
  for (size_t d = 0; d < rank; d++) ox_serve_pb_varint(&packed, (uint64_t)dims[d]);
  if (rank) ox_serve_pb_sub(b, num, &packed);
}

int ox_serve_grpc_typed_contents(ox_serve_buf *b, const onnxc_value *v) {
  int32_t dtype = onnxc_tensor_dtype(v);
  uint32_t num = contents_field(dtype);
  if (!num) return -1;
  size_t n = (size_t)onnxc_tensor_numel(v);
  ox_serve_buf c = {0};
  if (num == 8) { /* the raw layout, then one bytes field per element */
    ox_serve_buf raw = {0};
    ox_serve_binary_put(&raw, v);
    const uint8_t *p = (const uint8_t *)raw.data;
    for (size_t i = 0, at = 0; i < n && !raw.oom; i++) {
      size_t len = (size_t)p[at] | (size_t)p[at + 1] << 8 | (size_t)p[at + 2] << 16 |
                   (size_t)p[at + 3] << 24;
      ox_serve_pb_bytes(&c, 8, p + at + 4, len);
      at += 4 + len;
    }
    c.oom |= raw.oom;
    free(raw.data);
  } else {
    const uint8_t *p = onnxc_tensor_data_const(v);
    size_t size = ox_serve_dtype_size(dtype);
    ox_serve_buf packed = {0};
    if (num == 6 || num == 7) { /* fixed: the little-endian bytes as they are */
      ox_serve_buf_put(&packed, p, n * size);
    } else {
      for (size_t i = 0; i < n; i++) {
        const uint8_t *e = p + i * size;
        uint64_t u = 0;
        for (size_t k = 0; k < size; k++) u |= (uint64_t)e[k] << (8 * k);
        /* signed types sign-extended to 64 bits, as protobuf writes int32 and int64 */
        if ((dtype == 3 || dtype == 5 || dtype == 6) && size < 8 && (u >> (8 * size - 1)) & 1)
          u |= ~(uint64_t)0 << (8 * size);
        ox_serve_pb_varint(&packed, u);
      }
    }
    if (n) ox_serve_pb_sub(&c, num, &packed);
  }
  ox_serve_pb_sub(b, 5, &c);
  return 0;
}
