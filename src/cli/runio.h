/* runio.h - values for `run`, `test` and `bench` beside the library's files
 * (onnxc_value_read_file / onnxc_value_write_file): the printed summary of
 * an output and the made-up inputs of models that come without data. */
#ifndef OX_CLI_RUNIO_H
#define OX_CLI_RUNIO_H

#include <onnxc.h>
#include <stdio.h>

/* onnxc_value_read_file returning the value, or NULL with e filled. */
onnxc_value *ox_cli_read_value(const char *path, const onnxc_type *declared, onnxc_error *e);
/* Prints a one-line summary: "name: tensor(float)[2,3] = [1, 2, 3, ...]". */
void ox_cli_print_value(FILE *f, const char *name, const onnxc_value *v);
/* The input of the `light` models: arange(n)/n in float32 in the shape of
 * the declared input (unknown dims = 1). */
onnxc_value *ox_cli_light_input(const onnxc_type *declared, onnxc_error *e);
/* A float32 tensor of the given dims counting up from 0 towards 1. */
onnxc_value *ox_cli_ramp(const int64_t *dims, size_t rank, onnxc_error *e);

#endif
