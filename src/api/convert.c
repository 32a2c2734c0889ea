/* convert.c - opset conversion of the public API: onnxc_convert_opset and
 * the lowest target it can reach, onnxc_model_min_opset. */
#include <string.h>

#include "../version/version.h"
#include "onnxc.h"

onnxc_status onnxc_convert_opset(onnxc_model *m, int64_t target_opset, onnxc_error *err) {
  if (!m) {
    if (err) {
      err->code = ONNXC_ERR_INVALID_ARG;
      strcpy(err->msg, "onnxc_convert_opset: model is NULL");
    }
    return ONNXC_ERR_INVALID_ARG;
  }
  ox_err e = {0};
  int rc = ox_convert_opset((ox_model *)m, target_opset, &e);
  if (rc != OX_OK && err) {
    err->code = rc;
    memcpy(err->msg, e.msg, sizeof err->msg);
  }
  return (onnxc_status)rc;
}

int64_t onnxc_model_min_opset(const onnxc_model *m) {
  return m ? ox_version_min_opset((const ox_model *)m) : 1;
}
