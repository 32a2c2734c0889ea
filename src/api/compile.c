/* compile.c - onnxc_compile of the public API, over src/codegen. */
#include <stdlib.h>
#include <string.h>

#include "../codegen/codegen.h"
#include "onnxc.h"

static onnxc_status fail(onnxc_error *err, int code, const char *msg) {
  if (err) {
    err->code = code;
    strncpy(err->msg, msg, sizeof err->msg - 1);
    err->msg[sizeof err->msg - 1] = 0;
  }
  return (onnxc_status)code;
}

onnxc_status onnxc_compile(onnxc_model *m, const onnxc_compile_options *opts,
                           onnxc_compile_output *out, onnxc_error *err) {
  if (!out) return fail(err, ONNXC_ERR_INVALID_ARG, "onnxc_compile: out is NULL");
  memset(out, 0, sizeof *out);
  if (!m) return fail(err, ONNXC_ERR_INVALID_ARG, "onnxc_compile: model is NULL");
  ox_cg_opts o = {0};
  ox_infer_binding *b = NULL;
  if (opts) {
    o.prefix = opts->prefix;
    o.header_name = opts->header_name;
    o.source_name = opts->source_name;
    o.with_main = opts->with_main != 0;
    o.weights_blob = opts->weights_blob != 0;
    o.weights_min = opts->weights_min;
    o.blob_name = opts->weights_name;
    o.caller_arena = opts->caller_arena != 0;
    if (opts->target < ONNXC_COMPILE_PORTABLE || opts->target > ONNXC_COMPILE_CORTEX_M)
      return fail(err, ONNXC_ERR_INVALID_ARG, "onnxc_compile: unknown target");
    o.target = opts->target;
    o.float_only = opts->float_only != 0;
    if (opts->n_bindings) {
      if (!opts->binding_names || !opts->binding_dims || !opts->binding_ranks)
        return fail(err, ONNXC_ERR_INVALID_ARG, "onnxc_compile: bindings without their arrays");
      b = calloc(opts->n_bindings, sizeof *b);
      if (!b) return fail(err, ONNXC_ERR_NOMEM, "onnxc_compile: out of memory");
      for (size_t i = 0; i < opts->n_bindings; i++) {
        b[i].name = opts->binding_names[i];
        b[i].dims = opts->binding_dims[i];
        b[i].rank = opts->binding_ranks[i];
      }
      o.bindings = b;
      o.n_bindings = opts->n_bindings;
    }
  }
  ox_cg_result r;
  ox_err e = {0};
  int rc = ox_codegen_model((ox_model *)m, &o, &r, &e);
  free(b);
  if (rc) return fail(err, rc, e.msg);
  /* the buffers are NUL-terminated text: hand them over as strings */
  out->source = (char *)r.source.data;
  out->header = (char *)r.header.data;
  out->main_source = o.with_main ? (char *)r.main_source.data : NULL;
  if (!o.with_main) ox_buf_free(&r.main_source);
  out->arena_bytes = r.arena_bytes;
  out->const_bytes = r.const_bytes;
  out->n_functions = r.n_functions;
  out->arena_bytes_no_inplace = r.arena_bytes_no_inplace;
  if (r.weights.size) {
    out->weights = r.weights.data;
    out->weights_bytes = r.weights.size;
  } else {
    ox_buf_free(&r.weights);
  }
  return ONNXC_OK;
}

void onnxc_compile_output_free(onnxc_compile_output *out) {
  if (!out) return;
  free(out->source);
  free(out->header);
  free(out->main_source);
  free(out->weights);
  memset(out, 0, sizeof *out);
}

const char *onnxc_compile_op_name(size_t i) { return ox_codegen_op_name(i); }
