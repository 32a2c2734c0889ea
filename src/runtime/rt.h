/* rt.h - internal structures shared by session.c (preparation), executor.c
 * (running) and function.c (inlining). Not used outside src/runtime. */
#ifndef OX_RT_H
#define OX_RT_H

#include "session.h"

typedef struct rt_graph rt_graph;

typedef struct rt_slot {
  const char *name;
  ox_value *cst;  /* constant (initializer): a reference owned by the session */
  int32_t import; /* slot of the parent graph (outer-scope name), or -1 */
  int32_t dtype;  /* element type if known from the model, else 0 */
  const ox_type *type;
  int64_t producer; /* index of the producing node, -1 for inputs/constants/imports */
  int64_t last_use; /* index of the last node reading it; -1 none; INT64_MAX: graph output */
  bool is_input;    /* a graph input (an initializer of it is only a default) */
} rt_slot;

typedef struct rt_node {
  const ox_node *node;
  const char *path; /* "node 'conv1' (Conv)", nested: "node 'loop' (Loop) / node 'add' (Add)" */
  const ox_kernel_def *k;
  void *state;
  bool prepared;
  bool folded; /* a Constant evaluated at preparation: skipped at run time */
  ox_kinfo info;
  int32_t *in, *out; /* slots; -1 for a missing optional */
  bool *wanted;
  int32_t *rel; /* slots released after this node */
  size_t n_rel;
  rt_graph **subs; /* prepared subgraphs of graph attributes */
  const ox_graph **sub_src;
  size_t n_subs;
  ox_value **tmp_in, **tmp_out; /* scratch for one execution */
  uint64_t prof_ns, prof_runs;  /* with opts.profile */
} rt_node;

struct rt_graph {
  const ox_graph *g;
  rt_graph *parent;
  rt_node *owner; /* the node of the parent graph this is an attribute of */
  const char *path;
  ox_map names; /* name -> slot index + 1 */
  rt_slot *slots;
  size_t n_slots;
  rt_node *nodes;
  size_t n_nodes;
  int64_t cur_node; /* while preparing: the node being prepared */
  int32_t *in, *out;
  size_t n_in, n_out;
  const int64_t *node_opsets; /* per node, from function inlining; NULL: model imports */
  ox_value **frame;           /* cached frame (n_slots) */
  bool busy;
};

typedef struct rt_opset_note {
  const ox_graph *g;
  int64_t *opsets;
} rt_opset_note;

struct ox_session {
  ox_arena *arena;
  const ox_model *model;
  ox_session_opts opts;
  ox_thread_pool *pool;
  const ox_graph *graph; /* the main graph after function expansion */
  rt_graph *main;
  rt_graph **graphs; /* every prepared graph, for freeing */
  size_t n_graphs, cap_graphs;
  rt_opset_note *notes; /* per-node opsets of graphs built by inlining */
  size_t n_notes;
  ox_value **vpool; /* released tensors kept for reuse */
  size_t n_vpool;
  uint64_t prof_runs; /* with opts.profile: calls of ox_session_run */
  /* Graph inputs of the main graph that have an initializer (IR < 4 lists
   * every initializer as an input) are taken as constants while no caller
   * overrides them: folded, and seen as constant weights. A run that does
   * override one uses `plain`, a session prepared without that assumption
   * (made on first need). */
  bool defaults_const;
  struct ox_session *plain;
};

struct ox_kctx {
  ox_session *s;
  rt_graph *g;
  rt_node *n;
  ox_value **vals;
  ox_err *e;
};

/* executor.c */
int ox_rt_run_graph(ox_session *s, rt_graph *g, ox_value **parent_vals, ox_value *const *inputs,
                    size_t n_in, ox_value **outputs, size_t n_out, ox_err *e);
void ox_rt_release(ox_session *s, ox_value *v);
void ox_rt_pool_clear(ox_session *s);

/* function.c: expands model-local functions (and schema function ops with
 * no kernel) into a new main graph. *out is g itself when nothing expands. */
int ox_rt_expand_functions(ox_session *s, const ox_graph *g, const ox_graph **out, ox_err *e);

/* gradient.c: replaces the Gradient nodes (ai.onnx.preview.training) of g by
 * backward graphs. *out is g itself when there are none. */
int ox_rt_expand_gradients(ox_session *s, const ox_graph *g, const ox_graph **out, ox_err *e);

/* fuse.c: with optimization_level >= 1, folds BatchNormalization and
 * per-channel Mul/Add into Conv weights and replaces chains of float32
 * elementwise nodes by ai.onnxc ElementwiseChain nodes, in a new graph.
 * *out is g itself when nothing changes. */
int ox_rt_fuse(ox_session *s, const ox_graph *g, const ox_graph **out, ox_err *e);

#endif
