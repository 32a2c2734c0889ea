/* test_branches.c - the parallel_branches session option (src/runtime/
 * branches.c): a graph of four independent branches joined by a Concat
 * placed in place, one branch an If whose subgraphs read an outer value,
 * gives the bytes of the node-by-node run at 1 and 3 threads, on the first
 * run and on later ones (which write the branches into the Concat's
 * buffer); several callers running one such session at once agree too
 * (labelled `concurrency`: it runs under ThreadSanitizer); a node failing
 * among nodes that run side by side fails the run with that node's error,
 * and the session runs again afterwards. */
#include <pthread.h>
#include <stdlib.h>

#include "api_check.h"

static const char *model_text =
    "<ir_version: 8, opset_import: [\"\" : 17]>\n"
    "g (float[1,16,256,256] X, int64[2] I, bool C) => (float[1,64,256,256] Y, float[2,256,256] G) {\n"
    "  a = Relu (X)\n"
    "  b1 = Sigmoid (X)\n"
    "  b = Mul (b1, X)\n"
    "  c1 = MaxPool <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (X)\n"
    "  c = Add (c1, X)\n"
    "  d1 = Softmax <axis = 1> (X)\n"
    "  d = If (C) <then_branch = t () => (float[1,16,256,256] o) { o = Neg (d1) },\n"
    "              else_branch = e () => (float[1,16,256,256] o) { o = Abs (d1) }>\n"
    "  Y = Concat <axis = 1> (a, b, c, d)\n"
    "  s = Constant <value = int64[3] {16, 256, 256}> ()\n"
    "  t = Reshape (X, s)\n"
    "  G = Gather <axis = 0> (t, I)\n"
    "}\n";

/* X's elements: each branch takes a few hundred microseconds or more,
 * above the time per node under which a level always runs node by node
 * (branches.c, LV_MIN_NS), so that the levels run side by side */
#define NX (16 * 256 * 256)

typedef struct fixture {
  onnxc_model *m;
  onnxc_value *in[3];
} fixture;

static onnxc_session *session(const fixture *f, int threads, bool branches) {
  onnxc_error e = {0};
  onnxc_session *s = NULL;
  onnxc_session_options o = {.threads = threads, .optimization_level = 1,
                             .parallel_branches = branches};
  if (onnxc_session_create(f->m, &o, &s, &e) != ONNXC_OK) {
    fprintf(stderr, "session: %s\n", e.msg);
    return NULL;
  }
  return s;
}

static bool same(onnxc_value *a, onnxc_value *b) {
  return a && b && onnxc_tensor_nbytes(a) == onnxc_tensor_nbytes(b) &&
         memcmp(onnxc_tensor_data_const(a), onnxc_tensor_data_const(b), onnxc_tensor_nbytes(a)) ==
             0;
}

/* runs s once; returns true when both outputs equal ref's bytes */
static bool run_same(onnxc_session *s, onnxc_value *const *in, onnxc_value *const *ref) {
  onnxc_error e = {0};
  onnxc_value *out[2] = {NULL, NULL};
  if (onnxc_session_run(s, NULL, in, 3, NULL, out, 2, &e) != ONNXC_OK) {
    fprintf(stderr, "run: %s\n", e.msg);
    return false;
  }
  bool ok = same(out[0], ref[0]) && same(out[1], ref[1]);
  onnxc_value_free(out[0]);
  onnxc_value_free(out[1]);
  return ok;
}

typedef struct caller {
  onnxc_session *s;
  onnxc_value *const *in, *const *ref;
  int bad;
} caller;

static void *call(void *arg) {
  caller *c = arg;
  for (int r = 0; r < 20; r++) c->bad += !run_same(c->s, c->in, c->ref);
  return NULL;
}

int main(void) {
  onnxc_error e = {0};
  fixture f = {0};
  if (onnxc_model_parse_text(model_text, strlen(model_text), "branches", &f.m, &e) != ONNXC_OK) {
    fprintf(stderr, "parse: %s\n", e.msg);
    return 1;
  }
  int64_t dx[4] = {1, 16, 256, 256}, di[1] = {2};
  float *x = malloc(NX * sizeof *x);
  for (int i = 0; i < NX; i++) x[i] = (float)(((int64_t)i * 7919) % 1000) / 250.0f - 2.0f;
  int64_t idx[2] = {5, 2}, bad_idx[2] = {5, 19};
  bool cond = true;
  f.in[0] = onnxc_tensor_wrap(1 /* float */, dx, 4, x, &e);
  f.in[1] = onnxc_tensor_wrap(7 /* int64 */, di, 1, idx, &e);
  f.in[2] = onnxc_tensor_wrap(9 /* bool */, NULL, 0, &cond, &e);
  CHECK(f.in[0] && f.in[1] && f.in[2]);

  /* the reference: node by node on one thread */
  onnxc_session *s1 = session(&f, 1, false);
  onnxc_value *ref[2] = {NULL, NULL};
  CHECK(s1 && onnxc_session_run(s1, NULL, f.in, 3, NULL, ref, 2, &e) == ONNXC_OK);
  CHECK(ref[0] && ref[1]);
  if (ref[1]) /* G = rows 5 and 2 of X */
    CHECK(memcmp(onnxc_tensor_data_const(ref[1]), x + 5 * 65536, 65536 * sizeof *x) == 0);

  for (int threads = 1; threads <= 3; threads += 2) {
    onnxc_session *s = session(&f, threads, true);
    CHECK(s != NULL);
    for (int r = 0; s && r < 4; r++) CHECK(run_same(s, f.in, ref));
    onnxc_session_free(s);
  }

  /* several callers on one session */
  onnxc_session *sc = session(&f, 3, true);
  CHECK(sc != NULL);
  if (sc) {
    caller c[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
      c[i] = (caller){sc, f.in, ref, 0};
      CHECK(pthread_create(&th[i], NULL, call, &c[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
      pthread_join(th[i], NULL);
      CHECK(c[i].bad == 0);
    }
  }

  /* a failing node beside others: its error, then a good run again */
  if (sc) {
    onnxc_value *bad_in[3] = {f.in[0], onnxc_tensor_wrap(7 /* int64 */, di, 1, bad_idx, &e), f.in[2]};
    onnxc_value *out[2] = {NULL, NULL};
    onnxc_error be = {0};
    CHECK(onnxc_session_run(sc, NULL, bad_in, 3, NULL, out, 2, &be) != ONNXC_OK);
    CHECK(strstr(be.msg, "Gather") != NULL);
    CHECK(out[0] == NULL && out[1] == NULL);
    if (!strstr(be.msg, "Gather")) fprintf(stderr, "error was: %s\n", be.msg);
    onnxc_value_free(bad_in[1]);
    CHECK(run_same(sc, f.in, ref));
  }
  onnxc_session_free(sc);
  onnxc_session_free(s1);
  onnxc_value_free(ref[0]);
  onnxc_value_free(ref[1]);
  for (int i = 0; i < 3; i++) onnxc_value_free(f.in[i]);
  onnxc_model_free(f.m);
  free(x);
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
