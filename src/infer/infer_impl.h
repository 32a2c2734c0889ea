/* infer_impl.h - internals shared by the inference driver and the
 * per-operator inference functions. */
#ifndef OX_INFER_IMPL_H
#define OX_INFER_IMPL_H

#include "../schema/schema.h"
#include "infer.h"

/* A propagated integer vector (the value of a small int64/int32 tensor whose
 * elements may be symbolic), or a scalar when is_scalar. */
typedef struct ox_dimv {
  ox_dim *d;
  size_t n;
  bool is_scalar;
} ox_dimv;

typedef struct ox_igraph ox_igraph; /* inference state of one graph scope */
typedef struct ox_iglobal ox_iglobal;

/* What an inference function sees for one node. */
typedef struct ox_ictx {
  ox_igraph *g;
  const ox_node *node;
  const ox_schema *schema; /* may be NULL */
  int64_t opset;           /* imported version of the node's domain */
  int64_t since;           /* since_version of the schema (opset if no schema) */
  size_t n_in, n_out;
  const ox_type **in;         /* NULL: unknown type or missing input */
  const ox_dimv **in_data;    /* propagated values, NULL if unknown */
  const ox_tensor **in_const; /* constant tensors, NULL if not constant */
  bool *in_present;
  ox_type **out;      /* set by the function (NULL: nothing inferred) */
  ox_dimv **out_data; /* set by the function for data propagation */
  ox_arena *a;
  ox_err *e;
  bool failed;
} ox_ictx;

typedef int (*ox_infer_fn)(ox_ictx *c);

typedef struct ox_infer_def {
  const char *domain;
  const char *op;
  int since_min, since_max;
  ox_infer_fn fn;
} ox_infer_def;

const ox_infer_def *ox_infer_find(const char *domain, const char *op, int64_t since);

/* ---- dims ---- */
ox_dim ox_dim_known(int64_t v);
ox_dim ox_dim_unknown(void);
ox_dim ox_dim_sym(ox_arena *a, const char *s);
bool ox_dim_is(const ox_dim *d, int64_t v);
bool ox_dim_same(const ox_dim *x, const ox_dim *y);
ox_dim ox_dim_mul(ox_arena *a, ox_dim x, ox_dim y);
ox_dim ox_dim_add(ox_arena *a, ox_dim x, ox_dim y);
ox_dim ox_dim_sub(ox_arena *a, ox_dim x, ox_dim y);
ox_dim ox_dim_div(ox_arena *a, ox_dim x, ox_dim y); /* floor division */
ox_dim ox_dim_ceildiv(ox_arena *a, ox_dim x, ox_dim y);
ox_dim ox_dim_addc(ox_arena *a, ox_dim x, int64_t c);
/* Values from the model that may not give a dim (numerics.md, "Shape
 * inference"): these give an unknown dim instead of undefined behaviour. */
ox_dim ox_dim_nonneg(int64_t v);   /* v, unknown when negative */
ox_dim ox_dim_floor_f64(double v); /* floor(v), unknown for NaN, < 0, >= 2^63 */
/* a - b, false on overflow (ox_add_i64 and ox_mul_i64 of base.h do + and *) */
bool ix_sub_i64(int64_t a, int64_t b, int64_t *r);

/* ---- helpers for inference functions ---- */
/* Input i as a tensor type with a shape: returns false if unknown. */
bool ix_shape(ox_ictx *c, size_t i, const ox_dim **dims, size_t *rank);
int32_t ix_elem(ox_ictx *c, size_t i); /* OX_UNDEFINED if unknown */
bool ix_has_input(ox_ictx *c, size_t i);
/* Output i: a tensor of elem with rank dims (copied from dims, or unknown
 * when dims is NULL). rank < 0: unknown rank. */
ox_type *ix_set_tensor(ox_ictx *c, size_t i, int32_t elem, const ox_dim *dims, int64_t rank);
ox_type *ix_copy_type(ox_ictx *c, size_t out, size_t in);
/* Attribute helpers */
const ox_attr *ix_attr(ox_ictx *c, const char *name);
int64_t ix_attr_int(ox_ictx *c, const char *name, int64_t dflt);
/* ints attribute into out (malloc'd in the arena); false if absent */
bool ix_attr_ints(ox_ictx *c, const char *name, const int64_t **v, size_t *n);
/* Integer values of input i when known as constants (initializer, Constant,
 * or fully known propagated data). */
bool ix_const_ints(ox_ictx *c, size_t i, int64_t **v, size_t *n);
/* Records an inference failure for this node. */
int ix_fail(ox_ictx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Multidirectional broadcast of the shapes of inputs [first, first+n). false
 * if some rank is unknown. */
bool ix_broadcast(ox_ictx *c, size_t first, size_t n, ox_dim **out, size_t *rank);
/* Normalises an axis against rank; false if out of range. */
bool ix_axis(int64_t axis, size_t rank, size_t *out);
/* Infers a subgraph attribute with the given input types; returns its
 * output types (n set) or NULL. */
ox_type **ix_subgraph(ox_ictx *c, const ox_graph *g, const ox_type *const *in_types, size_t n_in,
                      size_t *n_out);
ox_dimv *ix_dimv_new(ox_ictx *c, size_t n);

/* ---- for the operator files (infer_ops.c) ---- */
/* the longest integer vector whose values are propagated (shape values) */
#define IX_MAXV 1000

/* Output 0 gets input 0's type. */
int ix_same_as_input0(ox_ictx *c);
/* Output `out`: a tensor of el with the shape of input `in` (unknown rank if
 * that is unknown). */
int ix_same_shape_as(ox_ictx *c, size_t out, size_t in, int32_t el);
/* The propagated values of input i, or of its constant integer tensor
 * (recorded as propagated); NULL if neither. */
const ox_dimv *ix_dimv_of(ox_ictx *c, size_t i);
/* Output 0 carries input 0's values in the same flat order (Reshape, Flatten,
 * Squeeze, Unsqueeze, Identity). */
void ix_pass_values(ox_ictx *c);
/* n zeroed dims in the arena (at least one, so that n = 0 is not NULL) */
ox_dim *ix_dims_new(ox_ictx *c, size_t n);

/* MatMul's output (numpy matmul of inputs ia and ib, element type el) */
int ix_matmul_shape(ox_ictx *c, size_t ia, size_t ib, int32_t el);
/* Conv's output (X input 0, W input wi, Conv's attributes; element type el) */
int ix_conv_shape(ox_ictx *c, size_t wi, int32_t el);

/* the tables of the operator families, ended by an entry with op NULL */
extern const ox_infer_def ox_infer_defs_elementwise[], ox_infer_defs_tensor[], ox_infer_defs_nn[],
    ox_infer_defs_control[], ox_infer_defs_signal[], ox_infer_defs_ml[], ox_infer_defs_onnxc[],
    ox_infer_defs_contrib_nn[], ox_infer_defs_contrib_attn[], ox_infer_defs_contrib_gqa[],
    ox_infer_defs_contrib_lowbit[], ox_infer_defs_contrib_quant[];

#endif
