/* threadpool.h - a pool of worker threads and a parallel for over it
 * (threadpool.c). Kernels, operators and the runtime all split work with
 * it; it sits in base so that none of them needs the runtime's headers. */
#ifndef OX_BASE_THREADPOOL_H
#define OX_BASE_THREADPOOL_H

#include <stdint.h>

#include "base.h"

typedef struct ox_thread_pool ox_thread_pool;

typedef struct ox_pool_opts {
  int n_threads; /* counting the caller; <= 0: ox_cores_default_threads() */
  /* how long an idle worker (and a caller waiting for the last chunks)
   * watches for work before it sleeps, in microseconds: < 0 the default
   * (OX_POOL_SPIN_US_DEFAULT), 0 sleeps at once. After it an idle pool
   * uses no CPU. */
  int spin_us;
  /* non-zero: worker i runs only on the i+1-th CPU of ox_cores_get()->order
   * (physical cores first); the caller thread is left where it is */
  int pin;
} ox_pool_opts;

/* 200 us: longer than the gap between two parallel loops of a run (so a
 * run never pays a wake-up between its nodes), short enough that an idle
 * server's cores go quiet at once. */
#define OX_POOL_SPIN_US_DEFAULT 200

ox_thread_pool *ox_thread_pool_create(const ox_pool_opts *o, ox_err *e);
/* ox_thread_pool_create with n_threads and the defaults */
ox_thread_pool *ox_thread_pool_new(int n_threads, ox_err *e);
void ox_thread_pool_free(ox_thread_pool *p);

/* Calls fn(arg, begin, end) over [0, n) split in chunks of at least `grain`
 * (or of at least half of it and one thread's share, where that shares n
 * more evenly), sized so the threads get even shares, the caller taking
 * chunks too; returns when all are done. With a NULL pool,
 * one thread, n <= grain, or while another parallel_for runs on the pool (a
 * nested call, a worker's, or a concurrent run's), it runs inline. */
void ox_parallel_for(ox_thread_pool *p, int64_t n, int64_t grain,
                     void (*fn)(void *arg, int64_t begin, int64_t end), void *arg);
/* A least amount of work worth splitting, `floor2` as measured on two
 * threads, for this pool: on more threads it is lowered in proportion
 * (2 / threads), since there the data of a loop mostly sits in the other
 * cores' caches and one thread reads it at a fraction of its own cache's
 * rate. ox_parallel_for applies it to its grain; callers that decide on
 * their own whether to split (a size threshold) use it too. */
int64_t ox_thread_pool_floor(const ox_thread_pool *p, int64_t floor2);
int ox_thread_pool_size(const ox_thread_pool *p);

#endif
