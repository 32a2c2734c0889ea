/* base.c - errors, checked arithmetic, arena, arrays, hash map, buffers. */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ox_err_vset(ox_err *e, int code, const char *fmt, va_list ap) {
  if (e) {
    e->code = code;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  }
  return code;
}

int ox_err_set(ox_err *e, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ox_err_vset(e, code, fmt, ap);
  va_end(ap);
  return code;
}

int ox_err_prefix(ox_err *e, const char *fmt, ...) {
  if (!e) return OX_EINVAL;
  char pre[512], old[sizeof e->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pre, sizeof pre, fmt, ap);
  va_end(ap);
  memcpy(old, e->msg, sizeof old);
  size_t pl = strlen(pre);
  if (pl > sizeof e->msg - 3) pl = sizeof e->msg - 3;
  memcpy(e->msg, pre, pl);
  memcpy(e->msg + pl, ": ", 2);
  size_t room = sizeof e->msg - pl - 3, ol = strnlen(old, sizeof old - 1);
  if (ol > room) ol = room;
  memcpy(e->msg + pl + 2, old, ol);
  e->msg[pl + 2 + ol] = 0;
  return e->code;
}

bool ox_mul_size(size_t a, size_t b, size_t *r) { return !__builtin_mul_overflow(a, b, r); }
bool ox_add_size(size_t a, size_t b, size_t *r) { return !__builtin_add_overflow(a, b, r); }
bool ox_mul_i64(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
bool ox_add_i64(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }

/* ---- arena ---- */
typedef struct ox_chunk {
  struct ox_chunk *next;
  size_t size, used;
  _Alignas(16) unsigned char mem[];
} ox_chunk;

struct ox_arena {
  ox_chunk *head;
  size_t total;
};

ox_arena *ox_arena_new(void) { return calloc(1, sizeof(ox_arena)); }

void ox_arena_free(ox_arena *a) {
  if (!a) return;
  ox_chunk *c = a->head;
  while (c) {
    ox_chunk *n = c->next;
    free(c);
    c = n;
  }
  free(a);
}

void *ox_arena_alloc(ox_arena *a, size_t n) {
  if (!a) return NULL;
  if (n == 0) n = 1;
  size_t need = (n + 15) & ~(size_t)15;
  if (need < n) return NULL;
  ox_chunk *c = a->head;
  if (!c || c->size - c->used < need) {
    size_t sz = 64 * 1024;
    if (need > sz / 4) {
      /* big request: its own chunk, placed behind the current head so that
       * the head's free space is not wasted */
      if (need > SIZE_MAX - sizeof(ox_chunk)) return NULL;
      ox_chunk *big = malloc(sizeof(ox_chunk) + need);
      if (!big) return NULL;
      big->size = need;
      big->used = need;
      if (c) {
        big->next = c->next;
        c->next = big;
      } else {
        big->next = NULL;
        a->head = big;
      }
      a->total += need;
      memset(big->mem, 0, need);
      return big->mem;
    }
    c = malloc(sizeof(ox_chunk) + sz);
    if (!c) return NULL;
    c->size = sz;
    c->used = 0;
    c->next = a->head;
    a->head = c;
  }
  void *p = c->mem + c->used;
  c->used += need;
  a->total += need;
  memset(p, 0, need);
  return p;
}

void *ox_arena_calloc(ox_arena *a, size_t n, size_t elem) {
  size_t t;
  if (!ox_mul_size(n, elem, &t)) return NULL;
  return ox_arena_alloc(a, t);
}

void *ox_arena_memdup(ox_arena *a, const void *p, size_t n) {
  void *q = ox_arena_alloc(a, n);
  if (q && n) memcpy(q, p, n);
  return q;
}

char *ox_arena_strndup(ox_arena *a, const char *s, size_t n) {
  if (n == SIZE_MAX) return NULL;
  char *q = ox_arena_alloc(a, n + 1);
  if (q) {
    if (n) memcpy(q, s, n);
    q[n] = 0;
  }
  return q;
}

char *ox_arena_strdup(ox_arena *a, const char *s) {
  return s ? ox_arena_strndup(a, s, strlen(s)) : NULL;
}

char *ox_arena_printf(ox_arena *a, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *q = NULL;
  if (n >= 0 && (q = ox_arena_alloc(a, (size_t)n + 1)) != NULL) vsnprintf(q, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return q;
}

size_t ox_arena_used(const ox_arena *a) { return a ? a->total : 0; }

void *ox_vec_push_(ox_arena *a, void **arr, size_t *n, size_t elem) {
  size_t cnt = *n;
  /* capacity is the smallest power of two >= cnt; full when cnt is 0 or a power of two */
  if (cnt == 0 || (cnt & (cnt - 1)) == 0) {
    size_t ncap = cnt ? cnt * 2 : 1, bytes;
    if (ncap < cnt || !ox_mul_size(ncap, elem, &bytes)) return NULL;
    void *nv = ox_arena_alloc(a, bytes);
    if (!nv) return NULL;
    if (cnt) memcpy(nv, *arr, cnt * elem);
    *arr = nv;
  }
  unsigned char *slot = (unsigned char *)*arr + cnt * elem;
  memset(slot, 0, elem);
  *n = cnt + 1;
  return slot;
}

/* ---- hash map ---- */
uint64_t ox_hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void ox_map_init(ox_map *m) { memset(m, 0, sizeof *m); }

void ox_map_free(ox_map *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

static size_t map_find(const ox_map *m, const char *key) {
  size_t mask = m->cap - 1, i = (size_t)ox_hash_str(key) & mask;
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & mask;
  return i;
}

int ox_map_put(ox_map *m, const char *key, uintptr_t val) {
  if ((m->count + 1) * 4 >= m->cap * 3) {
    size_t ncap = m->cap ? m->cap * 2 : 16;
    ox_map nm = {calloc(ncap, sizeof(char *)), calloc(ncap, sizeof(uintptr_t)), ncap, 0};
    if (!nm.keys || !nm.vals) {
      free(nm.keys);
      free(nm.vals);
      return OX_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) {
        size_t j = map_find(&nm, m->keys[i]);
        nm.keys[j] = m->keys[i];
        nm.vals[j] = m->vals[i];
        nm.count++;
      }
    ox_map_free(m);
    *m = nm;
  }
  size_t i = map_find(m, key);
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->count++;
  }
  m->vals[i] = val;
  return OX_OK;
}

bool ox_map_get(const ox_map *m, const char *key, uintptr_t *val) {
  if (!m->cap) return false;
  size_t i = map_find(m, key);
  if (!m->keys[i]) return false;
  if (val) *val = m->vals[i];
  return true;
}

/* ---- buffers ---- */
void ox_buf_free(ox_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

bool ox_buf_reserve(ox_buf *b, size_t extra) {
  if (b->failed) return false;
  size_t need;
  if (!ox_add_size(b->size, extra, &need)) {
    b->failed = true;
    return false;
  }
  if (need <= b->cap) return true;
  size_t ncap = b->cap ? b->cap : 256;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2) {
      ncap = need;
      break;
    }
    ncap *= 2;
  }
  uint8_t *nd = realloc(b->data, ncap);
  if (!nd) {
    b->failed = true;
    return false;
  }
  b->data = nd;
  b->cap = ncap;
  return true;
}

void ox_buf_append(ox_buf *b, const void *p, size_t n) {
  if (!n || !ox_buf_reserve(b, n)) return;
  memcpy(b->data + b->size, p, n);
  b->size += n;
}

void ox_buf_putc(ox_buf *b, char c) { ox_buf_append(b, &c, 1); }
void ox_buf_puts(ox_buf *b, const char *s) { ox_buf_append(b, s, strlen(s)); }

void ox_buf_printf(ox_buf *b, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n > 0 && ox_buf_reserve(b, (size_t)n + 1)) {
    vsnprintf((char *)b->data + b->size, (size_t)n + 1, fmt, ap2);
    b->size += (size_t)n;
  }
  va_end(ap2);
}
