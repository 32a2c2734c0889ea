/* emit.c - helpers the operator generators share: C types and literals,
 * the broadcast loop nest, reading constant inputs and attributes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

void cg_printf(cg_ctx *c, const char *fmt, ...) {
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    ox_buf_append(&c->funcs, small, (size_t)n);
    return;
  }
  if (!ox_buf_reserve(&c->funcs, (size_t)n + 1)) return;
  va_start(ap, fmt);
  vsnprintf((char *)c->funcs.data + c->funcs.size, (size_t)n + 1, fmt, ap);
  va_end(ap);
  c->funcs.size += (size_t)n;
}

const char *cg_ctype(int32_t dt) {
  switch (dt) {
    case OX_FLOAT:
      return "float";
    case OX_DOUBLE:
      return "double";
    case OX_INT8:
      return "int8_t";
    case OX_UINT8:
      return "uint8_t";
    case OX_INT16:
      return "int16_t";
    case OX_UINT16:
      return "uint16_t";
    case OX_INT32:
      return "int32_t";
    case OX_UINT32:
      return "uint32_t";
    case OX_INT64:
      return "int64_t";
    case OX_UINT64:
      return "uint64_t";
    case OX_BOOL:
      return "uint8_t"; /* 0 or 1, one byte as in ONNX files */
    case OX_FLOAT16:
    case OX_BFLOAT16:
      return "uint16_t"; /* the bits; computed as float (emit_types.c) */
    case OX_FLOAT8E4M3FN:
    case OX_FLOAT8E4M3FNUZ:
    case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ:
    case OX_FLOAT8E8M0:
      return "uint8_t";
    case OX_INT4:
    case OX_UINT4:
    case OX_INT2:
    case OX_UINT2:
    case OX_FLOAT4E2M1:
      return "uint8_t"; /* packed as ONNX packs them: element 0 in the low bits */
    default:
      return NULL;
  }
}

const char *cg_mathfn(cg_ctx *c, int32_t dt, const char *fn) {
  return dt == OX_FLOAT ? ox_arena_printf(c->a, "%sf", fn) : fn;
}

void cg_float_lit(char *buf, size_t size, double v, bool is_float) {
  if (isnan(v))
    snprintf(buf, size, "%sNAN", signbit(v) ? "-" : "");
  else if (isinf(v))
    snprintf(buf, size, "%sINFINITY", v < 0 ? "-" : "");
  else
    snprintf(buf, size, "%a%s", v, is_float ? "f" : "");
}

int cg_need_float(cg_ctx *c, const cg_val *v) {
  if (v->dtype == OX_FLOAT || v->dtype == OX_DOUBLE) return OX_OK;
  return cg_fail(c, OX_EUNSUPPORTED, "element type %s is not compiled for this operator",
                 ox_dtype_get(v->dtype) ? ox_dtype_get(v->dtype)->name : "?");
}

void cg_strides(const cg_val *v, int64_t *s) {
  int64_t acc = 1;
  for (size_t i = v->rank; i-- > 0;) {
    s[i] = acc;
    acc *= v->dims[i];
  }
}

void cg_bcast_loop(cg_ctx *c, const int64_t *dims, size_t rank, cg_val *const *ops, size_t n_ops,
                   const char *body) {
  int64_t st[8][CG_MAX_RANK];
  int64_t numel = 1;
  for (size_t d = 0; d < rank; d++) numel *= dims[d];
  bool simple = true; /* every operand is the full shape or a single element */
  for (size_t k = 0; k < n_ops; k++) {
    const cg_val *v = ops[k];
    int64_t vs[CG_MAX_RANK];
    cg_strides(v, vs);
    size_t off = rank - v->rank;
    for (size_t d = 0; d < rank; d++) {
      int64_t vd = d < off ? 1 : v->dims[d - off];
      st[k][d] = vd == 1 ? 0 : vs[d - off];
    }
    if (v->numel != 1 && v->numel != numel) simple = false;
    if (v->numel == numel && numel != 1) {
      /* full size, but maybe transposed by broadcasting ([3,1] against [1,3]) */
      for (size_t d = 0; d < rank; d++)
        if (dims[d] != (d < off ? 1 : v->dims[d - off])) simple = false;
    }
  }
  if (simple) {
    cg_printf(c, "  for (size_t o = 0; o < %lld; o++) {\n", (long long)numel);
    for (size_t k = 0; k < n_ops; k++)
      cg_printf(c, "    const size_t i%zu = %s;\n", k, ops[k]->numel == 1 ? "0" : "o");
    cg_printf(c, "    %s\n  }\n", body);
    return;
  }
  cg_printf(c, "  size_t o = 0;\n");
  for (size_t d = 0; d < rank; d++)
    cg_printf(c, "%*sfor (size_t d%zu = 0; d%zu < %lld; d%zu++)\n", (int)(2 + 2 * d), "", d, d,
              (long long)dims[d], d);
  int ind = (int)(2 + 2 * rank);
  cg_printf(c, "%*s{\n", ind, "");
  for (size_t k = 0; k < n_ops; k++) {
    cg_printf(c, "%*s  const size_t i%zu = 0", ind, "", k);
    for (size_t d = 0; d < rank; d++)
      if (st[k][d]) cg_printf(c, " + d%zu * %lld", d, (long long)st[k][d]);
    cg_printf(c, ";\n");
  }
  cg_printf(c, "%*s  %s\n%*s  o++;\n%*s}\n", ind, "", body, ind, "", ind, "");
}

void cg_split(const cg_val *v, size_t axis, int64_t *outer, int64_t *inner) {
  *outer = *inner = 1;
  for (size_t d = 0; d < axis && d < v->rank; d++) *outer *= v->dims[d];
  for (size_t d = axis + 1; d < v->rank; d++) *inner *= v->dims[d];
}

bool cg_axis(int64_t axis, size_t rank, size_t *out) {
  if (axis < 0) axis += (int64_t)rank;
  if (axis < 0 || axis >= (int64_t)rank) return false;
  *out = (size_t)axis;
  return true;
}

bool cg_const_ints(const cg_val *v, int64_t *out, size_t cap, size_t *n) {
  if (!v || v->kind != CG_CONST || (size_t)v->numel > cap) return false;
  for (int64_t i = 0; i < v->numel; i++) {
    const void *p = v->cv->data;
    switch (v->dtype) {
      case OX_INT64:
        out[i] = ((const int64_t *)p)[i];
        break;
      case OX_INT32:
        out[i] = ((const int32_t *)p)[i];
        break;
      case OX_UINT64:
        out[i] = (int64_t)((const uint64_t *)p)[i];
        break;
      default:
        return false;
    }
  }
  *n = (size_t)v->numel;
  return true;
}

bool cg_const_scalar(const cg_val *v, double *out) {
  if (!v || v->kind != CG_CONST || v->numel != 1) return false;
  const void *p = v->cv->data;
  switch (v->dtype) {
    case OX_FLOAT:
      *out = ((const float *)p)[0];
      return true;
    case OX_DOUBLE:
      *out = ((const double *)p)[0];
      return true;
    case OX_INT64:
      *out = (double)((const int64_t *)p)[0];
      return true;
    case OX_INT32:
      *out = ((const int32_t *)p)[0];
      return true;
    case OX_INT8:
      *out = ((const int8_t *)p)[0];
      return true;
    case OX_UINT8:
    case OX_BOOL:
      *out = ((const uint8_t *)p)[0];
      return true;
    default:
      return false;
  }
}

bool cg_attr_ints(const ox_node *n, const char *name, int64_t *out, size_t cap, size_t *count) {
  const ox_attr *a = ox_node_attr(n, name);
  if (!a || a->n_ints > cap) return false;
  memcpy(out, a->ints, a->n_ints * sizeof(int64_t));
  *count = a->n_ints;
  return true;
}

const char *cg_type_str(cg_ctx *c, const cg_val *v) {
  char buf[256];
  const ox_dtype_info *di = ox_dtype_get(v->dtype);
  size_t k = (size_t)snprintf(buf, sizeof buf, "%s[", di ? di->name : "?");
  for (size_t i = 0; i < v->rank && k < sizeof buf - 24; i++)
    k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%lld", i ? "," : "", (long long)v->dims[i]);
  snprintf(buf + k, sizeof buf - k, "]");
  return ox_arena_strdup(c->a, buf);
}
