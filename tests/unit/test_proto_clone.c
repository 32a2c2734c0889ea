/* test_proto_clone.c - deep copies (src/ir/clone.c) of every graph of the
 * shared test models: after the source model's arena is freed, the copy
 * still encodes to exactly the bytes of the source graph (under ASan, any
 * pointer left into the freed arena is caught). */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

static int fails, models;

static void encode_graph(ox_graph *g, ox_buf *b) {
  ox_model_proto p = {0};
  p.graph = g;
  ox_err e;
  if (ox_pb_encode_model(&p, b, &e)) {
    fprintf(stderr, "encode: %s\n", e.msg);
    fails++;
  }
}

static void one(const char *path) {
  uint8_t *data;
  size_t size;
  ox_err e;
  if (ox_file_read_all(path, &data, &size, &e)) return;
  ox_load_opts lo = {.no_external_data = true};
  ox_model *m = NULL;
  if (ox_model_load_buffer(data, size, NULL, &lo, &m, &e) || !m->proto->graph) {
    ox_model_free(m);
    free(data);
    return;
  }
  ox_buf want = {0}, got = {0};
  encode_graph(m->proto->graph, &want);
  ox_arena *a = ox_arena_new();
  ox_graph *c = ox_graph_clone(a, m->proto->graph);
  /* the other builders on the first node, attribute, input type, initializer */
  const ox_graph *g = m->proto->graph;
  if (g->n_node) {
    ox_node n2;
    if (ox_node_copy(a, &n2, &g->node[0]) ||
        (g->node[0].n_input && n2.input[0] == g->node[0].input[0]))
      fails++;
    if (g->node[0].n_attribute) {
      ox_attr a2;
      if (ox_attr_copy(a, &a2, &g->node[0].attribute[0]) || a2.name == g->node[0].attribute[0].name)
        fails++;
    }
  }
  if (g->n_input && g->input[0].type && !ox_type_clone(a, g->input[0].type)) fails++;
  if (g->n_initializer) {
    ox_tensor *t = ox_tensor_clone(a, &g->initializer[0]);
    if (!t || t->raw_data.data != g->initializer[0].raw_data.data) fails++;
  }
  ox_model_free(m); /* the copy must not depend on the source's arena */
  if (!c) {
    fprintf(stderr, "%s: clone failed\n", path);
    fails++;
  } else {
    encode_graph(c, &got);
    /* a copy can grow: push to its arrays */
    if (!ox_graph_add_node(a, c, "Identity", NULL, "extra") ||
        !ox_value_info_push(a, &c->output, &c->n_output, "extra_out"))
      fails++;
  }
  if (c && (got.size != want.size || memcmp(got.data, want.data, got.size) != 0)) {
    fprintf(stderr, "%s: the copy encodes differently\n", path);
    fails++;
  }
  models++;
  ox_buf_free(&want);
  ox_buf_free(&got);
  ox_arena_free(a);
  free(data);
}

int main(void) {
  const char *root = getenv("ONNXC_TESTDATA");
  if (!root) root = "../shared/testdata";
  char dir[2048], path[4096];
  snprintf(dir, sizeof dir, "%s/node", root);
  DIR *d = opendir(dir);
  struct dirent *de;
  while (d && (de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, de->d_name);
    one(path);
  }
  if (d) closedir(d);
  printf("%d graphs copied, %d failures\n", models, fails);
  if (models < 100) {
    fprintf(stderr, "too few models under %s\n", dir);
    return 1;
  }
  return fails != 0;
}
