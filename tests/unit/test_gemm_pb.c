/* test_gemm_pb.c - products by a B packed whole (OX_GEMM_B_WHOLE, a MatMul
 * by a constant weight): every row count around the 12-row tiles (the odd
 * ones a transformer gives: 49, 50, 197 tokens) against a double-precision
 * triple loop, the same bits on 2, 3 and 16 threads as on one, the post
 * callback on every element once with its final value; then the split over
 * threads (ox_gemm_pb_split) for 4 to 32 threads, checked for balance with
 * the pool's own way of handing out tasks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm.h"
#include "kernels/gemm_impl.h"

static int failures;

static float rnd(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* what the post callback saw: a count per element and its value then */
typedef struct seen {
  const float *C;
  int64_t ldc, N;
  unsigned char *count;
  float *value;
} seen;

static void record(void *ctx, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  seen *s = ctx;
  for (int64_t i = m0; i < m1; i++)
    for (int64_t j = n0; j < n1; j++) {
      s->count[i * s->N + j]++;
      s->value[i * s->N + j] = s->C[i * s->ldc + j];
    }
}

/* C = A B on a pool of nt threads (1: none) with the post callback
 * checked; false on a failure (printed). */
static bool run(int64_t M, int64_t N, int64_t K, const float *A, const ox_sgemm_bpack *bp, float *C,
                int64_t ldc, int nt) {
  ox_err e = {0};
  ox_thread_pool *pool = nt > 1 ? ox_thread_pool_new(nt, &e) : NULL;
  seen s = {C, ldc, N, calloc((size_t)(M * N), 1), malloc(sizeof(float) * (size_t)(M * N))};
  for (int64_t i = 0; i < M * ldc; i++) C[i] = NAN;
  ox_gemm(&(ox_gemm_desc){.b = OX_GEMM_B_WHOLE,
                          .M = M,
                          .A = A,
                          .lda = K + 3,
                          .bp = bp,
                          .C = C,
                          .ldc = ldc,
                          .post = record,
                          .post_ctx = &s,
                          .pool = pool});
  bool ok = true;
  for (int64_t i = 0; i < M && ok; i++)
    for (int64_t j = 0; j < N && ok; j++)
      if (s.count[i * N + j] != 1 ||
          memcmp(&s.value[i * N + j], &C[i * ldc + j], sizeof(float)) != 0) {
        printf("FAIL M=%lld N=%lld K=%lld nt=%d: element (%lld, %lld) posted %d times\n",
               (long long)M, (long long)N, (long long)K, nt, (long long)i, (long long)j,
               s.count[i * N + j]);
        ok = false;
      }
  for (int64_t i = 0; i < M && ok; i++) /* columns past N untouched */
    for (int64_t j = N; j < ldc; j++)
      if (!isnan(C[i * ldc + j])) ok = false;
  free(s.count);
  free(s.value);
  if (pool) ox_thread_pool_free(pool);
  return ok;
}

static void check(int64_t M, int64_t N, int64_t K) {
  uint32_t seed = (uint32_t)(M * 131 + N * 7 + K);
  int64_t lda = K + 3, ldc = N + 2;
  float *A = malloc(sizeof(float) * (size_t)(M * lda));
  float *B = malloc(sizeof(float) * (size_t)(K * N));
  float *C1 = malloc(sizeof(float) * (size_t)(M * ldc));
  float *Cn = malloc(sizeof(float) * (size_t)(M * ldc));
  for (int64_t i = 0; i < M * lda; i++) A[i] = rnd(&seed);
  for (int64_t i = 0; i < K * N; i++) B[i] = rnd(&seed);
  ox_err e = {0};
  ox_sgemm_bpack *bp = ox_sgemm_pack_b(false, K, N, B, N, &e);
  if (!bp || !run(M, N, K, A, bp, C1, ldc, 1)) {
    failures++;
    goto out;
  }
  double maxerr = 0.0;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0.0;
      for (int64_t k = 0; k < K; k++) s += (double)A[i * lda + k] * (double)B[k * N + j];
      double err = fabs(s - (double)C1[i * ldc + j]) / (1.0 + fabs(s));
      if (!(err <= maxerr)) maxerr = isnan(err) ? INFINITY : err;
    }
  if (maxerr > 1e-4 * (1.0 + (double)K / 64.0)) {
    printf("FAIL M=%lld N=%lld K=%lld: err %g\n", (long long)M, (long long)N, (long long)K, maxerr);
    failures++;
  }
  /* the sums of every element run in the same order however the threads
   * cut the product: the same bits */
  static const int nts[] = {2, 3, 16};
  for (size_t t = 0; t < sizeof nts / sizeof *nts; t++) {
    if (!run(M, N, K, A, bp, Cn, ldc, nts[t])) {
      failures++;
      continue;
    }
    for (int64_t i = 0; i < M; i++)
      if (memcmp(C1 + i * ldc, Cn + i * ldc, sizeof(float) * (size_t)N) != 0) {
        printf("FAIL M=%lld N=%lld K=%lld: %d threads differ from one in row %lld\n", (long long)M,
               (long long)N, (long long)K, nts[t], (long long)i);
        failures++;
        break;
      }
  }
out:
  ox_sgemm_bpack_free(bp);
  free(A);
  free(B);
  free(C1);
  free(Cn);
}

/* The busiest thread's share of the multiply-adds when the pool hands the
 * rg x cg tasks out as ox_parallel_for does (chunks of ceil(T / 4 nt)
 * tasks, each to the thread that is free first). */
static double busiest_share(int64_t M, int64_t N, int64_t K, int nt, int64_t rg, int64_t cg,
                            double *smallest) {
  int64_t nr = ox_sgemm_nr(), ntl = (N + nr - 1) / nr, T = rg * cg,
          chunk = (T + 4 * nt - 1) / (4 * nt);
  double load[64] = {0}, total = 0.0;
  *smallest = INFINITY;
  for (int64_t c0 = 0; c0 < T; c0 += chunk) {
    double w = 0.0;
    for (int64_t t = c0; t < c0 + chunk && t < T; t++) {
      int64_t r = t / cg, c = t % cg;
      int64_t rows = M / rg + (r < M % rg), cols = (ntl / cg + (c < ntl % cg)) * nr;
      if (c == cg - 1) cols -= ntl * nr - N; /* the last panel's columns past N */
      double v = (double)rows * (double)cols * (double)K;
      if (v < *smallest) *smallest = v;
      w += v;
    }
    int least = 0;
    for (int i = 1; i < nt; i++)
      if (load[i] < load[least]) least = i;
    load[least] += w;
    total += w;
  }
  double most = 0.0;
  for (int i = 0; i < nt; i++)
    if (load[i] > most) most = load[i];
  return most / total;
}

static void check_split(void) {
  static const int64_t Ms[] = {16, 32, 49, 50, 64, 96, 128, 197, 256};
  static const int64_t Ns[] = {768, 3072};
  static const int nts[] = {4, 8, 16, 32};
  const double min_task = 2.5e5; /* gemm_pb.c's PB_MIN_TASK */
  for (size_t a = 0; a < sizeof Ns / sizeof *Ns; a++)
    for (size_t b = 0; b < sizeof Ms / sizeof *Ms; b++)
      for (size_t c = 0; c < sizeof nts / sizeof *nts; c++) {
        int64_t M = Ms[b], N = Ns[a], K = 768, rg, cg;
        int nt = nts[c];
        ox_gemm_pb_split(M, N, K, nt, &rg, &cg);
        double smallest, share = busiest_share(M, N, K, nt, rg, cg, &smallest);
        double total = (double)M * (double)N * (double)K;
        int64_t T = rg * cg;
        /* enough work for three tasks of the least size per thread: at
         * least two tasks per thread, the busiest within 15% of an even
         * share; always: no task below the least size unless there are no
         * more tasks than threads, and at least half the threads given a
         * task where the work has room for it (fewer, taller tasks stream
         * B fewer times: a small product on many threads is bound by it) */
        bool room = total >= 3.0 * nt * min_task;
        bool ok = rg >= 1 && cg >= 1 && rg <= M && cg <= (N + ox_sgemm_nr() - 1) / ox_sgemm_nr();
        if (room) ok = ok && T >= 2 * nt && share <= 1.15 / nt;
        if (T > nt) ok = ok && smallest >= min_task;
        if (2 * T < nt && (double)T < floor(total / min_task / 2.0)) ok = false;
        printf("%s M=%3lld N=%4lld nt=%2d: %2lld x %2lld tasks, busiest %.3f of an even share\n",
               ok ? "  " : "FAIL", (long long)M, (long long)N, nt, (long long)rg, (long long)cg,
               share * nt);
        if (!ok) failures++;
      }
}

int main(void) {
  static const int64_t Ms[] = {1, 2, 4, 5, 11, 13, 16, 25, 32, 49, 50, 64, 96, 128, 197, 256};
  static const int64_t NK[][2] = {{33, 100}, {200, 768}, {768, 770}};
  for (size_t n = 0; n < sizeof NK / sizeof *NK; n++)
    for (size_t m = 0; m < sizeof Ms / sizeof *Ms; m++) check(Ms[m], NK[n][0], NK[n][1]);
  check(50, 3072, 768);
  check(128, 96, 3072); /* eight depth blocks (a transformer's second MLP product) */
  check(600, 70, 300);  /* more row groups than the grid's limit allows one per 12 rows */
  /* wider than a block of B that stays in L2 (a quarter of it; 1 MB at
   * most): the columns in blocks, each row panel sweeping a block (a
   * language model's head, 64 tokens by a 4096-column weight) */
  check(64, 4096, 256);
  check(13, 4099, 256);  /* two panels; the last block's last panel partial */
  check(50, 2500, 520);  /* two depth blocks, one row block */
  check(128, 2048, 520); /* A packed whole, column blocks of C in L2 (gemm_block_pb_cols) */
  check_split();
  printf("gemm_pb (%s): %d failures\n", ox_sgemm_isa(), failures);
  return failures ? 1 : 0;
}
