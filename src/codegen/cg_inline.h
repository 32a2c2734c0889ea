/* cg_inline.h - model-local functions (ModelProto.functions) for onnxc
 * compile: the calls inlined before code generation (cg_inline.c). */
#ifndef OX_CG_INLINE_H
#define OX_CG_INLINE_H

#include "../ir/ir.h"

typedef struct cg_inlined {
  ox_model *m; /* the model to compile: the caller's, or the copy below */
  ox_model copy;
  ox_model_proto proto;
  ox_arena *a;
  ox_map origin; /* output name of an inlined node -> "'call' (domain:Op)" */
  bool any;
} cg_inlined;

/* fi->m: m itself when it has no functions, else a shallow copy whose graph
 * has every call of a local function replaced by the function's nodes (the
 * runtime's inlining, src/runtime/function.c) and no functions left. */
int ox_cg_inline(ox_model *m, cg_inlined *fi, ox_err *e);
/* After node n of the compiled graph failed: when it comes from a call of a
 * local function, e's message is prefixed with that calling node. */
void ox_cg_inline_blame(const cg_inlined *fi, const ox_node *n, ox_err *e);
void ox_cg_inline_free(cg_inlined *fi);

#endif
