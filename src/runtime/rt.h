/* rt.h - internal structures shared by session.c (preparation), executor.c
 * (running) and function.c (inlining). Not used outside src/runtime. */
#ifndef OX_RT_H
#define OX_RT_H

#include <pthread.h>

#include "session.h"

typedef struct rt_graph rt_graph;

typedef struct rt_slot {
  const char *name;
  ox_value *cst; /* constant (initializer): a reference owned by the session */
  /* a large initializer not made into cst yet: made at its first reader's
   * preparation, so that creation never holds copies of weights that are
   * not needed yet beside the packed forms made so far */
  const ox_tensor *pending;
  int32_t import; /* slot of the parent graph (outer-scope name), or -1 */
  int32_t dtype;  /* element type if known from the model, else 0 */
  const ox_type *type;
  int64_t producer; /* index of the producing node, -1 for inputs/constants/imports */
  int64_t last_use; /* index of the last node reading it; -1 none; INT64_MAX: graph output */
  bool is_input;    /* a graph input (an initializer of it is only a default) */
  /* the Concat (index in rt_graph.cats, -1 none) whose output may hold this
   * value in place, and the input position it has there (concat_place.c) */
  int32_t cat, cat_pos;
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
  uint64_t prof_ns, prof_runs; /* with opts.profile; atomic adds (runs may be concurrent) */
  uint64_t prof_min_ns;         /* the fastest call (0: none): on a loaded machine, the
                                 * node's own cost better than the mean */
  int32_t cat1; /* a Concat planned in place: its index in rt_graph.cats + 1; 0 otherwise */
  /* with opts.profile, a Concat's inputs and those found written in place */
  uint64_t prof_cat_in, prof_cat_placed;
} rt_node;

/* A Concat whose inputs' producers may write straight into its output
 * (concat_place.c). */
typedef struct rt_cat {
  size_t node;  /* the Concat's node index */
  int32_t out;  /* its output slot */
  int64_t axis; /* as written (may be negative) */
  size_t n_in;
} rt_cat;

/* What a run learned of a planned Concat the last time it ran: the output's
 * type and shape and where each placeable input lay in it. */
typedef struct rt_cat_lay {
  bool known;
  int32_t dtype;
  size_t rank;
  int64_t dims[8];
  size_t *off;      /* per input: byte offset in the output; SIZE_MAX: not placed */
  size_t *in_rank;  /* per input */
  int64_t *in_dims; /* per input, 8 entries */
} rt_cat_lay;

struct rt_graph {
  const ox_graph *g;
  rt_graph *parent;
  /* per slot, the nodes still to consume a constant at prepare (-1: kept);
   * NULL when the graph keeps every constant (session.c) */
  int32_t *cst_readers;
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
  size_t id;                  /* index in the session's graphs (a run's frame for it) */
  size_t max_in, max_out;     /* largest node arity: the scratch a frame carries */
  rt_cat *cats;               /* Concats planned in place (arena) */
  size_t n_cats;
  /* With opts.parallel_branches (main graph only, branches.c): the nodes by
   * dependency level, lv_node[lv_start[L] .. lv_start[L + 1]) being level L
   * in graph order, and the slots released once level L is done
   * (lv_rel[lv_rel_start[L] ..)); NULL levels: run node by node. */
  uint32_t *levels, *lv_start, *lv_node, *lv_rel_start;
  int32_t *lv_rel;
  size_t n_levels, max_width;
  /* per level of several nodes, the time it took node by node and side by
   * side (ns, running means; 0: not seen yet), and the runs so far: each
   * level runs the way that was faster (atomics: runs may be concurrent) */
  uint64_t *lv_ns;
  uint64_t lv_runs;
};

/* The state of one call of ox_session_run: everything a run writes. The
 * session itself (graphs, slots, kernel states, constants) is read-only
 * while runs are in flight, so any number of threads may run one session;
 * each takes a run from the session's free list (or makes one) and gives it
 * back, so a steady-state caller allocates nothing. */
typedef struct rt_frame {
  ox_value **vals;  /* n_slots, then max_in + max_out scratch for node calls */
  bool busy;        /* in use (a subgraph re-entered gets a fresh frame) */
  rt_cat_lay *lays; /* per planned Concat (rt_graph.cats), made when one first runs */
  size_t n_lays;
} rt_frame;

typedef struct rt_run {
  ox_session *s;
  ox_thread_pool *pool; /* kernels' pool for this run (NULL: one thread) */
  const ox_run_opts *ro;
  ox_value **vpool; /* released tensors kept for reuse by this run */
  size_t n_vpool;
  rt_frame *frames;  /* per graph id */
  ox_value **placed; /* per main-graph output: ox_run_opts.out_bufs in graph order, or NULL */
  size_t n_frames;
  struct rt_run *next; /* session free list */
  /* while nodes of one level run side by side (branches.c): the lock of
   * the buffer pool, frames and Concat buffers, and each node's call
   * scratch */
  bool concurrent, mu_ready;
  pthread_mutex_t mu;
  ox_value **par_scratch;
  size_t n_par_scratch;
} rt_run;

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
  pthread_mutex_t mu;         /* guards free_runs, plain and the run pools below */
  rt_run *free_runs;          /* finished runs, kept with their frames and buffers */
  ox_thread_pool **run_pools; /* pools for runs asking for a thread count, by count */
  size_t n_run_pools;
  ox_env *env;        /* a shared pool's owner, when the session uses one */
  uint64_t prof_runs; /* with opts.profile: calls of ox_session_run (atomic adds) */
  /* Graph inputs of the main graph that have an initializer (IR < 4 lists
   * every initializer as an input) are taken as constants while no caller
   * overrides them: folded, and seen as constant weights. A run that does
   * override one uses `plain`, a session prepared without that assumption
   * (made on first need). */
  bool defaults_const;
  /* the model's graph inputs (after function inlining), the first of the
   * optimised graph's: the inputs listed to callers. Those a pass added
   * after them (kv_cache.c's optional cache buffers) are not listed, and a
   * run may feed them by name or leave them out. */
  size_t n_model_inputs;
  /* the table's constant_folding pass is on (src/opt/passes.c): nodes whose
   * inputs are all constants run once at prepare */
  bool fold_constants;
  struct ox_session *plain;
  /* state nodes share over one constant (ox_kinfo_share), by its id */
  struct rt_shared {
    int64_t id;
    const char *kind;
    void *obj;
    void (*release)(void *);
  } * shared;
  size_t n_shared, cap_shared;
};

struct ox_kctx {
  ox_session *s;
  rt_run *run; /* NULL while folding at preparation */
  rt_graph *g;
  rt_node *n;
  ox_value **vals;
  ox_value **in, **out; /* the node's inputs and outputs being made */
  ox_err *e;
  bool kept_frame; /* vals is the run's kept frame for g (its Concat layouts apply) */
  bool serial;     /* run without the pool: other nodes are running beside this one */
};

/* executor.c */
int ox_rt_run_graph(rt_run *r, rt_graph *g, ox_value **parent_vals, ox_value *const *inputs,
                    size_t n_in, ox_value **outputs, size_t n_out, ox_err *e);
/* Runs the node c->n (inputs from c->vals, outputs into them); executor.c. */
int ox_rt_run_node(ox_kctx *c);
/* branches.c: plans g's levels (opts.parallel_branches) and runs a graph
 * level by level, the nodes of a level side by side. */
int ox_rt_plan_levels(ox_session *s, rt_graph *g, ox_err *e);
int ox_rt_run_levels(rt_run *r, rt_graph *g, ox_kctx *ctx);
/* Releases a value after its last use: into the run's buffer pool (r may be
 * NULL: just unreferenced). */
void ox_rt_release(rt_run *r, ox_value *v);
/* A tensor of the run's pool with exactly that shape's bytes, else a new
 * one (uninitialised); NULL with *e set on failure. */
ox_value *ox_rt_tensor_take(rt_run *r, int32_t dtype, const int64_t *dims, size_t rank, ox_err *e);
/* Frees a finished run (its frames and pooled buffers). */
void ox_rt_run_free(rt_run *r);
/* true when the caller's cancel callback or terminate flag says stop. */
bool ox_rt_cancelled(const rt_run *r);

/* concat_place.c: Concat in place. A producer whose output feeds a Concat
 * writes it straight into that Concat's output (made ahead, when the run
 * last saw the same shapes, and the outer dimensions before the axis are 1),
 * so the Concat copies nothing. */
/* Plans the graph's Concats (optimization_level >= 1); after releases. */
int ox_rt_plan_concats(ox_session *s, rt_graph *g, ox_err *e);
/* Output storage for slot k of the node being run: a buffer made ahead for
 * it, or a view into the planned Concat's output; NULL: allocate as usual. */
ox_value *ox_rt_cat_take(ox_kctx *c, int32_t k, int32_t dtype, const int64_t *dims, size_t rank);
/* The caller's tensor for slot k of the main graph when k is a graph output
 * the run was given a buffer for (ox_run_opts.out_bufs) of this element type
 * and shape (a new reference), else NULL (executor.c); NULL too when that
 * tensor lies over an input of the node or of the graph, unless may_alias
 * (the node's kernel writes that output in place of its input). */
ox_value *ox_rt_out_take(ox_kctx *c, int32_t k, int32_t dtype, const int64_t *dims, size_t rank,
                         bool may_alias);
/* After planned Concat ci ran in the run's kept frame: records its layout. */
void ox_rt_cat_learn(rt_run *r, rt_graph *g, size_t ci, ox_value **vals);
/* Frees a frame's layouts. */
void ox_rt_cat_lays_free(rt_cat_lay *lays, size_t n);

/* function.c: expands model-local functions (and schema function ops with
 * no kernel) into a new main graph. *out is g itself when nothing expands. */
int ox_rt_expand_functions(ox_session *s, const ox_graph *g, const ox_graph **out, ox_err *e);
/* The same outside a session (onnxc compile, src/codegen/cg_inline.c): the
 * new graph in arena a, every node under the opset of the model's import of
 * its domain (the caller checks the functions' imports agree); origin
 * (optional) maps each output of an inlined node to "'name' (domain:Op)" of
 * the top-level call it comes from. */
int ox_rt_inline_functions(ox_arena *a, const ox_model_proto *mp, const ox_graph *g,
                           ox_map *origin, const ox_graph **out, ox_err *e);

/* gradient.c: replaces the Gradient nodes (ai.onnx.preview.training) of g by
 * backward graphs. *out is g itself when there are none. */
int ox_rt_expand_gradients(ox_session *s, const ox_graph *g, const ox_graph **out, ox_err *e);

#endif
