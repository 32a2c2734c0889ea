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

static void type_str(tbuf *b, const ox_type *t, int depth) {
  if (!t || depth > 32) {
    put(b, "?");
    return;
  }
  switch (t->kind) {
    case OX_TYPE_TENSOR:
    case OX_TYPE_SPARSE_TENSOR: {
      const ox_dtype_info *di = ox_dtype_get(t->elem_type);
      put(b, "%s%s", t->kind == OX_TYPE_SPARSE_TENSOR ? "sparse_tensor(" : "", di ? di->name : "?");
      if (t->shape) {
        put(b, "[");
        for (size_t i = 0; i < t->shape->n_dim; i++) {
          const ox_dim *d = &t->shape->dim[i];
          if (i) put(b, ",");
          if (d->has_value) put(b, "%lld", (long long)d->value);
          else if (d->param) put(b, "%s", d->param);
          else put(b, "?");
        }
        put(b, "]");
      } else {
        put(b, "[...]");
      }
      if (t->kind == OX_TYPE_SPARSE_TENSOR) put(b, ")");
      break;
    }
    case OX_TYPE_SEQUENCE:
    case OX_TYPE_OPTIONAL:
      put(b, t->kind == OX_TYPE_SEQUENCE ? "seq(" : "optional(");
      type_str(b, t->elem, depth + 1);
      put(b, ")");
      break;
    case OX_TYPE_MAP: {
      const ox_dtype_info *di = ox_dtype_get(t->elem_type);
      put(b, "map(%s,", di ? di->name : "?");
      type_str(b, t->elem, depth + 1);
      put(b, ")");
      break;
    }
    default:
      put(b, "?");
      break;
  }
}

const char *ox_cli_type_str(const ox_type *t, char *buf, size_t size) {
  if (!buf || !size) return "";
  tbuf b = {buf, size, 0};
  buf[0] = 0;
  type_str(&b, t, 0);
  return buf;
}
