/* custom_op.c - add an operator of your own domain and run a model that uses it.
 *
 *   custom_op
 *
 * Registers com.example.SoftThreshold (y = sign(x) * max(|x| - lambda, 0),
 * attribute `lambda` >= 0, float tensors of any shape) with a kernel, a
 * prepare step that reads and checks the attribute once per node, and a
 * type/shape inference callback; then checks, infers and runs a model that
 * computes the same function with the custom node and with the standard
 * Shrink operator (bias = lambd = lambda), and prints both: they must agree.
 * It also shows the errors a caller gets: a session made without the
 * registry, and a node whose attribute the prepare step refuses.
 *
 * An example of the public API: <onnxc.h> and the C library only. Build it
 * like run_model.c (pkg-config or find_package, see CMakeLists.txt here). */
#include <math.h>
#include <onnxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DT_FLOAT = 1, MAX_RANK = 16 };

/* ------------------------------------------------------------------ the operator */

/* What prepare computes once per node. Runs of one session may be
 * concurrent, so run only reads it. */
typedef struct soft_threshold {
  float lambda;
} soft_threshold;

static onnxc_status st_prepare(void *user, const onnxc_kernel_info *info, void **state,
                               onnxc_error *err) {
  (void)user;
  float lambda = onnxc_kernel_attr_float(info, "lambda", 0.0f);
  if (!(lambda >= 0.0f)) { /* NaN too */
    /* the runtime prefixes the node */
    snprintf(err->msg, sizeof err->msg, "lambda must be >= 0, not %g", (double)lambda);
    return ONNXC_ERR_INVALID_MODEL;
  }
  soft_threshold *st = malloc(sizeof *st);
  if (!st) return ONNXC_ERR_NOMEM;
  st->lambda = lambda;
  *state = st;
  return ONNXC_OK;
}

static onnxc_status st_run(void *user, onnxc_kernel_context *ctx, void *state) {
  (void)user;
  const soft_threshold *st = state;
  const onnxc_value *x = onnxc_kernel_input(ctx, 0);
  if (onnxc_tensor_dtype(x) != DT_FLOAT)
    return onnxc_kernel_fail(ctx, "SoftThreshold takes a float tensor");
  /* the runtime makes the output; NULL means it already set the run's error */
  onnxc_value *y =
      onnxc_kernel_output(ctx, 0, DT_FLOAT, onnxc_tensor_dims(x), onnxc_tensor_rank(x));
  if (!y) return ONNXC_ERR_RUNTIME;
  const float *xv = onnxc_tensor_data_const(x);
  float *yv = onnxc_tensor_data(y);
  for (int64_t i = 0; i < onnxc_tensor_numel(x); i++) {
    float a = fabsf(xv[i]) - st->lambda;
    yv[i] = a > 0.0f ? copysignf(a, xv[i]) : 0.0f;
  }
  return ONNXC_OK;
}

static void st_release(void *user, void *state) {
  (void)user;
  free(state);
}

/* The output has the input's type and shape: this lets the checker and
 * shape inference type what follows the node. */
static onnxc_status st_infer(void *user, onnxc_infer_context *ctx) {
  (void)user;
  const onnxc_type *t = onnxc_infer_input_type(ctx, 0);
  if (!t) return ONNXC_OK; /* input type unknown: so is the output's */
  if (onnxc_type_elem_type(t) != DT_FLOAT)
    return onnxc_infer_fail(ctx, "SoftThreshold takes a float tensor");
  int64_t rank = onnxc_type_rank(t), dims[MAX_RANK];
  if (rank > MAX_RANK) rank = -1;
  for (int64_t i = 0; i < rank; i++) dims[i] = onnxc_type_dim(t, (size_t)i);
  return onnxc_infer_set_output(ctx, 0, DT_FLOAT, dims, rank);
}

static onnxc_status add_soft_threshold(onnxc_op_registry *reg, onnxc_error *err) {
  onnxc_custom_op op = {
      .domain = "com.example",
      .op_type = "SoftThreshold",
      .since_version_min = 1,
      .since_version_max = 0, /* every version of com.example */
      .min_inputs = 1,
      .max_inputs = 1,
      .min_outputs = 1,
      .max_outputs = 1,
      .prepare = st_prepare,
      .run = st_run,
      .release = st_release,
      .infer = st_infer,
  };
  return onnxc_op_registry_add(reg, &op, err);
}

/* ------------------------------------------------------------------ the program */

static const char model_text[] =
    "<ir_version: 8, opset_import: [\"\" : 17, \"com.example\" : 1]>\n"
    "G (float[N] X) => (float[N] Y, float[N] Shrunk) {\n"
    "  Y = com.example.SoftThreshold <lambda = 0.5> (X)\n"
    "  Shrunk = Shrink <lambd = 0.5, bias = 0.5> (X)\n"
    "}\n";

static const char bad_model_text[] =
    "<ir_version: 8, opset_import: [\"com.example\" : 1]>\n"
    "G (float[N] X) => (float[N] Y) {\n"
    "  Y = com.example.SoftThreshold <lambda = -1.0> (X)\n"
    "}\n";

static void print_floats(const char *name, const onnxc_value *v) {
  const float *p = onnxc_tensor_data_const(v);
  printf("%s:", name);
  for (int64_t i = 0; p && i < onnxc_tensor_numel(v); i++) printf(" %g", (double)p[i]);
  printf("\n");
}

/* Checks (the registry makes the op known), infers shapes (its callback
 * types Y), runs on x and prints every output; 0 when both agree. */
static int check_and_run(onnxc_model *m, const onnxc_op_registry *reg) {
  onnxc_error err = {0};
  onnxc_check_options co = {.full = 1, .custom_ops = reg};
  char *report = NULL;
  if (onnxc_check(m, &co, &report, &err) != ONNXC_OK) {
    fprintf(stderr, "check: %s\n%s", err.msg, report ? report : "");
    free(report);
    return 1;
  }
  free(report);
  onnxc_infer_options io = {.strict = 1, .custom_ops = reg};
  if (onnxc_infer_shapes(m, &io, NULL, &err) != ONNXC_OK) {
    fprintf(stderr, "infer: %s\n", err.msg);
    return 1;
  }
  printf("check and inference: ok\n");

  onnxc_session_options so = {.custom_ops = reg};
  onnxc_session *s = NULL;
  if (onnxc_session_create(m, &so, &s, &err) != ONNXC_OK) {
    fprintf(stderr, "session: %s\n", err.msg);
    return 1;
  }
  float x[] = {-2.0f, -0.5f, -0.25f, 0.0f, 0.3f, 0.75f, 3.0f};
  int64_t n = (int64_t)(sizeof x / sizeof x[0]);
  onnxc_value *in = onnxc_tensor_wrap(DT_FLOAT, &n, 1, x, &err);
  size_t n_out = onnxc_session_output_count(s);
  onnxc_value **out = calloc(n_out ? n_out : 1, sizeof *out);
  int rc = 1;
  if (!in || !out) {
    fprintf(stderr, "out of memory\n");
  } else if (onnxc_session_run(s, NULL, &in, 1, NULL, out, n_out, &err) != ONNXC_OK) {
    fprintf(stderr, "run: %s\n", err.msg);
  } else {
    print_floats("X", in);
    for (size_t k = 0; k < n_out; k++) print_floats(onnxc_session_output_name(s, k), out[k]);
    if (n_out == 2 && onnxc_tensor_numel(out[0]) == n && onnxc_tensor_numel(out[1]) == n) {
      const float *a = onnxc_tensor_data_const(out[0]), *b = onnxc_tensor_data_const(out[1]);
      rc = memcmp(a, b, (size_t)n * sizeof *a) != 0;
      printf("SoftThreshold %s Shrink\n", rc ? "differs from" : "equals");
    }
  }
  for (size_t k = 0; out && k < n_out; k++) onnxc_value_free(out[k]);
  free(out);
  onnxc_value_free(in);
  onnxc_session_free(s);
  return rc;
}

int main(void) {
  onnxc_error err = {0};
  onnxc_op_registry *reg = NULL;
  onnxc_model *m = NULL, *bad = NULL;
  onnxc_session *s = NULL;
  int rc = 1;
  if (onnxc_op_registry_create(&reg, &err) != ONNXC_OK ||
      add_soft_threshold(reg, &err) != ONNXC_OK) {
    fprintf(stderr, "registry: %s\n", err.msg);
    goto done;
  }
  if (onnxc_model_parse_text(model_text, sizeof model_text - 1, "custom_op.c", &m, &err) !=
      ONNXC_OK) {
    fprintf(stderr, "model: %s\n", err.msg);
    goto done;
  }
  if (check_and_run(m, reg) != 0) goto done;

  /* the errors a caller sees */
  if (onnxc_session_create(m, NULL, &s, &err) == ONNXC_OK) {
    fprintf(stderr, "a session without the registry should fail\n");
    goto done;
  }
  printf("without the registry: %s\n", err.msg);
  if (onnxc_model_parse_text(bad_model_text, sizeof bad_model_text - 1, "bad", &bad, &err) !=
      ONNXC_OK) {
    fprintf(stderr, "model: %s\n", err.msg);
    goto done;
  }
  onnxc_session_options so = {.custom_ops = reg};
  if (onnxc_session_create(bad, &so, &s, &err) == ONNXC_OK) {
    fprintf(stderr, "lambda = -1 should be refused\n");
    goto done;
  }
  printf("lambda = -1: %s\n", err.msg);
  rc = 0;
done:
  onnxc_session_free(s);
  onnxc_model_free(bad);
  onnxc_model_free(m);
  onnxc_op_registry_free(reg); /* after every session made with it */
  return rc;
}
