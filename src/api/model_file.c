/* model_file.c - loading and saving a model file in the format its name or
 * content says: the one place that knows both the binary and the text layer. */
#include "model_file.h"

#include <string.h>

#include "../text/text.h"

bool ox_api_path_is_text(const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot || strchr(dot, '/')) return false;
  return strcmp(dot, ".onnxtxt") == 0 || strcmp(dot, ".onnxtext") == 0 || strcmp(dot, ".txt") == 0;
}

/* Text if the start has no control bytes other than white space. */
static bool looks_like_text(const uint8_t *p, size_t n) {
  if (n == 0) return false;
  if (n > 4096) n = 4096;
  for (size_t i = 0; i < n; i++)
    if (p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' && p[i] != '\t') return false;
  return true;
}

static int parse_text(ox_model *m, const uint8_t *data, size_t size, const char *name, ox_err *e) {
  ox_model_proto *p = NULL;
  int rc = ox_text_parse_model((const char *)data, size, name, m->arena, &p, e);
  if (!rc) m->proto = p;
  return rc;
}

int ox_api_model_load(const char *path, const ox_load_opts *opts, ox_model **out, ox_err *e) {
  *out = NULL;
  ox_model *m = NULL;
  const uint8_t *data;
  size_t size;
  int rc = ox_pb_open_file(path, &m, &data, &size, e);
  if (rc) return rc;
  if (ox_api_path_is_text(path)) {
    rc = parse_text(m, data, size, path, e);
  } else {
    rc = ox_pb_decode_into(m, data, size, e);
    /* a text file under another name: binary decoding fails on its bytes */
    if (rc == OX_EPARSE && looks_like_text(data, size)) {
      memset(m->proto, 0, sizeof *m->proto);
      rc = parse_text(m, data, size, path, e);
    } else if (rc) {
      ox_err_prefix(e, "%s", path);
    }
  }
  if (!rc) {
    rc = ox_pb_finish_load(m, opts, e);
    if (rc) ox_err_prefix(e, "%s", path);
  }
  if (rc)
    ox_model_free(m);
  else
    *out = m;
  return rc;
}

int ox_api_model_save(const ox_model *m, const char *path, const ox_save_opts *opts, ox_err *e) {
  if (!ox_api_path_is_text(path)) return ox_model_save_file(m, path, opts, e);
  ox_buf b = {0};
  int rc = ox_text_print_model(m->proto, &b, e);
  if (!rc && b.failed) rc = ox_err_set(e, OX_ENOMEM, "out of memory");
  if (!rc) rc = ox_file_write_all(path, b.data ? (const void *)b.data : "", b.size, e);
  ox_buf_free(&b);
  return rc;
}
