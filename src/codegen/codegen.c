/* codegen.c - the driver of `onnxc compile`: infers shapes, gives every
 * value of the graph its static shape and place (argument, constant array
 * or arena offset), writes one function per node through the operator
 * tables, plans the arena by lifetimes and assembles the .c and .h texts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cg_impl.h"
#include "cg_inline.h"

int ox_cg_write_main(cg_ctx *c, const ox_cg_opts *o, ox_buf *out); /* main_gen.c */

/* The generator tables with the domain of their operators: a generator is
 * found by domain and operator type together, so that an operator of another
 * domain named like one of ai.onnx (ai.onnx.ml's Normalizer, a contrib
 * Attention) can never get the default domain's generator. The rows of
 * another domain's table name their operator as DOMAIN:Op (what --list-ops
 * prints). */
typedef struct cg_table {
  const char *domain; /* "" for ai.onnx */
  const cg_op *ops;
} cg_table;

static const cg_table op_tables[] = {
    {"", ox_cg_ops_elementwise}, {"", ox_cg_ops_linalg},    {"", ox_cg_ops_conv},
    {"", ox_cg_ops_tensor},      {"", ox_cg_ops_reduce},    {"", ox_cg_ops_quant},
    {"", ox_cg_ops_loss},        {"", ox_cg_ops_control},   {"", ox_cg_ops_attention},
    {"", ox_cg_ops_resize},      {"", ox_cg_ops_signal},    {"", ox_cg_ops_recurrent},
    {"", ox_cg_ops_image},       {"", ox_cg_ops_stateful},  {"", ox_cg_ops_movement},
    {"", ox_cg_ops_numeric},     {"", ox_cg_ops_deform},    {"", ox_cg_ops_spectral},
    {"", ox_cg_ops_tfidf},       {"", ox_cg_ops_random},
    {CG_DOMAIN_ML, ox_cg_ops_ml},
    {CG_DOMAIN_TRAINING, ox_cg_ops_training},
    {CG_DOMAIN_PREVIEW, ox_cg_ops_flex},
    {CG_DOMAIN_MS, ox_cg_ops_ms_quant},
    {CG_DOMAIN_MS, ox_cg_ops_ms_nn},
    {"", ox_cg_ops_ms_nn_default}, /* onnxruntime's SimplifiedLayerNormalization */
    {CG_DOMAIN_MS, ox_cg_ops_ms_attn},
    {CG_DOMAIN_MS, ox_cg_ops_ms_gqa},
    {CG_DOMAIN_MS, ox_cg_ops_ms_lowbit},
};
#define N_TABLES (sizeof op_tables / sizeof op_tables[0])

static bool same_domain(const char *table, const char *node) {
  return *table ? node && strcmp(table, node) == 0 : ox_is_default_domain(node);
}

/* ai.onnx operators by name, the others as DOMAIN:Op (ai.onnx.ml:Binarizer) */
const char *ox_codegen_op_name(size_t i) {
  for (size_t t = 0; t < N_TABLES; t++)
    for (const cg_op *p = op_tables[t].ops; p->op; p++)
      if (i-- == 0) return p->op;
  static const char *const folded[] = {"Constant", "Shape", "Size"};
  return i < 3 ? folded[i] : NULL;
}

static cg_gen_fn find_gen(const char *domain, const char *op) {
  for (size_t t = 0; t < N_TABLES; t++)
    if (same_domain(op_tables[t].domain, domain)) {
      size_t skip = *op_tables[t].domain ? strlen(op_tables[t].domain) + 1 : 0; /* "DOMAIN:" */
      for (const cg_op *p = op_tables[t].ops; p->op; p++)
        if (strcmp(p->op + skip, op) == 0) return p->gen;
    }
  if (ox_is_default_domain(domain)) /* the QDQ rewrite's nodes have the default domain */
    for (const cg_op *p = ox_cg_ops_quant_folded; p->op; p++)
      if (strcmp(p->op, op) == 0) return p->gen;
  return NULL;
}

cg_gen_fn cg_std_gen(const char *op) { return find_gen("", op); }

/* A C identifier from any ONNX name: other characters become '_', kept short. */
static char *sanitize(cg_ctx *c, const char *s) {
  char buf[48];
  size_t k = 0;
  for (; s && *s && k < sizeof buf - 1; s++) {
    char ch = *s;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    buf[k++] = ok ? ch : '_';
  }
  buf[k] = 0;
  return ox_arena_strdup(c->a, buf);
}

static cg_val *find_val(cg_ctx *c, const char *name) {
  uintptr_t v;
  return ox_map_get(&c->by_name, name, &v) ? c->vals[v] : NULL;
}

static cg_val *add_val(cg_ctx *c, const char *name) {
  cg_val *v = ox_arena_calloc(c->a, 1, sizeof *v);
  cg_val **slot = v ? OX_VEC_PUSH(c->a, c->vals, c->n_vals) : NULL;
  if (!slot || ox_map_put(&c->by_name, name, c->n_vals - 1) != OX_OK) {
    ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    return NULL;
  }
  *slot = v;
  v->name = name;
  v->first = v->last = -1;
  return v;
}

static int set_numel(cg_ctx *c, cg_val *v, const char *what) {
  if (v->rank > CG_MAX_RANK)
    return ox_err_set(c->e, OX_EUNSUPPORTED, "%s '%s': rank %zu is over the generator's %d", what,
                      v->name, v->rank, CG_MAX_RANK);
  const char *ct = cg_ctype(v->dtype);
  if (!ct && v->dtype == OX_STRING) /* the string operators, a LabelEncoder on strings ... */
    return ox_err_set(c->e, OX_EUNSUPPORTED,
                      "%s '%s': element type string: strings are not compiled (the generated "
                      "code has numeric buffers only)",
                      what, v->name);
  if (!ct) {
    const ox_dtype_info *di = ox_dtype_get(v->dtype);
    return ox_err_set(c->e, OX_EUNSUPPORTED, "%s '%s': element type %s has no C generator", what,
                      v->name, di ? di->name : "undefined");
  }
  size_t nb;
  if (!ox_numel(v->dims, v->rank, &v->numel) || !ox_dtype_nbytes(v->dtype, v->numel, &nb))
    return ox_err_set(c->e, OX_EMODEL, "%s '%s': size overflows", what, v->name);
  v->nbytes = nb;
  return OX_OK;
}

/* Static type of a value from its inferred type; what names it in errors. */
static int take_type(cg_ctx *c, cg_val *v, const ox_type *t, const char *what) {
  if (!t || t->kind != OX_TYPE_TENSOR || !t->has_elem_type)
    return ox_err_set(c->e, OX_EUNSUPPORTED, "%s '%s': not a tensor of known type", what, v->name);
  if (!t->shape)
    return ox_err_set(c->e, OX_EUNSUPPORTED,
                      "%s '%s': rank unknown after shape inference (shapes must be static)", what,
                      v->name);
  v->dtype = t->elem_type;
  v->rank = t->shape->n_dim;
  for (size_t i = 0; i < v->rank && i < CG_MAX_RANK; i++) {
    const ox_dim *d = &t->shape->dim[i];
    if (!d->has_value || d->value < 0)
      return ox_err_set(c->e, OX_EUNSUPPORTED,
                        "%s '%s': dim %zu is %s%s%s, not a fixed number (shapes must be static: "
                        "give the graph inputs' dims with --input NAME=D1,D2,...)",
                        what, v->name, i, d->param ? "'" : "", d->param ? d->param : "unknown",
                        d->param ? "'" : "");
    v->dims[i] = d->value;
  }
  return set_numel(c, v, what);
}

static int make_const(cg_ctx *c, cg_val *v, ox_value *cv, const char *what) {
  v->kind = CG_CONST;
  v->cv = cv;
  v->dtype = cv->dtype;
  v->rank = cv->rank;
  if (v->rank > CG_MAX_RANK) return set_numel(c, v, what);
  memcpy(v->dims, cv->dims, cv->rank * sizeof(int64_t));
  v->cname = ox_arena_printf(c->a, "%s_w%zu_%s", c->prefix, c->n_consts++, sanitize(c, v->name));
  return v->cname ? set_numel(c, v, what) : ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
}

int cg_fail(cg_ctx *c, int code, const char *fmt, ...) {
  char why[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  const ox_node *n = c->node;
  return ox_err_set(c->e, code, "node %zu '%s' (%s): %s", c->node_idx, n && n->name ? n->name : "",
                    n ? n->op_type : "?", why);
}

/* Constant, Shape and Size give compile-time constants, not functions. */
static ox_value *fold_node(cg_ctx *c, const ox_node *n, cg_val **in, size_t n_in, bool *folded) {
  ox_err *e = c->e;
  *folded = ox_is_default_domain(n->domain);
  if (!*folded) return NULL;
  if (strcmp(n->op_type, "Constant") == 0) {
    for (size_t i = 0; i < n->n_attribute; i++) {
      const ox_attr *a = &n->attribute[i];
      if (strcmp(a->name, "value") == 0 && a->t) return ox_value_from_tensor_proto(a->t, false, e);
      if (strcmp(a->name, "value_float") == 0) return ox_tensor_scalar_f32(a->f, e);
      if (strcmp(a->name, "value_int") == 0) return ox_tensor_scalar_i64(a->i, e);
      bool fl = strcmp(a->name, "value_floats") == 0, il = strcmp(a->name, "value_ints") == 0;
      if (fl || il) {
        int64_t d = fl ? (int64_t)a->n_floats : (int64_t)a->n_ints;
        ox_value *v = ox_tensor_new(fl ? OX_FLOAT : OX_INT64, &d, 1, e);
        if (v && d) memcpy(v->data, fl ? (void *)a->floats : (void *)a->ints, v->nbytes);
        return v;
      }
    }
    cg_fail(c, OX_EUNSUPPORTED, "only value, value_float(s) and value_int(s) are compiled");
    return NULL;
  }
  bool shape = strcmp(n->op_type, "Shape") == 0, size = strcmp(n->op_type, "Size") == 0;
  if ((shape || size) && n_in == 1 && in[0]) {
    if (size) return ox_tensor_scalar_i64(in[0]->numel, e);
    int64_t r = (int64_t)in[0]->rank, start = ox_node_attr_int(n, "start", 0),
            end = ox_node_attr_int(n, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < start ? start : end > r ? r : end;
    int64_t d = end - start;
    ox_value *v = ox_tensor_new(OX_INT64, &d, 1, e);
    if (v && d) memcpy(v->data, in[0]->dims + start, (size_t)d * sizeof(int64_t));
    return v;
  }
  *folded = false;
  return NULL;
}

typedef struct cg_call {
  char *fname;
  cg_val **args; /* present inputs then present outputs */
  size_t n_args;
} cg_call;

/* The parameters; `shared` is the input that Y0 overwrites in place (-1:
 * none): those two are the same memory, so they lose `restrict`. extra are
 * the outer values a control-flow node's bodies read or write (V<k>). */
static void put_params(cg_ctx *c, cg_val **in, size_t n_in, cg_val **out, size_t n_out,
                       long shared, cg_val **extra, size_t n_extra) {
  bool first = true;
  for (size_t i = 0; i < n_in; i++)
    if (in[i]) {
      cg_printf(c, "%sconst %s *%sX%zu", first ? "" : ", ", cg_ctype(in[i]->dtype),
                (long)i == shared ? "" : "restrict ", i);
      first = false;
    }
  for (size_t i = 0; i < n_out; i++)
    if (out[i]) {
      cg_printf(c, "%s%s *%sY%zu", first ? "" : ", ", cg_ctype(out[i]->dtype),
                i == 0 && shared >= 0 ? "" : "restrict ", i);
      first = false;
    }
  /* the values a control-flow node's bodies touch: constants and graph
   * inputs are read-only (their arrays are const), the rest may be written */
  for (size_t k = 0; k < n_extra; k++) {
    bool ro = extra[k]->kind == CG_CONST || extra[k]->kind == CG_INPUT;
    cg_printf(c, "%s%s%s *restrict V%zu", first ? "" : ", ", ro ? "const " : "",
              cg_ctype(extra[k]->dtype), k);
    first = false;
  }
  if (first) cg_printf(c, "void");
  cg_printf(c, ") {\n");
  for (size_t i = 0; i < n_in; i++)
    if (in[i]) cg_printf(c, "  (void)X%zu;\n", i);
  for (size_t i = 0; i < n_out; i++)
    if (out[i]) cg_printf(c, "  (void)Y%zu;\n", i);
}

/* Element-wise operators whose generated loop reads element o of a
 * full-shape input before it writes element o of Y0 (and nothing else of
 * either), so Y0 may be that input's memory. */
static bool inplace_op(const char *op) {
  static const char *const ops[] = {
      "Relu",     "LeakyRelu", "Sigmoid",  "Tanh",      "Exp",         "Log",       "Sqrt",
      "Neg",      "Abs",       "Erf",      "Floor",     "Ceil",        "Round",     "Reciprocal",
      "Softplus", "Softsign",  "Mish",     "Elu",       "Selu",        "Celu",      "HardSigmoid",
      "HardSwish", "Swish",    "Gelu",     "Clip",      "Add",         "Sub",       "Mul",
      "Div",      "Pow",       "PRelu",    "Sum",       "Mean",        "Max",       "Min",
      "BatchNormalization"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(op, ops[i]) == 0) return true;
  return false;
}

/* The input that node idx may overwrite with its only output: an
 * intermediate of the output's shape and type (float or double) that no
 * later node reads and that is no other input of the node; -1 if none. */
static long inplace_input(cg_ctx *c, size_t idx, const ox_node *n, cg_val **in, cg_val **out) {
  if (!ox_is_default_domain(n->domain) || !inplace_op(n->op_type) || n->n_output < 1 || !out[0] ||
      out[0]->kind != CG_TEMP)
    return -1;
  for (size_t i = 1; i < n->n_output; i++)
    if (out[i]) return -1;
  const cg_val *y = out[0];
  if (y->dtype != OX_FLOAT && y->dtype != OX_DOUBLE) return -1;
  size_t cand = strcmp(n->op_type, "BatchNormalization") == 0 || strcmp(n->op_type, "Clip") == 0
                    ? 1
                    : n->n_input;
  for (size_t k = 0; k < cand && k < n->n_input; k++) {
    cg_val *x = in[k];
    uintptr_t last;
    if (!x || x->kind != CG_TEMP || x->dtype != y->dtype || x->rank != y->rank ||
        memcmp(x->dims, y->dims, y->rank * sizeof(int64_t)) != 0)
      continue;
    if (!ox_map_get(&c->last_read, x->name, &last) || last != idx) continue;
    bool twice = false;
    for (size_t j = 0; j < n->n_input; j++) twice |= j != k && in[j] == x;
    if (!twice) return (long)k;
  }
  return -1;
}

/* Records node idx as a reader of every value node n reads, the values its
 * subgraphs read included (a body reads outer values by name). */
static int note_reads(ox_map *m, const ox_node *n, size_t idx) {
  for (size_t k = 0; k < n->n_input; k++)
    if (*n->input[k] && ox_map_put(m, n->input[k], idx) != OX_OK) return OX_ENOMEM;
  for (size_t a = 0; a < n->n_attribute; a++) {
    const ox_attr *at = &n->attribute[a];
    for (size_t k = 0; at->g && k < at->g->n_node; k++)
      if (note_reads(m, &at->g->node[k], idx)) return OX_ENOMEM;
    for (size_t j = 0; j < at->n_graphs; j++)
      for (size_t k = 0; k < at->graphs[j].n_node; k++)
        if (note_reads(m, &at->graphs[j].node[k], idx)) return OX_ENOMEM;
  }
  return OX_OK;
}

cg_val *cg_find(cg_ctx *c, const char *name) { return find_val(c, name); }

const char *cg_ref(cg_ctx *c, cg_val *v) {
  for (size_t i = 0; i < c->cf_n_in; i++)
    if (c->cf_in[i] == v) return ox_arena_printf(c->a, "X%zu", i);
  for (size_t i = 0; i < c->cf_n_out; i++)
    if (c->cf_out[i] == v) return ox_arena_printf(c->a, "Y%zu", i);
  for (size_t k = 0; k < c->n_extra; k++)
    if (c->extra[k] == v) return ox_arena_printf(c->a, "V%zu", k);
  cg_val **slot = OX_VEC_PUSH(c->a, c->extra, c->n_extra);
  if (!slot) return NULL;
  *slot = v;
  /* a value of an enclosing graph read here stays alive through the node */
  if (v->kind == CG_TEMP && v->last < c->top_idx) v->last = c->top_idx;
  return ox_arena_printf(c->a, "V%zu", c->n_extra - 1);
}

cg_val *cg_scratch(cg_ctx *c, int32_t dtype, int64_t numel) {
  if (c->depth) return NULL; /* bodies' values live through the whole control-flow node */
  const char *name = ox_arena_printf(c->a, "\x01scratch%zu", c->n_vals);
  cg_val *v = name ? add_val(c, name) : NULL;
  if (!v) return NULL;
  v->dtype = dtype;
  v->rank = 1;
  v->dims[0] = numel;
  if (set_numel(c, v, "scratch")) return NULL;
  v->kind = CG_TEMP;
  v->first = v->last = c->top_idx; /* overlaps the node's inputs and outputs */
  return v;
}

cg_val *cg_scratch_in_body(cg_ctx *c, int32_t dtype, int64_t numel) {
  int depth = c->depth;
  c->depth = 0;
  cg_val *v = cg_scratch(c, dtype, numel);
  c->depth = depth;
  if (v) v->in_body = depth > 0; /* alive, as the bodies' values, through the whole node */
  return v;
}

cg_val *cg_body_input(cg_ctx *c, const ox_value_info *vi) {
  cg_val *v = add_val(c, vi->name);
  if (!v || take_type(c, v, vi->type, "subgraph input")) return NULL;
  v->kind = CG_TEMP;
  v->in_body = true;
  v->first = v->last = c->top_idx;
  return v;
}

/* Writes the node's function. Its text is built apart (c->funcs) and moved
 * to the finished functions at the end, so that the functions a
 * control-flow node's bodies need come before it. idx names the node (its
 * index in its graph). */
/* The generators of other domains that take float16/bfloat16 (and float8)
 * values: FlexAttention and TreeEnsemble load them through float (cg_load,
 * cg_store), ArrayFeatureExtractor copies their bits; com.microsoft's
 * MatMulIntegerToFloat and Q/DQ convert float16 scales and outputs. */
static bool domain_small_float_ok(const ox_node *n) {
  static const char *const ok[][2] = {{CG_DOMAIN_PREVIEW, "FlexAttention"},
                                      {CG_DOMAIN_ML, "TreeEnsemble"},
                                      {CG_DOMAIN_ML, "ArrayFeatureExtractor"},
                                      /* ops_ms_nn.c: cg_gen_widened, or cg_load / cg_store */
                                      {CG_DOMAIN_MS, "Gelu"}, {CG_DOMAIN_MS, "FastGelu"},
                                      {CG_DOMAIN_MS, "BiasGelu"}, {CG_DOMAIN_MS, "QuickGelu"},
                                      {CG_DOMAIN_MS, "BiasSoftmax"}, {CG_DOMAIN_MS, "FusedMatMul"},
                                      {CG_DOMAIN_MS, "SkipLayerNormalization"},
                                      {CG_DOMAIN_MS, "SkipSimplifiedLayerNormalization"},
                                      {CG_DOMAIN_MS, "EmbedLayerNormalization"},
                                      {CG_DOMAIN_MS, "MatMulIntegerToFloat"},
                                      {CG_DOMAIN_MS, "QuantizeLinear"},
                                      {CG_DOMAIN_MS, "DequantizeLinear"},
                                      /* ops_ms_gqa.c, ops_ms_lowbit.c: through float copies (cg_gen_widened) */
                                      {CG_DOMAIN_MS, "GroupQueryAttention"},
                                      {CG_DOMAIN_MS, "RotaryEmbedding"},
                                      {CG_DOMAIN_MS, "SparseAttention"},
                                      {CG_DOMAIN_MS, "MatMulNBits"},
                                      {CG_DOMAIN_MS, "GatherBlockQuantized"},
                                      /* ops_ms_attn.c widens them (cg_widen.c) */
                                      {CG_DOMAIN_MS, "Attention"},
                                      {CG_DOMAIN_MS, "MultiHeadAttention"}};
  for (size_t k = 0; n->domain && k < sizeof ok / sizeof ok[0]; k++)
    if (strcmp(n->domain, ok[k][0]) == 0 && strcmp(n->op_type, ok[k][1]) == 0) return true;
  return false;
}

/* float16, bfloat16 and float8 values are stored as integer bits: only the
 * generators that convert them (cg_load / cg_store) or move them without
 * arithmetic may see them; the others would compute on the bits. */
static int small_float_ok(cg_ctx *c, const ox_node *n, cg_val **in) {
  static const char *const ok[] = {
      "Cast",   "CastLike", "Reshape", "Flatten", "Squeeze", "Unsqueeze",      "Identity",
      "Transpose", "Slice", "Tile",    "Expand",  "Concat",  "Split",          "Gather",
      "GatherElements", "GatherND", "Where",
      /* ops_quant.c converts them (float8 and float4 too) */
      "QuantizeLinear", "DequantizeLinear",
      /* ops_random.c loads and stores float16 and bfloat16 (and refuses float8) */
      "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli",
      "Multinomial",
      /* control flow moves its values with memcpy; the body's nodes are checked on their own */
      "If", "Loop", "Scan"};
  /* packed 4- and 2-bit types: Cast, Q/DQ and the plain copies (whole bytes) only */
  static const char *const packed_ok[] = {"Cast",      "CastLike",  "Reshape",
                                          "Flatten",   "Squeeze",   "Unsqueeze",
                                          "Identity",  "QuantizeLinear", "DequantizeLinear"};
  bool packed = false, dflt = ox_is_default_domain(n->domain);
  for (size_t i = 0; i < n->n_input; i++) packed |= in[i] && cg_packed_bits(in[i]->dtype);
  for (size_t i = 0; i < n->n_output; i++) {
    uintptr_t t;
    const ox_type *ty =
        *n->output[i] && ox_map_get(c->types, n->output[i], &t) ? (const ox_type *)t : NULL;
    packed |= ty && ty->kind == OX_TYPE_TENSOR && ty->has_elem_type &&
              cg_packed_bits(ty->elem_type);
  }
  if (packed) {
    bool ms = n->domain && strcmp(n->domain, CG_DOMAIN_MS) == 0; /* its Q/DQ: int4, uint4 */
    for (size_t k = 0; (dflt || ms) && k < sizeof packed_ok / sizeof packed_ok[0]; k++)
      if (strcmp(n->op_type, packed_ok[k]) == 0 && (dflt || strstr(packed_ok[k], "Linear")))
        return OX_OK;
    /* ops_ms_lowbit.c reads an int4 / uint4 table field by field */
    if (ms && strcmp(n->op_type, "GatherBlockQuantized") == 0) return OX_OK;
    return cg_fail(c, OX_EUNSUPPORTED,
                   "4- and 2-bit element types are compiled for Cast, Q/DQ and reshapes only");
  }
  for (size_t k = 0; dflt && k < sizeof ok / sizeof ok[0]; k++)
    if (strcmp(n->op_type, ok[k]) == 0) return OX_OK;
  if (dflt && cg_small_float_op(n->op_type)) return OX_OK; /* ops_elementwise.c */
  if (dflt && cg_widen_node_ok(c, n, in)) return OX_OK;     /* cg_widen.c */
  if (!dflt && domain_small_float_ok(n)) return OX_OK;
  for (size_t i = 0; i < n->n_input; i++)
    if (in[i] && cg_is_small_float(in[i]->dtype))
      return cg_fail(c, OX_EUNSUPPORTED, "element type %s is not compiled for this operator",
                     ox_dtype_get(in[i]->dtype)->name);
  for (size_t i = 0; i < n->n_output; i++) {
    uintptr_t t;
    const ox_type *ty = *n->output[i] && ox_map_get(c->types, n->output[i], &t) ? (const ox_type *)t : NULL;
    if (ty && ty->kind == OX_TYPE_TENSOR && ty->has_elem_type && cg_is_small_float(ty->elem_type))
      return cg_fail(c, OX_EUNSUPPORTED, "element type %s is not compiled for this operator",
                     ox_dtype_get(ty->elem_type)->name);
  }
  return OX_OK;
}

static int gen_node(cg_ctx *c, const ox_node *n, size_t idx, cg_call *call) {
  int rc;
  c->node = n;
  c->node_idx = idx;
  long life = c->depth ? c->top_idx : (long)idx; /* lifetimes count top-level nodes */
  if (!c->depth) c->top_idx = (long)idx;
  cg_val **in = ox_arena_calloc(c->a, n->n_input + 1, sizeof *in);
  cg_val **out = ox_arena_calloc(c->a, n->n_output + 1, sizeof *out);
  if (!in || !out) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  for (size_t i = 0; i < n->n_input; i++) {
    if (!*n->input[i]) continue;
    in[i] = find_val(c, n->input[i]);
    if (!in[i])
      return cg_fail(c, OX_EMODEL, "input '%s' is not produced before the node", n->input[i]);
  }
  bool folded;
  ox_value *cv = fold_node(c, n, in, n->n_input, &folded);
  if (folded) {
    if (!cv) return c->e->code ? c->e->code : ox_err_set(c->e, OX_ENOMEM, "out of memory");
    if (n->n_output != 1) {
      ox_value_unref(cv);
      return cg_fail(c, OX_EMODEL, "expected one output");
    }
    cg_val *v = add_val(c, n->output[0]);
    if (!v) {
      ox_value_unref(cv);
      return c->e->code;
    }
    return make_const(c, v, cv, "constant");
  }
  cg_gen_fn gen = find_gen(n->domain, n->op_type);
  if (!gen) {
    const char *why = cg_declined_reason(n->domain, n->op_type); /* ops_declined.c */
    if (why) return cg_fail(c, OX_EUNSUPPORTED, "%s", why);
    bool known = false; /* a domain with generators, though not this one's */
    for (size_t t = 0; t < N_TABLES; t++) known |= same_domain(op_tables[t].domain, n->domain);
    if (!known)
      return cg_fail(c, OX_EUNSUPPORTED, "operators of domain '%s' have no C generator",
                     n->domain);
    if (!ox_is_default_domain(n->domain))
      return cg_fail(c, OX_EUNSUPPORTED, "no C generator for this operator of domain '%s'",
                     n->domain);
    return cg_fail(c, OX_EUNSUPPORTED, "no C generator for this operator");
  }
  if ((rc = small_float_ok(c, n, in))) return rc;
  for (size_t i = 0; i < n->n_input; i++)
    if (in[i] && in[i]->kind == CG_TEMP && life > in[i]->last) in[i]->last = life;
  for (size_t i = 0; i < n->n_output; i++) {
    if (!*n->output[i]) continue;
    uintptr_t t;
    cg_val *v = add_val(c, n->output[i]);
    if (!v) return c->e->code;
    out[i] = v;
    if (!ox_map_get(c->types, n->output[i], &t))
      return cg_fail(c, OX_EUNSUPPORTED, "output '%s' has no inferred type", n->output[i]);
    char what[160];
    snprintf(what, sizeof what, "output of node %zu (%s%s)", idx, n->op_type,
             strcmp(n->op_type, "Loop") == 0
                 ? "; its scan outputs' length must be fixed by a constant trip count"
                 : "");
    rc = take_type(c, v, (const ox_type *)t, what);
    if (rc) return rc;
    uintptr_t k;
    if (!c->depth && ox_map_get(c->out_names, n->output[i], &k)) {
      v->kind = CG_OUTPUT;
      v->index = k;
    } else {
      v->kind = CG_TEMP;
      v->in_body = c->depth > 0;
      v->first = v->last = life;
    }
  }
  /* prefixed, so that several generated files can be built as one unit */
  const char *nm = sanitize(c, n->name && *n->name ? n->name : n->op_type);
  call->fname = c->depth ? ox_arena_printf(c->a, "%s_n%ld_b%zu_%s", c->prefix, c->top_idx,
                                           c->n_body_nodes++, nm)
                         : ox_arena_printf(c->a, "%s_n%zu_%s", c->prefix, idx, nm);
  /* the body first (a control-flow generator writes its bodies' functions
   * meanwhile and collects the extra operands), then the signature */
  ox_buf outer = c->funcs;
  cg_val **o_in = c->cf_in, **o_out = c->cf_out, **o_extra = c->extra;
  size_t o_nin = c->cf_n_in, o_nout = c->cf_n_out, o_nextra = c->n_extra;
  c->funcs = (ox_buf){0};
  c->cf_in = in;
  c->cf_n_in = n->n_input;
  c->cf_out = out;
  c->cf_n_out = n->n_output;
  c->extra = NULL;
  c->n_extra = 0;
  /* in place: decided for top-level nodes only (last_read counts them) */
  long shared = c->depth ? -1 : inplace_input(c, idx, n, in, out);
  if (shared >= 0) {
    cg_val *x = in[shared];
    out[0]->alias = x->alias ? x->alias : x;
  }
  bool empty = true; /* every output empty: nothing to compute (and no loop to 0) */
  for (size_t i = 0; i < n->n_output; i++)
    if (out[i] && out[i]->numel) empty = false;
  rc = OX_OK;
  if (c->o->target == OX_CG_CORTEXM || c->o->float_only) /* single precision only */
    for (size_t i = 0; i < n->n_input + n->n_output && !rc; i++) {
      cg_val *v = i < n->n_input ? in[i] : out[i - n->n_input];
      if (v && v->dtype == OX_DOUBLE)
        rc = cg_fail(c, OX_EUNSUPPORTED, "'%s' is float64: %s compiles single precision only",
                     v->name, c->o->float_only ? "--float-only" : "the cortex-m target");
    }
  if (!rc && !empty)
    rc = ox_is_default_domain(n->domain) && cg_widen_needed(n, in, n->n_input, out, n->n_output)
             ? cg_gen_widened(c, gen, n, in, n->n_input, out, n->n_output)
             : gen(c, n, in, n->n_input, out, n->n_output);
  c->node = n;
  c->node_idx = idx;
  ox_buf body = c->funcs;
  cg_val **extra = c->extra;
  size_t n_extra = c->n_extra;
  c->funcs = (ox_buf){0};
  if (!rc) {
    /* the comment: op, attributes that matter are in the code; shapes here */
    cg_printf(c, "/* node %zu '%s': %s(", idx, n->name ? n->name : "", n->op_type);
    for (size_t i = 0; i < n->n_input; i++)
      cg_printf(c, "%s%s", i ? ", " : "", in[i] ? cg_type_str(c, in[i]) : "-");
    cg_printf(c, ") -> ");
    for (size_t i = 0; i < n->n_output; i++)
      cg_printf(c, "%s%s", i ? ", " : "", out[i] ? cg_type_str(c, out[i]) : "-");
    if (shared >= 0) cg_printf(c, " (in place: Y0 overwrites X%ld)", shared);
    cg_printf(c, " */\nstatic void %s(", call->fname);
    put_params(c, in, n->n_input, out, n->n_output, shared, extra, n_extra);
    ox_buf_append(&c->funcs, body.data, body.size);
    cg_printf(c, "}\n\n");
    ox_buf_append(&c->fdone, c->funcs.data, c->funcs.size);
    if (c->funcs.failed || body.failed) rc = ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    char what[96];
    if (!rc && c->o->float_only &&
        ox_cg_find_double((const char *)c->funcs.data, c->funcs.size, what, sizeof what))
      rc = cg_fail(c, OX_EUNSUPPORTED,
                   "its generated code uses %s: not compiled with --float-only (no double "
                   "arithmetic)",
                   what);
  }
  ox_buf_free(&body);
  ox_buf_free(&c->funcs);
  c->funcs = outer;
  c->cf_in = o_in;
  c->cf_n_in = o_nin;
  c->cf_out = o_out;
  c->cf_n_out = o_nout;
  c->extra = o_extra;
  c->n_extra = o_nextra;
  if (rc) return rc;
  c->n_funcs++;
  call->args = ox_arena_calloc(c->a, n->n_input + n->n_output + n_extra + 1, sizeof(cg_val *));
  if (!call->args) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  for (size_t i = 0; i < n->n_input; i++)
    if (in[i]) call->args[call->n_args++] = in[i];
  for (size_t i = 0; i < n->n_output; i++)
    if (out[i]) call->args[call->n_args++] = out[i];
  for (size_t k = 0; k < n_extra; k++) call->args[call->n_args++] = extra[k];
  return OX_OK;
}

int cg_body_run(cg_ctx *c, const ox_graph *g, const char *ind) {
  const ox_node *cf = c->node;
  size_t cf_idx = c->node_idx;
  int rc = OX_OK;
  for (size_t i = 0; i < g->n_sparse_initializer; i++)
    return cg_fail(c, OX_EUNSUPPORTED, "sparse initializers in a body are not compiled");
  for (size_t i = 0; i < g->n_initializer && !rc; i++) {
    cg_val *v = add_val(c, g->initializer[i].name);
    ox_value *cv = v ? ox_value_from_tensor_proto(&g->initializer[i], false, c->e) : NULL;
    rc = cv ? make_const(c, v, cv, "body initializer") : c->e->code ? c->e->code : OX_ENOMEM;
  }
  c->depth++;
  for (size_t i = 0; i < g->n_node && !rc; i++) {
    cg_call call = {0};
    rc = gen_node(c, &g->node[i], i, &call);
    c->node = cf;
    c->node_idx = cf_idx;
    if (rc || !call.fname) continue;
    cg_printf(c, "%s%s(", ind, call.fname);
    for (size_t k = 0; k < call.n_args && !rc; k++) {
      const char *r = cg_ref(c, call.args[k]);
      if (!r) rc = ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
      cg_printf(c, "%s%s", k ? ", " : "", r ? r : "");
    }
    cg_printf(c, ");\n");
  }
  c->depth--;
  if (rc && c->depth == 0)
    ox_err_prefix(c->e, "in a body of node %zu '%s' (%s)", cf_idx, cf->name ? cf->name : "",
                  cf->op_type);
  return rc;
}

/* Greedy first-fit by size: the largest tensors are placed first, each at
 * the lowest offset that no tensor alive at the same time covers. With
 * inplace, a value written in place over another takes that one's storage,
 * which then lives until the last reader of either. */
static size_t plan_arena(cg_ctx *c, bool inplace) {
  size_t n = 0, total = 0;
  cg_val **t = calloc(c->n_vals + 1, sizeof *t);
  if (!t) return (size_t)-1;
  for (size_t i = 0; i < c->n_vals; i++) {
    cg_val *v = c->vals[i];
    if (v->kind != CG_TEMP) continue;
    v->end = v->last;
    if (!inplace || !v->alias) t[n++] = v;
  }
  if (inplace) /* vals are in node order: a root's end grows with each alias */
    for (size_t i = 0; i < c->n_vals; i++) {
      cg_val *v = c->vals[i];
      if (v->kind == CG_TEMP && v->alias && v->last > v->alias->end) v->alias->end = v->last;
    }
  /* insertion sort keeps the order stable, so the plan is deterministic */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && t[j]->nbytes > t[j - 1]->nbytes; j--) {
      cg_val *x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  for (size_t i = 0; i < n; i++) {
    size_t sz = (t[i]->nbytes + 63) & ~(size_t)63, off = 0;
    bool moved = true;
    while (moved) {
      moved = false;
      for (size_t j = 0; j < i; j++) {
        cg_val *p = t[j];
        if (p->end < t[i]->first || p->first > t[i]->end) continue;
        size_t pe = p->offset + ((p->nbytes + 63) & ~(size_t)63);
        if (off < pe && p->offset < off + (sz ? sz : 1)) {
          off = pe;
          moved = true;
        }
      }
    }
    t[i]->offset = off;
    if (off + sz > total) total = off + sz;
  }
  if (inplace)
    for (size_t i = 0; i < c->n_vals; i++) {
      cg_val *v = c->vals[i];
      if (v->kind == CG_TEMP && v->alias) v->offset = v->alias->offset;
    }
  free(t);
  return total;
}

/* The inferred types of the values inside g's subgraphs (at any depth). */
static void sub_types(ox_map *types, const ox_graph *g) {
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t k = 0; k < g->node[i].n_attribute; k++) {
      const ox_graph *b = g->node[i].attribute[k].g;
      if (!b) continue;
      sub_types(types, b);
      for (size_t j = 0; j < b->n_value_info; j++)
        ox_map_put(types, b->value_info[j].name, (uintptr_t)b->value_info[j].type);
      for (size_t j = 0; j < b->n_input; j++)
        ox_map_put(types, b->input[j].name, (uintptr_t)b->input[j].type);
      for (size_t j = 0; j < b->n_output; j++)
        ox_map_put(types, b->output[j].name, (uintptr_t)b->output[j].type);
    }
}

static void write_const(cg_ctx *c, const cg_val *v) {
  ox_buf *b = &c->consts;
  const ox_value *cv = v->cv;
  int64_t n = v->numel;
  unsigned bits = cg_packed_bits(v->dtype);
  ox_buf_printf(b, "/* %s '%s' */\nstatic const %s %s[%lld] = {", cg_type_str(c, v), v->name,
                cg_ctype(v->dtype), v->cname,
                (long long)(bits ? (int64_t)v->nbytes : n ? n : 1));
  if (!n) ox_buf_puts(b, "0");
  if (bits) { /* the runtime keeps one element a byte: packed here */
    int64_t per = 8 / bits;
    unsigned mask = (1u << bits) - 1u;
    const uint8_t *p = cv->data;
    int64_t nb = (int64_t)v->nbytes;
    for (int64_t k = 0; k < nb; k++) {
      unsigned acc = 0;
      for (int64_t j = 0; j < per && k * per + j < n; j++)
        acc |= (p[k * per + j] & mask) << (j * (int64_t)bits);
      ox_buf_printf(b, "%s%u", k % 8 ? ", " : (k ? ",\n  " : "\n  "), acc);
    }
    n = 0;
  }
  for (int64_t i = 0; i < n; i++) {
    char lit[64];
    const void *p = cv->data;
    switch (v->dtype) {
      case OX_FLOAT:
        cg_float_lit(lit, sizeof lit, ((const float *)p)[i], true);
        break;
      case OX_DOUBLE:
        cg_float_lit(lit, sizeof lit, ((const double *)p)[i], false);
        break;
      case OX_INT64: {
        int64_t x = ((const int64_t *)p)[i];
        if (x == INT64_MIN)
          snprintf(lit, sizeof lit, "(-INT64_C(9223372036854775807) - 1)");
        else
          snprintf(lit, sizeof lit, "INT64_C(%lld)", (long long)x);
        break;
      }
      case OX_UINT64:
        snprintf(lit, sizeof lit, "UINT64_C(%llu)", (unsigned long long)((const uint64_t *)p)[i]);
        break;
      case OX_INT32: {
        int32_t x = ((const int32_t *)p)[i];
        if (x == INT32_MIN)
          snprintf(lit, sizeof lit, "(-2147483647 - 1)");
        else
          snprintf(lit, sizeof lit, "%ld", (long)x);
        break;
      }
      case OX_UINT32:
        snprintf(lit, sizeof lit, "%luu", (unsigned long)((const uint32_t *)p)[i]);
        break;
      case OX_INT16:
        snprintf(lit, sizeof lit, "%d", ((const int16_t *)p)[i]);
        break;
      case OX_UINT16:
        snprintf(lit, sizeof lit, "%u", ((const uint16_t *)p)[i]);
        break;
      case OX_FLOAT16:
      case OX_BFLOAT16: /* the bits */
        snprintf(lit, sizeof lit, "0x%04x", ((const uint16_t *)p)[i]);
        break;
      case OX_INT8:
        snprintf(lit, sizeof lit, "%d", ((const int8_t *)p)[i]);
        break;
      default:
        snprintf(lit, sizeof lit, "%u", ((const uint8_t *)p)[i]);
        break; /* uint8, bool */
    }
    ox_buf_printf(b, "%s%s", i % 8 ? ", " : (i ? ",\n  " : "\n  "), lit);
  }
  ox_buf_puts(b, "};\n\n");
}

static const char *arg_expr(cg_ctx *c, const cg_val *v) {
  if (v->kind == CG_TEMP)
    return ox_arena_printf(c->a, "ARENA(%s, %zu)", cg_ctype(v->dtype), v->offset);
  if (v->kind == CG_CONST && v->in_blob)
    return ox_arena_printf(c->a, "WEIGHT(%s, %zu)", cg_ctype(v->dtype), v->blob_off);
  return v->cname;
}

/* FNV-1a, 64 bits: the blob's fingerprint, so that the generated code
 * refuses the blob of another model or compilation. */
static uint64_t fnv1a(const uint8_t *p, size_t n) {
  uint64_t h = UINT64_C(14695981039346656037);
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * UINT64_C(1099511628211);
  return h;
}

static void put_le(uint8_t *p, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The weights blob: a 64-byte header (docs/compile.md, "Weights blob"),
 * then each tensor at the next 64-byte boundary. Returns its fingerprint. */
static uint64_t write_blob(cg_ctx *c, ox_buf *b) {
  size_t total = OX_CG_BLOB_HEADER, count = 0;
  for (size_t i = 0; i < c->n_vals; i++)
    if (c->vals[i]->in_blob) {
      c->vals[i]->blob_off = total;
      total += (c->vals[i]->nbytes + 63) & ~(size_t)63;
      count++;
    }
  if (!ox_buf_reserve(b, total)) return 0;
  memset(b->data, 0, total);
  b->size = total;
  for (size_t i = 0; i < c->n_vals; i++)
    if (c->vals[i]->in_blob && c->vals[i]->nbytes)
      memcpy(b->data + c->vals[i]->blob_off, c->vals[i]->cv->data, c->vals[i]->nbytes);
  uint64_t fp = fnv1a(b->data + OX_CG_BLOB_HEADER, total - OX_CG_BLOB_HEADER);
  memcpy(b->data, "ONNXCWB", 8);
  put_le(b->data + 8, OX_CG_BLOB_VERSION, 4);
  put_le(b->data + 12, OX_CG_BLOB_HEADER, 4);
  put_le(b->data + 16, total, 8);
  put_le(b->data + 24, fp, 8);
  put_le(b->data + 32, 0x01020304u, 4); /* read natively: a big-endian target sees 0x04030201 */
  put_le(b->data + 36, count, 4);
  return fp;
}

/* The public part of a value's C name: "in_x", "out_y". */
static char *param_name(cg_ctx *c, const char *pre, const char *name, size_t k, ox_map *seen) {
  char *s = ox_arena_printf(c->a, "%s_%s", pre, sanitize(c, name));
  uintptr_t u;
  if (s && ox_map_get(seen, s, &u))
    s = ox_arena_printf(c->a, "%s%zu_%s", pre, k, sanitize(c, name));
  if (s) ox_map_put(seen, s, 1);
  return s;
}

static void write_header(cg_ctx *c, const ox_cg_opts *o, const char *params, bool blob,
                         uint64_t blob_bytes, ox_cg_result *r) {
  const char *P = c->prefix;
  ox_buf *h = &r->header;
  ox_buf_printf(h, "/* %s - generated by onnxc compile%s%s; do not edit.\n *\n", o->header_name,
                o->source_name ? " from " : "", o->source_name ? o->source_name : "");
  ox_buf_printf(h,
                " * %s_run_with_arena(arena, ...) runs the model once with its intermediates\n"
                " * in the caller's arena: %s_arena_size() (= %s_ARENA_BYTES) bytes aligned to\n"
                " * %s_ARENA_ALIGN (NULL is fine when the size is 0); the arena holds nothing\n"
                " * between calls, so calls on different arenas may run at the same time.\n"
                " * Each input is a pointer to its elements (row-major, the exact count\n"
                " * below), each output a pointer to a buffer of its exact count that the\n"
                " * caller owns; inputs, outputs and the arena must not overlap. It\n"
                " * returns 0, or %s_ERR_ARENA for a NULL or misaligned arena",
                P, P, P, P, P);
  if (blob) ox_buf_printf(h, ",\n * or %s_ERR_WEIGHTS before %s_set_weights() accepted a blob", P, P);
  ox_buf_puts(h, ".\n * It allocates nothing and calls no library but <string.h> and <math.h>.\n");
  if (!o->caller_arena)
    ox_buf_printf(h,
                  " * %s_run(...) is the same on a static arena of %s_ARENA_BYTES (in .bss),\n"
                  " * so it is not reentrant: its calls must not overlap.\n",
                  P, P);
  if (blob)
    ox_buf_printf(h,
                  " * %s_set_weights(blob, size) hands over the weights blob (the file\n"
                  " * onnxc compile --weights blob wrote, %s_WEIGHTS_BYTES bytes, aligned to\n"
                  " * %s_WEIGHTS_ALIGN, in memory or mapped flash) once, before any run; the\n"
                  " * code keeps the pointer. It returns 0 or a %s_ERR_BLOB_* code: NULL or\n"
                  " * misaligned, wrong size, bad header (magic, version, byte order), or\n"
                  " * the blob of another model or compilation (fingerprint).\n",
                  P, P, P, P);
  ox_buf_puts(h, " *\n");
  for (size_t i = 0; i < c->n_ins; i++)
    ox_buf_printf(h, " * input  %-12s %s ('%s', %lld elements)\n", c->ins[i]->cname,
                  cg_type_str(c, c->ins[i]), c->ins[i]->name, (long long)c->ins[i]->numel);
  for (size_t i = 0; i < c->n_outs; i++)
    ox_buf_printf(h, " * output %-12s %s ('%s', %lld elements)\n", c->outs[i]->cname,
                  cg_type_str(c, c->outs[i]), c->outs[i]->name, (long long)c->outs[i]->numel);
  ox_buf_printf(
      h, " */\n#ifndef %s_H\n#define %s_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n", P, P);
  ox_buf_printf(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  ox_buf_printf(h,
                "#define %s_ARENA_BYTES %zu\n#define %s_ARENA_ALIGN 8\n#define %s_N_INPUTS "
                "%zu\n#define %s_N_OUTPUTS %zu\n",
                P, r->arena_bytes, P, P, c->n_ins, P, c->n_outs);
  for (size_t i = 0; i < c->n_ins; i++)
    ox_buf_printf(h, "#define %s_INPUT%zu_COUNT %lld\n", P, i, (long long)c->ins[i]->numel);
  for (size_t i = 0; i < c->n_outs; i++)
    ox_buf_printf(h, "#define %s_OUTPUT%zu_COUNT %lld\n", P, i, (long long)c->outs[i]->numel);
  ox_buf_printf(h, "#define %s_ERR_ARENA (-1)\n", P);
  if (blob)
    ox_buf_printf(h,
                  "#define %s_WEIGHTS_BYTES %llu\n#define %s_WEIGHTS_ALIGN 8\n"
                  "#define %s_ERR_WEIGHTS (-2)\n#define %s_ERR_BLOB_ALIGN (-3)\n"
                  "#define %s_ERR_BLOB_SIZE (-4)\n#define %s_ERR_BLOB_HEADER (-5)\n"
                  "#define %s_ERR_BLOB_MODEL (-6)\n",
                  P, (unsigned long long)blob_bytes, P, P, P, P, P, P);
  ox_buf_printf(h, "\nsize_t %s_arena_size(void);\nint %s_run_with_arena(void *arena%s%s);\n", P,
                P, *params ? ", " : "", params);
  if (!o->caller_arena) ox_buf_printf(h, "int %s_run(%s);\n", P, *params ? params : "void");
  if (blob) ox_buf_printf(h, "int %s_set_weights(const void *blob, size_t size);\n", P);
  ox_buf_printf(h, "\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
}

/* What --target adds before the node functions (and after, to close). */
static void put_target(cg_ctx *c, ox_buf *s, bool open) {
  int t = c->o->target;
  if (t != OX_CG_AVX2 && t != OX_CG_AVX512) return;
  const char *isa = t == OX_CG_AVX2 ? "avx2,fma" : "avx512f,avx512vl,avx2,fma";
  if (!open) {
    ox_buf_puts(s, "\n#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__))\n"
                   "#pragma clang attribute pop\n#endif\n");
    return;
  }
  /* the node functions are compiled for the ISA (the program then needs a
   * CPU that has it) and GCC vectorises their loops at -O2 too */
  ox_buf_printf(s,
                "#if defined(__x86_64__) || defined(__i386__)\n#if defined(__clang__)\n"
                "#pragma clang attribute push(__attribute__((target(\"%s\"))), apply_to = "
                "function)\n#elif defined(__GNUC__)\n#pragma GCC target(\"%s\")\n"
                "#pragma GCC optimize(\"O3\")\n#endif\n#endif\n\n",
                isa, isa);
}

static void write_texts(cg_ctx *c, const ox_cg_opts *o, cg_call *calls, size_t n_calls,
                        ox_cg_result *r) {
  const char *P = c->prefix;
  cg_val **ins = c->ins, **outs = c->outs;
  size_t n_in = c->n_ins, n_out = c->n_outs;
  ox_buf *s = &r->source;
  bool blob = r->weights.size > 0;
  /* the parameters and the names, shared by header and source */
  ox_buf params = {0}, names = {0};
  for (size_t i = 0; i < n_in; i++) {
    ox_buf_printf(&params, "%sconst %s *%s", i ? ", " : "", cg_ctype(ins[i]->dtype), ins[i]->cname);
    ox_buf_printf(&names, ", %s", ins[i]->cname);
  }
  for (size_t i = 0; i < n_out; i++) {
    ox_buf_printf(&params, "%s%s *%s", i || n_in ? ", " : "", cg_ctype(outs[i]->dtype),
                  outs[i]->cname);
    ox_buf_printf(&names, ", %s", outs[i]->cname);
  }
  ox_buf_putc(&params, 0);
  ox_buf_putc(&names, 0);
  const char *prm = (const char *)params.data, *nm = (const char *)names.data;
  write_header(c, o, prm, blob, r->weights.size, r);

  ox_buf_printf(s, "/* %s.c - generated by onnxc compile%s%s; do not edit.\n", P,
                o->source_name ? " from " : "", o->source_name ? o->source_name : "");
  ox_buf_printf(s, " * %zu node functions, %zu bytes of constants inline", r->n_functions,
                r->const_bytes);
  if (blob) ox_buf_printf(s, " and %zu in the weights blob", r->weights.size);
  ox_buf_printf(s, ", a %zu-byte arena. */\n", r->arena_bytes);
  ox_buf_printf(
      s, "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n");
  ox_buf_printf(s, "#include \"%s\"\n\n", o->header_name);
  cg_write_conv(c, s); /* float16/bfloat16/float8 conversions, when used */
  bool temps = false;
  for (size_t i = 0; i < c->n_vals; i++) temps |= c->vals[i]->kind == CG_TEMP;
  if (temps) {
    if (!o->caller_arena) /* union: the static arena is aligned for every element type */
      ox_buf_printf(s, "static union {\n%s  int64_t i;\n  void *p;\n} %s_arena[%zu];\n",
                    o->float_only ? "" : "  double d;\n",
                    P, r->arena_bytes / 8 + 1);
    ox_buf_puts(s, "#define ARENA(T, off) ((T *)(void *)(arena + (off)))\n\n");
  }
  if (blob)
    ox_buf_printf(s,
                  "static const unsigned char *%s_weights; /* set by %s_set_weights() */\n"
                  "#define WEIGHT(T, off) ((const T *)(const void *)(%s_weights + (off)))\n\n",
                  P, P, P);
  put_target(c, s, true);
  ox_buf_append(s, c->consts.data, c->consts.size);
  ox_buf_append(s, c->fdone.data, c->fdone.size);
  put_target(c, s, false);
  ox_buf_printf(s, "size_t %s_arena_size(void) { return %s_ARENA_BYTES; }\n\n", P, P);
  if (blob) {
    uint64_t fp = 0;
    for (size_t i = 0; i < 8; i++) fp |= (uint64_t)r->weights.data[24 + i] << (8 * i);
    ox_buf_printf(
        s,
        "static uint64_t %s_rd(const unsigned char *p, size_t n) {\n"
        "  uint32_t v32;\n  uint64_t v64;\n"
        "  if (n == 4) {\n    memcpy(&v32, p, 4);\n    return v32;\n  }\n"
        "  memcpy(&v64, p, 8);\n  return v64;\n}\n\n"
        "int %s_set_weights(const void *blob, size_t size) {\n"
        "  const unsigned char *b = (const unsigned char *)blob;\n"
        "  %s_weights = NULL;\n"
        "  if (!b || (uintptr_t)b %% %s_WEIGHTS_ALIGN != 0) return %s_ERR_BLOB_ALIGN;\n"
        "  if (size != %s_WEIGHTS_BYTES) return %s_ERR_BLOB_SIZE;\n"
        "  /* magic, byte order (read natively), version, header size, total size */\n"
        "  if (memcmp(b, \"ONNXCWB\", 8) != 0 || %s_rd(b + 32, 4) != 0x01020304u ||\n"
        "      %s_rd(b + 8, 4) != %d || %s_rd(b + 12, 4) != %d || %s_rd(b + 16, 8) != size)\n"
        "    return %s_ERR_BLOB_HEADER;\n"
        "  if (%s_rd(b + 24, 8) != UINT64_C(0x%016llx)) return %s_ERR_BLOB_MODEL;\n"
        "  %s_weights = b;\n  return 0;\n}\n\n",
        P, P, P, P, P, P, P, P, P, OX_CG_BLOB_VERSION, P, OX_CG_BLOB_HEADER, P, P, P,
        (unsigned long long)fp, P, P);
  }
  ox_buf_printf(s, "int %s_run_with_arena(void *arena_mem%s%s) {\n", P, *prm ? ", " : "", prm);
  if (temps)
    ox_buf_printf(s,
                  "  unsigned char *arena = (unsigned char *)arena_mem;\n"
                  "  if (!arena || (uintptr_t)arena %% %s_ARENA_ALIGN != 0) return "
                  "%s_ERR_ARENA;\n",
                  P, P);
  else
    ox_buf_puts(s, "  (void)arena_mem;\n");
  if (blob) ox_buf_printf(s, "  if (!%s_weights) return %s_ERR_WEIGHTS;\n", P, P);
  for (size_t i = 0; i < n_in; i++) ox_buf_printf(s, "  (void)%s;\n", ins[i]->cname);
  for (size_t i = 0; i < n_out; i++) ox_buf_printf(s, "  (void)%s;\n", outs[i]->cname);
  for (size_t k = 0; k < n_calls; k++) {
    if (!calls[k].fname) continue;
    ox_buf_printf(s, "  %s(", calls[k].fname);
    for (size_t i = 0; i < calls[k].n_args; i++)
      ox_buf_printf(s, "%s%s", i ? ", " : "", arg_expr(c, calls[k].args[i]));
    ox_buf_puts(s, ");\n");
  }
  /* outputs that no node writes: graph inputs, constants, repeated outputs */
  for (size_t i = 0; i < n_out; i++) {
    cg_val *v = find_val(c, outs[i]->name);
    if (v && !(v->kind == CG_OUTPUT && v->index == i) && v->nbytes)
      ox_buf_printf(s, "  memcpy(%s, %s, %zu);\n", outs[i]->cname, arg_expr(c, v), v->nbytes);
  }
  ox_buf_puts(s, "  return 0;\n}\n");
  if (!o->caller_arena)
    ox_buf_printf(s, "\nint %s_run(%s) {\n  return %s_run_with_arena(%s%s);\n}\n", P,
                  *prm ? prm : "void", P, temps ? ox_arena_printf(c->a, "%s_arena", P) : "NULL",
                  nm);
  if (temps) ox_buf_puts(s, "\n#undef ARENA\n");
  if (blob) ox_buf_puts(s, "#undef WEIGHT\n");
  ox_buf_free(&params);
  ox_buf_free(&names);
}

static int codegen_model(ox_model *m, const ox_cg_opts *o, ox_cg_result *r, ox_err *e,
                         const cg_inlined *fi) {
  memset(r, 0, sizeof *r);
  if (!m || !m->proto || !m->proto->graph)
    return ox_err_set(e, OX_EINVAL, "compile: the model has no graph");
  const char *P = o && o->prefix ? o->prefix : "model";
  if (!*P || (*P >= '0' && *P <= '9'))
    return ox_err_set(e, OX_EINVAL, "compile: prefix '%s' is not a C identifier", P);
  for (const char *p = P; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return ox_err_set(e, OX_EINVAL, "compile: prefix '%s' is not a C identifier", P);
  ox_infer_opts io = {false, o ? o->bindings : NULL, o ? o->n_bindings : 0, NULL, NULL};
  int rc = ox_infer_model(m, &io, NULL, e);
  if (rc) return ox_err_prefix(e, "compile: shape inference");

  cg_ctx cx = {0}, *c = &cx;
  c->m = m;
  c->g = m->proto->graph;
  c->opset = ox_opset_version(m->proto->opset_import, m->proto->n_opset_import, "");
  c->prefix = P;
  c->e = e;
  c->a = ox_arena_new();
  ox_map_init(&c->by_name);
  ox_map_init(&c->last_read);
  ox_map types, out_names, seen;
  ox_map_init(&types);
  ox_map_init(&out_names);
  ox_map_init(&seen);
  ox_cg_opts oo = o ? *o : (ox_cg_opts){0};
  oo.prefix = P;
  if (!oo.weights_min) oo.weights_min = OX_CG_WEIGHTS_MIN_DEFAULT;
  c->o = &oo;
  cg_call *calls = NULL;
  cg_val **ins = NULL, **outs = NULL;
  size_t n_in = 0;
  const ox_graph *g = c->g;
  if (!c->a) {
    rc = ox_err_set(e, OX_ENOMEM, "compile: out of memory");
    goto done;
  }
  /* values known at compile time become constants, shapes static (cg_fold.c) */
  if ((rc = ox_cg_fold_static(m, &io, c->a, &m, e))) goto done;
  c->m = m;
  c->g = m->proto->graph;
  g = c->g;
  if (!oo.header_name) oo.header_name = ox_arena_printf(c->a, "%s.h", P);
  /* inferred types by name: the bodies' values, then the graph's
   * value_info, inputs and outputs */
  sub_types(&types, g);
  c->types = &types;
  c->out_names = &out_names;
  for (size_t i = 0; i < g->n_value_info; i++)
    ox_map_put(&types, g->value_info[i].name, (uintptr_t)g->value_info[i].type);
  for (size_t i = 0; i < g->n_input; i++)
    ox_map_put(&types, g->input[i].name, (uintptr_t)g->input[i].type);
  for (size_t i = 0; i < g->n_output; i++) {
    ox_map_put(&types, g->output[i].name, (uintptr_t)g->output[i].type);
    uintptr_t u;
    if (!ox_map_get(&out_names, g->output[i].name, &u))
      ox_map_put(&out_names, g->output[i].name, i);
  }
  for (size_t i = 0; i < g->n_sparse_initializer; i++) {
    rc = ox_err_set(e, OX_EUNSUPPORTED, "compile: sparse initializers are not compiled");
    goto done;
  }
  for (size_t i = 0; i < g->n_initializer; i++) {
    const ox_tensor *t = &g->initializer[i];
    cg_val *v = add_val(c, t->name);
    ox_value *cv = v ? ox_value_from_tensor_proto(t, false, e) : NULL;
    if (!cv) {
      rc = ox_err_prefix(e, "compile: initializer '%s'", t->name);
      goto done;
    }
    if ((rc = make_const(c, v, cv, "initializer"))) goto done;
  }
  /* int8 QDQ units become integer-only nodes (ops_quant.c) */
  if ((rc = ox_cg_fold_qdq(c))) goto done;
  g = c->g;
  ins = calloc(g->n_input + 1, sizeof *ins);
  outs = calloc(g->n_output + 1, sizeof *outs);
  calls = calloc(g->n_node + 1, sizeof *calls);
  if (!ins || !outs || !calls) {
    rc = ox_err_set(e, OX_ENOMEM, "compile: out of memory");
    goto done;
  }
  for (size_t i = 0; i < g->n_input; i++) {
    if (find_val(c, g->input[i].name)) continue; /* an initializer: a constant here */
    cg_val *v = add_val(c, g->input[i].name);
    if (!v || (rc = take_type(c, v, g->input[i].type, "graph input"))) goto done;
    v->kind = CG_INPUT;
    v->index = n_in;
    v->cname = param_name(c, "in", v->name, n_in, &seen);
    ins[n_in++] = v;
  }
  for (size_t i = 0; i < g->n_node; i++)
    if (note_reads(&c->last_read, &g->node[i], i)) {
      rc = ox_err_set(e, OX_ENOMEM, "compile: out of memory");
      goto done;
    }
  for (size_t i = 0; i < g->n_node; i++)
    if ((rc = gen_node(c, &g->node[i], i, &calls[i]))) {
      ox_cg_inline_blame(fi, &g->node[i], e); /* a node of a local function's body */
      goto done;
    }
  if (oo.target == OX_CG_CORTEXM || oo.float_only)
    for (size_t i = 0; i < c->n_vals; i++)
      if (c->vals[i]->dtype == OX_DOUBLE) {
        rc = ox_err_set(e, OX_EUNSUPPORTED,
                        "compile: '%s' is float64: %s compiles single precision only",
                        c->vals[i]->name, oo.float_only ? "--float-only" : "the cortex-m target");
        goto done;
      }
  c->node = NULL;
  for (size_t i = 0; i < g->n_output; i++) {
    cg_val *v = ox_arena_calloc(c->a, 1, sizeof *v), *src = find_val(c, g->output[i].name);
    if (!v) {
      rc = ox_err_set(e, OX_ENOMEM, "compile: out of memory");
      goto done;
    }
    if (!src) {
      rc = ox_err_set(e, OX_EMODEL, "compile: graph output '%s' is produced by no node",
                      g->output[i].name);
      goto done;
    }
    *v = *src;
    v->cname = param_name(c, "out", v->name, i, &seen);
    outs[i] = v;
    if (src->kind == CG_OUTPUT && src->index == i) src->cname = v->cname;
  }
  /* values that are graph outputs take the output's parameter name */
  for (size_t i = 0; i < c->n_vals; i++)
    if (c->vals[i]->kind == CG_OUTPUT) c->vals[i]->cname = outs[c->vals[i]->index]->cname;
  r->arena_bytes_no_inplace = plan_arena(c, false);
  r->arena_bytes = plan_arena(c, true);
  if (r->arena_bytes == (size_t)-1 || r->arena_bytes_no_inplace == (size_t)-1) {
    rc = ox_err_set(e, OX_ENOMEM, "compile: out of memory");
    goto done;
  }
  /* constants: those a call or an output reads, in the order they were made */
  {
    for (size_t k = 0; k < g->n_node; k++)
      for (size_t i = 0; i < calls[k].n_args; i++) calls[k].args[i]->first = -2; /* mark */
    for (size_t i = 0; i < g->n_output; i++) {
      cg_val *v = find_val(c, outs[i]->name);
      if (v && v->kind == CG_CONST) v->first = -2;
    }
    bool any_blob = false;
    for (size_t i = 0; i < c->n_vals; i++) {
      cg_val *v = c->vals[i];
      if (v->kind != CG_CONST || v->first != -2) continue;
      if (oo.weights_blob && v->nbytes >= oo.weights_min && !cg_packed_bits(v->dtype)) {
        v->in_blob = any_blob = true;
        continue;
      }
      write_const(c, v);
      r->const_bytes += v->nbytes;
    }
    if (any_blob) {
      write_blob(c, &r->weights);
      if (r->weights.failed || !r->weights.size) {
        rc = ox_err_set(e, OX_ENOMEM, "compile: out of memory");
        goto done;
      }
    }
  }
  r->n_functions = c->n_funcs;
  c->ins = ins;
  c->n_ins = n_in;
  c->outs = outs;
  c->n_outs = g->n_output;
  write_texts(c, &oo, calls, g->n_node, r);
  if (oo.with_main && (rc = ox_cg_write_main(c, &oo, &r->main_source))) goto done;
  char what[96];
  if (oo.float_only && (ox_cg_find_double((const char *)r->source.data, r->source.size, what,
                                          sizeof what) ||
                        ox_cg_find_double((const char *)r->header.data, r->header.size, what,
                                          sizeof what))) {
    rc = ox_err_set(e, OX_EUNSUPPORTED, "compile: --float-only: the generated file uses %s",
                    what);
    goto done;
  }
  ox_buf_putc(&r->source, 0);
  ox_buf_putc(&r->header, 0);
  if (oo.with_main) ox_buf_putc(&r->main_source, 0);
  if (r->source.failed || r->header.failed || r->main_source.failed || c->consts.failed ||
      c->funcs.failed || c->fdone.failed)
    rc = ox_err_set(e, OX_ENOMEM, "compile: out of memory");
done:
  if (c->a)
    for (size_t i = 0; i < c->n_vals; i++) ox_value_unref(c->vals[i]->cv);
  ox_buf_free(&c->consts);
  ox_buf_free(&c->funcs);
  ox_buf_free(&c->fdone);
  ox_buf_free(&c->body);
  ox_map_free(&c->by_name);
  ox_map_free(&c->last_read);
  ox_map_free(&types);
  ox_map_free(&out_names);
  ox_map_free(&seen);
  free(calls);
  free(ins);
  free(outs);
  ox_arena_free(c->a);
  if (rc) ox_codegen_result_free(r);
  return rc;
}

/* model-local functions are inlined first (cg_inline.c) */
int ox_codegen_model(ox_model *m, const ox_cg_opts *o, ox_cg_result *r, ox_err *e) {
  cg_inlined fi;
  int rc = ox_cg_inline(m, &fi, e);
  if (rc) memset(r, 0, sizeof *r);
  else rc = codegen_model(fi.m, o, r, e, &fi);
  ox_cg_inline_free(&fi);
  return rc;
}

void ox_codegen_result_free(ox_cg_result *r) {
  if (!r) return;
  ox_buf_free(&r->source);
  ox_buf_free(&r->header);
  ox_buf_free(&r->main_source);
  ox_buf_free(&r->weights);
}
