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
int ox_cmd_generate(int argc, char **argv);
int ox_cmd_train(int argc, char **argv);
int ox_cmd_dot(int argc, char **argv);
int ox_cmd_compile(int argc, char **argv);
int ox_cmd_batch(int argc, char **argv);
/* main()'s dispatch on argv[1] (argv[0] is the program), for `onnxc batch`'s children */
int ox_cli_dispatch(int argc, char **argv);
int ox_cmd_serve(int argc, char **argv); /* src/serve/cmd_serve.c: the server's layer is later */

/* Loads a model from a binary or text file (by extension or content) with
 * external data resolved. Prints "onnxc: <message>" and returns NULL on error. */
onnxc_model *ox_cli_load_model(const char *path);
/* "float[1,3,N,?]", "seq(int64[...])", "?" for NULL (typestr.c); returns buf. */
const char *ox_cli_type_str(const onnxc_type *t, char *buf, size_t size);
/* Writes size bytes to path ("-": standard output); on failure fills e with
 * "path: reason" (files.c). */
onnxc_status ox_cli_write_file(const char *path, const void *data, size_t size, onnxc_error *e);
/* "x=1,3,224,224" (arg cut at its '=' when it parses) into the name, its dims (malloc'd: the
 * caller frees them) and their count (binding.c); false when malformed or
 * out of memory. */
bool ox_cli_parse_binding(char *arg, const char **name, int64_t **dims, size_t *rank);
/* true when argv[i] is -h or --help */
bool ox_cli_is_help(const char *arg);
/* A byte count: digits with an optional K, M, G or T (powers of 1024).
 * false when malformed or out of range. */
bool ox_cli_parse_size(const char *arg, size_t *out);

/* A growable text buffer (text.c): appends never fail loudly, they set
 * `failed`, which the caller checks once before writing the text out. */
typedef struct ox_cli_text {
  char *data; /* NUL-terminated while not failed */
  size_t size, cap;
  bool failed;
} ox_cli_text;
void ox_cli_text_put(ox_cli_text *t, const char *s, size_t n);
void ox_cli_text_puts(ox_cli_text *t, const char *s);
void ox_cli_text_putc(ox_cli_text *t, char c);
void ox_cli_text_printf(ox_cli_text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void ox_cli_text_free(ox_cli_text *t);

/* `onnxc test --sweep`: a malloc'd key under which two conversions of one
 * case are the same program for the runtime (sweep_key.c); NULL when the
 * model cannot be keyed (then it is run). */
char *ox_cli_sweep_key(const onnxc_model *m);

/* A map from names to numbers (names.c); keys are borrowed, a put of a key
 * already there replaces its number. put is false when out of memory. */
typedef struct ox_cli_names {
  const char **keys;
  size_t *vals;
  size_t cap, n;
} ox_cli_names;
bool ox_cli_names_put(ox_cli_names *m, const char *key, size_t val);
bool ox_cli_names_get(const ox_cli_names *m, const char *key, size_t *val);
void ox_cli_names_free(ox_cli_names *m);

#endif
