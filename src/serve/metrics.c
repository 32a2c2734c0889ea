/* metrics.c - counters and histograms of the server, and the /metrics page
 * in Prometheus' text exposition format. Everything is an atomic add so that
 * requests never wait on each other to count themselves. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serve.h"

/* upper bounds in seconds; the last bucket is +Inf */
static const double lat_bounds[OX_SERVE_LAT_BUCKETS - 1] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
static const unsigned batch_bounds[OX_SERVE_BATCH_BUCKETS - 1] = {1, 2, 4, 8, 16, 32, 64, 128};

/* status codes seen: index by code - 100 for the ones in range */
static _Atomic uint64_t http_counts[500];
static _Atomic uint64_t rejections[OX_SERVE_REJECT_N];
static const char *const reject_names[OX_SERVE_REJECT_N] = {
    "connections",   "client_connections", "header_size", "body_size", "request_timeout",
    "queue_full",    "unauthorized",       "forbidden"};

uint64_t ox_serve_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ox_serve_hist_add(ox_serve_hist *h, uint64_t ns) {
  double s = (double)ns * 1e-9;
  size_t i = 0;
  while (i < OX_SERVE_LAT_BUCKETS - 1 && s > lat_bounds[i]) i++;
  atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
}

void ox_serve_metrics_batch(ox_serve_metrics *m, size_t requests) {
  size_t i = 0;
  while (i < OX_SERVE_BATCH_BUCKETS - 1 && requests > batch_bounds[i]) i++;
  atomic_fetch_add_explicit(&m->batch[i], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&m->batch_count, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&m->batch_sum, requests, memory_order_relaxed);
}

void ox_serve_metrics_http(int status) {
  if (status >= 100 && status < 600)
    atomic_fetch_add_explicit(&http_counts[status - 100], 1, memory_order_relaxed);
}

void ox_serve_metrics_reject(ox_serve_reject why) {
  if ((unsigned)why < OX_SERVE_REJECT_N)
    atomic_fetch_add_explicit(&rejections[why], 1, memory_order_relaxed);
}

static uint64_t get(_Atomic uint64_t *p) { return atomic_load_explicit(p, memory_order_relaxed); }

static void write_hist(ox_serve_buf *out, const char *metric, const char *model, ox_serve_hist *h) {
  uint64_t cum = 0;
  for (size_t i = 0; i < OX_SERVE_LAT_BUCKETS; i++) {
    cum += get(&h->bucket[i]);
    if (i < OX_SERVE_LAT_BUCKETS - 1)
      ox_serve_buf_printf(out, "%s_bucket{model=\"%s\",le=\"%g\"} %llu\n", metric, model,
                          lat_bounds[i], (unsigned long long)cum);
    else
      ox_serve_buf_printf(out, "%s_bucket{model=\"%s\",le=\"+Inf\"} %llu\n", metric, model,
                          (unsigned long long)cum);
  }
  ox_serve_buf_printf(out, "%s_sum{model=\"%s\"} %.9f\n", metric, model,
                      (double)get(&h->sum_ns) * 1e-9);
  ox_serve_buf_printf(out, "%s_count{model=\"%s\"} %llu\n", metric, model,
                      (unsigned long long)get(&h->count));
}

void ox_serve_metrics_write(ox_serve_repo *r, int in_flight, ox_serve_buf *out) {
  ox_serve_buf_printf(out,
                      "# HELP onnxc_http_requests_in_flight HTTP requests received and not yet "
                      "answered.\n# TYPE onnxc_http_requests_in_flight gauge\n"
                      "onnxc_http_requests_in_flight %d\n",
                      in_flight);
  ox_serve_buf_puts(out,
                    "# HELP onnxc_http_responses_total HTTP responses by status code.\n"
                    "# TYPE onnxc_http_responses_total counter\n");
  for (int c = 0; c < 500; c++) {
    uint64_t n = get(&http_counts[c]);
    if (n)
      ox_serve_buf_printf(out, "onnxc_http_responses_total{code=\"%d\"} %llu\n", c + 100,
                          (unsigned long long)n);
  }
  /* every reason, zeros included: an alert on a rate needs the series to exist */
  ox_serve_buf_puts(out,
                    "# HELP onnxc_http_rejections_total Requests and connections turned away, by "
                    "reason.\n# TYPE onnxc_http_rejections_total counter\n");
  for (int w = 0; w < OX_SERVE_REJECT_N; w++)
    ox_serve_buf_printf(out, "onnxc_http_rejections_total{reason=\"%s\"} %llu\n", reject_names[w],
                        (unsigned long long)get(&rejections[w]));
  /* model names are folder names: a name with a quote or backslash would break
     the label syntax, so such models are left out of the page */
  pthread_mutex_lock(&r->lock);
  static const struct {
    const char *name, *type, *help;
  } fams[] = {
      {"onnxc_inference_requests_total", "counter", "Inference requests received."},
      {"onnxc_inference_failures_total", "counter", "Inference requests that failed."},
      {"onnxc_inference_request_duration_seconds", "histogram",
       "Time from the request's arrival to its response being ready."},
      {"onnxc_inference_queue_duration_seconds", "histogram",
       "Time a request waited for a worker (and for a batch to fill)."},
      {"onnxc_inference_batch_size", "histogram", "Requests served by one model run."},
  };
  for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++) {
    ox_serve_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", fams[f].name, fams[f].help,
                        fams[f].name, fams[f].type);
    for (size_t i = 0; i < r->n_models; i++) {
      ox_serve_model *m = r->models[i];
      if (strpbrk(m->name, "\"\\\n")) continue;
      ox_serve_metrics *mt = &m->metrics;
      switch (f) {
        case 0:
          ox_serve_buf_printf(out, "%s{model=\"%s\"} %llu\n", fams[f].name, m->name,
                              (unsigned long long)get(&mt->requests));
          break;
        case 1:
          ox_serve_buf_printf(out, "%s{model=\"%s\"} %llu\n", fams[f].name, m->name,
                              (unsigned long long)get(&mt->failures));
          break;
        case 2:
          write_hist(out, fams[f].name, m->name, &mt->latency);
          break;
        case 3:
          write_hist(out, fams[f].name, m->name, &mt->queue);
          break;
        default: {
          uint64_t cum = 0;
          for (size_t b = 0; b < OX_SERVE_BATCH_BUCKETS; b++) {
            cum += get(&mt->batch[b]);
            if (b < OX_SERVE_BATCH_BUCKETS - 1)
              ox_serve_buf_printf(out, "%s_bucket{model=\"%s\",le=\"%u\"} %llu\n", fams[f].name,
                                  m->name, batch_bounds[b], (unsigned long long)cum);
            else
              ox_serve_buf_printf(out, "%s_bucket{model=\"%s\",le=\"+Inf\"} %llu\n", fams[f].name,
                                  m->name, (unsigned long long)cum);
          }
          ox_serve_buf_printf(out, "%s_sum{model=\"%s\"} %llu\n%s_count{model=\"%s\"} %llu\n",
                              fams[f].name, m->name, (unsigned long long)get(&mt->batch_sum),
                              fams[f].name, m->name, (unsigned long long)get(&mt->batch_count));
        }
      }
    }
  }
  pthread_mutex_unlock(&r->lock);
}
