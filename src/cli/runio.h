/* runio.h - reading and writing values for `run`, `test` and `bench`:
 * .pb files (TensorProto, SequenceProto, MapProto, OptionalProto chosen by
 * the declared type), .npy files, and output summaries. */
#ifndef OX_CLI_RUNIO_H
#define OX_CLI_RUNIO_H

#include <stdio.h>

#include "../runtime/session.h"

/* Reads a value from path. The declared type (may be NULL: tensor) picks
 * the message; a .npy extension reads a NumPy array. *name receives the
 * TensorProto name if any (malloc'd, may be NULL; pass NULL to ignore). */
ox_value *ox_cli_read_value(const char *path, const ox_type *declared, char **name, ox_err *e);
/* Writes a value as the protobuf message of its kind. */
int ox_cli_write_value(const char *path, const ox_value *v, const char *name, ox_err *e);
/* Prints a one-line summary: "name: tensor(float)[2,3] = [1, 2, 3, ...]". */
void ox_cli_print_value(FILE *f, const char *name, const ox_value *v);
/* The input of the `light` models: arange(n)/n in float32 in the shape of
 * the declared input (unknown dims = 1). */
ox_value *ox_cli_light_input(const ox_type *declared, ox_err *e);
/* A float32 tensor of the given dims counting up from 0 towards 1. */
ox_value *ox_cli_ramp(const int64_t *dims, size_t rank, ox_err *e);

#endif
