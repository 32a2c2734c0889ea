/* test_check_data.c - the data-proto rules (notes §2.10) on every input and
 * output file of the shared node tests (all valid), and on mutations of them.
 * usage: test_check_data SHARED_DIR */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/model_file.h"
#include "check/check.h"
#include "proto/proto.h"

static int fails;

static bool contains(const ox_buf *b, const char *s) {
  size_t k = strlen(s);
  for (size_t i = 0; b->data && i + k <= b->size; i++)
    if (memcmp(b->data + i, s, k) == 0) return true;
  return false;
}

static int check(int kind, const void *v, const char *what, const char *rule) {
  ox_buf r = {0};
  int rc = ox_check_data(kind, v, NULL, &r, NULL, NULL);
  if (rule) {
    char tag[64];
    snprintf(tag, sizeof tag, "[%s]", rule);
    if (rc != OX_EMODEL || !contains(&r, tag)) {
      fprintf(stderr, "%s: expected %s, got rc %d %.*s\n", what, tag, rc, (int)r.size,
              r.data ? (char *)r.data : "");
      fails++;
    }
  } else if (rc != OX_OK) {
    fprintf(stderr, "%s: expected valid: %.*s\n", what, (int)r.size, (char *)r.data);
    fails++;
  }
  ox_buf_free(&r);
  return rc;
}

/* Mutations of a decoded value; returns how many were made. */
static int mutate_sequence(ox_sequence_data *s, const char *what) {
  int n = 0;
  ox_sequence_data c = *s;
  c.has_elem_type = false;
  check(OX_DATA_SEQUENCE, &c, what, "data-sequence"), n++;
  c = *s;
  c.elem_type = OX_DATA_OPTIONAL;
  check(OX_DATA_SEQUENCE, &c, what, "data-sequence"), n++;
  c = *s;
  c.elem_type = 0;
  check(OX_DATA_SEQUENCE, &c, what, "data-sequence"), n++;
  return n;
}

static int mutate_map(ox_map_data *m, const char *what) {
  int n = 0;
  ox_map_data c = *m;
  c.key_type = OX_FLOAT;
  check(OX_DATA_MAP, &c, what, "data-map"), n++;
  c = *m;
  c.has_key_type = false;
  check(OX_DATA_MAP, &c, what, "data-map"), n++;
  c = *m;
  c.values = NULL;
  check(OX_DATA_MAP, &c, what, "data-map"), n++;
  c = *m;
  if (c.n_keys)
    c.n_keys--;
  else if (c.n_string_keys)
    c.n_string_keys--;
  check(OX_DATA_MAP, &c, what, "data-map"), n++;
  return n;
}

static int mutate_optional(ox_optional_data *o, const char *what) {
  ox_optional_data c = *o;
  c.elem_type = OX_DATA_OPTIONAL;
  check(OX_DATA_OPTIONAL, &c, what, "data-optional");
  c = *o;
  c.has_elem_type = false;
  check(OX_DATA_OPTIONAL, &c, what, "data-optional");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_check_data SHARED_DIR\n");
    return 2;
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/testdata/node", argv[1]);
  DIR *d = opendir(dir);
  if (!d) {
    printf("no %s: skipped\n", dir);
    return 77;
  }
  size_t n_files = 0, counts[6] = {0};
  int n_mut = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    char mp[4096 + 512];
    snprintf(mp, sizeof mp, "%s/%.300s/model.onnx", dir, de->d_name);
    ox_load_opts lo = {.skip_checksum = true, .no_external_data = true};
    ox_model *m = NULL;
    if (ox_api_model_load(mp, &lo, &m, NULL) != OX_OK) continue;
    const ox_graph *g = m->proto->graph;
    for (int side = 0; side < 2 && g; side++) {
      const ox_value_info *vs = side ? g->output : g->input;
      size_t nv = side ? g->n_output : g->n_input;
      for (size_t k = 0; k < nv; k++) {
        const ox_type *t = vs[k].type;
        if (!t) continue;
        char fp[4096 + 1024];
        snprintf(fp, sizeof fp, "%s/%.300s/test_data_set_0/%s_%zu.pb", dir, de->d_name,
                 side ? "output" : "input", k);
        uint8_t *data = NULL;
        size_t size = 0;
        if (ox_file_read_all(fp, &data, &size, NULL) != OX_OK) continue;
        ox_arena *a = ox_arena_new();
        ox_err e = {0};
        int kind = -1;
        const void *val = NULL;
        if (t->kind == OX_TYPE_TENSOR) {
          ox_tensor *x = NULL;
          if (ox_pb_decode_tensor(data, size, a, &x, &e) == OX_OK) kind = OX_DATA_TENSOR, val = x;
        } else if (t->kind == OX_TYPE_SEQUENCE) {
          ox_sequence_data *x = NULL;
          if (ox_pb_decode_sequence(data, size, a, &x, &e) == OX_OK) {
            kind = OX_DATA_SEQUENCE, val = x;
            if (check(kind, val, fp, NULL) == OX_OK) n_mut += mutate_sequence(x, fp);
          }
        } else if (t->kind == OX_TYPE_MAP) {
          ox_map_data *x = NULL;
          if (ox_pb_decode_map(data, size, a, &x, &e) == OX_OK) {
            kind = OX_DATA_MAP, val = x;
            if (check(kind, val, fp, NULL) == OX_OK) n_mut += mutate_map(x, fp);
          }
        } else if (t->kind == OX_TYPE_OPTIONAL) {
          ox_optional_data *x = NULL;
          if (ox_pb_decode_optional(data, size, a, &x, &e) == OX_OK) {
            kind = OX_DATA_OPTIONAL, val = x;
            if (check(kind, val, fp, NULL) == OX_OK) n_mut += mutate_optional(x, fp);
          }
        }
        if (kind < 0) {
          fprintf(stderr, "%s: could not decode: %s\n", fp, e.msg);
          fails++;
        } else {
          check(kind, val, fp, NULL);
          counts[kind]++;
          n_files++;
        }
        ox_arena_free(a);
        free(data);
      }
    }
    ox_model_free(m);
  }
  closedir(d);
  printf(
      "%zu data files valid (%zu tensors, %zu sequences, %zu maps, %zu optionals), %d "
      "mutations rejected, %d failures\n",
      n_files, counts[OX_DATA_TENSOR], counts[OX_DATA_SEQUENCE], counts[OX_DATA_MAP],
      counts[OX_DATA_OPTIONAL], n_mut, fails);
  return fails || n_files == 0 ? 1 : 0;
}
