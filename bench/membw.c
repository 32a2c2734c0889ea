/* membw.c - the memory read bandwidth this machine gives one thread and
 * several: the figure weight-streaming kernels (token-by-token decode) are
 * measured against.
 *
 *   onnxc_membw [MiB] [threads]      (default 1024 MiB, 1 and 2 threads)
 *
 * Each thread sums its share of a buffer far larger than the caches, with
 * 512-bit (else 256-bit) loads, eight independent accumulators so the adds
 * never limit it; the best of seven passes is printed in GB/s (10^9 bytes
 * per second), as the decode figures are. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx512f"))) static double sum512(const float *p, size_t n) {
  __m512 a[8];
  for (int i = 0; i < 8; i++) a[i] = _mm512_setzero_ps();
  for (size_t i = 0; i + 128 <= n; i += 128)
    for (int j = 0; j < 8; j++) a[j] = _mm512_add_ps(a[j], _mm512_load_ps(p + i + 16 * j));
  for (int j = 1; j < 8; j++) a[0] = _mm512_add_ps(a[0], a[j]);
  return _mm512_reduce_add_ps(a[0]);
}
__attribute__((target("avx2"))) static double sum256(const float *p, size_t n) {
  __m256 a[8];
  for (int i = 0; i < 8; i++) a[i] = _mm256_setzero_ps();
  for (size_t i = 0; i + 64 <= n; i += 64)
    for (int j = 0; j < 8; j++) a[j] = _mm256_add_ps(a[j], _mm256_load_ps(p + i + 8 * j));
  for (int j = 1; j < 8; j++) a[0] = _mm256_add_ps(a[0], a[j]);
  float t[8];
  _mm256_storeu_ps(t, a[0]);
  return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}
#endif

static double sum_plain(const float *p, size_t n) {
  float a[8] = {0};
  for (size_t i = 0; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) a[j] += p[i + j];
  return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

static double sum(const float *p, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f")) return sum512(p, n);
  if (__builtin_cpu_supports("avx2")) return sum256(p, n);
#endif
  return sum_plain(p, n);
}

typedef struct part {
  const float *p;
  size_t n;
  double result;
  pthread_barrier_t *start;
} part;

static void *worker(void *arg) {
  part *w = arg;
  pthread_barrier_wait(w->start);
  w->result = sum(w->p, w->n);
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* the best of seven passes over the buffer by `threads` threads, GB/s */
static double measure(const float *buf, size_t n, int threads) {
  double best = 0, sink = 0;
  for (int pass = 0; pass < 7; pass++) {
    pthread_t th[64];
    part parts[64];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    size_t per = n / (size_t)threads / 128 * 128;
    for (int t = 0; t < threads; t++) {
      parts[t] = (part){buf + (size_t)t * per, per, 0, &start};
      pthread_create(&th[t], NULL, worker, &parts[t]);
    }
    double t0 = now();
    pthread_barrier_wait(&start);
    for (int t = 0; t < threads; t++) {
      pthread_join(th[t], NULL);
      sink += parts[t].result;
    }
    double dt = now() - t0;
    pthread_barrier_destroy(&start);
    double gbs = (double)(per * (size_t)threads * sizeof(float)) / dt / 1e9;
    if (gbs > best) best = gbs;
  }
  if (sink == 12345.678) printf(" ");
  return best;
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 1024;
  int only = argc > 2 ? atoi(argv[2]) : 0;
  if (mib < 64) mib = 64;
  if (only < 0 || only > 64) only = 0;
  size_t n = mib * (1u << 20) / sizeof(float);
  float *buf = aligned_alloc(64, n * sizeof(float));
  if (!buf) {
    fprintf(stderr, "cannot allocate %zu MiB\n", mib);
    return 1;
  }
  for (size_t i = 0; i < n; i++) buf[i] = (float)(i & 1023) * 1e-3f;
  printf("read bandwidth over %zu MiB (best of 7 passes):\n", mib);
  for (int t = only ? only : 1; t <= (only ? only : 2); t++)
    printf("  %d thread%s: %.1f GB/s\n", t, t > 1 ? "s" : "", measure(buf, n, t));
  free(buf);
  return 0;
}
