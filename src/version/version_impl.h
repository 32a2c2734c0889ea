/* version_impl.h - shared between the conversion driver (convert.c) and the
 * op-specific adapters (adapters.c). */
#ifndef OX_VERSION_IMPL_H
#define OX_VERSION_IMPL_H

#include "../schema/schema.h"
#include "version.h"

/* The graphs enclosing the one being converted, innermost first, for
 * finding constants (initializers and Constant nodes) by name. */
typedef struct ox_vscope {
  const ox_graph *g;
  const struct ox_vscope *up;
} ox_vscope;

typedef struct ox_vctx {
  ox_model *m;
  ox_arena *a; /* the model's arena */
  ox_err *e;
  int64_t from, to; /* the step being made */
  ox_map types;     /* value name -> const ox_type * (inferred before converting) */
  ox_map names;     /* every value name in use (for fresh names) */
  ox_map used;      /* every value read by a node or returned by a graph */
  ox_map detached;  /* constants an adapter moved into an attribute */
  size_t counter;   /* for fresh names */
  ox_node *pre;     /* nodes to place before the node being adapted */
  size_t n_pre;
  ox_node *post; /* ... and after it */
  size_t n_post;
  const ox_vscope *scope;
  const char *graph_name;
} ox_vctx;

/* Fails with "opset F -> T: node 'name' (Op) in graph 'g': <message>". */
int ox_vfail(ox_vctx *c, const ox_node *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int ox_v_oom(ox_vctx *c);

/* Inferred type of a value (NULL if unknown), its rank (-1 if unknown) and
 * dim k's value (-1 if unknown). */
const ox_type *ox_v_type(const ox_vctx *c, const char *name);
int64_t ox_v_rank(const ox_vctx *c, const char *name);
int64_t ox_v_dim(const ox_vctx *c, const char *name, int64_t k);
int32_t ox_v_elem(const ox_vctx *c, const char *name); /* 0 if unknown */

/* true when some node reads the value or a graph returns it. */
bool ox_v_is_used(const ox_vctx *c, const char *name);
/* A name not used anywhere in the model, made from base. */
const char *ox_v_fresh(ox_vctx *c, const char *base);
/* Adds a node to c->pre (post: to c->post) and returns it. */
ox_node *ox_v_add_pre(ox_vctx *c, const char *op);
ox_node *ox_v_add_post(ox_vctx *c, const char *op);
/* Adds a Constant node before the current one and returns its output name.
 * rank 0 (scalar) or 1. */
const char *ox_v_const_i64(ox_vctx *c, const char *base, const int64_t *v, size_t n, int rank);
/* A constant of element type dt (float, double, float16, bfloat16) holding v. */
const char *ox_v_const_float(ox_vctx *c, const char *base, int32_t dt, const double *v, size_t n,
                             int rank);

/* The constant value of a value name: an initializer that is not a graph
 * input, or the output of a Constant node, in this graph or an enclosing one.
 * NULL if the value is not constant. */
const ox_tensor *ox_v_find_const(ox_vctx *c, const char *name);
/* Reads an integer / floating-point tensor into arena memory. false if the
 * element type does not fit. */
bool ox_v_read_i64(ox_vctx *c, const ox_tensor *t, int64_t **v, size_t *n);
bool ox_v_read_f64(ox_vctx *c, const ox_tensor *t, double **v, size_t *n);
/* Reads input k of n as constant integers / floats; fails (error set)
 * naming the input when it is not constant. */
int ox_v_input_i64(ox_vctx *c, const ox_node *n, size_t k, const char *what, int64_t **v,
                   size_t *cnt);
int ox_v_input_f64(ox_vctx *c, const ox_node *n, size_t k, const char *what, double **v,
                   size_t *cnt);

/* Node editing (arena allocations). */
bool ox_v_has_input(const ox_node *n, size_t k);
int ox_v_set_input(ox_vctx *c, ox_node *n, size_t k, const char *name); /* pads with "" */
void ox_v_trim_inputs(ox_node *n, size_t k);                            /* keep the first k */
void ox_v_attr_del(ox_node *n, const char *name);
ox_attr *ox_v_attr_set(ox_vctx *c, ox_node *n, const char *name, ox_attr_type type);
int ox_v_attr_set_int(ox_vctx *c, ox_node *n, const char *name, int64_t v);
int ox_v_attr_set_ints(ox_vctx *c, ox_node *n, const char *name, const int64_t *v, size_t k);
int ox_v_attr_set_float(ox_vctx *c, ox_node *n, const char *name, float v);
int ox_v_attr_set_floats(ox_vctx *c, ox_node *n, const char *name, const double *v, size_t k);
int ox_v_attr_set_str(ox_vctx *c, ox_node *n, const char *name, const char *v);
/* An attribute given by reference (inside a function) cannot be moved. */
int ox_v_attr_plain(ox_vctx *c, const ox_node *n, const ox_attr *at);

/* Op-specific adapter for (op, from, to); NULL if the generic one is enough. */
typedef int (*ox_vadapter)(ox_vctx *c, ox_node *n);
ox_vadapter ox_v_find_adapter(const char *op, int64_t from, int64_t to);

#endif
