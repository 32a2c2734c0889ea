/* sched.c - the worker pool. HTTP connection threads parse a request, queue
 * a job and sleep until a worker ran it (gRPC calls submit theirs and are
 * answered from the worker, holding no thread); `threads` workers run jobs, so that
 * at most that many model runs compete for the cores however many
 * connections are open.
 *
 * Dynamic batching happens here: a worker that takes a job of a model with
 * batching on also takes the queued jobs of the same version whose inputs
 * can be stacked on the leading dim, and waits for more until the batch has
 * max_batch rows or the first job has waited max_queue_delay, or no request
 * is on its way (being received or parsed): waiting then would only add
 * latency. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve.h"

#define MAX_BATCH_JOBS 256 /* requests in one run; rows are bounded by max_batch */

/* every input has a leading dim, the same for all of them (the request's rows) */
static bool stackable(const ox_serve_job *j) {
  size_t n = onnxc_session_input_count(j->ver->session);
  for (size_t i = 0; i < n; i++)
    if (onnxc_tensor_rank(j->inputs[i]) < 1 ||
        onnxc_tensor_dims(j->inputs[i])[0] != onnxc_tensor_dims(j->inputs[0])[0])
      return false;
  return n > 0;
}

static void wait_until(pthread_cond_t *cv, pthread_mutex_t *m, uint64_t deadline_ns) {
  /* the monotonic deadline as a CLOCK_REALTIME time for pthread_cond_timedwait */
  uint64_t now = ox_serve_now_ns();
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
               (deadline_ns > now ? deadline_ns - now : 0);
  ts.tv_sec = (time_t)(t / 1000000000u);
  ts.tv_nsec = (long)(t % 1000000000u);
  pthread_cond_timedwait(cv, m, &ts);
}

/* Under s->lock: moves the queued jobs that fit the batch of `first` into
   jobs[*n..], updating *rows. */
static void gather(ox_serve_sched *s, ox_serve_job **jobs, size_t *n, int64_t *rows) {
  ox_serve_job *first = jobs[0], *prev = NULL, *j = s->head;
  size_t n_in = onnxc_session_input_count(first->ver->session);
  int64_t max = first->ver->max_batch;
  while (j && *n < MAX_BATCH_JOBS && *rows < max) {
    ox_serve_job *next = j->next;
    int64_t r = j->ver == first->ver ? ox_serve_job_rows(j) : 0;
    if (j->ver == first->ver && stackable(j) && *rows + r <= max &&
        ox_serve_batch_compatible(first, j, n_in)) {
      if (prev)
        prev->next = next;
      else
        s->head = next;
      if (s->tail == j) s->tail = prev;
      j->next = NULL;
      j->t_start = ox_serve_now_ns();
      jobs[(*n)++] = j;
      *rows += r;
    } else {
      prev = j;
    }
    j = next;
  }
}

static void *worker(void *arg) {
  ox_serve_sched *s = arg;
  ox_serve_job **jobs = malloc(MAX_BATCH_JOBS * sizeof *jobs);
  if (!jobs) return NULL; /* the other workers carry on */
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->head && !s->stop) pthread_cond_wait(&s->work, &s->lock);
    if (!s->head) break; /* stopping and nothing left */
    ox_serve_job *first = s->head;
    s->head = first->next;
    if (!s->head) s->tail = NULL;
    first->next = NULL;
    first->t_start = ox_serve_now_ns();
    jobs[0] = first;
    size_t n = 1;
    ox_serve_version *ver = first->ver;
    if (ver->max_batch > 1 && stackable(first)) {
      int64_t rows = ox_serve_job_rows(first);
      uint64_t deadline = first->t_enqueue + ver->max_delay_ns;
      for (;;) {
        gather(s, jobs, &n, &rows);
        if (rows >= ver->max_batch || n >= MAX_BATCH_JOBS || s->stop ||
            atomic_load(&s->arriving) == 0 || ox_serve_now_ns() >= deadline)
          break;
        wait_until(&s->work, &s->lock, deadline);
      }
    }
    s->waiting -= (int)n;
    pthread_mutex_unlock(&s->lock);
    if (n == 1)
      ox_serve_job_run_single(first);
    else
      ox_serve_batch_run(jobs, n);
    ox_serve_metrics_batch(ver->metrics, n);
    pthread_mutex_lock(&s->lock);
    size_t n_async = 0;
    for (size_t i = 0; i < n; i++) {
      ox_serve_job *j = jobs[i];
      j->batched = n;
      if (j->on_done) {
        jobs[n_async++] = j; /* n_async <= i: compacted in place */
      } else {
        j->done = true; /* its waiter may free it from here on */
        pthread_cond_signal(&j->cv);
      }
    }
    if (n_async) {
      /* submitted jobs without the lock: their callbacks answer the client
         (gRPC) and free the job */
      pthread_mutex_unlock(&s->lock);
      for (size_t i = 0; i < n_async; i++) jobs[i]->on_done(jobs[i]);
      pthread_mutex_lock(&s->lock);
    }
  }
  pthread_mutex_unlock(&s->lock);
  free(jobs);
  return NULL;
}

int ox_serve_sched_start(ox_serve_sched *s, int threads, int max_queue) {
  memset(s, 0, sizeof *s);
  s->max_queue = max_queue;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->work, NULL);
  s->threads = calloc((size_t)threads, sizeof *s->threads);
  if (!s->threads) return -1;
  for (int i = 0; i < threads; i++) {
    if (pthread_create(&s->threads[i], NULL, worker, s)) break;
    s->n_threads++;
  }
  return s->n_threads ? 0 : -1;
}

void ox_serve_sched_stop(ox_serve_sched *s) {
  pthread_mutex_lock(&s->lock);
  s->stop = true;
  pthread_cond_broadcast(&s->work);
  pthread_mutex_unlock(&s->lock);
  for (int i = 0; i < s->n_threads; i++) pthread_join(s->threads[i], NULL);
  free(s->threads);
  pthread_cond_destroy(&s->work);
  pthread_mutex_destroy(&s->lock);
}

/* queues the job under s->lock; false when the queue is full */
static bool enqueue(ox_serve_sched *s, ox_serve_job *job) {
  job->done = false;
  job->next = NULL;
  job->t_enqueue = ox_serve_now_ns();
  atomic_fetch_sub(&s->arriving, 1); /* under the lock: a gathering worker sees it queued */
  /* a bounded wait: past it, the client is better told to come back (or to
     go to another replica) than left holding a connection for an answer that
     would come too late */
  if (s->max_queue && s->waiting >= s->max_queue) return false;
  s->waiting++;
  if (s->tail)
    s->tail->next = job;
  else
    s->head = job;
  s->tail = job;
  /* broadcast: a worker gathering a batch must see the new job too */
  pthread_cond_broadcast(&s->work);
  return true;
}

bool ox_serve_sched_run(ox_serve_sched *s, ox_serve_job *job) {
  job->on_done = NULL;
  pthread_cond_init(&job->cv, NULL);
  pthread_mutex_lock(&s->lock);
  bool queued = enqueue(s, job);
  while (queued && !job->done) pthread_cond_wait(&job->cv, &s->lock);
  pthread_mutex_unlock(&s->lock);
  pthread_cond_destroy(&job->cv);
  return queued;
}

bool ox_serve_sched_submit(ox_serve_sched *s, ox_serve_job *job) {
  pthread_mutex_lock(&s->lock);
  bool queued = enqueue(s, job);
  pthread_mutex_unlock(&s->lock);
  return queued;
}
