/* model.c - the public onnxc_model_* functions. An onnxc_model is the
 * internal ox_model behind an opaque pointer. */
#include <stdlib.h>
#include <string.h>

#include "model_file.h"
#include "../text/text.h"
#include "onnxc.h"

static onnxc_status out_err(onnxc_error *err, const ox_err *e, int rc) {
  if (err) {
    err->code = rc;
    memcpy(err->msg, e->msg, sizeof err->msg);
    err->msg[sizeof err->msg - 1] = 0;
  }
  return (onnxc_status)rc;
}

static ox_load_opts load_opts(const onnxc_load_options *o) {
  ox_load_opts lo = {0};
  if (o) {
    lo.skip_checksum = o->skip_checksum != 0;
    lo.no_external_data = o->no_external_data != 0;
  }
  return lo;
}

onnxc_status onnxc_model_load(const char *path, const onnxc_load_options *opts, onnxc_model **out,
                              onnxc_error *err) {
  ox_err e = {0};
  if (!out) return out_err(err, &e, ox_err_set(&e, OX_EINVAL, "onnxc_model_load: out is NULL"));
  *out = NULL;
  if (!path) return out_err(err, &e, ox_err_set(&e, OX_EINVAL, "onnxc_model_load: path is NULL"));
  ox_load_opts lo = load_opts(opts);
  ox_model *m = NULL;
  int rc = ox_api_model_load(path, &lo, &m, &e);
  if (rc) return out_err(err, &e, rc);
  *out = (onnxc_model *)m;
  return ONNXC_OK;
}

onnxc_status onnxc_model_load_buffer(const void *data, size_t size, const char *base_dir,
                                     const onnxc_load_options *opts, onnxc_model **out,
                                     onnxc_error *err) {
  ox_err e = {0};
  if (!out || (!data && size))
    return out_err(err, &e, ox_err_set(&e, OX_EINVAL, "onnxc_model_load_buffer: bad arguments"));
  ox_load_opts lo = load_opts(opts);
  ox_model *m = NULL;
  int rc = ox_model_load_buffer(data, size, base_dir, &lo, &m, &e);
  *out = (onnxc_model *)m;
  return rc ? out_err(err, &e, rc) : ONNXC_OK;
}

onnxc_status onnxc_model_parse_text(const char *text, size_t size, const char *name,
                                    onnxc_model **out, onnxc_error *err) {
  ox_err e = {0};
  if (!out || (!text && size))
    return out_err(err, &e, ox_err_set(&e, OX_EINVAL, "onnxc_model_parse_text: bad arguments"));
  *out = NULL;
  ox_model *m = ox_model_new();
  if (!m) return out_err(err, &e, ox_err_set(&e, OX_ENOMEM, "out of memory"));
  ox_model_proto *p = NULL;
  int rc = ox_text_parse_model(text ? text : "", size, name ? name : "<text>", m->arena, &p, &e);
  if (rc) {
    ox_model_free(m);
    return out_err(err, &e, rc);
  }
  m->proto = p;
  *out = (onnxc_model *)m;
  return ONNXC_OK;
}

void onnxc_model_free(onnxc_model *m) { ox_model_free((ox_model *)m); }

onnxc_status onnxc_model_save(const onnxc_model *m, const char *path,
                              const onnxc_save_options *opts, onnxc_error *err) {
  ox_err e = {0};
  if (!m || !path)
    return out_err(err, &e, ox_err_set(&e, OX_EINVAL, "onnxc_model_save: bad arguments"));
  ox_save_opts so = {0};
  if (opts) {
    so.external_data = opts->external_data;
    so.size_threshold = opts->size_threshold;
    so.align = opts->align;
    so.all_inline = opts->all_inline != 0;
  }
  int rc = ox_api_model_save((const ox_model *)m, path, &so, &e);
  return rc ? out_err(err, &e, rc) : ONNXC_OK;
}

/* Moves an ox_buf into a malloc'd result (never NULL, even when empty). */
static onnxc_status take_buf(ox_buf *b, void **data, size_t *size, bool nul, onnxc_error *err) {
  ox_err e = {0};
  if (nul) ox_buf_putc(b, 0);
  if (b->failed || (!b->data && !(b->data = malloc(1)))) {
    ox_buf_free(b);
    return out_err(err, &e, ox_err_set(&e, OX_ENOMEM, "out of memory"));
  }
  *data = b->data;
  if (size) *size = b->size - (nul ? 1 : 0);
  return ONNXC_OK;
}

onnxc_status onnxc_model_encode(const onnxc_model *m, void **data, size_t *size, onnxc_error *err) {
  ox_err e = {0};
  if (!m || !data || !size)
    return out_err(err, &e, ox_err_set(&e, OX_EINVAL, "onnxc_model_encode: bad arguments"));
  *data = NULL;
  *size = 0;
  ox_buf b = {0};
  int rc = ox_pb_encode_model(((const ox_model *)m)->proto, &b, &e);
  if (rc) {
    ox_buf_free(&b);
    return out_err(err, &e, rc);
  }
  return take_buf(&b, data, size, false, err);
}

onnxc_status onnxc_model_print(const onnxc_model *m, char **text, onnxc_error *err) {
  ox_err e = {0};
  if (!m || !text)
    return out_err(err, &e, ox_err_set(&e, OX_EINVAL, "onnxc_model_print: bad arguments"));
  *text = NULL;
  ox_buf b = {0};
  int rc = ox_text_print_model(((const ox_model *)m)->proto, &b, &e);
  if (rc) {
    ox_buf_free(&b);
    return out_err(err, &e, rc);
  }
  void *p = NULL;
  onnxc_status st = take_buf(&b, &p, NULL, true, err);
  *text = p;
  return st;
}
