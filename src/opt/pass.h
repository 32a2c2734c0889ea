/* pass.h - what a graph pass of src/opt/ sees of the graph it rewrites.
 *
 * The host (the session's fusion step, src/runtime/fuse.c) keeps a working
 * copy of the main graph's nodes; a pass marks nodes dropped and puts a
 * replacement node in repl[i] (allocated in the arena), which takes node i's
 * place in the order. The host answers questions about names: constant
 * initializers and who reads a value. Passes use only the model layer. */
#ifndef OX_OPT_PASS_H
#define OX_OPT_PASS_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/base.h"
#include "../ir/ir.h"

typedef struct ox_pass_view ox_pass_view;
struct ox_pass_view {
  ox_arena *a;
  ox_err *e;
  ox_node *nodes; /* working copy; nodes[i] may be edited in place */
  size_t n_node;
  const int64_t *opsets; /* imported opset of each node's domain */
  bool *drop;
  ox_node **repl;
  /* The initializer the session takes as a constant, or NULL. */
  const ox_tensor *(*constant)(const ox_pass_view *v, const char *name);
  /* The only node reading `name` (index; not dropped), or -1 when several,
   * none, or the value is a graph output or read inside a subgraph. */
  int64_t (*sole_reader)(const ox_pass_view *v, const char *name);
  /* true for graph outputs and names read inside subgraphs */
  bool (*pinned)(const ox_pass_view *v, const char *name);
  void *host;
};

/* DequantizeLinear -> Conv -> [Relu] -> QuantizeLinear units with constant
 * 8-bit weights become ai.onnxc QLinearConvFused nodes (src/opt/qdq_conv.c). */
int ox_opt_qdq_conv(ox_pass_view *v);

/* Drops the nodes of op `op` (default domain) whose outputs no live node
 * reads and that are no graph outputs (src/opt/dead.c). */
void ox_opt_drop_unread(ox_pass_view *v, const char *op);

#endif
