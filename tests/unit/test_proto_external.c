/* test_proto_external.c - external data: save (aligned, to one file), load
 * (mapped, checksum), bring back inline, and every rejection rule: absolute
 * paths, "..", symbolic links, hard links, a folder link leaving the model
 * folder, ranges past the end, unknown keys, external and inline at once.
 * Also SHA-1 against the FIPS 180 test vectors. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sha1.h"
#include "proto/proto.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

static char dir[256];

static const char *at(const char *name) {
  static char buf[4][512];
  static int k;
  k = (k + 1) % 4;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static void sha1_vectors(void) {
  char hex[41];
  ox_sha1_hex("abc", 3, hex);
  CHECK(strcmp(hex, "a9993e364706816aba3e25717850c26c9cd0d89d") == 0);
  ox_sha1_hex("", 0, hex);
  CHECK(strcmp(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709") == 0);
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  ox_sha1_hex(two, strlen(two), hex);
  CHECK(strcmp(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1") == 0);
  ox_sha1 s;
  uint8_t d[20], block[1001];
  memset(block, 'a', sizeof block);
  ox_sha1_init(&s);
  for (int i = 0; i < 1000; i++) ox_sha1_update(&s, block, i % 2 ? 999 : 1001);
  ox_sha1_final(&s, d);
  CHECK(d[0] == 0x34 && d[1] == 0xaa && d[19] == 0x6f);
}

/* A model with two float initializers of 16 and 400 bytes and a Constant
 * node whose tensor has 40 bytes. */
static ox_model *make_model(void) {
  ox_model *m = ox_model_new();
  ox_arena *a = m->arena;
  ox_model_proto *p = m->proto;
  p->ir_version = 9;
  p->has_ir_version = true;
  ox_opset *o = OX_VEC_PUSH(a, p->opset_import, p->n_opset_import);
  o->domain = "";
  o->version = 21;
  o->has_version = true;
  p->graph = ox_arena_alloc(a, sizeof *p->graph);
  p->graph->name = "g";
  size_t sizes[2] = {4, 100};
  const char *names[2] = {"small", "big"};
  for (int i = 0; i < 2; i++) {
    ox_tensor *t = OX_VEC_PUSH(a, p->graph->initializer, p->graph->n_initializer);
    t->name = (char *)names[i];
    t->data_type = OX_FLOAT;
    t->has_data_type = true;
    t->dims = ox_arena_alloc(a, sizeof *t->dims);
    t->dims[0] = (int64_t)sizes[i];
    t->n_dims = 1;
    float *f = ox_arena_calloc(a, sizes[i], sizeof *f);
    for (size_t j = 0; j < sizes[i]; j++) f[j] = (float)(j + 1) * (i ? -0.5f : 2.0f);
    t->raw_data.data = (const uint8_t *)f;
    t->raw_data.size = sizes[i] * sizeof *f;
  }
  ox_node *n = ox_graph_add_node(a, p->graph, "Constant", NULL, "c");
  ox_node_add_output(a, n, "k");
  ox_attr *at_ = ox_node_add_attr(a, n, "value", OX_ATTR_TENSOR);
  at_->t = ox_arena_alloc(a, sizeof *at_->t);
  at_->t->data_type = OX_FLOAT;
  at_->t->has_data_type = true;
  float *f = ox_arena_calloc(a, 10, sizeof *f);
  for (int j = 0; j < 10; j++) f[j] = (float)j;
  at_->t->raw_data.data = (const uint8_t *)f;
  at_->t->raw_data.size = 40;
  return m;
}

static const char *kv(const ox_tensor *t, const char *key) {
  for (size_t i = 0; i < t->n_external_data; i++)
    if (strcmp(t->external_data[i].key, key) == 0) return t->external_data[i].value;
  return NULL;
}

static void save_load(void) {
  ox_model *m = make_model();
  ox_err e = {0};
  ox_save_opts so = {.external_data = "w.bin", .size_threshold = 40, .align = 64};
  CHECK(ox_model_save_file(m, at("m.onnx"), &so, &e) == OX_OK);
  struct stat st;
  CHECK(stat(at("w.bin"), &st) == 0 && st.st_size == 448 + 40);
  ox_model *l = NULL;
  CHECK(ox_model_load_file(at("m.onnx"), NULL, &l, &e) == OX_OK);
  if (!l) {
    fprintf(stderr, "%s\n", e.msg);
    fails++;
    ox_model_free(m);
    return;
  }
  const ox_graph *g = l->proto->graph;
  const ox_tensor *small = &g->initializer[0], *big = &g->initializer[1];
  const ox_tensor *k = g->node[0].attribute[0].t;
  /* 16 bytes < threshold: inline; 400 bytes then 40 (Constant): external,
   * in walk order, each aligned to 64 */
  CHECK(!small->has_data_location && small->raw_data.size == 16);
  CHECK(k->data_location == 1 && strcmp(kv(k, "offset"), "448") == 0);
  CHECK(strcmp(kv(k, "length"), "40") == 0 && strcmp(kv(k, "location"), "w.bin") == 0);
  CHECK(big->data_location == 1 && strcmp(kv(big, "offset"), "0") == 0);
  CHECK(big->external.size == 400 && !big->raw_data.data);
  CHECK(memcmp(big->external.data, m->proto->graph->initializer[1].raw_data.data, 400) == 0);
  CHECK(memcmp(k->external.data, m->proto->graph->node[0].attribute[0].t->raw_data.data, 40) == 0);
  CHECK(l->n_maps == 2); /* the model file and w.bin, mapped once */

  /* back inline: the same bytes as saving the original model */
  ox_save_opts inl = {.all_inline = true};
  CHECK(ox_model_save_file(l, at("inline.onnx"), &inl, &e) == OX_OK);
  CHECK(ox_model_save_file(m, at("orig.onnx"), NULL, &e) == OX_OK);
  uint8_t *a1, *a2;
  size_t n1, n2;
  CHECK(ox_file_read_all(at("inline.onnx"), &a1, &n1, &e) == OX_OK);
  CHECK(ox_file_read_all(at("orig.onnx"), &a2, &n2, &e) == OX_OK);
  CHECK(n1 == n2 && memcmp(a1, a2, n1) == 0);
  free(a1);
  free(a2);

  /* saved to another folder without options: external data follow the model */
  CHECK(mkdir(at("moved"), 0700) == 0);
  CHECK(ox_model_save_file(l, at("moved/m.onnx"), NULL, &e) == OX_OK);
  ox_model *mv = NULL;
  CHECK(ox_model_load_file(at("moved/m.onnx"), NULL, &mv, &e) == OX_OK);
  if (mv) {
    const ox_tensor *b2 = &mv->proto->graph->initializer[1];
    CHECK(strcmp(kv(b2, "location"), "m.onnx.data") == 0 && b2->external.size == 400 &&
          memcmp(b2->external.data, big->external.data, 400) == 0);
    CHECK(!mv->proto->graph->initializer[0].has_data_location);
  }
  ox_model_free(mv);
  unlink(at("moved/m.onnx"));
  unlink(at("moved/m.onnx.data"));
  rmdir(at("moved"));

  /* saving over the files the model is mapped from */
  CHECK(ox_model_save_file(l, at("m.onnx"), &so, &e) == OX_OK);
  ox_model *l2 = NULL;
  CHECK(ox_model_load_file(at("m.onnx"), NULL, &l2, &e) == OX_OK);
  if (l2) {
    const ox_tensor *b2 = &l2->proto->graph->initializer[1];
    CHECK(b2->external.size == 400 &&
          memcmp(b2->external.data, m->proto->graph->initializer[1].raw_data.data, 400) == 0);
  }
  ox_model_free(l2);
  ox_model_free(l);

  /* a model saved with --external-data "sub/../x" is refused */
  ox_save_opts bad = {.external_data = "../x.bin"};
  CHECK(ox_model_save_file(m, at("m2.onnx"), &bad, &e) == OX_EINVAL);
  ox_model_free(m);
}

/* Writes a model whose tensor "big" has the given external_data entries
 * (NULL-terminated key, value list) and loads it; returns the load status. */
static int load_with(const char **entries, bool inline_too, const ox_load_opts *lo, ox_err *e) {
  ox_model *m = make_model();
  ox_tensor *t = &m->proto->graph->initializer[1];
  if (!inline_too) t->raw_data.data = NULL, t->raw_data.size = 0;
  t->data_location = 1;
  t->has_data_location = true;
  for (int i = 0; entries[i]; i += 2) {
    ox_str_pair *p = OX_VEC_PUSH(m->arena, t->external_data, t->n_external_data);
    p->key = (char *)entries[i];
    p->value = (char *)entries[i + 1];
  }
  ox_err se;
  if (ox_model_save_file(m, at("e.onnx"), NULL, &se) != OX_OK) {
    fprintf(stderr, "save: %s\n", se.msg);
    fails++;
  }
  ox_model_free(m);
  ox_model *l = NULL;
  int rc = ox_model_load_file(at("e.onnx"), lo, &l, e);
  ox_model_free(l);
  return rc;
}

static void expect(const char **entries, bool inline_too, const char *msg) {
  ox_err e = {0};
  int rc = load_with(entries, inline_too, NULL, &e);
  if (msg == NULL ? rc != OX_OK : (rc == OX_OK || !strstr(e.msg, msg))) {
    fprintf(stderr, "expected %s\n     got: %s\n", msg ? msg : "success", rc ? e.msg : "success");
    fails++;
  }
}

static void rejections(void) {
  /* data.bin: 1000 bytes */
  uint8_t buf[1000];
  for (int i = 0; i < 1000; i++) buf[i] = (uint8_t)i;
  ox_err e;
  CHECK(ox_file_write_all(at("data.bin"), buf, sizeof buf, &e) == OX_OK);
  char hex[41];
  ox_sha1_hex(buf, sizeof buf, hex);

  const char *ok[] = {"location", "data.bin", "offset", "100", "length", "400", NULL};
  expect(ok, false, NULL);
  const char *to_eof[] = {"location", "data.bin", "offset", "600", NULL};
  expect(to_eof, false, NULL);
  const char *sum_ok[] = {"location", "data.bin", "length", "400", "checksum", hex, NULL};
  expect(sum_ok, false, NULL);
  const char *sum_bad[] = {"location", "data.bin", "checksum",
                           "0000000000000000000000000000000000000000", NULL};
  expect(sum_bad, false, "but the checksum says 0000000000000000000000000000000000000000");
  ox_load_opts skip = {.skip_checksum = true};
  CHECK(load_with(sum_bad, false, &skip, &e) == OX_OK);
  const char *abs_[] = {"location", "/etc/passwd", NULL};
  expect(abs_, false, "tensor 'big': external data location '/etc/passwd' is an absolute path");
  const char *up[] = {"location", "sub/../../data.bin", NULL};
  expect(up, false, "points outside the model folder");
  const char *empty[] = {"location", "", NULL};
  expect(empty, false, "external data location is empty");
  const char *none[] = {"offset", "0", NULL};
  expect(none, false, "tensor 'big': external data has no location");
  const char *past[] = {"location", "data.bin", "offset", "1001", NULL};
  expect(past, false, "external data offset 1001 is past the end of data.bin (1000 bytes)");
  const char *past2[] = {"location", "data.bin", "offset", "800", "length", "400", NULL};
  expect(past2, false, "external data range 800+400 is past the end of data.bin (1000 bytes)");
  const char *num[] = {"location", "data.bin", "offset", "-4", NULL};
  expect(num, false, "external data offset '-4' is not a number");
  const char *unk[] = {"location", "data.bin", "mode", "rw", NULL};
  expect(unk, false, "tensor 'big': unknown external data key 'mode'");
  const char *missing[] = {"location", "nothere.bin", NULL};
  expect(missing, false, "No such file or directory");
  expect(ok, true, "tensor 'big' has both external and inline data");

  CHECK(symlink("data.bin", at("link.bin")) == 0);
  const char *sl[] = {"location", "link.bin", NULL};
  expect(sl, false, "is a symbolic link");
  CHECK(link(at("data.bin"), at("hard.bin")) == 0);
  const char *hl[] = {"location", "hard.bin", NULL};
  expect(hl, false, "has 2 hard links");
  unlink(at("hard.bin"));
  /* a folder link that leaves the model folder */
  char outside[300];
  snprintf(outside, sizeof outside, "%s_outside", dir);
  CHECK(mkdir(outside, 0700) == 0);
  char of[400];
  snprintf(of, sizeof of, "%s/x.bin", outside);
  CHECK(ox_file_write_all(of, buf, sizeof buf, &e) == OX_OK);
  CHECK(symlink(outside, at("sub")) == 0);
  const char *dl[] = {"location", "sub/x.bin", NULL};
  expect(dl, false, "resolves outside the model folder");
  unlink(of);
  rmdir(outside);
}

static void rm_rf(void) {
  const char *names[] = {"m.onnx",   "w.bin",    "inline.onnx", "orig.onnx", "e.onnx",
                         "data.bin", "link.bin", "hard.bin",    "sub"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) unlink(at(names[i]));
  rmdir(dir);
}

int main(void) {
  snprintf(dir, sizeof dir, "%s/onnxc_ext_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  sha1_vectors();
  save_load();
  rejections();
  rm_rf();
  if (fails) fprintf(stderr, "%d failures\n", fails);
  return fails != 0;
}
