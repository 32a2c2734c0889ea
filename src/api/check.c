/* check.c - onnxc_check of include/onnxc.h (an onnxc_model is an ox_model). */
#include "../check/check.h"

#include <onnxc.h>
#include <stdlib.h>
#include <string.h>

onnxc_status onnxc_check(const onnxc_model *m, const onnxc_check_options *opts, char **report,
                         onnxc_error *err) {
  if (report) *report = NULL;
  if (!m) return (onnxc_status)ox_err_set((ox_err *)err, OX_EINVAL, "check: model is NULL");
  ox_check_opts o = {0};
  if (opts) {
    o.full = opts->full != 0;
    o.strict = opts->strict != 0;
  }
  ox_buf buf = {0};
  int rc = ox_check_model((const ox_model *)m, &o, report ? &buf : NULL, NULL, (ox_err *)err);
  if (report && (rc == OX_OK || rc == OX_EMODEL)) {
    ox_buf_putc(&buf, '\0');
    if (buf.failed) {
      ox_buf_free(&buf);
      return (onnxc_status)ox_err_set((ox_err *)err, OX_ENOMEM, "check: out of memory");
    }
    *report = (char *)buf.data; /* malloc'd by ox_buf */
    return (onnxc_status)rc;
  }
  ox_buf_free(&buf);
  return (onnxc_status)rc;
}
