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
  /* weights: constants of at least weights_min bytes go into a separate
   * blob (ox_cg_result.weights) the caller hands over at run time with
   * PREFIX_set_weights(); weights_min 0 keeps every weight inline */
  bool weights_blob;
  size_t weights_min;     /* 0: OX_CG_WEIGHTS_MIN_DEFAULT */
  const char *blob_name;  /* the blob's file name --main loads by default */
  bool caller_arena;      /* no static arena and no PREFIX_run(): the caller's memory only */
  int target;             /* ox_cg_target */
  bool float_only;        /* no double arithmetic in the generated code (float_only.c) */
} ox_cg_opts;

#define OX_CG_WEIGHTS_MIN_DEFAULT 1024

/* What the generated code is tuned for (docs/compile.md, "Targets"). */
typedef enum ox_cg_target {
  OX_CG_PORTABLE = 0, /* plain C99 */
  OX_CG_AVX2,         /* x86-64 with AVX2 and FMA: target pragmas, vectorised loops */
  OX_CG_AVX512,       /* x86-64 with AVX-512F */
  OX_CG_CORTEXM       /* single-precision only: float64 values are declined */
} ox_cg_target;

/* The weights blob's layout (all fields little-endian; docs/compile.md). */
#define OX_CG_BLOB_HEADER 64 /* tensors start after the header, each 64-byte aligned */
#define OX_CG_BLOB_VERSION 1

typedef struct ox_cg_result {
  ox_buf source, header, main_source; /* NUL-terminated texts */
  ox_buf weights;                     /* the blob (weights_blob only; binary) */
  size_t arena_bytes;                 /* arena of the intermediates */
  size_t arena_bytes_no_inplace;      /* what it would be without in-place nodes */
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
