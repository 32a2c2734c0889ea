/* threadpool.h - a pool of worker threads and a parallel for over it
 * (threadpool.c). Kernels, operators and the runtime all split work with
 * it; it sits in base so that none of them needs the runtime's headers. */
#ifndef OX_BASE_THREADPOOL_H
#define OX_BASE_THREADPOOL_H

#include <stdint.h>

#include "base.h"

typedef struct ox_thread_pool ox_thread_pool;

/* n_threads counts the caller. */
ox_thread_pool *ox_thread_pool_new(int n_threads, ox_err *e);
void ox_thread_pool_free(ox_thread_pool *p);

/* Calls fn(arg, begin, end) over [0, n) split in chunks of at least `grain`.
 * With a NULL pool it runs inline. */
void ox_parallel_for(ox_thread_pool *p, int64_t n, int64_t grain,
                     void (*fn)(void *arg, int64_t begin, int64_t end), void *arg);
int ox_thread_pool_size(const ox_thread_pool *p);

#endif
