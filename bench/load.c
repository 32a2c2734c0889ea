/* load.c - how long loading a model with 1 GiB of initializers takes and how
 * much resident memory it adds, with the data inline and in an external
 * file. Built and run by bench/load.sh. Each measurement runs in a fresh
 * child process (warm page cache). */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/proto.h"

#define N_TENSORS 16
#define TENSOR_BYTES (64u << 20) /* 16 x 64 MiB = 1 GiB */

static long rss_kib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0) v = strtol(line + n, NULL, 10);
  if (f) fclose(f);
  return v;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int make(const char *dir) {
  ox_model *m = ox_model_new();
  ox_arena *a = m->arena;
  m->proto->ir_version = 10;
  m->proto->has_ir_version = true;
  ox_graph *g = m->proto->graph = ox_arena_alloc(a, sizeof *g);
  float *data = malloc(TENSOR_BYTES);
  if (!data) return 1;
  for (size_t i = 0; i < TENSOR_BYTES / 4; i++) data[i] = (float)(i % 1000) * 0.001f;
  for (int k = 0; k < N_TENSORS; k++) {
    ox_tensor *t = OX_VEC_PUSH(a, g->initializer, g->n_initializer);
    t->name = ox_arena_printf(a, "w%d", k);
    t->data_type = OX_FLOAT;
    t->has_data_type = true;
    t->dims = ox_arena_alloc(a, 2 * sizeof *t->dims);
    t->dims[0] = 4096;
    t->dims[1] = TENSOR_BYTES / 4 / 4096;
    t->n_dims = 2;
    t->raw_data.data = (const uint8_t *)data; /* the same bytes, 16 times */
    t->raw_data.size = TENSOR_BYTES;
  }
  ox_err e;
  char p[1024];
  snprintf(p, sizeof p, "%s/inline.onnx", dir);
  int rc = ox_model_save_file(m, p, NULL, &e);
  ox_save_opts so = {.external_data = "ext.bin", .size_threshold = 1024, .align = 4096};
  snprintf(p, sizeof p, "%s/ext.onnx", dir);
  if (!rc) rc = ox_model_save_file(m, p, &so, &e);
  if (rc) fprintf(stderr, "%s\n", e.msg);
  ox_model_free(m);
  free(data);
  return rc;
}

/* In a child: load, report ms and added RSS (KiB) through a pipe. */
static int measure(const char *path, double *ms, long *kib) {
  int fds[2];
  if (pipe(fds)) return 1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    long before = rss_kib("VmRSS:");
    double t0 = now();
    ox_model *m = NULL;
    ox_err e;
    int rc = ox_model_load_file(path, NULL, &m, &e);
    double t1 = now();
    long after = rss_kib("VmRSS:");
    double r[2] = {(t1 - t0) * 1e3, (double)(after - before)};
    if (rc) {
      fprintf(stderr, "%s\n", e.msg);
      r[0] = -1;
    }
    if (write(fds[1], r, sizeof r) != sizeof r) _exit(1);
    ox_model_free(m);
    _exit(0);
  }
  close(fds[1]);
  double r[2] = {-1, 0};
  ssize_t got = read(fds[0], r, sizeof r);
  close(fds[0]);
  waitpid(pid, NULL, 0);
  if (got != sizeof r || r[0] < 0) return 1;
  *ms = r[0];
  *kib = (long)r[1];
  return 0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: load DIR\n");
    return 2;
  }
  if (make(argv[1])) return 1;
  const char *names[2] = {"inline.onnx", "ext.onnx"};
  int bad = 0;
  for (int k = 0; k < 2; k++) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", argv[1], names[k]);
    double ms[7];
    long kib = 0, worst = 0;
    for (int i = 0; i < 7; i++) {
      if (measure(p, &ms[i], &kib)) return 1;
      if (kib > worst) worst = kib;
    }
    qsort(ms, 7, sizeof ms[0], cmp_d);
    printf(
        "%-12s 1 GiB of initializers (%s): load median %.2f ms (min %.2f, max %.2f), "
        "added RSS at most %ld KiB\n",
        names[k], k ? "external" : "inline", ms[3], ms[0], ms[6], worst);
    if (ms[3] >= 100 || worst >= 16 * 1024) bad = 1;
  }
  printf("targets (< 100 ms, < 16 MiB): %s\n", bad ? "MISSED" : "met");
  return bad;
}
