/* perceptron.c - an outside program built against an installed onnxc by
 * tests/install/install_tree.sh: only <onnxc.h>, with pkg-config or
 * find_package. Runs the model given as argv[1] (examples/perceptron.onnxtxt)
 * on the rows of examples/perceptron_input.npy, written here as numbers so
 * the program needs nothing else, and prints the library's version and every
 * output value. */
#include <onnxc.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s perceptron.onnxtxt\n", argv[0]);
    return 2;
  }
  onnxc_error err = {0};
  onnxc_model *model = NULL;
  onnxc_session *session = NULL;
  onnxc_value *output = NULL;
  float x[6] = {1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 4.0f};
  const int64_t dims[2] = {2, 3};
  onnxc_value *input = onnxc_tensor_wrap(1 /* FLOAT */, dims, 2, x, &err);
  int rc = 1;
  if (!input || onnxc_model_load(argv[1], NULL, &model, &err) != ONNXC_OK ||
      onnxc_session_create(model, NULL, &session, &err) != ONNXC_OK)
    goto done;
  const char *in_name = onnxc_session_input_name(session, 0);
  if (onnxc_session_run(session, &in_name, &input, 1, NULL, &output, 1, &err) != ONNXC_OK)
    goto done;
  if (onnxc_tensor_dtype(output) != 1 || onnxc_tensor_rank(output) != 2) {
    fprintf(stderr, "unexpected output type\n");
    goto done;
  }
  printf("onnxc %s\n", onnxc_version());
  const int64_t *odims = onnxc_tensor_dims(output);
  const float *y = onnxc_tensor_data(output);
  printf("%s [%lld,%lld]", onnxc_session_output_name(session, 0), (long long)odims[0],
         (long long)odims[1]);
  for (int64_t i = 0; i < odims[0] * odims[1]; i++) printf(" %.6f", (double)y[i]);
  printf("\n");
  rc = 0;
done:
  if (rc) fprintf(stderr, "error: %s\n", err.msg);
  onnxc_value_free(output);
  onnxc_value_free(input);
  onnxc_session_free(session);
  onnxc_model_free(model);
  return rc;
}
