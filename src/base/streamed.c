/* streamed.c - memory for packed weights, on huge pages (see base.h).
 *
 * Allocations are carved from slabs of at least 32 MiB (2 MiB aligned,
 * madvise(MADV_HUGEPAGE)); each block starts with a header naming its slab,
 * whose count of live blocks frees it when it reaches zero (the slab being
 * filled is kept until it is full). Weights live as long as their session,
 * so slabs fill and empty together; the waste is the unfilled tail of the
 * current slab. */
#define _DEFAULT_SOURCE /* madvise */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base.h"

#define HUGE_PAGE ((size_t)2 << 20)
#define SLAB_MIN ((size_t)32 << 20)
#define HEADER 64 /* keeps blocks 64-byte aligned */

typedef struct slab {
  unsigned char *base;
  size_t size, used;
  size_t live; /* blocks not yet freed */
} slab;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slab *current; /* the slab new blocks come from */

static slab *slab_new(size_t need) {
  size_t size = need < SLAB_MIN ? SLAB_MIN : (need + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  slab *s = malloc(sizeof *s);
  void *base = s ? aligned_alloc(HUGE_PAGE, size) : NULL;
  if (!base) {
    free(s);
    return NULL;
  }
#if defined(MADV_HUGEPAGE)
  (void)madvise(base, size, MADV_HUGEPAGE);
#endif
  s->base = base;
  s->size = size;
  s->used = 0;
  s->live = 0;
  return s;
}

static void slab_free(slab *s) {
  free(s->base);
  free(s);
}

void *ox_alloc_streamed(size_t n) {
  if (n > SIZE_MAX - HEADER - 64) return NULL;
  size_t need = HEADER + (n + 63) / 64 * 64;
  pthread_mutex_lock(&lock);
  slab *s = current;
  if (!s || s->size - s->used < need) {
    slab *fresh = slab_new(need);
    if (!fresh) {
      pthread_mutex_unlock(&lock);
      return NULL;
    }
    /* a block bigger than a slab gets its own, leaving `current` in use */
    if (need > SLAB_MIN && current) {
      s = fresh;
    } else {
      if (current && current->live == 0) slab_free(current);
      current = s = fresh;
    }
  }
  unsigned char *p = s->base + s->used;
  s->used += need;
  s->live++;
  memcpy(p, &s, sizeof s);
  pthread_mutex_unlock(&lock);
  return p + HEADER;
}

void ox_free_streamed(void *p) {
  if (!p) return;
  slab *s;
  memcpy(&s, (unsigned char *)p - HEADER, sizeof s);
  pthread_mutex_lock(&lock);
  /* the slab being filled stays for the next blocks */
  if (--s->live == 0 && s != current) slab_free(s);
  pthread_mutex_unlock(&lock);
}
