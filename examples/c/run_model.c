/* run_model.c - load any ONNX model, show what it takes and gives, run it.
 *
 *   run_model MODEL [NAME=FILE | FILE]... [-n COUNT]
 *
 * MODEL is a binary .onnx or ONNX text. Each input comes from a .npy file or
 * a serialized TensorProto (.pb, as in the ONNX test cases), bound by name
 * (NAME=FILE) or, without a name, to the model's inputs in order (those not
 * named). Prints the model's opsets, inputs and outputs with their types and
 * shapes (symbolic dims by name), then every output: a tensor's element
 * type, shape and first COUNT values (default 8), strings included; the
 * items of a sequence, the keys and values of a map, an optional's content.
 *
 * An example of the public API: it uses <onnxc.h> and the C library only.
 * Build against an installed onnxc:
 *   cc run_model.c $(pkg-config --cflags --libs onnxc) -o run_model
 * or with CMake: find_package(onnxc) and link onnxc::onnxc. */
#include <onnxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_RANK = 16 };

/* Element sizes by TensorProto.DataType (0: not handled here; strings are
 * read and printed by their own paths). */
static const size_t dtype_sizes[] = {0, 4, 1, 1, 2, 2, 4, 8, 0, 1, 2, 8, 4, 8, 8, 16, 2};
enum { N_DTYPES = sizeof dtype_sizes / sizeof dtype_sizes[0], DT_STRING = 8 };

static size_t dtype_size(int32_t dt) { return dt >= 0 && dt < N_DTYPES ? dtype_sizes[dt] : 0; }

/* Fills msg and returns NULL, so that readers can `return fail(...)`. */
static void *fail(char *msg, size_t size, const char *path, const char *what) {
  snprintf(msg, size, "%s: %s", path, what);
  return NULL;
}

static unsigned char *read_file(const char *path, size_t *size, char *msg, size_t msg_size) {
  FILE *f = fopen(path, "rb");
  if (!f) return fail(msg, msg_size, path, "cannot open");
  unsigned char *data = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 65536;
      unsigned char *grown = realloc(data, cap);
      if (!grown) {
        free(data);
        fclose(f);
        return fail(msg, msg_size, path, "out of memory");
      }
      data = grown;
    }
    size_t got = fread(data + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(data);
    return fail(msg, msg_size, path, "read error");
  }
  *size = n;
  return data;
}

/* numel of a shape, or -1 on overflow / negative dimension */
static int64_t numel_of(const int64_t *dims, size_t rank) {
  int64_t n = 1;
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] < 0 || (dims[i] != 0 && n > INT64_MAX / dims[i])) return -1;
    n *= dims[i];
  }
  return n;
}

/* A new tensor holding a copy of `bytes` (exactly numel * element size). */
static onnxc_value *make_tensor(int32_t dt, const int64_t *dims, size_t rank, const void *bytes,
                                size_t nbytes, const char *path, char *msg, size_t msg_size) {
  onnxc_error err = {0};
  onnxc_value *v = onnxc_tensor_create(dt, dims, rank, &err);
  if (!v) return fail(msg, msg_size, path, err.msg);
  if (nbytes) memcpy(onnxc_tensor_data(v), bytes, nbytes);
  return v;
}

/* ------------------------------------------------------------------ .npy */

/* The value of 'key': in the header dict, or NULL. */
static const char *npy_field(const char *header, const char *key) {
  const char *p = strstr(header, key);
  if (!p) return NULL;
  p = strchr(p + strlen(key), ':');
  if (!p) return NULL;
  p++;
  while (*p == ' ') p++;
  return p;
}

static onnxc_value *read_npy(const char *path, const unsigned char *data, size_t size, char *msg,
                             size_t msg_size) {
  static const struct {
    const char *descr;
    int32_t dtype;
  } descrs[] = {{"f4", 1}, {"u1", 2},  {"i1", 3},  {"u2", 4},  {"i2", 5},  {"i4", 6},  {"i8", 7},
                {"b1", 9}, {"f2", 10}, {"f8", 11}, {"u4", 12}, {"u8", 13}, {"c8", 14}, {"c16", 15}};
  if (size < 10 || memcmp(data, "\x93NUMPY", 6) != 0)
    return fail(msg, msg_size, path, "not a .npy file (no \\x93NUMPY magic)");
  size_t header_len, offset;
  if (data[6] == 1) {
    header_len = (size_t)data[8] | (size_t)data[9] << 8;
    offset = 10;
  } else if (size >= 12 && (data[6] == 2 || data[6] == 3)) {
    header_len =
        (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 | (size_t)data[11] << 24;
    offset = 12;
  } else {
    return fail(msg, msg_size, path, "unknown .npy version");
  }
  if (header_len > size - offset)
    return fail(msg, msg_size, path, ".npy header longer than the file");
  char *header = malloc(header_len + 1);
  if (!header) return fail(msg, msg_size, path, "out of memory");
  memcpy(header, data + offset, header_len);
  header[header_len] = '\0';
  offset += header_len;

  onnxc_value *v = NULL;
  const char *descr = npy_field(header, "'descr'");
  const char *order = npy_field(header, "'fortran_order'");
  const char *shape = npy_field(header, "'shape'");
  int32_t dt = 0;
  if (!descr || !order || !shape || *descr != '\'' || *shape != '(') {
    fail(msg, msg_size, path, ".npy header without descr, fortran_order or shape");
    goto done;
  }
  if (descr[1] == '>') {
    fail(msg, msg_size, path, "big-endian .npy data are not supported");
    goto done;
  }
  for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++) {
    size_t len = strlen(descrs[i].descr);
    if (strchr("<|=", descr[1]) && strncmp(descr + 2, descrs[i].descr, len) == 0 &&
        descr[2 + len] == '\'')
      dt = descrs[i].dtype;
  }
  if (!dt) {
    fail(msg, msg_size, path, "unsupported .npy element type (descr)");
    goto done;
  }
  if (strncmp(order, "False", 5) != 0) {
    fail(msg, msg_size, path, "Fortran-ordered .npy data are not supported");
    goto done;
  }
  int64_t dims[MAX_RANK];
  size_t rank = 0;
  const char *p = shape + 1;
  for (;;) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p || d < 0 || rank == MAX_RANK) {
      fail(msg, msg_size, path, "bad .npy shape");
      goto done;
    }
    dims[rank++] = (int64_t)d;
    p = end;
  }
  int64_t n = numel_of(dims, rank);
  size_t esize = dtype_size(dt);
  if (n < 0 || (uint64_t)n > (size - offset) / esize) {
    fail(msg, msg_size, path, ".npy data shorter than its shape says");
    goto done;
  }
  v = make_tensor(dt, dims, rank, data + offset, (size_t)n * esize, path, msg, msg_size);
done:
  free(header);
  return v;
}

/* ------------------------------------------------------------------ TensorProto */

typedef struct reader {
  const unsigned char *p, *end;
} reader;

/* 0 on success, -1 at a truncated or overlong varint */
static int read_varint(reader *r, uint64_t *out) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) return -1;
    unsigned char b = *r->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return -1;
}

/* Reads one field's key and locates its payload: for length-delimited
 * fields [*data, *data + *len); for the others the scalar in *scalar. */
static int read_field(reader *r, uint32_t *field, uint32_t *wire, uint64_t *scalar,
                      const unsigned char **data, size_t *len) {
  uint64_t key;
  if (read_varint(r, &key) != 0) return -1;
  *field = (uint32_t)(key >> 3);
  *wire = (uint32_t)(key & 7);
  *data = r->p;
  *len = 0;
  switch (*wire) {
    case 0:
      return read_varint(r, scalar);
    case 1:
    case 5: {
      size_t n = *wire == 1 ? 8 : 4;
      if ((size_t)(r->end - r->p) < n) return -1;
      uint64_t v = 0;
      for (size_t i = 0; i < n; i++) v |= (uint64_t)r->p[i] << (8 * i);
      r->p += n;
      *scalar = v;
      return 0;
    }
    case 2: {
      uint64_t n;
      if (read_varint(r, &n) != 0 || n > (uint64_t)(r->end - r->p)) return -1;
      *data = r->p;
      *len = (size_t)n;
      r->p += n;
      return 0;
    }
    default:
      return -1;
  }
}

/* The repeated field that holds values of dtype dt when raw_data is absent
 * (onnx.proto TensorProto), and its wire type when not packed. */
static uint32_t typed_field(int32_t dt, uint32_t *wire) {
  switch (dt) {
    case 1:  /* float */
    case 14: /* complex64 */
      *wire = 5;
      return 4; /* float_data */
    case 11:    /* double */
    case 15:    /* complex128 */
      *wire = 1;
      return 10; /* double_data */
    case 7:
      *wire = 0;
      return 7; /* int64_data */
    case 12:
    case 13:
      *wire = 0;
      return 11; /* uint64_data */
    default:
      *wire = 0;
      return 5; /* int32_data: the small integers, bool, float16 and bfloat16 bits */
  }
}

/* Stores one value of a typed field as element k of out (little-endian). */
static void store_value(unsigned char *out, size_t esize, size_t k, uint64_t bits, int32_t dt) {
  if (dt == 14) { /* complex64 stores two floats per element */
    esize = 4;
  } else if (dt == 15) {
    esize = 8;
  }
  for (size_t i = 0; i < esize; i++) out[k * esize + i] = (unsigned char)(bits >> (8 * i));
}

/* A string tensor from the string_data fields of a TensorProto. */
static onnxc_value *read_strings(const char *path, const unsigned char *data, size_t size,
                                 const int64_t *dims, size_t rank, char *msg, size_t msg_size) {
  int64_t n = numel_of(dims, rank);
  if (n < 0 || (uint64_t)n > size) /* each string takes at least one byte of the file */
    return fail(msg, msg_size, path, "bad dims");
  const char **strs = calloc((size_t)n + 1, sizeof *strs);
  size_t *lens = calloc((size_t)n + 1, sizeof *lens);
  onnxc_value *v = NULL;
  if (!strs || !lens) {
    fail(msg, msg_size, path, "out of memory");
    goto done;
  }
  size_t k = 0;
  reader r = {data, data + size};
  while (r.p < r.end) {
    uint32_t field = 0, wire = 0;
    uint64_t scalar = 0;
    const unsigned char *payload;
    size_t len;
    if (read_field(&r, &field, &wire, &scalar, &payload, &len) != 0) break;
    if (field != 6 || wire != 2) continue; /* string_data */
    if (k < (size_t)n) {
      strs[k] = (const char *)payload;
      lens[k] = len;
    }
    k++;
  }
  if (k != (size_t)n) {
    fail(msg, msg_size, path, "the number of strings does not match dims");
    goto done;
  }
  onnxc_error err = {0};
  v = onnxc_tensor_create_strings(dims, rank, strs, lens, &err);
  if (!v) fail(msg, msg_size, path, err.msg);
done:
  free(strs);
  free(lens);
  return v;
}

static onnxc_value *read_tensor_proto(const char *path, const unsigned char *data, size_t size,
                                      char *msg, size_t msg_size) {
  int64_t dims[MAX_RANK];
  size_t rank = 0;
  int32_t dt = 0;
  const unsigned char *raw = NULL;
  size_t raw_len = 0;
  int has_raw = 0;
  reader r = {data, data + size};
  while (r.p < r.end) {
    uint32_t field, wire;
    uint64_t scalar = 0;
    const unsigned char *payload;
    size_t len;
    if (read_field(&r, &field, &wire, &scalar, &payload, &len) != 0)
      return fail(msg, msg_size, path, "not a TensorProto (malformed protobuf)");
    if (field == 1 && wire == 0) { /* dims, one by one */
      if (rank == MAX_RANK) return fail(msg, msg_size, path, "too many dims");
      dims[rank++] = (int64_t)scalar;
    } else if (field == 1 && wire == 2) { /* dims, packed */
      reader d = {payload, payload + len};
      while (d.p < d.end) {
        uint64_t v;
        if (read_varint(&d, &v) != 0 || rank == MAX_RANK)
          return fail(msg, msg_size, path, "bad dims");
        dims[rank++] = (int64_t)v;
      }
    } else if (field == 2 && wire == 0) {
      dt = (int32_t)scalar;
    } else if (field == 9 && wire == 2) {
      raw = payload;
      raw_len = len;
      has_raw = 1;
    } else if (field == 14 && wire == 0 && scalar != 0) {
      return fail(msg, msg_size, path, "tensors with external data are not supported here");
    }
  }
  if (dt == DT_STRING) return read_strings(path, data, size, dims, rank, msg, msg_size);
  size_t esize = dtype_size(dt);
  if (esize == 0) return fail(msg, msg_size, path, "unsupported or missing data_type");
  int64_t n = numel_of(dims, rank);
  if (n < 0 || (uint64_t)n > SIZE_MAX / esize) return fail(msg, msg_size, path, "bad dims");
  size_t nbytes = (size_t)n * esize;
  if (has_raw) {
    if (raw_len != nbytes)
      return fail(msg, msg_size, path, "raw_data size does not match dims and data_type");
    return make_tensor(dt, dims, rank, raw, nbytes, path, msg, msg_size);
  }

  /* the values are in the typed field: a second pass writes them */
  onnxc_value *v = make_tensor(dt, dims, rank, NULL, 0, path, msg, msg_size);
  if (!v) return NULL;
  unsigned char *out = onnxc_tensor_data(v);
  size_t want = (size_t)n * (dt == 14 || dt == 15 ? 2 : 1), k = 0;
  uint32_t single_wire, field_no = typed_field(dt, &single_wire);
  r.p = data;
  while (r.p < r.end) {
    uint32_t field = 0, wire = 0;
    uint64_t scalar = 0;
    const unsigned char *payload;
    size_t len;
    if (read_field(&r, &field, &wire, &scalar, &payload, &len) != 0)
      break; /* not reached: the first pass read the same bytes */
    if (field != field_no) continue;
    if (wire == single_wire) {
      if (k < want) store_value(out, esize, k, scalar, dt);
      k++;
      continue;
    }
    if (wire != 2) continue;
    reader d = {payload, payload + len};
    while (d.p < d.end) {
      uint64_t bits = 0;
      if (single_wire == 0) {
        if (read_varint(&d, &bits) != 0) break;
      } else {
        size_t w = single_wire == 1 ? 8 : 4;
        if ((size_t)(d.end - d.p) < w) break;
        for (size_t i = 0; i < w; i++) bits |= (uint64_t)d.p[i] << (8 * i);
        d.p += w;
      }
      if (k < want) store_value(out, esize, k, bits, dt);
      k++;
    }
  }
  if (k != want) {
    onnxc_value_free(v);
    return fail(msg, msg_size, path, "the number of values does not match dims");
  }
  return v;
}

/* A tensor from a .npy or TensorProto file (by content, not by name). */
static onnxc_value *read_tensor_file(const char *path, char *msg, size_t msg_size) {
  size_t size = 0;
  unsigned char *data = read_file(path, &size, msg, msg_size);
  if (!data) return NULL;
  onnxc_value *v = size >= 6 && memcmp(data, "\x93NUMPY", 6) == 0
                       ? read_npy(path, data, size, msg, msg_size)
                       : read_tensor_proto(path, data, size, msg, msg_size);
  free(data);
  return v;
}

/* ------------------------------------------------------------------ printing */

static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | man << 13;
  } else if (exp != 0) {
    bits = sign | (exp + 112) << 23 | man << 13;
  } else if (man == 0) {
    bits = sign;
  } else { /* subnormal: normalise */
    exp = 113;
    while (!(man & 0x400u)) {
      man <<= 1;
      exp--;
    }
    bits = sign | exp << 23 | (man & 0x3ffu) << 13;
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static void print_element(const unsigned char *p, int32_t dt) {
  switch (dt) {
    case 1:
    case 14: {
      float f[2];
      memcpy(f, p, dt == 1 ? 4 : 8);
      if (dt == 1)
        printf("%g", (double)f[0]);
      else
        printf("%g%+gi", (double)f[0], (double)f[1]);
      break;
    }
    case 11:
    case 15: {
      double d[2];
      memcpy(d, p, dt == 11 ? 8 : 16);
      if (dt == 11)
        printf("%g", d[0]);
      else
        printf("%g%+gi", d[0], d[1]);
      break;
    }
    case 10:
    case 16: {
      uint16_t h;
      memcpy(&h, p, 2);
      float f;
      if (dt == 10) {
        f = half_to_float(h);
      } else {
        uint32_t bits = (uint32_t)h << 16;
        memcpy(&f, &bits, sizeof f);
      }
      printf("%g", (double)f);
      break;
    }
    case 2:
      printf("%u", (unsigned)p[0]);
      break;
    case 9:
      printf("%s", p[0] ? "true" : "false");
      break;
    case 3:
      printf("%d", (int)(int8_t)p[0]);
      break;
    default: { /* the wider integers: little-endian, sign-extended if signed */
      size_t size = dtype_size(dt);
      uint64_t u = 0;
      for (size_t i = 0; i < size; i++) u |= (uint64_t)p[i] << (8 * i);
      int is_signed = dt == 5 || dt == 6 || dt == 7;
      if (is_signed && size < 8 && (u >> (8 * size - 1)) & 1) u |= ~(uint64_t)0 << (8 * size);
      if (is_signed)
        printf("%lld", (long long)u);
      else
        printf("%llu", (unsigned long long)u);
    }
  }
}

static void print_shape(const int64_t *dims, size_t rank) {
  printf("[");
  for (size_t i = 0; i < rank; i++) printf("%s%lld", i ? "," : "", (long long)dims[i]);
  printf("]");
}

/* One line per value: "name: float[2,3] = 1 2 3 ..."; the items of a
 * sequence, the keys and values of a map and the content of an optional on
 * indented lines of their own. */
static void print_value(const char *name, const onnxc_value *v, size_t count, int indent) {
  printf("%*s%s: ", indent, "", name);
  if (!v) { /* an optional output without a value */
    printf("none\n");
    return;
  }
  switch (onnxc_value_kind(v)) {
    case ONNXC_TYPE_TENSOR:
      break;
    case ONNXC_TYPE_SEQUENCE: {
      size_t n = onnxc_sequence_length(v);
      printf("sequence of %zu\n", n);
      for (size_t i = 0; i < n && i < count; i++) {
        char item[32];
        snprintf(item, sizeof item, "[%zu]", i);
        print_value(item, onnxc_sequence_at(v, i), count, indent + 2);
      }
      if (n > count) printf("%*s...\n", indent + 2, "");
      return;
    }
    case ONNXC_TYPE_MAP:
      printf("map\n");
      print_value("keys", onnxc_map_keys(v), count, indent + 2);
      print_value("values", onnxc_map_values(v), count, indent + 2);
      return;
    case ONNXC_TYPE_OPTIONAL:
      if (!onnxc_optional_has_value(v)) {
        printf("optional, empty\n");
      } else {
        printf("optional\n");
        print_value("value", onnxc_optional_value(v), count, indent + 2);
      }
      return;
    default:
      printf("(a value of another kind)\n");
      return;
  }
  int32_t dt = onnxc_tensor_dtype(v);
  size_t rank = onnxc_tensor_rank(v);
  int64_t n = onnxc_tensor_numel(v);
  printf("%s", onnxc_dtype_name(dt));
  print_shape(onnxc_tensor_dims(v), rank);
  size_t esize = dtype_size(dt);
  if (dt != DT_STRING && (esize == 0 || n < 0)) {
    printf(" (values of this type are not shown)\n");
    return;
  }
  const unsigned char *data = onnxc_tensor_data_const(v);
  printf(" =");
  for (size_t i = 0; i < count && i < (size_t)n; i++) {
    printf(" ");
    if (dt == DT_STRING) {
      size_t len = 0;
      const char *str = onnxc_tensor_string(v, i, &len);
      printf("\"%.*s\"", (int)(len < 200 ? len : 200), str ? str : "");
    } else {
      print_element(data + i * esize, dt);
    }
  }
  printf("%s\n", (size_t)n > count ? " ..." : "");
}

/* "tensor(float)[N,3]": the type, and a tensor's shape with symbolic dims by
 * name and unknown ones as '?'. */
static void print_type(const onnxc_type *t) {
  char text[256];
  onnxc_type_describe(t, text, sizeof text);
  printf("%s", text);
  int64_t rank = onnxc_type_rank(t);
  if (onnxc_type_kind_of(t) != ONNXC_TYPE_TENSOR || rank < 0) return;
  printf("[");
  for (int64_t i = 0; i < rank; i++) {
    int64_t d = onnxc_type_dim(t, (size_t)i);
    const char *param = onnxc_type_dim_param(t, (size_t)i);
    if (i) printf(",");
    if (d >= 0)
      printf("%lld", (long long)d);
    else
      printf("%s", param ? param : "?");
  }
  printf("]");
}

static void print_signature(const onnxc_session *s) {
  const onnxc_model *m = onnxc_session_model(s);
  printf("model: ir_version %lld, opsets", (long long)onnxc_model_ir_version(m));
  for (size_t i = 0; i < onnxc_model_opset_count(m); i++) {
    const char *domain = onnxc_model_opset_domain(m, i);
    printf(" %s %lld", *domain ? domain : "ai.onnx", (long long)onnxc_model_opset_version(m, i));
  }
  if (*onnxc_model_producer_name(m))
    printf(", from %s %s", onnxc_model_producer_name(m), onnxc_model_producer_version(m));
  printf("\n");
  size_t n_in = onnxc_session_input_count(s), n_out = onnxc_session_output_count(s);
  printf("inputs (%zu):\n", n_in);
  for (size_t i = 0; i < n_in; i++) {
    printf("  %s: ", onnxc_session_input_name(s, i));
    print_type(onnxc_session_input_type(s, i));
    printf("\n");
  }
  printf("outputs (%zu):\n", n_out);
  for (size_t i = 0; i < n_out; i++) {
    printf("  %s: ", onnxc_session_output_name(s, i));
    print_type(onnxc_session_output_type(s, i));
    printf("\n");
  }
}

/* ------------------------------------------------------------------ main */

/* Whether some NAME=FILE argument names input `name`. */
static int named_on_line(const char *name, int argc, char **argv) {
  size_t len = strlen(name);
  for (int i = 1; i < argc; i++)
    if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=') return 1;
  return 0;
}

/* The model input that the next positional file goes to: inputs in order,
 * skipping those bound by name; NULL when none is left. */
static const char *next_unnamed_input(const onnxc_session *s, size_t *next, int argc, char **argv) {
  while (*next < onnxc_session_input_count(s)) {
    const char *name = onnxc_session_input_name(s, (*next)++);
    if (!named_on_line(name, argc, argv)) return name;
  }
  return NULL;
}

int main(int argc, char **argv) {
  const char *model_path = NULL;
  size_t count = 8;
  const char **names = calloc((size_t)argc, sizeof *names);
  onnxc_value **inputs = calloc((size_t)argc, sizeof *inputs);
  onnxc_value **outputs = NULL;
  size_t n_inputs = 0, n_positional = 0, n_outputs = 0;
  onnxc_model *model = NULL;
  onnxc_session *session = NULL;
  onnxc_error err = {0};
  char msg[1200];
  int rc = 1;
  if (!names || !inputs) {
    fprintf(stderr, "run_model: out of memory\n");
    goto done;
  }
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
      count = (size_t)strtoul(argv[++i], NULL, 10);
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      fprintf(stderr, "usage: %s MODEL [NAME=FILE | FILE]... [-n COUNT]\n", argv[0]);
      goto done;
    } else if (!model_path) {
      model_path = argv[i];
    }
  }
  if (!model_path) {
    fprintf(stderr, "usage: %s MODEL [NAME=FILE | FILE]... [-n COUNT]\n", argv[0]);
    goto done;
  }
  if (onnxc_model_load(model_path, NULL, &model, &err) != ONNXC_OK ||
      onnxc_session_create(model, NULL, &session, &err) != ONNXC_OK) {
    fprintf(stderr, "run_model: %s\n", err.msg);
    goto done;
  }
  print_signature(session);

  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0) {
      i++;
      continue;
    }
    if (argv[i] == model_path) continue;
    const char *eq = strchr(argv[i], '='), *path = eq ? eq + 1 : argv[i];
    if (eq) {
      /* the name is the part before '=': a copy, since argv stays whole */
      size_t len = (size_t)(eq - argv[i]);
      char *name = malloc(len + 1);
      if (!name) {
        fprintf(stderr, "run_model: out of memory\n");
        goto done;
      }
      memcpy(name, argv[i], len);
      name[len] = '\0';
      names[n_inputs] = name;
    } else {
      /* the next model input not bound by name anywhere on the line */
      const char *name = next_unnamed_input(session, &n_positional, argc, argv);
      if (!name) {
        fprintf(stderr, "run_model: %s: no model input left for it\n", path);
        goto done;
      }
      char *copy = malloc(strlen(name) + 1);
      if (!copy) {
        fprintf(stderr, "run_model: out of memory\n");
        goto done;
      }
      strcpy(copy, name);
      names[n_inputs] = copy;
    }
    inputs[n_inputs] = read_tensor_file(path, msg, sizeof msg);
    n_inputs++;
    if (!inputs[n_inputs - 1]) {
      fprintf(stderr, "run_model: %s\n", msg);
      goto done;
    }
  }
  for (size_t i = 0; i < n_inputs; i++) print_value(names[i], inputs[i], count > 4 ? 4 : count, 0);

  n_outputs = onnxc_session_output_count(session);
  outputs = calloc(n_outputs ? n_outputs : 1, sizeof *outputs);
  if (!outputs) {
    fprintf(stderr, "run_model: out of memory\n");
    goto done;
  }
  if (onnxc_session_run(session, names, inputs, n_inputs, NULL, outputs, n_outputs, &err) !=
      ONNXC_OK) {
    fprintf(stderr, "run_model: %s\n", err.msg);
    goto done;
  }
  for (size_t k = 0; k < n_outputs; k++)
    print_value(onnxc_session_output_name(session, k), outputs[k], count, 0);
  rc = 0;
done:
  for (size_t k = 0; outputs && k < n_outputs; k++) onnxc_value_free(outputs[k]);
  free(outputs);
  for (size_t i = 0; names && inputs && i < n_inputs; i++) {
    free((void *)names[i]);
    onnxc_value_free(inputs[i]);
  }
  free(names);
  free(inputs);
  onnxc_session_free(session);
  onnxc_model_free(model);
  return rc;
}
