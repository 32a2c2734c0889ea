/* decode.c - protobuf wire format -> the model in memory, driven by the
 * field tables of desc.c.
 *
 * Each message is read in two passes: the first validates every tag and
 * length and counts the elements of each repeated field (so arrays are
 * allocated once, at their final size), the second stores the values.
 * Sub-messages are skipped by the first pass and decoded by the second, so
 * every byte is scanned at most twice. Errors name the field path and the
 * byte offset from the start of the input. */
#include <stdio.h>
#include <string.h>

#include "pb.h"

#define PB_MAX_DEPTH 64
#define PB_MAX_FIELDS 32

typedef struct frame {
  const char *name;
  size_t idx;
  bool has_idx;
} frame;

typedef struct dctx {
  const uint8_t *base;
  ox_arena *a;
  ox_err *e;
  const char *root;
  frame path[PB_MAX_DEPTH + 2];
  int depth;
} dctx;

/* Writes "a.b[3].c" into the error with the given field (may be NULL). */
static int fail(dctx *c, const char *field, int code, const char *what, const uint8_t *at) {
  char path[512];
  size_t n = 0;
  path[0] = 0;
#define PUT(...)                                                 \
  do {                                                           \
    if (n < sizeof path) {                                       \
      int k_ = snprintf(path + n, sizeof path - n, __VA_ARGS__); \
      if (k_ > 0) n += (size_t)k_;                               \
    }                                                            \
  } while (0)
  for (int i = 0; i < c->depth; i++) {
    PUT("%s%s", i ? "." : "", c->path[i].name);
    if (c->path[i].has_idx) PUT("[%zu]", c->path[i].idx);
  }
  if (field) PUT("%s%s", c->depth ? "." : "", field);
#undef PUT
  if (n >= sizeof path) memcpy(path + sizeof path - 4, "...", 4);
  return ox_err_set(c->e, code, "%s: %s at byte %zu", n ? path : c->root, what,
                    (size_t)(at - c->base));
}

/* Reads a varint; returns the number of bytes (0: truncated, -1: too long). */
static int rd_varint(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  uint64_t r = 0;
  for (int i = 0; i < 10; i++) {
    if (p + i >= end) return 0;
    uint8_t b = p[i];
    if (i == 9 && b > 1) return -1;
    r |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *v = r;
      return i + 1;
    }
  }
  return -1;
}

static int varint_at(dctx *c, const char *field, const uint8_t **p, const uint8_t *end,
                     uint64_t *v) {
  int k = rd_varint(*p, end, v);
  if (k == 0) return fail(c, field, OX_EPARSE, "truncated varint", *p);
  if (k < 0) return fail(c, field, OX_EPARSE, "varint longer than 64 bits", *p);
  *p += k;
  return OX_OK;
}

static const pb_field *find_field(const pb_msg *d, uint32_t num) {
  size_t lo = 0, hi = d->nf;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (d->f[mid].num == num) return &d->f[mid];
    if (d->f[mid].num < num)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

static bool is_scalar(int kind) { return kind <= PB_F64; }

/* Does the field accept this wire type? Otherwise it is kept as unknown,
 * as protobuf does. */
static bool wire_ok(const pb_field *f, int wt) {
  if (wt == ox_pb_wire_of(f->kind)) return true;
  return wt == 2 && (f->flags & PB_REP) && is_scalar(f->kind);
}

#define AT(obj, off, T) ((T *)((char *)(obj) + (off)))

static size_t pow2_cap(size_t n) {
  size_t c = 1;
  while (c < n) c <<= 1;
  return c;
}

/* Skips one value of wire type wt; p points after the tag. */
static int skip_value(dctx *c, const char *field, int wt, const uint8_t **p, const uint8_t *end,
                      const uint8_t **payload, size_t *len) {
  uint64_t v;
  const uint8_t *start = *p;
  switch (wt) {
    case 0:
      return varint_at(c, field, p, end, &v);
    case 1:
    case 5: {
      size_t w = wt == 1 ? 8 : 4;
      if ((size_t)(end - *p) < w)
        return fail(c, field, OX_EPARSE, "truncated fixed-size value", *p);
      *p += w;
      return OX_OK;
    }
    case 2: {
      int rc = varint_at(c, field, p, end, &v);
      if (rc) return rc;
      if (v > (uint64_t)(end - *p))
        return fail(c, field, OX_EPARSE, "length goes past the end of the data", start);
      *payload = *p;
      *len = (size_t)v;
      *p += v;
      return OX_OK;
    }
    default: /* ruled out by the caller */
      return fail(c, field, OX_EPARSE, "invalid wire type", start);
  }
}

static void clear_field(const pb_field *f, void *obj) {
  if (f->kind == PB_STR)
    *AT(obj, f->off, char *) = NULL;
  else {
    memset((char *)obj + f->off, 0, ox_pb_elem_size(f));
    if (f->aux) *AT(obj, f->aux, bool) = false;
  }
}

static int decode_body(dctx *c, const pb_msg *d, void *obj, const uint8_t *p, const uint8_t *end);

/* Stores one scalar read from *p (wire type wt) into dst. */
static void put_scalar(int kind, void *dst, const uint8_t **p) {
  uint64_t v = 0;
  if (kind == PB_F32) {
    uint32_t u = (uint32_t)(*p)[0] | (uint32_t)(*p)[1] << 8 | (uint32_t)(*p)[2] << 16 |
                 (uint32_t)(*p)[3] << 24;
    memcpy(dst, &u, 4);
    *p += 4;
    return;
  }
  if (kind == PB_F64) {
    for (int i = 7; i >= 0; i--) v = v << 8 | (*p)[i];
    memcpy(dst, &v, 8);
    *p += 8;
    return;
  }
  *p += rd_varint(*p, *p + 10, &v); /* validated by the first pass */
  if (kind == PB_I32)
    *(int32_t *)dst = (int32_t)(uint32_t)v;
  else
    memcpy(dst, &v, 8);
}

static int copy_string(dctx *c, const pb_field *f, const uint8_t *s, size_t n, char **out) {
  const uint8_t *z = memchr(s, 0, n);
  if (z) return fail(c, f->name, OX_EPARSE, "string holds a NUL byte", z);
  *out = ox_arena_strndup(c->a, (const char *)s, n);
  if (!*out) return fail(c, f->name, OX_ENOMEM, "out of memory", s);
  return OX_OK;
}

static int copy_bytes(dctx *c, const pb_field *f, const uint8_t *s, size_t n, ox_bytes *out) {
  size_t n1;
  if (!ox_add_size(n, 1, &n1)) return fail(c, f->name, OX_ENOMEM, "size overflow", s);
  uint8_t *d = ox_arena_alloc(c->a, n1);
  if (!d) return fail(c, f->name, OX_ENOMEM, "out of memory", s);
  if (n) memcpy(d, s, n);
  d[n] = 0;
  out->data = d;
  out->size = n;
  return OX_OK;
}

static int decode_sub(dctx *c, const pb_field *f, const pb_msg *sd, void *obj, size_t idx,
                      bool has_idx, const uint8_t *s, size_t n) {
  if (c->depth >= PB_MAX_DEPTH)
    return fail(c, f->name, OX_EPARSE, "messages nested deeper than 64 levels", s);
  c->path[c->depth].name = f->name;
  c->path[c->depth].idx = idx;
  c->path[c->depth].has_idx = has_idx;
  c->depth++;
  int rc = decode_body(c, sd, obj, s, s + n);
  c->depth--;
  return rc;
}

static int decode_body(dctx *c, const pb_msg *d, void *obj, const uint8_t *p, const uint8_t *end) {
  size_t cnt[PB_MAX_FIELDS] = {0};
  size_t unknown = 0;
  const uint8_t *start = p;
  /* pass 1: validate and count */
  while (p < end) {
    const uint8_t *tagp = p;
    uint64_t tag = 0;
    int rc = varint_at(c, NULL, &p, end, &tag);
    if (rc) return rc;
    uint64_t num = tag >> 3;
    int wt = (int)(tag & 7);
    if (num == 0 || num > 536870911u) return fail(c, NULL, OX_EPARSE, "invalid field number", tagp);
    const pb_field *f = find_field(d, (uint32_t)num);
    char unk[32];
    if (!f) snprintf(unk, sizeof unk, "<field %u>", (unsigned)num);
    const char *fname = f ? f->name : unk;
    if (f && !wire_ok(f, wt)) f = NULL; /* kept as an unknown field */
    const uint8_t *pl = NULL;
    size_t len = 0;
    if (wt == 3 || wt == 4)
      return fail(c, fname, OX_EPARSE, "groups (wire type 3/4) are not supported", tagp);
    if (wt > 5) return fail(c, fname, OX_EPARSE, "invalid wire type", tagp);
    rc = skip_value(c, fname, wt, &p, end, &pl, &len);
    if (rc) return rc;
    if (!f) {
      unknown += (size_t)(p - tagp);
      continue;
    }
    if (!(f->flags & PB_REP)) continue;
    size_t k = (size_t)(f - d->f);
    if (wt == 2 && is_scalar(f->kind)) {
      if (f->kind == PB_F32 || f->kind == PB_F64) {
        size_t w = f->kind == PB_F32 ? 4 : 8;
        if (len % w)
          return fail(c, fname, OX_EPARSE, "packed length is not a multiple of the element size",
                      pl);
        cnt[k] += len / w;
      } else {
        for (const uint8_t *q = pl; q < pl + len;) {
          uint64_t v;
          int r = rd_varint(q, pl + len, &v);
          if (r == 0) return fail(c, fname, OX_EPARSE, "truncated varint", q);
          if (r < 0) return fail(c, fname, OX_EPARSE, "varint longer than 64 bits", q);
          q += r;
          cnt[k]++;
        }
      }
    } else {
      cnt[k]++;
    }
  }
  /* allocate: append to what is already there (merging repeated messages) */
  for (size_t k = 0; k < d->nf; k++) {
    if (!cnt[k]) continue;
    const pb_field *f = &d->f[k];
    void **arr = AT(obj, f->off, void *);
    size_t *n = AT(obj, f->aux, size_t);
    size_t total, bytes, es = ox_pb_elem_size(f);
    if (!ox_add_size(*n, cnt[k], &total) || !ox_mul_size(pow2_cap(total), es, &bytes))
      return fail(c, f->name, OX_ENOMEM, "size overflow", start);
    void *na = ox_arena_alloc(c->a, bytes);
    if (!na) return fail(c, f->name, OX_ENOMEM, "out of memory", start);
    if (*n) memcpy(na, *arr, *n * es);
    *arr = na;
  }
  ox_bytes *unk = AT(obj, d->unknown, ox_bytes);
  uint8_t *unk_w = NULL;
  if (unknown) {
    size_t total;
    if (!ox_add_size(unk->size, unknown, &total))
      return fail(c, NULL, OX_ENOMEM, "size overflow", start);
    unk_w = ox_arena_alloc(c->a, total);
    if (!unk_w) return fail(c, NULL, OX_ENOMEM, "out of memory", start);
    if (unk->size) memcpy(unk_w, unk->data, unk->size);
    unk->data = unk_w;
    unk_w += unk->size;
    unk->size = total;
  }
  /* pass 2: store */
  p = start;
  while (p < end) {
    const uint8_t *tagp = p;
    uint64_t tag = 0;
    p += rd_varint(p, end, &tag);
    const uint8_t *q = p; /* the value (after the tag) */
    int wt = (int)(tag & 7);
    const pb_field *f = find_field(d, (uint32_t)(tag >> 3));
    if (f && !wire_ok(f, wt)) f = NULL;
    const uint8_t *pl = NULL;
    size_t len = 0;
    skip_value(c, "", wt, &p, end, &pl, &len);
    if (!f) {
      memcpy(unk_w, tagp, (size_t)(p - tagp));
      unk_w += p - tagp;
      continue;
    }
    if (wt == 2) q = pl;
    int rc = OX_OK;
    if (f->flags & PB_ONEOF)
      for (size_t k = 0; k < d->nf; k++)
        if ((d->f[k].flags & PB_ONEOF) && &d->f[k] != f) clear_field(&d->f[k], obj);
    if (f->flags & PB_REP) {
      char *arr = *AT(obj, f->off, char *);
      size_t *n = AT(obj, f->aux, size_t);
      size_t es = ox_pb_elem_size(f);
      if (is_scalar(f->kind)) {
        const uint8_t *qe = wt == 2 ? pl + len : p;
        while (q < qe) {
          put_scalar(f->kind, arr + *n * es, &q);
          (*n)++;
        }
      } else if (f->kind == PB_STR) {
        rc = copy_string(c, f, pl, len, (char **)(void *)(arr + *n * es));
        (*n)++;
      } else if (f->kind == PB_BYTES) {
        rc = copy_bytes(c, f, pl, len, (ox_bytes *)(void *)(arr + *n * es));
        (*n)++;
      } else {
        size_t idx = (*n)++;
        rc = decode_sub(c, f, f->sub, arr + idx * es, idx, true, pl, len);
      }
    } else {
      switch (f->kind) {
        case PB_STR:
          rc = copy_string(c, f, pl, len, AT(obj, f->off, char *));
          break;
        case PB_BYTES:
          rc = copy_bytes(c, f, pl, len, AT(obj, f->off, ox_bytes));
          break;
        case PB_RAW: {
          ox_bytes *b = AT(obj, f->off, ox_bytes);
          b->data = pl;
          b->size = len;
          break;
        }
        case PB_MSG: {
          void **sp = AT(obj, f->off, void *);
          if (!*sp) {
            *sp = ox_arena_alloc(c->a, f->sub->size);
            if (!*sp) return fail(c, f->name, OX_ENOMEM, "out of memory", pl);
          }
          rc = decode_sub(c, f, f->sub, *sp, 0, false, pl, len);
          break;
        }
        case PB_INLINE: {
          ox_type *t = obj;
          if ((uint32_t)t->kind != f->num) { /* oneof: the last member wins */
            t->elem_type = 0;
            t->has_elem_type = false;
            t->shape = NULL;
            t->elem = NULL;
            t->opaque_domain = t->opaque_name = NULL;
            t->inner_unknown.data = NULL;
            t->inner_unknown.size = 0;
            t->kind = (ox_type_kind)f->num;
          }
          rc = decode_sub(c, f, f->sub, obj, 0, false, pl, len);
          break;
        }
        default:
          put_scalar(f->kind, (char *)obj + f->off, &q);
          *AT(obj, f->aux, bool) = true;
      }
    }
    if (rc) return rc;
  }
  return OX_OK;
}

int ox_pb_decode_msg(const pb_msg *d, const uint8_t *data, size_t size, ox_arena *a, void *obj,
                     ox_err *e) {
  dctx c = {.base = data, .a = a, .e = e, .root = d->name};
  static const uint8_t empty[1];
  if (!data) data = empty;
  c.base = data;
  return decode_body(&c, d, obj, data, data + size);
}

#define DECODER(fn, T, desc)                                                  \
  int fn(const uint8_t *data, size_t size, ox_arena *a, T **out, ox_err *e) { \
    *out = NULL;                                                              \
    T *x = ox_arena_alloc(a, sizeof *x);                                      \
    if (!x) return ox_err_set(e, OX_ENOMEM, "out of memory");                 \
    int rc = ox_pb_decode_msg(&desc, data, size, a, x, e);                    \
    if (rc == OX_OK) *out = x;                                                \
    return rc;                                                                \
  }
DECODER(ox_pb_decode_model, ox_model_proto, ox_pb_model_msg)
DECODER(ox_pb_decode_tensor, ox_tensor, ox_pb_tensor_msg)
DECODER(ox_pb_decode_sequence, ox_sequence_data, ox_pb_sequence_msg)
DECODER(ox_pb_decode_map, ox_map_data, ox_pb_map_msg)
DECODER(ox_pb_decode_optional, ox_optional_data, ox_pb_optional_msg)
