/* threadpool.c - parallel-for over a pool of worker threads owned by a
 * session. The caller thread takes chunks too. A parallel_for issued while
 * another one is in flight (nested, or from a worker) runs inline.
 *
 * A model runs hundreds of short parallel loops per run; waking a worker
 * that sleeps on a condition variable costs tens of microseconds each
 * time, more than many of those loops take. So a worker that has finished
 * a job watches `published` for a short while (WORKER_SPINS pauses, some
 * 100 us) before it sleeps, and the caller watches `done` before it waits. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "threadpool.h"

struct ox_thread_pool {
  int n_threads; /* including the caller */
  pthread_t *workers;
  int n_workers;
  pthread_mutex_t mu;
  pthread_cond_t cv_work, cv_done;
  /* the job in flight */
  void (*fn)(void *arg, int64_t begin, int64_t end);
  void *arg;
  int64_t n, chunk, n_chunks;
  atomic_llong next;   /* next chunk to take */
  atomic_llong done;   /* chunks finished */
  uint64_t generation; /* bumped for every job (under mu) */
  int active;          /* workers still inside the current job */
  bool stop;
  atomic_flag busy;
  atomic_ullong published; /* the generation, also written outside mu: a hint for spinners */
};

enum { WORKER_SPINS = 4000, CALLER_SPINS = 4000 };

static inline void cpu_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void take_chunks(ox_thread_pool *p) {
  for (;;) {
    long long c = atomic_fetch_add(&p->next, 1);
    if (c >= p->n_chunks) return;
    int64_t b = c * p->chunk, e = b + p->chunk;
    if (e > p->n) e = p->n;
    p->fn(p->arg, b, e);
    atomic_fetch_add(&p->done, 1);
  }
}

static void *worker_main(void *arg) {
  ox_thread_pool *p = arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    if (!p->stop && p->generation == seen) {
      pthread_mutex_unlock(&p->mu);
      for (int i = 0; i < WORKER_SPINS && atomic_load_explicit(&p->published, memory_order_acquire) == seen;
           i++)
        cpu_pause();
      pthread_mutex_lock(&p->mu);
    }
    while (!p->stop && p->generation == seen) pthread_cond_wait(&p->cv_work, &p->mu);
    if (p->stop) break;
    seen = p->generation;
    p->active++;
    pthread_mutex_unlock(&p->mu);
    take_chunks(p);
    pthread_mutex_lock(&p->mu);
    if (--p->active == 0) pthread_cond_signal(&p->cv_done);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

ox_thread_pool *ox_thread_pool_new(int n_threads, ox_err *e) {
  ox_thread_pool *p = calloc(1, sizeof *p);
  if (!p) return ox_err_set(e, OX_ENOMEM, "out of memory (thread pool)"), NULL;
  p->n_threads = n_threads < 1 ? 1 : n_threads;
  atomic_flag_clear(&p->busy);
  if (pthread_mutex_init(&p->mu, NULL) || pthread_cond_init(&p->cv_work, NULL) ||
      pthread_cond_init(&p->cv_done, NULL)) {
    free(p);
    return ox_err_set(e, OX_ENOMEM, "cannot create the thread pool's locks"), NULL;
  }
  if (p->n_threads > 1) {
    p->workers = calloc((size_t)p->n_threads - 1, sizeof *p->workers);
    if (!p->workers) {
      ox_thread_pool_free(p);
      return ox_err_set(e, OX_ENOMEM, "out of memory (thread pool)"), NULL;
    }
    for (int i = 0; i < p->n_threads - 1; i++) {
      if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0) break;
      p->n_workers++;
    }
  }
  return p;
}

void ox_thread_pool_free(ox_thread_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  atomic_store(&p->published, ~0ull); /* spinners stop watching */
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < p->n_workers; i++) pthread_join(p->workers[i], NULL);
  free(p->workers);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv_work);
  pthread_cond_destroy(&p->cv_done);
  free(p);
}

void ox_parallel_for(ox_thread_pool *p, int64_t n, int64_t grain,
                     void (*fn)(void *arg, int64_t begin, int64_t end), void *arg) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (!p || p->n_workers == 0 || n <= grain || atomic_flag_test_and_set(&p->busy)) {
    fn(arg, 0, n);
    return;
  }
  int64_t max_chunks = (int64_t)(p->n_workers + 1) * 4;
  int64_t chunk = (n + max_chunks - 1) / max_chunks;
  if (chunk < grain) chunk = grain;
  pthread_mutex_lock(&p->mu);
  /* a worker that woke late for the previous job may still be inside it */
  while (p->active > 0) pthread_cond_wait(&p->cv_done, &p->mu);
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  p->chunk = chunk;
  p->n_chunks = (n + chunk - 1) / chunk;
  atomic_store(&p->next, 0);
  atomic_store(&p->done, 0);
  uint64_t gen = ++p->generation;
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
  atomic_store_explicit(&p->published, gen, memory_order_release);
  take_chunks(p);
  for (int i = 0; i < CALLER_SPINS && atomic_load(&p->done) < p->n_chunks; i++) cpu_pause();
  pthread_mutex_lock(&p->mu);
  /* every chunk is taken; wait until the workers that joined have left */
  while (p->active > 0 || atomic_load(&p->done) < p->n_chunks)
    pthread_cond_wait(&p->cv_done, &p->mu);
  pthread_mutex_unlock(&p->mu);
  atomic_flag_clear(&p->busy);
}

int ox_thread_pool_size(const ox_thread_pool *p) { return p ? p->n_threads : 1; }

