/* cli.h - the onnxc tool: one function per subcommand (src/cli/cmd_<name>.c).
 * The tool is a client of the public API (include/onnxc.h) like src/serve
 * and python/: what it needs and the API lacks is added to the API. */
#ifndef OX_CLI_H
#define OX_CLI_H

#include <onnxc.h>
#include <stdbool.h>
#include <stddef.h>

/* Each returns the process exit status. argv[0] is the subcommand name. */
int ox_cmd_info(int argc, char **argv);
int ox_cmd_convert(int argc, char **argv);
int ox_cmd_print(int argc, char **argv);
int ox_cmd_check(int argc, char **argv);
int ox_cmd_schema(int argc, char **argv);
int ox_cmd_infer(int argc, char **argv);
int ox_cmd_run(int argc, char **argv);
int ox_cmd_test(int argc, char **argv);
int ox_cmd_bench(int argc, char **argv);
int ox_cmd_train(int argc, char **argv);
int ox_cmd_dot(int argc, char **argv);
int ox_cmd_serve(int argc, char **argv); /* cmd_serve.c; the server is src/serve/ */

/* Loads a model from a binary or text file (by extension or content) with
 * external data resolved. Prints "onnxc: <message>" and returns NULL on error. */
onnxc_model *ox_cli_load_model(const char *path);
/* "float[1,3,N,?]", "seq(int64[...])", "?" for NULL (typestr.c); returns buf. */
const char *ox_cli_type_str(const onnxc_type *t, char *buf, size_t size);
/* Writes size bytes to path ("-": standard output); on failure fills e with
 * "path: reason" (files.c). */
onnxc_status ox_cli_write_file(const char *path, const void *data, size_t size, onnxc_error *e);
/* true when argv[i] is -h or --help */
bool ox_cli_is_help(const char *arg);
/* A byte count: digits with an optional K, M, G or T (powers of 1024).
 * false when malformed or out of range. */
bool ox_cli_parse_size(const char *arg, size_t *out);

#endif
