/* test_proto_errors.c - malformed input gets the right message (field path
 * and byte offset) and no crash; wire-format corner cases (packed/unpacked,
 * unknown fields, oneofs, merging, NUL bytes) behave as protobuf says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

/* ---- a tiny writer for hand-made messages ---- */
typedef struct w {
  uint8_t b[4096];
  size_t n;
} w;

static void byte(w *x, unsigned v) { x->b[x->n++] = (uint8_t)v; }
static void varint(w *x, uint64_t v) {
  while (v >= 0x80) {
    byte(x, (unsigned)(v & 0x7f) | 0x80);
    v >>= 7;
  }
  byte(x, (unsigned)v);
}
static void tag(w *x, unsigned num, unsigned wt) { varint(x, (uint64_t)num << 3 | wt); }
static void ld(w *x, unsigned num, const w *sub) {
  tag(x, num, 2);
  varint(x, sub->n);
  memcpy(x->b + x->n, sub->b, sub->n);
  x->n += sub->n;
}
static void str(w *x, unsigned num, const char *s, size_t n) {
  tag(x, num, 2);
  varint(x, n);
  memcpy(x->b + x->n, s, n);
  x->n += n;
}

/* Decodes a model and checks the error message. */
static void expect_err(const w *x, const char *msg) {
  ox_arena *a = ox_arena_new();
  ox_model_proto *m = NULL;
  ox_err e = {0};
  int rc = ox_pb_decode_model(x->b, x->n, a, &m, &e);
  if (rc != OX_EPARSE || strcmp(e.msg, msg) != 0) {
    fprintf(stderr, "expected: %s\n     got: (%d) %s\n", msg, rc, rc ? e.msg : "success");
    fails++;
  }
  ox_arena_free(a);
}

/* Decodes then encodes; the bytes must come back as `want` (or as the input). */
static void expect_bytes(const w *x, const w *want) {
  ox_arena *a = ox_arena_new();
  ox_model_proto *m = NULL;
  ox_err e = {0};
  ox_buf b = {0};
  int rc = ox_pb_decode_model(x->b, x->n, a, &m, &e);
  if (!rc) rc = ox_pb_encode_model(m, &b, &e);
  if (!want) want = x;
  if (rc || b.size != want->n || memcmp(b.data, want->b, b.size) != 0) {
    fprintf(stderr, "re-encoding differs (rc %d %s): got %zu bytes, want %zu\n", rc, e.msg, b.size,
            want->n);
    fails++;
  }
  ox_buf_free(&b);
  ox_arena_free(a);
}

static ox_model_proto *decode(const w *x, ox_arena *a) {
  ox_model_proto *m = NULL;
  ox_err e = {0};
  if (ox_pb_decode_model(x->b, x->n, a, &m, &e)) {
    fprintf(stderr, "unexpected error: %s\n", e.msg);
    fails++;
  }
  return m;
}

static void errors(void) {
  w x = {0};
  byte(&x, 0x08), byte(&x, 0x96); /* ir_version, varint cut short */
  expect_err(&x, "ir_version: truncated varint at byte 1");

  x.n = 0;
  tag(&x, 1, 0);
  for (int i = 0; i < 10; i++) byte(&x, 0xff);
  byte(&x, 0x01);
  expect_err(&x, "ir_version: varint longer than 64 bits at byte 1");

  x.n = 0;
  byte(&x, 0x3a), byte(&x, 0x05), byte(&x, 0x0a); /* graph: 5 bytes announced, 1 there */
  expect_err(&x, "graph: length goes past the end of the data at byte 1");

  x.n = 0;
  tag(&x, 7, 2);
  varint(&x, (uint64_t)1 << 62); /* a huge length */
  expect_err(&x, "graph: length goes past the end of the data at byte 1");

  x.n = 0;
  byte(&x, 0x00), byte(&x, 0x00);
  expect_err(&x, "ModelProto: invalid field number at byte 0");

  x.n = 0;
  tag(&x, 2, 7);
  expect_err(&x, "producer_name: invalid wire type at byte 0");

  x.n = 0;
  tag(&x, 30, 3);
  expect_err(&x, "<field 30>: groups (wire type 3/4) are not supported at byte 0");

  x.n = 0;
  tag(&x, 1, 1);
  byte(&x, 1);
  expect_err(&x, "ir_version: truncated fixed-size value at byte 1");

  x.n = 0;
  str(&x, 2, "a\0b", 3);
  expect_err(&x, "producer_name: string holds a NUL byte at byte 3");

  /* graph.node[1].attribute[0].t.dims: truncated varint */
  w t = {0}, at = {0}, n0 = {0}, n1 = {0}, g = {0};
  tag(&t, 1, 0);
  byte(&t, 0x80);
  str(&at, 1, "value", 5);
  ld(&at, 5, &t);
  str(&n0, 4, "Relu", 4);
  str(&n1, 4, "Constant", 8);
  ld(&n1, 5, &at);
  ld(&g, 1, &n0);
  ld(&g, 1, &n1);
  x.n = 0;
  tag(&x, 1, 0), varint(&x, 8);
  ld(&x, 7, &g);
  /* offset of the bad byte: last byte of the whole message */
  char want[200];
  snprintf(want, sizeof want, "graph.node[1].attribute[0].t.dims: truncated varint at byte %zu",
           x.n - 1);
  expect_err(&x, want);

  /* packed floats whose length is not a multiple of 4 */
  w t2 = {0}, g2 = {0};
  str(&t2, 8, "w", 1);
  tag(&t2, 4, 2), varint(&t2, 3), byte(&t2, 0), byte(&t2, 0), byte(&t2, 0);
  ld(&g2, 5, &t2);
  x.n = 0;
  ld(&x, 7, &g2);
  snprintf(want, sizeof want,
           "graph.initializer[0].float_data: packed length is not a multiple of the element size "
           "at byte %zu",
           x.n - 3);
  expect_err(&x, want);

  /* a huge repeated count announced by a packed field that is not there */
  w t3 = {0}, g3 = {0};
  tag(&t3, 7, 2), varint(&t3, 1u << 30);
  ld(&g3, 5, &t3);
  x.n = 0;
  ld(&x, 7, &g3);
  snprintf(want, sizeof want,
           "graph.initializer[0].int64_data: length goes past the end of the data at byte %zu",
           x.n - 5);
  expect_err(&x, want);

  /* nesting: graph -> node -> attribute.g -> node -> ... 70 levels */
  static w lv[80];
  memset(lv, 0, sizeof lv);
  for (int i = 1; i < 80; i++) {
    w node = {0}, attr = {0};
    str(&attr, 1, "body", 4);
    ld(&attr, 6, &lv[i - 1]);
    ld(&node, 5, &attr);
    lv[i].n = 0;
    ld(&lv[i], 1, &node);
    if (lv[i].n > 3000) break;
  }
  x.n = 0;
  ld(&x, 7, &lv[30]); /* 1 + 3*30 = 91 levels */
  ox_arena *a = ox_arena_new();
  ox_model_proto *m = NULL;
  ox_err e = {0};
  CHECK(ox_pb_decode_model(x.b, x.n, a, &m, &e) == OX_EPARSE);
  CHECK(strstr(e.msg, "messages nested deeper than 64 levels at byte") != NULL);
  CHECK(strncmp(e.msg, "graph.node[0].attribute[0].g.node[0].attribute[0].g.", 52) == 0);
  ox_arena_free(a);
  x.n = 0;
  ld(&x, 7, &lv[20]); /* 61 levels: fine */
  a = ox_arena_new();
  CHECK(ox_pb_decode_model(x.b, x.n, a, &m, &e) == OX_OK);
  ox_arena_free(a);
}

/* Every prefix of a real model either decodes (a field boundary) or fails
 * with a message that gives a byte offset. */
static void truncations(const char *path) {
  ox_file_map fm;
  ox_err e = {0};
  if (ox_file_map_open(&fm, path, &e)) {
    fprintf(stderr, "%s\n", e.msg);
    fails++;
    return;
  }
  size_t bad = 0, ok = 0;
  for (size_t n = 0; n < fm.size; n++) {
    uint8_t *copy = malloc(n ? n : 1); /* exact size, so ASan sees any over-read */
    memcpy(copy, fm.data, n);
    ox_arena *a = ox_arena_new();
    ox_model_proto *m;
    int rc = ox_pb_decode_model(copy, n, a, &m, &e);
    if (rc) {
      bad++;
      CHECK(rc == OX_EPARSE && strstr(e.msg, " at byte ") != NULL);
    } else
      ok++;
    ox_arena_free(a);
    free(copy);
  }
  CHECK(bad > fm.size / 2);
  printf("%s: %zu truncations rejected, %zu decode (field boundaries)\n", path, bad, ok);
  ox_file_map_close(&fm);
}

static void wire_semantics(void) {
  ox_arena *a = ox_arena_new();
  /* unknown fields (any wire type) and a known field with the wrong wire
   * type are kept and written back after the known fields */
  w x = {0}, want = {0};
  tag(&x, 99, 0), varint(&x, 12345);
  tag(&x, 1, 0), varint(&x, 7);
  tag(&x, 98, 5), byte(&x, 1), byte(&x, 2), byte(&x, 3), byte(&x, 4);
  str(&x, 1, "zz", 2); /* ir_version as bytes: unknown */
  tag(&want, 1, 0), varint(&want, 7);
  tag(&want, 99, 0), varint(&want, 12345);
  tag(&want, 98, 5), byte(&want, 1), byte(&want, 2), byte(&want, 3), byte(&want, 4);
  str(&want, 1, "zz", 2);
  expect_bytes(&x, &want);

  /* dims packed (accepted) -> written unpacked as declared in onnx.proto;
   * float_data unpacked (accepted) -> written packed */
  w t = {0}, g = {0}, tw = {0}, gw = {0};
  tag(&t, 1, 2), varint(&t, 3), byte(&t, 1), byte(&t, 2), byte(&t, 3);
  tag(&t, 2, 0), varint(&t, 1);
  tag(&t, 4, 5), byte(&t, 0), byte(&t, 0), byte(&t, 0x80), byte(&t, 0x3f);
  tag(&t, 4, 5), byte(&t, 0), byte(&t, 0), byte(&t, 0), byte(&t, 0x40);
  ld(&g, 5, &t);
  x.n = 0;
  ld(&x, 7, &g);
  for (int i = 1; i <= 3; i++) tag(&tw, 1, 0), varint(&tw, (uint64_t)i);
  tag(&tw, 2, 0), varint(&tw, 1);
  tag(&tw, 4, 2), varint(&tw, 8);
  byte(&tw, 0), byte(&tw, 0), byte(&tw, 0x80), byte(&tw, 0x3f);
  byte(&tw, 0), byte(&tw, 0), byte(&tw, 0), byte(&tw, 0x40);
  ld(&gw, 5, &tw);
  want.n = 0;
  ld(&want, 7, &gw);
  expect_bytes(&x, &want);
  ox_model_proto *m = decode(&x, a);
  if (m) {
    ox_tensor *ten = &m->graph->initializer[0];
    CHECK(ten->n_dims == 3 && ten->dims[2] == 3 && ten->n_float_data == 2);
    CHECK(ten->float_data[0] == 1.0f && ten->float_data[1] == 2.0f);
  }

  /* negative int32 (data_type) is a 10-byte varint both ways */
  w t4 = {0}, g4 = {0};
  tag(&t4, 2, 0), varint(&t4, (uint64_t)(int64_t)-5);
  ld(&g4, 5, &t4);
  x.n = 0;
  ld(&x, 7, &g4);
  expect_bytes(&x, NULL);
  m = decode(&x, a);
  if (m) CHECK(m->graph->initializer[0].data_type == -5);

  /* oneof: the last member wins (dim_value then dim_param) */
  w d = {0}, sh = {0}, tt = {0}, ty = {0}, vi = {0}, gg = {0};
  tag(&d, 1, 0), varint(&d, 4);
  str(&d, 2, "N", 1);
  ld(&sh, 1, &d);
  tag(&tt, 1, 0), varint(&tt, 1);
  ld(&tt, 2, &sh);
  ld(&ty, 1, &tt);
  w seq = {0};
  ld(&seq, 1, &ty); /* sequence_type { elem_type: <tensor> } */
  ld(&ty, 4, &seq); /* then the oneof switches to sequence */
  str(&vi, 1, "x", 1);
  ld(&vi, 2, &ty);
  ld(&gg, 11, &vi);
  x.n = 0;
  ld(&x, 7, &gg);
  m = decode(&x, a);
  if (m) {
    const ox_type *tp = m->graph->input[0].type;
    CHECK(tp->kind == OX_TYPE_SEQUENCE && tp->shape == NULL && !tp->has_elem_type);
    CHECK(tp->elem && tp->elem->kind == OX_TYPE_TENSOR && tp->elem->shape);
    if (tp->elem && tp->elem->shape) {
      const ox_dim *dd = &tp->elem->shape->dim[0];
      CHECK(!dd->has_value && dd->param && strcmp(dd->param, "N") == 0);
    }
  }

  /* a singular message given twice is merged: repeated fields append */
  w n1 = {0}, n2 = {0}, g1 = {0}, g2 = {0};
  str(&n1, 4, "Relu", 4);
  str(&n2, 4, "Abs", 3);
  ld(&g1, 1, &n1);
  str(&g1, 2, "first", 5);
  ld(&g2, 1, &n2);
  str(&g2, 2, "second", 6);
  x.n = 0;
  ld(&x, 7, &g1);
  ld(&x, 7, &g2);
  m = decode(&x, a);
  if (m) {
    CHECK(m->graph->n_node == 2 && strcmp(m->graph->node[1].op_type, "Abs") == 0);
    CHECK(strcmp(m->graph->name, "second") == 0);
  }

  /* bytes fields are NUL-terminated copies; raw_data points into the input */
  w at = {0}, nd = {0}, g5 = {0}, t5 = {0};
  str(&at, 1, "mode", 4);
  str(&at, 4, "linear", 6);
  str(&nd, 4, "Resize", 6);
  ld(&nd, 5, &at);
  ld(&g5, 1, &nd);
  str(&t5, 9, "\1\2\3\4", 4);
  ld(&g5, 5, &t5);
  x.n = 0;
  ld(&x, 7, &g5);
  m = decode(&x, a);
  if (m) {
    const ox_attr *s = &m->graph->node[0].attribute[0];
    CHECK(s->s.size == 6 && strcmp((const char *)s->s.data, "linear") == 0);
    CHECK(strcmp(ox_node_attr_str(&m->graph->node[0], "mode", ""), "linear") == 0);
    const ox_bytes *r = &m->graph->initializer[0].raw_data;
    CHECK(r->size == 4 && r->data == x.b + x.n - 4);
  }

  /* present-but-zero is kept apart from absent */
  x.n = 0;
  tag(&x, 1, 0), varint(&x, 0);
  m = decode(&x, a);
  if (m) CHECK(m->has_ir_version && m->ir_version == 0 && !m->has_model_version);
  expect_bytes(&x, NULL);

  /* the empty message */
  x.n = 0;
  m = decode(&x, a);
  if (m) CHECK(m->graph == NULL && !m->has_ir_version);
  ox_arena_free(a);
}

int main(void) {
  errors();
  wire_semantics();
  truncations("../shared/testdata/node/test_loop11/model.onnx");
  truncations("../shared/testdata/node/test_ai_onnx_ml_label_encoder_string_int/model.onnx");
  if (fails) fprintf(stderr, "%d failures\n", fails);
  return fails != 0;
}
