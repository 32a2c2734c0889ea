/* infer.h - type and shape inference.
 *
 * Fills value_info for every value of a model (graph outputs and subgraphs
 * included). Dims are kept symbolic where they are not known: a dim_param
 * flows through, an unknown dim gets a fresh name ("unk__N"), and simple
 * arithmetic on symbols is kept as an expression ("N*3", "(H-1)/2+1").
 * Shape-carrying values (Shape, Size, Gather, Slice, Concat, ...) are
 * propagated as vectors of dims so that Reshape, Expand, Tile, Pad, Slice,
 * Resize and friends get concrete output shapes. */
#ifndef OX_INFER_H
#define OX_INFER_H

#include "../ir/ir.h"

typedef struct ox_infer_binding {
  const char *name;   /* graph input */
  const int64_t *dims;
  size_t rank;
} ox_infer_binding;

typedef struct ox_infer_opts {
  bool strict;                      /* conflicts and failures are errors */
  const ox_infer_binding *bindings; /* bind symbolic input dims first */
  size_t n_bindings;
  /* Operators a caller added (the public op registry). Called for a node of
   * a domain without schemas: returns 0 when (domain, op, opset) is not one
   * of them; 1 when it is, with out[i] set to the types it knows (NULL
   * otherwise); -1 when the node is wrong for it, with a reason in why. */
  int (*custom)(const void *user, const ox_node *n, const char *domain, int64_t opset,
                const ox_type *const *in, size_t n_in, ox_type **out, size_t n_out,
                ox_arena *a, char *why, size_t why_size);
  const void *custom_user;
} ox_infer_opts;

/* Infers in place. Warnings (non-strict conflicts, ops it cannot infer) go to
 * `warnings` (may be NULL), one per line, each naming the node. */
int ox_infer_model(ox_model *m, const ox_infer_opts *o, ox_buf *warnings, ox_err *e);

#endif
