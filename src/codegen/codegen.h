/* codegen.h - `onnxc compile`: a model with static shapes as dependency-free
 * C99 source (one .c file, its header and optionally a main() file).
 *
 * The generated code needs only <stdint.h>, <stddef.h>, <string.h> and
 * <math.h>; it allocates nothing: intermediates live in one static arena
 * whose offsets come from a lifetime plan made here, weights are static
 * const arrays written exactly (hex floats). See docs/compile.md. */
#ifndef OX_CODEGEN_H
#define OX_CODEGEN_H

#include "../infer/infer.h"

typedef struct ox_cg_opts {
  const char *prefix;               /* C identifier prefix of the public names ("model" if NULL) */
  const char *header_name;          /* the name the .c file includes ("<prefix>.h" if NULL) */
  const char *source_name;          /* the model's file name, for comments (may be NULL) */
  const ox_infer_binding *bindings; /* dims for symbolic graph inputs */
  size_t n_bindings;
  bool with_main; /* also write the main() file */
} ox_cg_opts;

typedef struct ox_cg_result {
  ox_buf source, header, main_source; /* NUL-terminated texts */
  size_t arena_bytes;                 /* static arena of the intermediates */
  size_t const_bytes;                 /* bytes of the constant arrays */
  size_t n_functions;                 /* node functions written */
} ox_cg_result;

/* Infers shapes (with the bindings) in place and writes the C texts. An
 * operator, data type or shape the generator cannot compile is an error
 * that names the node (or graph input) and the reason. On failure the
 * result's buffers are freed. */
int ox_codegen_model(ox_model *m, const ox_cg_opts *o, ox_cg_result *r, ox_err *e);
void ox_codegen_result_free(ox_cg_result *r);
/* The operators (default domain) the generator compiles; NULL past the end. */
const char *ox_codegen_op_name(size_t i);

#endif
