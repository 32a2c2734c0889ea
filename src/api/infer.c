/* infer.c - onnxc_infer_shapes of the public API. */
#include <stdlib.h>
#include <string.h>

#include "../infer/infer.h"
#include "api_impl.h"
#include "onnxc.h"

onnxc_status onnxc_infer_shapes(onnxc_model *m, const onnxc_infer_options *opts, char **warnings,
                                onnxc_error *err) {
  if (warnings) *warnings = NULL;
  if (!m) {
    if (err) {
      err->code = ONNXC_ERR_INVALID_ARG;
      strcpy(err->msg, "onnxc_infer_shapes: model is NULL");
    }
    return ONNXC_ERR_INVALID_ARG;
  }
  ox_infer_binding *b = NULL;
  size_t nb = opts ? opts->n_bindings : 0;
  if (nb) {
    b = calloc(nb, sizeof *b);
    if (!b) return ONNXC_ERR_NOMEM;
    for (size_t i = 0; i < nb; i++) {
      b[i].name = opts->binding_names[i];
      b[i].dims = opts->binding_dims[i];
      b[i].rank = opts->binding_ranks[i];
    }
  }
  ox_infer_opts o = {opts && opts->strict, b, nb, NULL, NULL};
  if (opts && opts->custom_ops) {
    o.custom = ox_api_custom_infer;
    o.custom_user = opts->custom_ops;
  }
  ox_buf w = {0};
  ox_err e = {0};
  int rc = ox_infer_model((ox_model *)m, &o, warnings ? &w : NULL, &e);
  free(b);
  if (warnings && w.size) {
    ox_buf_putc(&w, 0);
    *warnings = (char *)w.data;
  } else {
    ox_buf_free(&w);
  }
  if (rc != OX_OK && err) {
    err->code = rc;
    memcpy(err->msg, e.msg, sizeof err->msg);
  }
  return (onnxc_status)rc;
}
