/* test_proto_big.c - a model whose data exceed 2 GiB: a 3 GiB external
 * tensor in a sparse file loads (mapped), saves to a new external file and
 * loads again, without reading it all into memory: the peak resident set
 * grows by less than 64 MiB, and the holes of the input stay holes. */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/proto.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

#define SIZE (3ull << 30)
static const uint64_t marks[3] = {0, 3ull << 29, SIZE - 8};

static char dir[256];
static const char *at(const char *name) {
  static char buf[2][512];
  static int k;
  k ^= 1;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

/* peak resident set (VmHWM) in KiB */
static long peak_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) v = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return v;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void check_marks(const ox_model *m) {
  const ox_tensor *t = &m->proto->graph->initializer[0];
  CHECK(t->external.size == SIZE);
  if (t->external.size != SIZE) return;
  for (int i = 0; i < 3; i++) {
    uint64_t v;
    memcpy(&v, t->external.data + marks[i], 8);
    CHECK(v == 0x0123456789abcdefull + (uint64_t)i);
  }
}

int main(void) {
  snprintf(dir, sizeof dir, "%s/onnxc_big_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  int fd = open(at("big.bin"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  CHECK(fd >= 0 && ftruncate(fd, (off_t)SIZE) == 0);
  for (int i = 0; i < 3; i++) {
    uint64_t v = 0x0123456789abcdefull + (uint64_t)i;
    CHECK(pwrite(fd, &v, 8, (off_t)marks[i]) == 8);
  }
  close(fd);

  ox_model *m = ox_model_new();
  ox_arena *a = m->arena;
  m->proto->ir_version = 10;
  m->proto->has_ir_version = true;
  m->proto->graph = ox_arena_alloc(a, sizeof *m->proto->graph);
  ox_tensor *t = OX_VEC_PUSH(a, m->proto->graph->initializer, m->proto->graph->n_initializer);
  t->name = "huge";
  t->data_type = OX_UINT8;
  t->has_data_type = true;
  t->dims = ox_arena_alloc(a, sizeof *t->dims);
  t->dims[0] = (int64_t)SIZE;
  t->n_dims = 1;
  t->data_location = 1;
  t->has_data_location = true;
  const char *kv[] = {"location", "big.bin", "offset", "0", "length", "3221225472"};
  for (int i = 0; i < 6; i += 2) {
    ox_str_pair *p = OX_VEC_PUSH(a, t->external_data, t->n_external_data);
    p->key = (char *)kv[i];
    p->value = (char *)kv[i + 1];
  }
  ox_err e = {0};
  CHECK(ox_model_save_file(m, at("m.onnx"), NULL, &e) == OX_OK);
  ox_model_free(m);

  long before = peak_kib();
  double t0 = now();
  ox_model *l = NULL;
  if (ox_model_load_file(at("m.onnx"), NULL, &l, &e) != OX_OK) {
    fprintf(stderr, "load: %s\n", e.msg);
    return 1;
  }
  double t1 = now();
  check_marks(l);
  ox_save_opts so = {.external_data = "out.bin", .size_threshold = 1024, .align = 4096};
  CHECK(ox_model_save_file(l, at("out.onnx"), &so, &e) == OX_OK);
  double t2 = now();
  ox_model_free(l);
  ox_model *l2 = NULL;
  CHECK(ox_model_load_file(at("out.onnx"), NULL, &l2, &e) == OX_OK);
  if (l2) check_marks(l2);
  ox_model_free(l2);
  long after = peak_kib();
  struct stat st;
  CHECK(stat(at("out.bin"), &st) == 0 && (uint64_t)st.st_size == SIZE);
  printf(
      "load %.1f ms, save (3 GiB external) %.2f s, peak RSS +%ld KiB, out.bin %lld bytes, "
      "%lld allocated\n",
      (t1 - t0) * 1e3, t2 - t1, after - before, (long long)st.st_size,
      (long long)st.st_blocks * 512);
  CHECK(after - before < 64 * 1024);
  CHECK((uint64_t)st.st_blocks * 512 < (64ull << 20)); /* the holes stayed holes */
  unlink(at("big.bin"));
  unlink(at("out.bin"));
  unlink(at("m.onnx"));
  unlink(at("out.onnx"));
  rmdir(dir);
  if (fails) fprintf(stderr, "%d failures\n", fails);
  return fails != 0;
}
