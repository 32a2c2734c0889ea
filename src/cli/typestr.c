/* typestr.c - a value type as the tool prints it: float[1,3,N,?],
 * seq(int64[...]), map(string,float[...]), optional(...). */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

typedef struct tbuf {
  char *p;
  size_t cap, len;
} tbuf;

static void put(tbuf *b, const char *fmt, ...) {
  if (b->len >= b->cap) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  if (k > 0) b->len += (size_t)k;
  if (b->len >= b->cap) b->len = b->cap - 1;
}

/* the element type's name, "?" for a number the library does not know */
static const char *dtype_name(int32_t dt) {
  const char *n = onnxc_dtype_name(dt);
  return *n ? n : "?";
}

static void type_str(tbuf *b, const onnxc_type *t, int depth) {
  onnxc_type_kind kind = onnxc_type_kind_of(t);
  if (!t || depth > 32) kind = ONNXC_TYPE_UNKNOWN;
  switch (kind) {
    case ONNXC_TYPE_TENSOR:
    case ONNXC_TYPE_SPARSE_TENSOR: {
      bool sparse = kind == ONNXC_TYPE_SPARSE_TENSOR;
      put(b, "%s%s", sparse ? "sparse_tensor(" : "", dtype_name(onnxc_type_elem_type(t)));
      int64_t rank = onnxc_type_rank(t);
      if (rank >= 0) {
        put(b, "[");
        for (size_t i = 0; i < (size_t)rank; i++) {
          int64_t d = onnxc_type_dim(t, i);
          const char *param = onnxc_type_dim_param(t, i);
          if (i) put(b, ",");
          if (d >= 0) put(b, "%lld", (long long)d);
          else if (param) put(b, "%s", param);
          else put(b, "?");
        }
        put(b, "]");
      } else {
        put(b, "[...]");
      }
      if (sparse) put(b, ")");
      break;
    }
    case ONNXC_TYPE_SEQUENCE:
    case ONNXC_TYPE_OPTIONAL:
      put(b, kind == ONNXC_TYPE_SEQUENCE ? "seq(" : "optional(");
      type_str(b, onnxc_type_element(t), depth + 1);
      put(b, ")");
      break;
    case ONNXC_TYPE_MAP:
      put(b, "map(%s,", dtype_name(onnxc_type_map_key(t)));
      type_str(b, onnxc_type_map_value(t), depth + 1);
      put(b, ")");
      break;
    default:
      put(b, "?");
      break;
  }
}

const char *ox_cli_type_str(const onnxc_type *t, char *buf, size_t size) {
  if (!buf || !size) return "";
  tbuf b = {buf, size, 0};
  buf[0] = 0;
  type_str(&b, t, 0);
  return buf;
}
