/* test_api_passes.c - the graph-pass part of the public API: the table
 * (onnxc_pass_*), onnxc_session_options.disabled_passes and
 * onnxc_model_optimize, on a Conv + Relu and a MatMul + Add model.
 *
 * The optimised model imports ai.onnxc, holds the fused operators, saves
 * and loads again and runs to the outputs of the unoptimised model; with a
 * pass disabled its operator is absent; a session with the pass disabled
 * gives the outputs of optimization_level 0; an unknown name is
 * ONNXC_ERR_INVALID_ARG naming it. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

static const char *model_text =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "g (float[1,2,4,4] X, float[3,4] A) => (float[1,2,4,4] Y, float[3,2] Z)\n"
    "<float[2,2,3,3] W = {0.5,-0.25,0.125,1,-1,0.75,-0.5,0.25,0.375,"
    "-0.125,0.625,-0.75,0.875,-0.375,0.5,0.25,-0.625,1,"
    "0.25,0.5,-1,0.125,-0.25,0.75,-0.875,0.375,-0.5,"
    "1,-0.125,0.25,-0.375,0.625,-0.75,0.5,0.125,-0.25},"
    " float[2] B = {0.25, -0.5}, float[4,2] M = {1,-0.5,0.25,2,-1,0.75,0.5,-0.25},"
    " float[2] C = {0.125, -1}> {\n"
    "  c = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (X, W, B)\n"
    "  Y = Relu (c)\n  p = MatMul (A, M)\n  Z = Add (p, C) }\n";

static float xs[32], as[12];

/* Y and Z of model m under opts (NULL: optimization_level 1) into y, z;
 * the status of session creation */
static onnxc_status run(const onnxc_model *m, const onnxc_session_options *o, float *y,
                        float *z, onnxc_error *err) {
  onnxc_session *s = NULL;
  onnxc_status st = onnxc_session_create(m, o, &s, err);
  if (st) return st;
  const int64_t dx[4] = {1, 2, 4, 4}, da[2] = {3, 4};
  onnxc_value *in[2] = {NULL, NULL}, *out[2] = {NULL, NULL};
  in[0] = onnxc_tensor_wrap(1, dx, 4, xs, err); /* 1: float32 */
  in[1] = onnxc_tensor_wrap(1, da, 2, as, err);
  CHECK(in[0] && in[1]);
  const char *names[2] = {"X", "A"};
  st = onnxc_session_run(s, names, in, 2, NULL, out, 2, err);
  CHECK(st == ONNXC_OK);
  if (!st) {
    memcpy(y, onnxc_tensor_data(out[0]), 32 * sizeof *y);
    memcpy(z, onnxc_tensor_data(out[1]), 6 * sizeof *z);
  }
  for (int k = 0; k < 2; k++) {
    onnxc_value_free(in[k]);
    onnxc_value_free(out[k]);
  }
  onnxc_session_free(s);
  return st;
}

static bool close_to(const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (fabsf(a[i] - b[i]) > 1e-5f * (1 + fabsf(b[i]))) return false;
  return true;
}

/* the model as text (NUL-terminated, free()) */
static char *as_text(const onnxc_model *m) {
  onnxc_error err = {0};
  char *t = NULL;
  CHECK(onnxc_model_print(m, &t, &err) == ONNXC_OK);
  return t;
}

int main(void) {
  for (int i = 0; i < 32; i++) xs[i] = (float)((i * 37 % 23) - 11) / 8;
  for (int i = 0; i < 12; i++) as[i] = (float)((i * 13 % 7) - 3) / 4;
  onnxc_error err = {0};

  /* the table */
  size_t n = onnxc_pass_count();
  CHECK(n >= 18 && onnxc_pass_name(n) == NULL && onnxc_pass_description(n) == NULL);
  bool seen_epi = false, seen_fold = false;
  for (size_t i = 0; i < n; i++) {
    CHECK(onnxc_pass_name(i) && onnxc_pass_description(i) && onnxc_pass_level(i) >= 1);
    CHECK(onnxc_pass_default_on(i));
    seen_epi = seen_epi || strcmp(onnxc_pass_name(i), "conv_epilogue") == 0;
    seen_fold = seen_fold || strcmp(onnxc_pass_name(i), "constant_folding") == 0;
  }
  CHECK(seen_epi && seen_fold);

  onnxc_model *m = NULL;
  CHECK(onnxc_model_parse_text(model_text, strlen(model_text), "passes", &m, &err) == ONNXC_OK);
  if (!m) return 1;
  float y0[32], z0[6], y1[32], z1[6];
  onnxc_session_options plain = {.optimization_level = 0, .threads = 1};
  CHECK(run(m, &plain, y0, z0, &err) == ONNXC_OK);

  /* disabled_passes: each pass off gives the unoptimised outputs */
  const char *const offs[][2] = {{"conv_epilogue", NULL}, {"matmul_epi", "matmul_transb"},
                                 {"constant_folding", "cse"}};
  for (size_t k = 0; k < 3; k++) {
    onnxc_session_options o = {.optimization_level = 1, .threads = 1};
    o.disabled_passes = offs[k];
    o.n_disabled_passes = offs[k][1] ? 2 : 1;
    CHECK(run(m, &o, y1, z1, &err) == ONNXC_OK);
    CHECK(close_to(y1, y0, 32) && close_to(z1, z0, 6));
  }
  const char *bad[] = {"conv_epilogue", "no_such_pass"};
  onnxc_session_options ob = {.optimization_level = 1, .disabled_passes = bad,
                              .n_disabled_passes = 2};
  CHECK(run(m, &ob, y1, z1, &err) == ONNXC_ERR_INVALID_ARG && strstr(err.msg, "no_such_pass"));

  /* onnxc_model_optimize: fused operators, ai.onnxc imported, runs the same */
  onnxc_model *om = NULL;
  CHECK(onnxc_model_optimize(m, NULL, &om, &err) == ONNXC_OK);
  char *t = om ? as_text(om) : NULL;
  CHECK(t && strstr(t, "\"ai.onnxc\" : 1") && strstr(t, "ai.onnxc.FusedConv") &&
        strstr(t, "activation = \"Relu\"") && strstr(t, "ai.onnxc.MatMulFused"));
  free(t);
  if (om) {
    CHECK(run(om, NULL, y1, z1, &err) == ONNXC_OK);
    CHECK(close_to(y1, y0, 32) && close_to(z1, z0, 6));
    /* saves and loads again */
    const char *path = "test_api_passes.onnx";
    onnxc_model *back = NULL;
    CHECK(onnxc_model_save(om, path, NULL, &err) == ONNXC_OK);
    CHECK(onnxc_model_load(path, NULL, &back, &err) == ONNXC_OK);
    if (back) {
      CHECK(run(back, NULL, y1, z1, &err) == ONNXC_OK);
      CHECK(close_to(y1, y0, 32) && close_to(z1, z0, 6));
    }
    onnxc_model_free(back);
    remove(path);
  }
  onnxc_model_free(om);

  /* with conv_epilogue off, no FusedConv; the MatMul still fuses */
  const char *off_epi[] = {"conv_epilogue"};
  onnxc_optimize_options oo = {.disabled_passes = off_epi, .n_disabled_passes = 1};
  om = NULL;
  CHECK(onnxc_model_optimize(m, &oo, &om, &err) == ONNXC_OK);
  t = om ? as_text(om) : NULL;
  CHECK(t && !strstr(t, "FusedConv") && strstr(t, "ai.onnxc.MatMulFused"));
  free(t);
  onnxc_model_free(om);
  oo.disabled_passes = bad;
  oo.n_disabled_passes = 2;
  om = NULL;
  CHECK(onnxc_model_optimize(m, &oo, &om, &err) == ONNXC_ERR_INVALID_ARG && !om &&
        strstr(err.msg, "no_such_pass"));
  onnxc_model_free(m);
  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails ? 1 : 0;
}
