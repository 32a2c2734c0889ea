/* text_roundtrip.c - for every .onnx file under the given folders:
 * binary -> decode -> canonical encode (A); decode -> print -> parse ->
 * canonical encode (B); A and B must be the same bytes. With -o DIR the
 * printed text of each model is also written to DIR/<n>.onnxtxt and what
 * our parser made of it to DIR/<n>.onnx (for the python oracle). Text files
 * (.onnxtxt) given are parsed and encoded the same way. Prints one line per failure and a closing
 * count. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/proto.h"
#include "text/text.h"

static int n_ok, n_fail;
static const char *out_dir;

static void check(const char *path) {
  ox_err e = {0};
  ox_file_map fm = {0};
  if (ox_file_map_open(&fm, path, &e) != OX_OK) {
    printf("FAIL %s: %s\n", path, e.msg);
    n_fail++;
    return;
  }
  ox_arena *a = ox_arena_new(), *a2 = ox_arena_new();
  ox_model_proto *m = NULL, *m2 = NULL;
  ox_buf A = {0}, B = {0}, T = {0};
  const char *stage = "decode";
  int rc = ox_pb_decode_model(fm.data, fm.size, a, &m, &e);
  if (rc == OX_OK) stage = "encode", rc = ox_pb_encode_model(m, &A, &e);
  if (rc == OX_OK) stage = "print", rc = ox_text_print_model(m, &T, &e);
  if (rc == OX_OK)
    stage = "parse", rc = ox_text_parse_model((const char *)T.data, T.size, path, a2, &m2, &e);
  if (rc == OX_OK) stage = "encode again", rc = ox_pb_encode_model(m2, &B, &e);
  if (rc != OX_OK) {
    printf("FAIL %s: %s: %s\n", path, stage, e.msg);
    n_fail++;
  } else if (A.size != B.size || memcmp(A.data, B.data, A.size) != 0) {
    size_t i = 0;
    while (i < A.size && i < B.size && A.data[i] == B.data[i]) i++;
    printf(
        "FAIL %s: the model differs after print+parse (sizes %zu, %zu; first difference at byte "
        "%zu)\n",
        path, A.size, B.size, i);
    n_fail++;
    const char *dump = getenv("TEXT_RT_DUMP"); /* folder for A.pb, B.pb, T.onnxtxt */
    if (dump) {
      char name[4096];
      snprintf(name, sizeof name, "%s/A.pb", dump);
      ox_file_write_all(name, A.data, A.size, NULL);
      snprintf(name, sizeof name, "%s/B.pb", dump);
      ox_file_write_all(name, B.data, B.size, NULL);
      snprintf(name, sizeof name, "%s/T.onnxtxt", dump);
      ox_file_write_all(name, T.data, T.size, NULL);
    }
  } else {
    n_ok++;
    if (out_dir) {
      char name[4096];
      snprintf(name, sizeof name, "%s/%05d.onnxtxt", out_dir, n_ok);
      ox_file_write_all(name, T.data, T.size, NULL);
      snprintf(name, sizeof name, "%s/%05d.onnx", out_dir, n_ok);
      ox_file_write_all(name, B.data, B.size, NULL);
    }
  }
  ox_buf_free(&A);
  ox_buf_free(&B);
  ox_buf_free(&T);
  ox_arena_free(a);
  ox_arena_free(a2);
  ox_file_map_close(&fm);
}

/* a text file: parse, encode; print and parse again gives the same bytes */
static void check_text(const char *path) {
  ox_err e = {0};
  uint8_t *data = NULL;
  size_t size = 0;
  ox_arena *a = ox_arena_new(), *a2 = ox_arena_new();
  ox_model_proto *m = NULL, *m2 = NULL;
  ox_buf A = {0}, B = {0}, T = {0};
  const char *stage = "read";
  int rc = ox_file_read_all(path, &data, &size, &e);
  if (rc == OX_OK)
    stage = "parse", rc = ox_text_parse_model((const char *)data, size, path, a, &m, &e);
  if (rc == OX_OK) stage = "encode", rc = ox_pb_encode_model(m, &A, &e);
  if (rc == OX_OK) stage = "print", rc = ox_text_print_model(m, &T, &e);
  if (rc == OX_OK)
    stage = "parse again",
    rc = ox_text_parse_model((const char *)T.data, T.size, path, a2, &m2, &e);
  if (rc == OX_OK) stage = "encode again", rc = ox_pb_encode_model(m2, &B, &e);
  if (rc != OX_OK) {
    printf("FAIL %s: %s: %s\n", path, stage, e.msg);
    n_fail++;
  } else if (A.size != B.size || memcmp(A.data, B.data, A.size) != 0) {
    printf("FAIL %s: the model differs after print+parse\n", path);
    n_fail++;
  } else {
    n_ok++;
    if (out_dir) {
      char name[4096];
      snprintf(name, sizeof name, "%s/%05d.onnxtxt", out_dir, n_ok);
      ox_file_write_all(name, data, size, NULL);
      snprintf(name, sizeof name, "%s/%05d.onnx", out_dir, n_ok);
      ox_file_write_all(name, A.data, A.size, NULL);
    }
  }
  free(data);
  ox_buf_free(&A);
  ox_buf_free(&B);
  ox_buf_free(&T);
  ox_arena_free(a);
  ox_arena_free(a2);
}

static int cmp(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

static void walk(const char *dir) {
  struct stat st;
  if (stat(dir, &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    size_t n = strlen(dir);
    if (n > 5 && strcmp(dir + n - 5, ".onnx") == 0) check(dir);
    if (n > 8 && strcmp(dir + n - 8, ".onnxtxt") == 0) check_text(dir);
    return;
  }
  DIR *d = opendir(dir);
  if (!d) return;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      char **nn = realloc(names, cap * sizeof *names);
      if (!nn) break;
      names = nn;
    }
    names[n] = malloc(strlen(dir) + strlen(de->d_name) + 2);
    if (!names[n]) break;
    sprintf(names[n], "%s/%s", dir, de->d_name);
    n++;
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp);
  for (size_t i = 0; i < n; i++) {
    walk(names[i]);
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  int i = 1;
  if (argc > 2 && strcmp(argv[1], "-o") == 0) out_dir = argv[2], i = 3;
  for (; i < argc; i++) walk(argv[i]);
  printf("%d passed, %d failed\n", n_ok, n_fail);
  return n_fail || !n_ok ? 1 : 0;
}
