/* custom_op.c - adding an operator of your own to onnxc.
 *
 * Registers `com.example.Swish(x) = x * sigmoid(beta * x)` (attribute beta,
 * default 1) with a kernel and an inference callback, checks a model that
 * uses it (the checker and shape inference accept the op and type its
 * output), runs it on a few values and prints the outputs.
 *
 *   custom_op [X0 X1 ...]        (default: -2 -0.5 0 0.5 2)
 *
 * Build: cc custom_op.c $(pkg-config --cflags --libs onnxc) -lm */
#include <math.h>
#include <onnxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The model: y = Relu(Swish(x, beta = 1.5)) + 1 */
static const char *model_text =
    "<ir_version: 8, opset_import: [\"\" : 18, \"com.example\" : 1]>\n"
    "swish_demo (float[N] x) => (float[N] y) {\n"
    "  one = Constant <value = float {1.0}> ()\n"
    "  s = com.example.Swish <beta = 1.5> (x)\n"
    "  r = Relu(s)\n"
    "  y = Add(r, one)\n"
    "}\n";

typedef struct swish_state {
  float beta;
} swish_state;

/* Once per node when the session is made: read and check the attribute. */
static onnxc_status swish_prepare(void *user, const onnxc_kernel_info *info, void **state,
                                  onnxc_error *err) {
  (void)user;
  float beta = onnxc_kernel_attr_float(info, "beta", 1.0f);
  if (!isfinite(beta)) {
    snprintf(err->msg, sizeof err->msg, "beta must be finite");
    return ONNXC_ERR_INVALID_MODEL;
  }
  swish_state *st = malloc(sizeof *st);
  if (!st) return ONNXC_ERR_NOMEM;
  st->beta = beta;
  *state = st;
  return ONNXC_OK;
}

/* Every run (possibly from several threads at once: the state is only read). */
static onnxc_status swish_run(void *user, onnxc_kernel_context *ctx, void *state) {
  (void)user;
  const swish_state *st = state;
  const onnxc_value *x = onnxc_kernel_input(ctx, 0);
  if (onnxc_tensor_dtype(x) != 1) return onnxc_kernel_fail(ctx, "Swish takes float tensors");
  onnxc_value *y = onnxc_kernel_output(ctx, 0, 1, onnxc_tensor_dims(x), onnxc_tensor_rank(x));
  if (!y) return ONNXC_ERR_RUNTIME;
  const float *xv = onnxc_tensor_data_const(x);
  float *yv = onnxc_tensor_data(y);
  for (int64_t i = 0; i < onnxc_tensor_numel(x); i++)
    yv[i] = xv[i] / (1.0f + expf(-st->beta * xv[i]));
  return ONNXC_OK;
}

static void swish_release(void *user, void *state) {
  (void)user;
  free(state);
}

/* For the checker and shape inference: the output is the input's type. */
static onnxc_status swish_infer(void *user, onnxc_infer_context *ctx) {
  (void)user;
  const onnxc_type *t = onnxc_infer_input_type(ctx, 0);
  if (!t) return ONNXC_OK; /* unknown input: nothing to say */
  if (onnxc_type_elem_type(t) != 1) return onnxc_infer_fail(ctx, "Swish takes float tensors");
  int64_t rank = onnxc_type_rank(t), dims[16];
  if (rank > 16) rank = -1;
  for (int64_t i = 0; i < rank; i++) dims[i] = onnxc_type_dim(t, (size_t)i);
  return onnxc_infer_set_output(ctx, 0, 1, dims, rank);
}

int main(int argc, char **argv) {
  onnxc_error err = {0};
  onnxc_op_registry *ops = NULL;
  onnxc_model *model = NULL;
  onnxc_session *session = NULL;
  onnxc_value *in = NULL, *out = NULL;
  char *report = NULL;
  int status = 1;
  size_t n = argc > 1 ? (size_t)(argc - 1) : 5;
  float *x = malloc(n * sizeof *x);
  if (!x) return 1;
  for (size_t i = 0; i < n; i++) {
    static const float dflt[5] = {-2.0f, -0.5f, 0.0f, 0.5f, 2.0f};
    x[i] = argc > 1 ? strtof(argv[i + 1], NULL) : dflt[i];
  }

  onnxc_custom_op swish = {
      .domain = "com.example", .op_type = "Swish",
      .since_version_min = 1,  .since_version_max = 0, /* every opset of com.example */
      .min_inputs = 1,         .max_inputs = 1,
      .min_outputs = 1,        .max_outputs = 1,
      .prepare = swish_prepare, .run = swish_run,
      .release = swish_release, .infer = swish_infer,
  };
  if (onnxc_op_registry_create(&ops, &err) || onnxc_op_registry_add(ops, &swish, &err) ||
      onnxc_model_parse_text(model_text, strlen(model_text), "swish_demo", &model, &err))
    goto fail;

  /* the checker knows the op through the registry; `full` runs inference */
  onnxc_check_options check = {.full = 1, .custom_ops = ops};
  if (onnxc_check(model, &check, &report, &err) != ONNXC_OK) {
    fprintf(stderr, "check failed:\n%s", report ? report : err.msg);
    goto done;
  }
  printf("check: the model is valid\n");

  onnxc_session_options opts = {.threads = 1, .optimization_level = 1, .custom_ops = ops};
  if (onnxc_session_create(model, &opts, &session, &err)) goto fail;
  int64_t dims[1] = {(int64_t)n};
  in = onnxc_tensor_wrap(1, dims, 1, x, &err);
  if (!in || onnxc_session_run(session, NULL, &in, 1, NULL, &out, 1, &err)) goto fail;
  const float *y = onnxc_tensor_data_const(out);
  for (size_t i = 0; i < n; i++) printf("x = %g  y = %.7g\n", (double)x[i], (double)y[i]);
  status = 0;
  goto done;
fail:
  fprintf(stderr, "custom_op: %s\n", err.msg);
done:
  free(report);
  onnxc_value_free(out);
  onnxc_value_free(in);
  onnxc_session_free(session);
  onnxc_model_free(model);
  onnxc_op_registry_free(ops); /* after the sessions made with it */
  free(x);
  return status;
}
