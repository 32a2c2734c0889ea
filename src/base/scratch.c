/* scratch.c - per-thread scratch memory for kernels' tasks (see base.h).
 *
 * A task that allocates a few hundred KiB of working memory per call and
 * frees it makes the allocator hand the pages back and fault fresh zeroed
 * ones in on the next call (an int8 convolution spent 15% of its time in
 * page faults that way). Each thread keeps its blocks instead, grown to the
 * largest size asked, and frees them when it ends. */
#include <pthread.h>
#include <stdlib.h>

#include "base.h"

typedef struct scratch {
  void *p[OX_SCRATCH_SLOTS];
  size_t n[OX_SCRATCH_SLOTS];
} scratch;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_key_ok;

static void scratch_free(void *arg) {
  scratch *s = arg;
  for (int i = 0; i < OX_SCRATCH_SLOTS; i++) free(s->p[i]);
  free(s);
}

static void scratch_init(void) {
  scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

void *ox_scratch(int slot, size_t bytes) {
  if (slot < 0 || slot >= OX_SCRATCH_SLOTS || (uint64_t)bytes > ((uint64_t)1 << 40)) return NULL;
  pthread_once(&scratch_once, scratch_init);
  if (!scratch_key_ok) return NULL;
  scratch *s = pthread_getspecific(scratch_key);
  if (!s) {
    s = calloc(1, sizeof *s);
    if (!s || pthread_setspecific(scratch_key, s) != 0) {
      free(s);
      return NULL;
    }
  }
  if (s->n[slot] < bytes || !s->p[slot]) {
    size_t want = (bytes + 63) / 64 * 64;
    if (want < 4096) want = 4096;
    void *p = aligned_alloc(64, want);
    if (!p) return NULL;
    free(s->p[slot]);
    s->p[slot] = p;
    s->n[slot] = want;
  }
  return s->p[slot];
}
