/* encode.c - the model in memory -> protobuf wire format, driven by the
 * field tables of desc.c. Fields are written in ascending field number,
 * repeated scalars packed where onnx.proto declares them packed (as
 * protobuf C++ writes them), unknown fields appended.
 *
 * Two walks over the same code: the first computes the size of every
 * sub-message (kept in pre-order in a size cache), the second writes, taking
 * each length prefix from the cache. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pb.h"

#define AT(obj, off, T) ((const T *)((const char *)(obj) + (off)))
#define ENC_MAX_DEPTH 200
#define FLUSH_AT (1u << 20)

typedef struct ectx {
  size_t *sizes;
  size_t n, cap, cur;
  bool write;
  pb_sink *s;
  ox_err *e;
  int rc;
  int depth;
} ectx;

static size_t vsize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

static int sink_flush(pb_sink *s, ox_err *e) {
  if (s->fd < 0 || s->buf->size == 0) return OX_OK;
  const uint8_t *p = s->buf->data;
  size_t n = s->buf->size;
  while (n) {
    ssize_t w = write(s->fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return ox_err_set(e, OX_EIO, "%s: write failed: %s", s->path, strerror(errno));
    p += w;
    n -= (size_t)w;
  }
  s->buf->size = 0;
  return OX_OK;
}

static void put(ectx *c, const void *p, size_t n) {
  if (c->rc || !n) return;
  pb_sink *s = c->s;
  if (s->fd >= 0 && n >= (64u << 10)) { /* large payloads go straight to the file */
    if ((c->rc = sink_flush(s, c->e))) return;
    const uint8_t *q = p;
    while (n) {
      ssize_t w = write(s->fd, q, n > (1u << 30) ? (1u << 30) : n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        c->rc = ox_err_set(c->e, OX_EIO, "%s: write failed: %s", s->path, strerror(errno));
        return;
      }
      q += w;
      n -= (size_t)w;
    }
    return;
  }
  ox_buf_append(s->buf, p, n);
  if (s->buf->failed)
    c->rc = ox_err_set(c->e, OX_ENOMEM, "out of memory while encoding");
  else if (s->fd >= 0 && s->buf->size >= FLUSH_AT)
    c->rc = sink_flush(s, c->e);
}

static void put_varint(ectx *c, uint64_t v) {
  uint8_t b[10];
  size_t n = 0;
  while (v >= 0x80) {
    b[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  b[n++] = (uint8_t)v;
  put(c, b, n);
}

static uint64_t as_varint(int kind, const void *p) {
  if (kind == PB_I32) return (uint64_t)(int64_t) * (const int32_t *)p; /* sign-extended */
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static size_t value_size(int kind, const void *p) {
  if (kind == PB_F32) return 4;
  if (kind == PB_F64) return 8;
  return vsize(as_varint(kind, p));
}

static void put_value(ectx *c, int kind, const void *p) {
  if (kind == PB_F32 || kind == PB_F64) {
    uint8_t b[8];
    uint64_t v = 0;
    if (kind == PB_F32) {
      uint32_t u;
      memcpy(&u, p, 4);
      v = u;
    } else
      memcpy(&v, p, 8);
    size_t w = kind == PB_F32 ? 4 : 8;
    for (size_t i = 0; i < w; i++) b[i] = (uint8_t)(v >> (8 * i));
    put(c, b, w);
  } else
    put_varint(c, as_varint(kind, p));
}

/* bytes of a length-delimited field with payload n */
static size_t ld_size(uint32_t num, size_t n) { return vsize((uint64_t)num << 3) + vsize(n) + n; }

static void put_ld(ectx *c, uint32_t num, const void *p, size_t n) {
  put_varint(c, (uint64_t)num << 3 | 2);
  put_varint(c, n);
  put(c, p, n);
}

static size_t walk(ectx *c, const pb_msg *d, const void *obj);

/* A sub-message field: size mode reserves a slot, write mode takes it. */
static size_t sub(ectx *c, uint32_t num, const pb_msg *sd, const void *obj) {
  if (sd == &ox_pb_tensor_msg && c->s->subst) obj = c->s->subst(c->s->ud, obj);
  if (c->rc) return 0;
  if (++c->depth > ENC_MAX_DEPTH) {
    c->rc = ox_err_set(c->e, OX_EINVAL, "%s nested deeper than %d levels", sd->name, ENC_MAX_DEPTH);
    return 0;
  }
  size_t sz;
  if (!c->write) {
    if (c->n == c->cap) {
      size_t nc = c->cap ? c->cap * 2 : 256;
      size_t *ns = realloc(c->sizes, nc * sizeof *ns);
      if (!ns) {
        c->rc = ox_err_set(c->e, OX_ENOMEM, "out of memory while encoding");
        return 0;
      }
      c->sizes = ns;
      c->cap = nc;
    }
    size_t slot = c->n++;
    sz = walk(c, sd, obj);
    c->sizes[slot] = sz;
  } else {
    sz = c->sizes[c->cur++];
    put_varint(c, (uint64_t)num << 3 | 2);
    put_varint(c, sz);
    walk(c, sd, obj);
  }
  c->depth--;
  return ld_size(num, sz);
}

static size_t walk(ectx *c, const pb_msg *d, const void *obj) {
  size_t total = 0;
  for (size_t k = 0; k < d->nf && !c->rc; k++) {
    const pb_field *f = &d->f[k];
    size_t tagsz = vsize((uint64_t)f->num << 3);
    uint64_t tag = (uint64_t)f->num << 3 | (uint64_t)ox_pb_wire_of(f->kind);
    if (f->flags & PB_REP) {
      size_t n = *AT(obj, f->aux, size_t);
      const char *arr = *AT(obj, f->off, char *);
      size_t es = ox_pb_elem_size(f);
      if (!n) continue;
      if (f->kind <= PB_F64) {
        if (f->flags & PB_PACKED) {
          size_t len = 0;
          if (f->kind == PB_F32 || f->kind == PB_F64)
            len = n * es;
          else
            for (size_t i = 0; i < n; i++) len += value_size(f->kind, arr + i * es);
          total += ld_size(f->num, len);
          if (c->write) {
            put_varint(c, (uint64_t)f->num << 3 | 2);
            put_varint(c, len);
            for (size_t i = 0; i < n; i++) put_value(c, f->kind, arr + i * es);
          }
        } else {
          for (size_t i = 0; i < n; i++) {
            total += tagsz + value_size(f->kind, arr + i * es);
            if (c->write) {
              put_varint(c, tag);
              put_value(c, f->kind, arr + i * es);
            }
          }
        }
      } else if (f->kind == PB_STR) {
        for (size_t i = 0; i < n; i++) {
          const char *s = ((char *const *)(const void *)arr)[i];
          size_t len = s ? strlen(s) : 0;
          total += ld_size(f->num, len);
          if (c->write) put_ld(c, f->num, s, len);
        }
      } else if (f->kind == PB_BYTES || f->kind == PB_RAW) {
        for (size_t i = 0; i < n; i++) {
          const ox_bytes *b = (const ox_bytes *)(const void *)(arr + i * es);
          total += ld_size(f->num, b->size);
          if (c->write) put_ld(c, f->num, b->data, b->size);
        }
      } else {
        for (size_t i = 0; i < n; i++) total += sub(c, f->num, f->sub, arr + i * es);
      }
      continue;
    }
    switch (f->kind) {
      case PB_STR: {
        const char *s = *AT(obj, f->off, char *);
        if (!s) break;
        size_t len = strlen(s);
        total += ld_size(f->num, len);
        if (c->write) put_ld(c, f->num, s, len);
        break;
      }
      case PB_BYTES:
      case PB_RAW: {
        const ox_bytes *b = AT(obj, f->off, ox_bytes);
        if (!b->data) break;
        total += ld_size(f->num, b->size);
        if (c->write) put_ld(c, f->num, b->data, b->size);
        break;
      }
      case PB_MSG: {
        const void *so = *AT(obj, f->off, void *);
        if (so) total += sub(c, f->num, f->sub, so);
        break;
      }
      case PB_INLINE:
        if ((uint32_t)((const ox_type *)obj)->kind == f->num) total += sub(c, f->num, f->sub, obj);
        break;
      default: {
        if (!*AT(obj, f->aux, bool)) break;
        const void *v = (const char *)obj + f->off;
        total += tagsz + value_size(f->kind, v);
        if (c->write) {
          put_varint(c, tag);
          put_value(c, f->kind, v);
        }
      }
    }
  }
  const ox_bytes *unk = AT(obj, d->unknown, ox_bytes);
  if (unk->size) {
    total += unk->size;
    if (c->write) put(c, unk->data, unk->size);
  }
  return total;
}

int ox_pb_encode_msg(const pb_msg *d, const void *obj, pb_sink *s, ox_err *e) {
  ectx c = {.s = s, .e = e};
  walk(&c, d, obj);
  if (!c.rc) {
    c.write = true;
    walk(&c, d, obj);
  }
  if (!c.rc) c.rc = sink_flush(s, e);
  free(c.sizes);
  return c.rc;
}

#define ENCODER(fn, T, desc)                   \
  int fn(const T *x, ox_buf *out, ox_err *e) { \
    pb_sink s = {.buf = out, .fd = -1};        \
    return ox_pb_encode_msg(&desc, x, &s, e);  \
  }
ENCODER(ox_pb_encode_model, ox_model_proto, ox_pb_model_msg)
ENCODER(ox_pb_encode_tensor, ox_tensor, ox_pb_tensor_msg)
ENCODER(ox_pb_encode_sequence, ox_sequence_data, ox_pb_sequence_msg)
ENCODER(ox_pb_encode_map, ox_map_data, ox_pb_map_msg)
ENCODER(ox_pb_encode_optional, ox_optional_data, ox_pb_optional_msg)
