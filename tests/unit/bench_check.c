/* bench_check.c - time of checking a model (issue 4: the largest shared
 * model in under 20 ms). usage: bench_check MODEL [LIMIT_MS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "api/model_file.h"
#include "check/check.h"
#include "proto/proto.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_check MODEL [LIMIT_MS]\n");
    return 2;
  }
  double limit = argc > 2 ? atof(argv[2]) : 20.0;
  ox_load_opts lo = {.skip_checksum = true, .no_external_data = true};
  ox_model *m = NULL;
  ox_err e = {0};
  double t0 = now_ms();
  if (ox_api_model_load(argv[1], &lo, &m, &e) != OX_OK) {
    fprintf(stderr, "%s\n", e.msg);
    return 2;
  }
  double load = now_ms() - t0;
  enum { RUNS = 21 };
  double t[RUNS];
  int rc = OX_OK;
  for (int i = 0; i < RUNS; i++) {
    ox_buf report = {0};
    double s = now_ms();
    rc = ox_check_model(m, NULL, &report, NULL, &e);
    t[i] = now_ms() - s;
    ox_buf_free(&report);
  }
  qsort(t, RUNS, sizeof t[0], cmp);
  printf("%s: load %.2f ms, check min %.3f ms, median %.3f ms, max %.3f ms (%d runs)%s\n", argv[1],
         load, t[0], t[RUNS / 2], t[RUNS - 1], RUNS, rc == OX_OK ? "" : ", INVALID");
  ox_model_free(m);
  if (rc != OX_OK) return 1;
  return t[RUNS / 2] < limit ? 0 : 1;
}
