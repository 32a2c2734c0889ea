/* test_threadpool.c - the thread pool (src/base/threadpool.c) and the core
 * list it sizes itself from (src/base/cores.c):
 *   - every index of every job is run exactly once, over thousands of short
 *     jobs, at several pool sizes and spin times (a lost or doubled chunk,
 *     or a job whose fields a late worker read half-written, shows here);
 *   - nested calls and concurrent callers on one pool run inline, correctly;
 *   - an idle pool uses no CPU once the spin time is over (the issue's
 *     "an idle server must not burn its cores");
 *   - pinned workers run on one CPU each, from the core list;
 *   - the core list agrees with the kernel's own SMT sibling lists.
 * Labelled `concurrency`: it runs under ThreadSanitizer too. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../src/base/cores.h"
#include "../../src/base/threadpool.h"

static int failures;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
      failures++;                                                           \
    }                                                                       \
  } while (0)

enum { MAX_N = 4096 };

typedef struct job {
  atomic_int hits[MAX_N];
  ox_thread_pool *pool; /* for nested calls */
  pthread_t issuer;
  atomic_int others; /* chunks run by threads other than the issuer */
} job;

static void mark(void *arg, int64_t b, int64_t e) {
  job *j = arg;
  for (int64_t i = b; i < e; i++) atomic_fetch_add_explicit(&j->hits[i], 1, memory_order_relaxed);
}

static void mark_slow(void *arg, int64_t b, int64_t e) {
  job *j = arg;
  (void)b, (void)e;
  if (!pthread_equal(pthread_self(), j->issuer)) atomic_fetch_add(&j->others, 1);
  struct timespec ts = {0, 1000000};
  nanosleep(&ts, NULL);
}

static void mark_nested(void *arg, int64_t b, int64_t e) {
  job *j = arg;
  /* the pool is busy with this job: the inner loop runs inline */
  for (int64_t i = b; i < e; i++) ox_parallel_for(j->pool, 2, 1, mark, j);
}

/* n indices each hit exactly `times` times */
static int all_hit(job *j, int64_t n, int times) {
  for (int64_t i = 0; i < n; i++)
    if (atomic_load(&j->hits[i]) != times) return 0;
  return 1;
}

static void test_jobs(int threads, int spin_us) {
  ox_err e = {0};
  ox_pool_opts o = {threads, spin_us, 0};
  ox_thread_pool *p = ox_thread_pool_create(&o, &e);
  CHECK(p && ox_thread_pool_size(p) == threads);
  if (!p) return;
  job *j = calloc(1, sizeof *j);
  int ok = 1;
  /* sizes from 1 to MAX_N, grains from 1 to beyond n: small jobs back to
   * back are where a late worker meets the next job */
  for (int r = 0; r < 3000 && ok; r++) {
    int64_t n = 1 + (r * 97) % MAX_N, grain = 1 + (r % 7) * (r % 5);
    for (int64_t i = 0; i < n; i++) atomic_store_explicit(&j->hits[i], 0, memory_order_relaxed);
    ox_parallel_for(p, n, grain, mark, j);
    ok = all_hit(j, n, 1);
  }
  CHECK(ok);
  if (!ok) fprintf(stderr, "  pool of %d threads, spin %d us\n", threads, spin_us);
  /* slow chunks: the workers take part (a pool that ran everything on the
   * caller would pass the checks above) */
  atomic_store(&j->others, 0);
  j->issuer = pthread_self();
  /* up to 20 tries: on a loaded machine (make test's two lanes on 2 cores)
   * a sleeping worker may not be scheduled within one job's few ms, and the
   * caller then runs every chunk; a pool that never uses its workers fails
   * every try */
  for (int t = 0; t < 20 && atomic_load(&j->others) == 0; t++)
    ox_parallel_for(p, threads * 8, 1, mark_slow, j);
  CHECK(atomic_load(&j->others) > 0);
  /* a job whose chunks call parallel_for on the same pool */
  memset(j->hits, 0, sizeof j->hits);
  j->pool = p;
  ox_parallel_for(p, 64, 1, mark_nested, j);
  /* each of the 64 inner calls marked indices 0 and 1, inline */
  CHECK(atomic_load(&j->hits[0]) == 64 && atomic_load(&j->hits[1]) == 64);
  free(j);
  ox_thread_pool_free(p);
}

/* several threads issuing jobs on one pool at once */
typedef struct caller {
  ox_thread_pool *p;
  job *j;
  int ok;
} caller;

static void *caller_main(void *arg) {
  caller *c = arg;
  c->ok = 1;
  for (int r = 0; r < 500 && c->ok; r++) {
    int64_t n = 1 + (r * 131) % MAX_N;
    for (int64_t i = 0; i < n; i++) atomic_store_explicit(&c->j->hits[i], 0, memory_order_relaxed);
    ox_parallel_for(c->p, n, 3, mark, c->j);
    c->ok = all_hit(c->j, n, 1);
  }
  return NULL;
}

static void test_concurrent_callers(void) {
  ox_err e = {0};
  ox_thread_pool *p = ox_thread_pool_new(3, &e);
  CHECK(p != NULL);
  if (!p) return;
  caller c[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    c[i] = (caller){p, calloc(1, sizeof(job)), 0};
    pthread_create(&t[i], NULL, caller_main, &c[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    CHECK(c[i].ok);
    free(c[i].j);
  }
  ox_thread_pool_free(p);
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Four workers, a job, then nothing: after the spin time the process must
 * stay quiet. One second of idling is allowed 20 ms of CPU (a few wake-ups
 * of the test harness); a worker that kept spinning would use a second. */
static void test_idle(void) {
  ox_err e = {0};
  ox_pool_opts o = {5, 2000, 0}; /* 2 ms of spinning */
  ox_thread_pool *p = ox_thread_pool_create(&o, &e);
  CHECK(p != NULL);
  if (!p) return;
  job *j = calloc(1, sizeof *j);
  ox_parallel_for(p, 1000, 1, mark, j);
  CHECK(all_hit(j, 1000, 1));
  sleep_ms(50); /* past the spin time */
  double c0 = cpu_seconds();
  sleep_ms(1000);
  double used = cpu_seconds() - c0;
  printf("idle pool of 5 threads: %.1f ms of CPU in 1 s\n", used * 1e3);
  CHECK(used < 0.020);
  /* and it still works after sleeping */
  memset(j->hits, 0, sizeof j->hits);
  ox_parallel_for(p, 1000, 1, mark, j);
  CHECK(all_hit(j, 1000, 1));
  free(j);
  ox_thread_pool_free(p);
}

/* Pinned workers: each runs on exactly one CPU of the process's mask. */
static atomic_int pinned_ok, pinned_seen;
static void check_pin(void *arg, int64_t b, int64_t e) {
  pthread_t issuer = *(pthread_t *)arg;
  (void)b, (void)e;
  cpu_set_t set;
  if (!pthread_equal(pthread_self(), issuer) && sched_getaffinity(0, sizeof set, &set) == 0) {
    atomic_fetch_add(&pinned_seen, 1);
    if (CPU_COUNT(&set) == 1) atomic_fetch_add(&pinned_ok, 1);
  }
  struct timespec ts = {0, 2000000};
  nanosleep(&ts, NULL); /* slow chunks: the worker wakes before they are all taken */
}

static void test_pin(void) {
  const ox_cores *c = ox_cores_get();
  if (c->n_logical < 2) {
    printf("pinning not tested: one CPU in the affinity mask\n");
    return;
  }
  ox_err e = {0};
  ox_pool_opts o = {2, -1, 1};
  ox_thread_pool *p = ox_thread_pool_create(&o, &e);
  CHECK(p != NULL);
  if (!p) return;
  pthread_t self = pthread_self();
  for (int r = 0; r < 20 && !atomic_load(&pinned_seen); r++)
    ox_parallel_for(p, 64, 1, check_pin, &self);
  CHECK(atomic_load(&pinned_seen) > 0);
  CHECK(atomic_load(&pinned_ok) == atomic_load(&pinned_seen));
  ox_thread_pool_free(p);
}

/* The core list: a permutation of the affinity mask, physical cores first,
 * and as many physical cores as distinct sibling lists in sysfs (the
 * kernel's own grouping, read independently of core_id). */
static void test_cores(void) {
  const ox_cores *c = ox_cores_get();
  cpu_set_t set;
  CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
  CHECK(c->n_logical == CPU_COUNT(&set));
  CHECK(c->n_physical >= 1 && c->n_physical <= c->n_logical);
  for (int i = 0; i < c->n_logical; i++) {
    CHECK(CPU_ISSET(c->order[i], &set));
    for (int k = 0; k < i; k++) CHECK(c->order[k] != c->order[i]);
  }
  char lists[256][64];
  int n_lists = 0, readable = 1;
  for (int i = 0; i < c->n_logical && readable && n_lists < 256; i++) {
    char path[128], buf[64] = "";
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
             c->order[i]);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(buf, sizeof buf, f)) readable = 0;
    if (f) fclose(f);
    int dup = 0;
    for (int k = 0; k < n_lists && !dup; k++) dup = strcmp(lists[k], buf) == 0;
    if (!dup && readable) snprintf(lists[n_lists++], sizeof lists[0], "%s", buf);
  }
  /* the mask may hold only part of a sibling group; count groups in it */
  if (readable) CHECK(c->n_physical == n_lists);
  int d = ox_cores_default_threads();
  CHECK(d >= 1 && d <= c->n_physical);
  printf("cores: %d logical, %d physical, quota %d, default threads %d\n", c->n_logical,
         c->n_physical, c->quota, d);
}

int main(void) {
  test_cores();
  int sizes[] = {2, 3, 8};
  for (int i = 0; i < 3; i++) {
    test_jobs(sizes[i], -1);
    test_jobs(sizes[i], 0);
  }
  test_concurrent_callers();
  test_pin();
  test_idle();
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("thread pool: all checks passed\n");
  return failures ? 1 : 0;
}
