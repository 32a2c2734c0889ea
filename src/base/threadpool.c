/* threadpool.c - parallel-for over a pool of worker threads. The caller
 * thread takes chunks too. A parallel_for issued while another one is in
 * flight on the pool (nested, from a worker, or a concurrent run) runs
 * inline on its own thread: concurrent runs of a session each keep at
 * least their caller's core, and the pool goes to whichever run holds it.
 *
 * A model runs hundreds of short parallel loops per run, so the hot path
 * takes no lock: the caller writes the job, then publishes it by bumping
 * `epoch`; workers watching that word (for spin_us) see it at once, and
 * only sleeping ones cost a futex wake. Chunks are taken from one atomic
 * counter, finished ones counted in another that the caller watches. Each
 * of these words has its own cache line, so workers polling one do not
 * slow the writes to another.
 *
 * The job's fields are rewritten only while no worker is inside the job:
 * the caller first makes `epoch` odd ("being written"), then waits until
 * `active` is 0; a worker checks in (active + 1), then confirms `epoch` is
 * still the even value it saw, and backs out otherwise. Both sides use
 * sequentially consistent operations, so one of them always sees the
 * other (the store-then-load pattern of Dekker's algorithm); the same
 * pattern guards every sleep (sleepers / caller_waiting) against a missed
 * wake-up. */
#define _GNU_SOURCE
#include "threadpool.h"

#include <limits.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "cores.h"

#ifdef __linux__
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

struct ox_thread_pool {
  int n_threads; /* including the caller */
  int n_workers;
  pthread_t *workers;
  int64_t spin_ns;
  /* the job: written by the caller only while epoch is odd and active is 0 */
  void (*fn)(void *arg, int64_t begin, int64_t end);
  void *arg;
  int64_t n, chunk;
  uint32_t n_chunks;
  alignas(64) atomic_uint epoch; /* 2 x job number; odd while the job is written */
  alignas(64) atomic_int active; /* workers checked in to the current job */
  alignas(64) atomic_llong next; /* next chunk to take */
  alignas(64) atomic_uint done;  /* chunks finished; the caller sleeps on it */
  /* workers the current job can use (its chunks less the caller's one):
   * workers 0 .. want-1 join it, the others do not even check in, so a
   * loop of two chunks on a 16-thread pool is not slowed by fourteen
   * workers bouncing its counters between their caches */
  alignas(64) atomic_int want;
  alignas(64) atomic_int sleepers;
  atomic_int caller_waiting;
  atomic_bool stop;
  atomic_flag busy; /* a parallel_for holds the pool */
#ifndef __linux__
  pthread_mutex_t mu;
  pthread_cond_t cv;
#endif
};

static inline void cpu_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleeps while *word == val (it may return early); wakes every sleeper. */
#ifdef __linux__
static void word_wait(ox_thread_pool *p, atomic_uint *word, unsigned val) {
  (void)p;
  syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}
static void word_wake(ox_thread_pool *p, atomic_uint *word) {
  (void)p;
  syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#else
/* elsewhere a condition variable with a timeout bounds any missed wake-up */
static void word_wait(ox_thread_pool *p, atomic_uint *word, unsigned val) {
  pthread_mutex_lock(&p->mu);
  if (atomic_load(word) == val) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 1000000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&p->cv, &p->mu, &ts);
  }
  pthread_mutex_unlock(&p->mu);
}
static void word_wake(ox_thread_pool *p, atomic_uint *word) {
  (void)word;
  pthread_mutex_lock(&p->mu);
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
}
#endif

static void take_chunks(ox_thread_pool *p) {
  for (;;) {
    long long c = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
    if (c >= (long long)p->n_chunks) return;
    int64_t b = c * p->chunk, e = b + p->chunk;
    if (e > p->n) e = p->n;
    p->fn(p->arg, b, e);
    /* the last chunk wakes a caller that went to sleep waiting for it */
    if (atomic_fetch_add(&p->done, 1) + 1 == p->n_chunks && atomic_load(&p->caller_waiting))
      word_wake(p, &p->done);
  }
}

/* The next published epoch after `seen` (even and different), or `seen`
 * when the pool stops: watched for spin_ns, then slept on. */
static unsigned next_epoch(ox_thread_pool *p, unsigned seen) {
  int64_t until = 0;
  for (unsigned i = 0;; i++) {
    unsigned v = atomic_load_explicit(&p->epoch, memory_order_acquire);
    if (!(v & 1) && v != seen) return v;
    if (atomic_load_explicit(&p->stop, memory_order_relaxed)) return seen;
    if ((i & 63) == 0) {
      int64_t t = now_ns();
      if (!until) until = t + p->spin_ns;
      if (t >= until) break;
    }
    cpu_pause();
  }
  for (;;) {
    atomic_fetch_add(&p->sleepers, 1);
    unsigned v = atomic_load(&p->epoch);
    bool stop = atomic_load(&p->stop);
    if (!stop && ((v & 1) || v == seen)) word_wait(p, &p->epoch, v);
    atomic_fetch_sub(&p->sleepers, 1);
    v = atomic_load_explicit(&p->epoch, memory_order_acquire);
    if (atomic_load(&p->stop)) return seen;
    if (!(v & 1) && v != seen) return v;
  }
}

typedef struct worker_arg {
  ox_thread_pool *p;
  int cpu;   /* to pin to, or -1 */
  int index; /* 0 .. n_workers-1 */
} worker_arg;

static void *worker_main(void *argp) {
  worker_arg wa = *(worker_arg *)argp;
  free(argp);
  ox_thread_pool *p = wa.p;
#ifdef __linux__
  if (wa.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(wa.cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort */
  }
#endif
  unsigned seen = 0;
  for (;;) {
    unsigned e = next_epoch(p, seen);
    if (e == seen) break; /* stop */
    seen = e;
    /* (read after the epoch it belongs to; a later job's value only makes
     * this worker skip a job the others finish, or join one it then
     * confirms below) */
    if (wa.index >= atomic_load_explicit(&p->want, memory_order_relaxed)) continue;
    atomic_fetch_add(&p->active, 1);
    if (atomic_load(&p->epoch) == e) take_chunks(p);
    /* else the job ended and the next one is being written: skip it */
    atomic_fetch_sub(&p->active, 1);
  }
  return NULL;
}

ox_thread_pool *ox_thread_pool_create(const ox_pool_opts *o, ox_err *e) {
  ox_pool_opts d = {0, -1, 0};
  if (!o) o = &d;
  ox_thread_pool *p = calloc(1, sizeof *p);
  if (!p) return ox_err_set(e, OX_ENOMEM, "out of memory (thread pool)"), NULL;
  p->n_threads = o->n_threads > 0 ? o->n_threads : ox_cores_default_threads();
  p->spin_ns = (int64_t)(o->spin_us < 0 ? OX_POOL_SPIN_US_DEFAULT : o->spin_us) * 1000;
  atomic_flag_clear(&p->busy);
#ifndef __linux__
  if (pthread_mutex_init(&p->mu, NULL) || pthread_cond_init(&p->cv, NULL)) {
    free(p);
    return ox_err_set(e, OX_ENOMEM, "cannot create the thread pool's locks"), NULL;
  }
#endif
  if (p->n_threads > 1) {
    p->workers = calloc((size_t)p->n_threads - 1, sizeof *p->workers);
    if (!p->workers) {
      ox_thread_pool_free(p);
      return ox_err_set(e, OX_ENOMEM, "out of memory (thread pool)"), NULL;
    }
    const ox_cores *c = ox_cores_get();
    for (int i = 0; i < p->n_threads - 1; i++) {
      worker_arg *wa = malloc(sizeof *wa);
      if (!wa) break;
      wa->p = p;
      wa->index = i;
      wa->cpu = o->pin && i + 1 < c->n_logical ? c->order[i + 1] : -1;
      if (pthread_create(&p->workers[i], NULL, worker_main, wa) != 0) {
        free(wa);
        break;
      }
      p->n_workers++;
    }
  }
  return p;
}

ox_thread_pool *ox_thread_pool_new(int n_threads, ox_err *e) {
  ox_pool_opts o = {n_threads, -1, 0};
  return ox_thread_pool_create(&o, e);
}

void ox_thread_pool_free(ox_thread_pool *p) {
  if (!p) return;
  atomic_store(&p->stop, true);
  atomic_fetch_add(&p->epoch, 2);
  word_wake(p, &p->epoch);
  for (int i = 0; i < p->n_workers; i++) pthread_join(p->workers[i], NULL);
  free(p->workers);
#ifndef __linux__
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
#endif
  free(p);
}

/* The chunk size for n items over `threads`: of the sizes that give 2 to
 * 4 chunks per thread (none under the grain), the one whose busiest thread
 * (chunks dealt out in turn) has the fewest items; fewer chunks only for
 * 3% less (more chunks even out threads that start late). The grain alone
 * could leave the threads uneven: SqueezeNet's first MaxPool, 64 planes in
 * grains of 10, went as 7 chunks, 40 planes on one thread and 24 on the
 * other; in chunks of 16 it is 32 and 32. Where n is under `threads`
 * grains (the caller found it worth splitting all the same), a chunk may
 * go down to one thread's share, not under half the grain: its last
 * MaxPool, 256 planes in grains of 193, went 193 + 63, now 128 + 128. */
static int64_t balanced_chunk(int64_t n, int64_t grain, int64_t threads) {
  int64_t share = (n + threads - 1) / threads, least = (grain + 1) / 2;
  if (least < share) least = share;
  if (least > grain) least = grain;
  int64_t best = 0, best_span = 0;
  for (int64_t k = threads * 4; k >= 2; k--) {
    int64_t c = (n + k - 1) / k;
    if (c < least) c = least;
    int64_t span = ((n + c - 1) / c + threads - 1) / threads * c;
    if (!best || span * 100 < best_span * 97) best = c, best_span = span;
  }
  return best;
}

void ox_parallel_for(ox_thread_pool *p, int64_t n, int64_t grain,
                     void (*fn)(void *arg, int64_t begin, int64_t end), void *arg) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  /* (a 64K-element Add on 16 threads then runs on all of them instead of
   * two; on a 16-core Xeon it had run slower than on one thread) */
  grain = ox_thread_pool_floor(p, grain);
  if (!p || p->n_workers == 0 || n <= grain || atomic_flag_test_and_set(&p->busy)) {
    fn(arg, 0, n);
    return;
  }
  int64_t chunk = balanced_chunk(n, grain, p->n_workers + 1);
  /* close the previous job: workers still checked in to it have found no
   * chunk left and are leaving */
  unsigned e = atomic_load(&p->epoch);
  atomic_store(&p->epoch, e + 1);
  while (atomic_load(&p->active) != 0) cpu_pause();
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->chunk = chunk;
  p->n_chunks = (uint32_t)((n + chunk - 1) / chunk);
  atomic_store_explicit(&p->want, (int)p->n_chunks - 1, memory_order_relaxed);
  atomic_store_explicit(&p->next, 0, memory_order_relaxed);
  atomic_store_explicit(&p->done, 0, memory_order_relaxed);
  atomic_store(&p->epoch, e + 2);
  if (atomic_load(&p->sleepers) > 0) word_wake(p, &p->epoch);
  take_chunks(p);
  /* wait for the chunks other threads took: watch, then sleep */
  int64_t until = 0;
  for (unsigned i = 0; atomic_load_explicit(&p->done, memory_order_acquire) < p->n_chunks; i++) {
    if ((i & 63) == 0) {
      int64_t t = now_ns();
      if (!until) until = t + p->spin_ns;
      if (t >= until) {
        atomic_store(&p->caller_waiting, 1);
        unsigned d = atomic_load(&p->done);
        if (d < p->n_chunks) word_wait(p, &p->done, d);
        atomic_store(&p->caller_waiting, 0);
        continue;
      }
    }
    cpu_pause();
  }
  atomic_flag_clear(&p->busy);
}

int64_t ox_thread_pool_floor(const ox_thread_pool *p, int64_t floor2) {
  if (!p || p->n_threads <= 2 || floor2 <= 1) return floor2;
  return (floor2 * 2 + p->n_threads - 1) / p->n_threads;
}

int ox_thread_pool_size(const ox_thread_pool *p) { return p ? p->n_threads : 1; }
