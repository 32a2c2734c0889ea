/* cg_widen.c - float16 and bfloat16 on the float generators: the inputs
 * converted to float arrays, the node generated for float, the outputs
 * rounded back.
 *
 * The runtime computes these operators on float16 and bfloat16 in float and
 * rounds each output once (its kernels convert the operands to float), and
 * C has no arithmetic type for them; so a MatMul, Conv, Pad ... on them is
 * the float node between two conversions. The float copies live in the
 * arena as the node's scratch arrays (cg_scratch), and inside the node's
 * function a block declares X<i> and Y<j> again as float pointers to them,
 * so the float generator's text is used unchanged. */
#include <string.h>

#include "cg_impl.h"

/* The operators compiled this way (the float generator takes any shape
 * and attribute it takes for float). */
static const char *const widen_ops[] = {
    "MatMul", "Gemm", "Conv", "ConvTranspose", "Pad", "Clip", "MaxPool", "AveragePool",
    "GlobalAveragePool", "GlobalMaxPool", "Softmax", "LogSoftmax", "BatchNormalization",
    "LayerNormalization", "InstanceNormalization", "ReduceMean", "ReduceSum", "ReduceMax",
    "ReduceMin", "LpNormalization", "Resize", "Einsum", "Attention", "QLinearMatMul", "Range",
    "LinearAttention", "CausalConvWithState", "SwiGLU",
    "SimplifiedLayerNormalization" /* onnxruntime's, ops_ms_nn.c */};

bool cg_widen_op(const char *op) {
  for (size_t i = 0; i < sizeof widen_ops / sizeof widen_ops[0]; i++)
    if (strcmp(widen_ops[i], op) == 0) return true;
  return false;
}

static bool half(int32_t dt) { return dt == OX_FLOAT16 || dt == OX_BFLOAT16; }

bool cg_widen_node_ok(cg_ctx *c, const ox_node *n, cg_val **in) {
  if (!cg_widen_op(n->op_type) || cg_small_float_op(n->op_type)) return false;
  for (size_t i = 0; i < n->n_input; i++)
    if (in[i] && cg_is_small_float(in[i]->dtype) && !half(in[i]->dtype)) return false;
  for (size_t i = 0; i < n->n_output; i++) {
    uintptr_t t;
    const ox_type *ty =
        *n->output[i] && ox_map_get(c->types, n->output[i], &t) ? (const ox_type *)t : NULL;
    if (ty && ty->kind == OX_TYPE_TENSOR && ty->has_elem_type &&
        cg_is_small_float(ty->elem_type) && !half(ty->elem_type))
      return false;
  }
  return true;
}

bool cg_widen_needed(const ox_node *n, cg_val **in, size_t n_in, cg_val **out, size_t n_out) {
  if (!cg_widen_op(n->op_type) || cg_small_float_op(n->op_type)) return false;
  for (size_t i = 0; i < n_in; i++)
    if (in[i] && half(in[i]->dtype)) return true;
  for (size_t i = 0; i < n_out; i++)
    if (out[i] && half(out[i]->dtype)) return true;
  return false;
}

/* A float twin of v: a plain array (no constant data, so the generator
 * makes no compile-time use of float16 bits as floats). */
static cg_val *twin(cg_ctx *c, const cg_val *v) {
  cg_val *t = ox_arena_calloc(c->a, 1, sizeof *t);
  if (!t) return NULL;
  *t = *v;
  t->dtype = OX_FLOAT;
  t->kind = CG_TEMP;
  t->cv = NULL;
  t->alias = NULL;
  t->nbytes = (size_t)v->numel * sizeof(float);
  return t;
}

int cg_gen_widened(cg_ctx *c, cg_gen_fn gen, const ox_node *n, cg_val **in, size_t n_in,
                   cg_val **out, size_t n_out) {
  if (c->depth)
    return cg_fail(c, OX_EUNSUPPORTED,
                   "float16/bfloat16 on this operator is not compiled inside a control-flow body");
  cg_val **fin = ox_arena_calloc(c->a, n_in + 1, sizeof *fin);
  cg_val **fout = ox_arena_calloc(c->a, n_out + 1, sizeof *fout);
  const char **rout = ox_arena_calloc(c->a, n_out + 1, sizeof *rout);
  if (!fin || !fout || !rout) return ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  ox_buf decl = {0};
  int rc = OX_OK;
  for (size_t i = 0; i < n_in && !rc; i++) {
    fin[i] = in[i];
    if (!in[i] || !half(in[i]->dtype)) continue;
    cg_val *s = cg_scratch(c, OX_FLOAT, in[i]->numel);
    const char *r = s ? cg_ref(c, s) : NULL;
    const char *x = ox_arena_printf(c->a, "X%zu[i]", i);
    const char *ld = x ? cg_load(c, in[i]->dtype, x) : NULL;
    if (!(fin[i] = twin(c, in[i])) || !r || !ld) {
      rc = ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
      break;
    }
    cg_printf(c, "  for (size_t i = 0; i < %lld; i++) %s[i] = %s;\n", (long long)in[i]->numel, r,
              ld);
    ox_buf_printf(&decl, "    const float *restrict X%zu = %s;\n    (void)X%zu;\n", i, r, i);
  }
  for (size_t j = 0; j < n_out && !rc; j++) {
    fout[j] = out[j];
    if (!out[j] || !half(out[j]->dtype)) continue;
    cg_val *s = cg_scratch(c, OX_FLOAT, out[j]->numel);
    rout[j] = s ? cg_ref(c, s) : NULL;
    if (!(fout[j] = twin(c, out[j])) || !rout[j]) {
      rc = ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
      break;
    }
    ox_buf_printf(&decl, "    float *restrict Y%zu = %s;\n    (void)Y%zu;\n", j, rout[j], j);
  }
  if (!rc && decl.failed) rc = ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
  if (!rc) {
    /* the float node in a block of its own: X<i>, Y<j> are the float arrays */
    cg_printf(c, "  {\n%.*s", (int)decl.size, decl.data ? (const char *)decl.data : "");
    rc = gen(c, n, fin, n_in, fout, n_out);
    cg_printf(c, "  }\n");
  }
  for (size_t j = 0; j < n_out && !rc; j++) {
    if (!out[j] || !half(out[j]->dtype)) continue;
    const char *x = ox_arena_printf(c->a, "%s[i]", rout[j]);
    const char *st = x ? cg_store(c, out[j]->dtype, x, false) : NULL;
    if (!st) rc = ox_err_set(c->e, OX_ENOMEM, "compile: out of memory");
    else
      cg_printf(c, "  for (size_t i = 0; i < %lld; i++) Y%zu[i] = %s;\n",
                (long long)out[j]->numel, j, st);
  }
  ox_buf_free(&decl);
  return rc;
}

int cg_gen_maybe_widened(cg_ctx *c, cg_gen_fn gen, const ox_node *n, cg_val **in, size_t n_in,
                         cg_val **out, size_t n_out) {
  bool any = false;
  for (size_t i = 0; i < n_in + n_out; i++) {
    const cg_val *v = i < n_in ? in[i] : out[i - n_in];
    if (v && cg_is_small_float(v->dtype) && !half(v->dtype))
      return cg_fail(c, OX_EUNSUPPORTED, "only float16 and bfloat16 besides float are compiled");
    any |= v && half(v->dtype);
  }
  return any ? cg_gen_widened(c, gen, n, in, n_in, out, n_out) : gen(c, n, in, n_in, out, n_out);
}
