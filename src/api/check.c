/* check.c - onnxc_check of include/onnxc.h (an onnxc_model is an ox_model).
 * The checker itself (src/check) sits above shape inference in the layers;
 * `full` mode, which adds strict inference like the reference's
 * check_model(full_check=True), is put together here. */
#include "../check/check.h"

#include <onnxc.h>
#include <stdlib.h>
#include <string.h>

#include "../infer/infer.h"
#include "../proto/proto.h"
#include "api_impl.h"

/* Strict inference on a copy (the caller's model is not touched). Adds one
 * error line (and the inference warnings) to report; returns OX_OK, OX_EMODEL
 * or another failure code. */
static int full_inference(const ox_model *m, const struct onnxc_op_registry *custom, ox_buf *report,
                          size_t *n_errors, ox_err *err) {
  ox_buf enc = {0};
  ox_err e = {0};
  int rc = ox_pb_encode_model(m->proto, &enc, &e);
  ox_model *copy = NULL;
  if (rc == OX_OK)
    rc = ox_model_load_buffer(enc.data, enc.size, m->dir, &(ox_load_opts){.no_external_data = true},
                              &copy, &e);
  if (rc != OX_OK) {
    ox_buf_free(&enc);
    return ox_err_set(err, rc, "check --full: could not copy the model: %s", e.msg);
  }
  ox_infer_opts io = {.strict = true, .custom = custom ? ox_api_custom_infer : NULL,
                      .custom_user = custom};
  ox_buf warn = {0};
  rc = ox_infer_model(copy, &io, &warn, &e);
  if (report && warn.size) {
    /* inference warnings as warning lines */
    size_t start = 0;
    for (size_t i = 0; i < warn.size; i++)
      if (warn.data[i] == '\n') {
        ox_buf_printf(report, "warning: %.*s\n", (int)(i - start), (const char *)warn.data + start);
        start = i + 1;
      }
  }
  ox_buf_free(&warn);
  ox_model_free(copy);
  ox_buf_free(&enc);
  if (rc == OX_OK) return OX_OK;
  if (rc == OX_ENOMEM) return ox_err_set(err, rc, "check --full: out of memory");
  if (report) ox_buf_printf(report, "%s [full-inference]\n", e.msg);
  if (n_errors) (*n_errors)++;
  return ox_err_set(err, OX_EMODEL, "%.900s [full-inference]", e.msg);
}

static int api_check(const ox_model *m, const onnxc_check_options *opts, ox_buf *report,
                     size_t *n_errors, ox_err *err) {
  ox_check_opts o = {0};
  if (opts) {
    o.strict = opts->strict != 0;
    o.full = false; /* handled here */
  }
  size_t n = 0;
  int rc = ox_check_model(m, &o, report, &n, err);
  if ((rc == OX_OK || rc == OX_EMODEL) && opts && opts->custom_ops) {
    size_t bad = ox_api_custom_check(opts->custom_ops, m, report);
    n += bad;
    if (bad && rc == OX_OK)
      rc = ox_err_set(err, OX_EMODEL, "%zu nodes of custom operators have a wrong arity", bad);
  }
  if (opts && opts->full && (rc == OX_OK || rc == OX_EMODEL)) {
    /* like the reference, inference only runs on a model that passed */
    if (rc == OX_OK) {
      int r2 = full_inference(m, opts->custom_ops, report, &n, err);
      if (r2 != OX_OK) rc = r2;
    } else if (report) {
      ox_buf_printf(report, "warning: --full: shape inference skipped, the model has errors\n");
    }
  }
  if (n_errors) *n_errors = n;
  return rc;
}

onnxc_status onnxc_check(const onnxc_model *m, const onnxc_check_options *opts, char **report,
                         onnxc_error *err) {
  if (report) *report = NULL;
  if (!m) return (onnxc_status)ox_err_set((ox_err *)err, OX_EINVAL, "check: model is NULL");
  ox_buf buf = {0};
  int rc = api_check((const ox_model *)m, opts, report ? &buf : NULL, NULL, (ox_err *)err);
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

size_t onnxc_check_rule_count(void) { return ox_check_rule_count(); }

const char *onnxc_check_rule_id(size_t i) {
  return i < ox_check_rule_count() ? ox_check_rule_at(i)->id : NULL;
}

const char *onnxc_check_rule_section(size_t i) {
  return i < ox_check_rule_count() ? ox_check_rule_at(i)->section : NULL;
}

const char *onnxc_check_rule_what(size_t i) {
  return i < ox_check_rule_count() ? ox_check_rule_at(i)->what : NULL;
}
