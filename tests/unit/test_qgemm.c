/* test_qgemm.c - the integer GEMM (src/kernels/qgemm.c) on every path this
 * CPU has, against a plain int64 reference of sum (A - za)(B - zb): odd
 * shapes (1, 3, 17, 64, 129 ...), uint8/int8 on either side, zero points at
 * their extremes, per-row and per-column zero points, and a thread pool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/kernels/qgemm.h"
#include "../../src/runtime/session.h"

static int failures;

static uint32_t rng = 12345;
static uint8_t next_byte(void) {
  rng = rng * 1664525u + 1013904223u;
  return (uint8_t)(rng >> 24);
}

static int64_t byte_val(const uint8_t *p, bool s, int64_t i) { return s ? (int8_t)p[i] : p[i]; }

static void check_case(const char *path, int64_t M, int64_t K, int64_t N, bool as, bool bs,
                       int zmode, ox_thread_pool *pool) {
  uint8_t *A = malloc((size_t)(M * K + 1)), *B = malloc((size_t)(K * N + 1));
  uint8_t *za = malloc((size_t)M + 1), *zb = malloc((size_t)N + 1);
  int32_t *C = malloc(((size_t)(M * N) + 1) * sizeof *C);
  for (int64_t i = 0; i < M * K; i++) A[i] = next_byte();
  for (int64_t i = 0; i < K * N; i++) B[i] = next_byte();
  /* zmode 0: none; 1: scalar extremes; 2: per row / per column */
  for (int64_t i = 0; i < M; i++) za[i] = zmode == 1 ? (as ? 0x80 : 0xFF) : next_byte();
  for (int64_t i = 0; i < N; i++) zb[i] = zmode == 1 ? (bs ? 0x7F : 0x00) : next_byte();
  int64_t za_n = zmode == 2 ? M : 1, zb_n = zmode == 2 ? N : 1;
  ox_qgemm_b pb;
  ox_err e = {0};
  if (ox_qgemm_pack_b(B, bs, K, N, N, zmode ? zb : NULL, zb_n, &pb, &e) ||
      ox_qgemm_on(path, A, as, M, K, zmode ? za : NULL, za_n, &pb, C, N, pool, &e)) {
    printf("%s: %s\n", path, e.msg);
    failures++;
  } else {
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) {
        int64_t want = 0;
        int64_t a0 = zmode ? byte_val(za, as, za_n == 1 ? 0 : m) : 0;
        int64_t b0 = zmode ? byte_val(zb, bs, zb_n == 1 ? 0 : n) : 0;
        for (int64_t k = 0; k < K; k++)
          want += (byte_val(A, as, m * K + k) - a0) * (byte_val(B, bs, k * N + n) - b0);
        if (C[m * N + n] != (int32_t)want) {
          printf("%s M=%lld K=%lld N=%lld %s x %s zmode %d: C[%lld][%lld] = %d, want %lld\n", path,
                 (long long)M, (long long)K, (long long)N, as ? "s8" : "u8", bs ? "s8" : "u8", zmode,
                 (long long)m, (long long)n, C[m * N + n], (long long)want);
          failures++;
          m = M;
          break;
        }
      }
  }
  ox_qgemm_free_b(&pb);
  free(A);
  free(B);
  free(za);
  free(zb);
  free(C);
}

int main(void) {
  const char *paths[] = {"avx512vnni", "avx2", "portable"};
  const int64_t sizes[][3] = {{1, 1, 1},   {1, 384, 1536}, {3, 17, 5},  {17, 3, 33},
                              {64, 64, 64}, {129, 130, 47}, {5, 1000, 16}, {70, 9, 31}};
  ox_err e = {0};
  ox_thread_pool *pool = ox_thread_pool_new(2, &e);
  int ran = 0;
  for (size_t p = 0; p < 3; p++) {
    ox_qgemm_b probe = {0};
    int32_t c = 0;
    uint8_t a = 0;
    ox_err pe = {0};
    /* a path this CPU lacks says so; the best one must always run */
    if (ox_qgemm_pack_b(&a, false, 1, 1, 1, NULL, 0, &probe, &pe) == OX_OK &&
        ox_qgemm_on(paths[p], &a, false, 1, 1, NULL, 0, &probe, &c, 1, NULL, &pe) ==
            OX_EUNSUPPORTED) {
      printf("skip path %s: not on this CPU\n", paths[p]);
      ox_qgemm_free_b(&probe);
      continue;
    }
    ox_qgemm_free_b(&probe);
    ran++;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
      for (int t = 0; t < 4; t++)
        for (int z = 0; z < 3; z++)
          check_case(paths[p], sizes[s][0], sizes[s][1], sizes[s][2], t & 1, t & 2, z,
                     s % 2 ? pool : NULL);
  }
  ox_thread_pool_free(pool);
  printf("best path here: %s; %d paths checked\n", ox_qgemm_path(), ran);
  if (!ran || strcmp(ox_qgemm_path(), "portable") == 0) {
    /* the portable path alone must still have run */
  }
  if (failures) printf("%d failures\n", failures);
  return failures != 0 || ran == 0;
}
