/* test_proto_pb.c - the test-data .pb files of the conformance suites
 * (TensorProto, SequenceProto, MapProto, OptionalProto, chosen by the type of
 * the graph input or output they belong to) decode, and encode back to the
 * very same bytes. Tensors with raw_data must hold exactly numel * element
 * size bytes. Directory: $ONNXC_TESTDATA (default ../shared/testdata). */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/proto.h"

static int fails, files, tensors_checked;

static void fail(const char *path, const char *why) {
  if (fails < 30) fprintf(stderr, "%s: %s\n", path, why);
  fails++;
}

static void check_tensor(const char *path, const ox_tensor *t) {
  int64_t n;
  size_t bytes;
  const ox_dtype_info *d = ox_dtype_get(t->data_type);
  if (!t->raw_data.data || !d || d->bits == 0) return;
  if (!ox_numel(t->dims, t->n_dims, &n) || !ox_dtype_nbytes(t->data_type, n, &bytes) ||
      bytes != t->raw_data.size)
    fail(path, "raw_data size does not match dims and data_type");
  else
    tensors_checked++;
}

static void check_sequence(const char *path, const ox_sequence_data *s) {
  for (size_t i = 0; i < s->n_tensor_values; i++) check_tensor(path, &s->tensor_values[i]);
  for (size_t i = 0; i < s->n_sequence_values; i++) check_sequence(path, &s->sequence_values[i]);
}

/* Decodes path as the data of type t and re-encodes it. */
static void round_trip(const char *path, const ox_type *t) {
  ox_file_map fm;
  ox_err e = {0};
  if (ox_file_map_open(&fm, path, &e)) {
    fail(path, e.msg);
    return;
  }
  ox_arena *a = ox_arena_new();
  ox_buf b = {0};
  int rc;
  int kind = t ? (int)t->kind : OX_TYPE_TENSOR;
  if (kind == OX_TYPE_SEQUENCE) {
    ox_sequence_data *s;
    rc = ox_pb_decode_sequence(fm.data, fm.size, a, &s, &e);
    if (!rc) {
      check_sequence(path, s);
      rc = ox_pb_encode_sequence(s, &b, &e);
    }
  } else if (kind == OX_TYPE_MAP) {
    ox_map_data *m;
    rc = ox_pb_decode_map(fm.data, fm.size, a, &m, &e);
    if (!rc) rc = ox_pb_encode_map(m, &b, &e);
  } else if (kind == OX_TYPE_OPTIONAL) {
    ox_optional_data *o;
    rc = ox_pb_decode_optional(fm.data, fm.size, a, &o, &e);
    if (!rc) {
      if (o->tensor_value) check_tensor(path, o->tensor_value);
      if (o->sequence_value) check_sequence(path, o->sequence_value);
      rc = ox_pb_encode_optional(o, &b, &e);
    }
  } else {
    ox_tensor *x;
    rc = ox_pb_decode_tensor(fm.data, fm.size, a, &x, &e);
    if (!rc) {
      check_tensor(path, x);
      rc = ox_pb_encode_tensor(x, &b, &e);
    }
  }
  if (rc)
    fail(path, e.msg);
  else if (b.size != fm.size || (b.size && memcmp(b.data, fm.data, b.size) != 0))
    fail(path, "re-encoded bytes differ");
  files++;
  ox_buf_free(&b);
  ox_arena_free(a);
  ox_file_map_close(&fm);
}

/* The type of graph input/output k, counting inputs without an initializer. */
static const ox_type *io_type(const ox_graph *g, bool input, long k) {
  if (!g) return NULL;
  if (!input) return k < (long)g->n_output ? g->output[k].type : NULL;
  for (size_t i = 0; i < g->n_input; i++) {
    bool init = false;
    for (size_t j = 0; j < g->n_initializer; j++)
      if (g->initializer[j].name && g->input[i].name &&
          strcmp(g->initializer[j].name, g->input[i].name) == 0)
        init = true;
    if (!init && k-- == 0) return g->input[i].type;
  }
  return NULL;
}

/* "input_3.pb" -> input=true, k=3 (also "..._output_0.pb") */
static bool parse_pb_name(const char *name, bool *input, long *k) {
  size_t n = strlen(name);
  if (n < 4 || strcmp(name + n - 3, ".pb") != 0) return false;
  const char *p = strstr(name, "input_");
  const char *q = strstr(name, "output_");
  if (q) {
    *input = false;
    p = q + 7;
  } else if (p) {
    *input = true;
    p += 6;
  } else
    return false;
  *k = strtol(p, NULL, 10);
  return true;
}

static void walk_pbs(const char *dir, const ox_graph *g, const char *prefix) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (prefix && strncmp(de->d_name, prefix, strlen(prefix)) != 0) continue;
    bool input;
    long k;
    if (!parse_pb_name(de->d_name + (prefix ? strlen(prefix) : 0), &input, &k)) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    round_trip(path, io_type(g, input, k));
  }
  closedir(d);
}

static void walk(const char *dir, int depth) {
  char path[4096];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  struct stat st;
  ox_model *m = NULL;
  ox_err e = {0};
  ox_load_opts lo = {.no_external_data = true};
  if (stat(path, &st) == 0) {
    if (ox_model_load_file(path, &lo, &m, &e)) {
      fail(path, e.msg);
      return;
    }
  }
  DIR *d = opendir(dir);
  if (!d) {
    ox_model_free(m);
    return;
  }
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    size_t n = strlen(de->d_name);
    if (m && strncmp(de->d_name, "test_data_set_", 14) == 0)
      walk_pbs(path, m->proto->graph, NULL);
    else if (!m && n > 5 && strcmp(de->d_name + n - 5, ".onnx") == 0) {
      /* light_x.onnx next to light_x_output_0.pb */
      ox_model *lm = NULL;
      if (ox_model_load_file(path, &lo, &lm, &e)) {
        fail(path, e.msg);
        continue;
      }
      char prefix[1024];
      snprintf(prefix, sizeof prefix, "%.*s_", (int)(n - 5), de->d_name);
      walk_pbs(dir, lm->proto->graph, prefix);
      ox_model_free(lm);
    } else if (!m && depth < 4 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
      walk(path, depth + 1);
  }
  closedir(d);
  ox_model_free(m);
}

int main(void) {
  const char *root = getenv("ONNXC_TESTDATA");
  if (!root) root = "../shared/testdata";
  walk(root, 0);
  printf("%d .pb files round-tripped, %d raw tensors size-checked, %d failures\n", files,
         tensors_checked, fails);
  if (files < 100) {
    fprintf(stderr, "too few .pb files found under %s\n", root);
    return 1;
  }
  return fails != 0;
}
