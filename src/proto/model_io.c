/* model_io.c - loading binary model files, with external data mapped and
 * checked. Choosing text or binary by content is src/api's job
 * (api/model_file.c): the text format is a later layer. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/sha1.h"
#include "pb.h"

/* ---------------------------------------------------------------- walking */

typedef struct walker {
  ox_pb_tensor_fn fn;
  void *ud;
  ox_err *e;
  int depth;
} walker;

static int walk_graph(walker *w, ox_graph *g);

static int walk_sparse(walker *w, ox_sparse_tensor *s) {
  int rc = OX_OK;
  if (s->values) rc = w->fn(w->ud, s->values, "sparse values", w->e);
  if (!rc && s->indices) rc = w->fn(w->ud, s->indices, "sparse indices", w->e);
  return rc;
}

static int walk_attr(walker *w, ox_attr *a) {
  int rc = OX_OK;
  if (a->t) rc = w->fn(w->ud, a->t, "attribute", w->e);
  for (size_t i = 0; !rc && i < a->n_tensors; i++)
    rc = w->fn(w->ud, &a->tensors[i], "attribute", w->e);
  if (!rc && a->sparse_tensor) rc = walk_sparse(w, a->sparse_tensor);
  for (size_t i = 0; !rc && i < a->n_sparse_tensors; i++)
    rc = walk_sparse(w, &a->sparse_tensors[i]);
  if (!rc && a->g) rc = walk_graph(w, a->g);
  for (size_t i = 0; !rc && i < a->n_graphs; i++) rc = walk_graph(w, &a->graphs[i]);
  return rc;
}

static int walk_nodes(walker *w, ox_node *nodes, size_t n) {
  int rc = OX_OK;
  for (size_t i = 0; !rc && i < n; i++)
    for (size_t j = 0; !rc && j < nodes[i].n_attribute; j++)
      rc = walk_attr(w, &nodes[i].attribute[j]);
  return rc;
}

static int walk_graph(walker *w, ox_graph *g) {
  if (++w->depth > 64) return ox_err_set(w->e, OX_EMODEL, "graphs nested deeper than 64 levels");
  int rc = OX_OK;
  for (size_t i = 0; !rc && i < g->n_initializer; i++)
    rc = w->fn(w->ud, &g->initializer[i], "initializer", w->e);
  for (size_t i = 0; !rc && i < g->n_sparse_initializer; i++)
    rc = walk_sparse(w, &g->sparse_initializer[i]);
  if (!rc) rc = walk_nodes(w, g->node, g->n_node);
  w->depth--;
  return rc;
}

int ox_pb_walk_tensors(ox_model_proto *m, ox_pb_tensor_fn fn, void *ud, ox_err *e) {
  walker w = {fn, ud, e, 0};
  int rc = OX_OK;
  if (m->graph) rc = walk_graph(&w, m->graph);
  for (size_t i = 0; !rc && i < m->n_functions; i++) {
    ox_function *f = &m->functions[i];
    rc = walk_nodes(&w, f->node, f->n_node);
    for (size_t j = 0; !rc && j < f->n_attribute_proto; j++)
      rc = walk_attr(&w, &f->attribute_proto[j]);
  }
  for (size_t i = 0; !rc && i < m->n_training_info; i++) {
    ox_training_info *t = &m->training_info[i];
    if (t->initialization) rc = walk_graph(&w, t->initialization);
    if (!rc && t->algorithm) rc = walk_graph(&w, t->algorithm);
  }
  return rc;
}

static const char *tname(const ox_tensor *t) { return t->name ? t->name : ""; }

static bool has_inline_data(const ox_tensor *t) {
  return t->raw_data.data || t->n_float_data || t->n_int32_data || t->n_string_data ||
         t->n_int64_data || t->n_double_data || t->n_uint64_data;
}

static bool is_external(const ox_tensor *t) {
  return t->has_data_location && t->data_location == 1;
}

/* ---------------------------------------------------------------- loading */

typedef struct mapped {
  char *real; /* canonical path (malloc) */
  size_t map; /* index in m->maps */
  bool sum_checked;
} mapped;

typedef struct resolver {
  ox_model *m;
  const ox_load_opts *opts;
  char *realdir; /* canonical model folder (malloc) */
  mapped *files;
  size_t n_files;
} resolver;

static int add_map(ox_model *m, ox_file_map *fm, ox_err *e) {
  ox_file_map *nm = realloc(m->maps, (m->n_maps + 1) * sizeof *nm);
  if (!nm) {
    ox_file_map_close(fm);
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  m->maps = nm;
  m->maps[m->n_maps++] = *fm;
  return OX_OK;
}

static bool parse_u64(const char *s, uint64_t *v) {
  if (!s || !*s) return false;
  uint64_t r = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return false;
    if (r > (UINT64_MAX - 9) / 10) return false;
    r = r * 10 + (uint64_t)(*s - '0');
  }
  *v = r;
  return true;
}

/* The rules of onnx's external-data loader (notes 2.8): relative, no "..",
 * no symbolic link, inside the model folder once canonical, a regular file
 * with a single hard link. */
static int check_location(resolver *r, const ox_tensor *t, const char *loc, char **real,
                          ox_err *e) {
  if (!*loc)
    return ox_err_set(e, OX_EMODEL, "tensor '%s': external data location is empty", tname(t));
  if (loc[0] == '/')
    return ox_err_set(e, OX_EMODEL, "tensor '%s': external data location '%s' is an absolute path",
                      tname(t), loc);
  for (const char *p = loc; *p;) {
    const char *q = strchr(p, '/');
    size_t n = q ? (size_t)(q - p) : strlen(p);
    if (n == 2 && p[0] == '.' && p[1] == '.')
      return ox_err_set(e, OX_EMODEL,
                        "tensor '%s': external data location '%s' points outside the model folder",
                        tname(t), loc);
    p += n + (q != NULL);
  }
  const char *dir = *r->m->dir ? r->m->dir : ".";
  char *full = ox_arena_printf(r->m->arena, "%s/%s", dir, loc);
  if (!full) return ox_err_set(e, OX_ENOMEM, "out of memory");
  struct stat st;
  if (lstat(full, &st) != 0)
    return ox_err_set(e, OX_EIO, "tensor '%s': external data file %s: %s", tname(t), full,
                      strerror(errno));
  if (S_ISLNK(st.st_mode))
    return ox_err_set(e, OX_EMODEL, "tensor '%s': external data file %s is a symbolic link",
                      tname(t), full);
  if (!S_ISREG(st.st_mode))
    return ox_err_set(e, OX_EMODEL, "tensor '%s': external data file %s is not a regular file",
                      tname(t), full);
  if (st.st_nlink > 1)
    return ox_err_set(
        e, OX_EMODEL,
        "tensor '%s': external data file %s has %lu hard links (possible link attack)", tname(t),
        full, (unsigned long)st.st_nlink);
  if (!r->realdir) {
    r->realdir = realpath(dir, NULL);
    if (!r->realdir) return ox_err_set(e, OX_EIO, "%s: %s", dir, strerror(errno));
  }
  *real = realpath(full, NULL);
  if (!*real) return ox_err_set(e, OX_EIO, "%s: %s", full, strerror(errno));
  size_t dl = strlen(r->realdir);
  bool inside = strncmp(*real, r->realdir, dl) == 0 &&
                ((*real)[dl] == '/' || (dl == 1 && r->realdir[0] == '/'));
  if (!inside) {
    int rc = ox_err_set(e, OX_EMODEL,
                        "tensor '%s': external data file %s resolves outside the model folder %s",
                        tname(t), full, r->realdir);
    free(*real);
    *real = NULL;
    return rc;
  }
  return OX_OK;
}

/* SHA-1 of a mapped file, releasing the pages as it goes so that checking
 * a large file does not fill the resident set. */
static void file_sha1(const ox_file_map *fm, char hex[41]) {
  const size_t chunk = 4u << 20; /* a multiple of the page size */
  ox_sha1 s;
  uint8_t d[20];
  ox_sha1_init(&s);
  for (size_t off = 0; off < fm->size; off += chunk) {
    size_t n = fm->size - off < chunk ? fm->size - off : chunk;
    ox_sha1_update(&s, fm->data + off, n);
    if (fm->map_size) madvise((void *)(uintptr_t)(fm->data + off), n, MADV_DONTNEED);
  }
  ox_sha1_final(&s, d);
  ox_sha1_to_hex(d, hex);
}

static int resolve_one(void *ud, ox_tensor *t, const char *where, ox_err *e) {
  resolver *r = ud;
  (void)where;
  if (!is_external(t)) {
    if (t->n_external_data)
      return ox_err_set(e, OX_EMODEL,
                        "tensor '%s': external_data set but data_location is not EXTERNAL",
                        tname(t));
    return OX_OK;
  }
  if (has_inline_data(t))
    return ox_err_set(e, OX_EMODEL, "tensor '%s' has both external and inline data", tname(t));
  const char *loc = NULL, *sum = NULL;
  uint64_t off = 0, len = 0;
  bool has_len = false;
  for (size_t i = 0; i < t->n_external_data; i++) {
    const char *k = t->external_data[i].key ? t->external_data[i].key : "";
    const char *v = t->external_data[i].value ? t->external_data[i].value : "";
    if (strcmp(k, "location") == 0)
      loc = v;
    else if (strcmp(k, "offset") == 0) {
      if (!parse_u64(v, &off))
        return ox_err_set(e, OX_EMODEL, "tensor '%s': external data offset '%s' is not a number",
                          tname(t), v);
    } else if (strcmp(k, "length") == 0) {
      if (!parse_u64(v, &len))
        return ox_err_set(e, OX_EMODEL, "tensor '%s': external data length '%s' is not a number",
                          tname(t), v);
      has_len = true;
    } else if (strcmp(k, "checksum") == 0)
      sum = v;
    else if (strcmp(k, "basepath") != 0)
      return ox_err_set(e, OX_EMODEL, "tensor '%s': unknown external data key '%s'", tname(t), k);
  }
  if (!loc) return ox_err_set(e, OX_EMODEL, "tensor '%s': external data has no location", tname(t));
  char *real = NULL;
  int rc = check_location(r, t, loc, &real, e);
  if (rc) return rc;
  mapped *f = NULL;
  for (size_t i = 0; i < r->n_files; i++)
    if (strcmp(r->files[i].real, real) == 0) f = &r->files[i];
  if (f)
    free(real);
  else {
    ox_file_map fm;
    rc = ox_file_map_open(&fm, real, e);
    if (!rc) rc = add_map(r->m, &fm, e);
    mapped *nf = rc ? NULL : realloc(r->files, (r->n_files + 1) * sizeof *nf);
    if (!rc && !nf) rc = ox_err_set(e, OX_ENOMEM, "out of memory");
    if (rc) {
      free(real);
      return rc;
    }
    r->files = nf;
    f = &r->files[r->n_files++];
    f->real = real;
    f->map = r->m->n_maps - 1;
    f->sum_checked = false;
  }
  const ox_file_map *fm = &r->m->maps[f->map];
  if (off > fm->size)
    return ox_err_set(e, OX_EMODEL,
                      "tensor '%s': external data offset %llu is past the end of %s (%zu bytes)",
                      tname(t), (unsigned long long)off, loc, fm->size);
  if (!has_len) len = fm->size - off;
  if (len > fm->size - off)
    return ox_err_set(
        e, OX_EMODEL,
        "tensor '%s': external data range %llu+%llu is past the end of %s (%zu bytes)", tname(t),
        (unsigned long long)off, (unsigned long long)len, loc, fm->size);
  if (sum && !(r->opts && r->opts->skip_checksum) && !f->sum_checked) {
    char hex[41];
    file_sha1(fm, hex);
    if (strcasecmp(hex, sum) != 0)
      return ox_err_set(e, OX_EMODEL, "tensor '%s': SHA-1 of %s is %s, but the checksum says %s",
                        tname(t), loc, hex, sum);
    f->sum_checked = true;
  }
  t->external.data = fm->data + off;
  t->external.size = (size_t)len;
  return OX_OK;
}

int ox_model_resolve_external(ox_model *m, const ox_load_opts *opts, ox_err *e) {
  resolver r = {.m = m, .opts = opts};
  int rc = ox_pb_walk_tensors(m->proto, resolve_one, &r, e);
  for (size_t i = 0; i < r.n_files; i++) free(r.files[i].real);
  free(r.files);
  free(r.realdir);
  return rc;
}

static int set_dir(ox_model *m, const char *dir, ox_err *e) {
  m->dir = ox_arena_strdup(m->arena, dir ? dir : "");
  return m->dir ? OX_OK : ox_err_set(e, OX_ENOMEM, "out of memory");
}

int ox_pb_finish_load(ox_model *m, const ox_load_opts *opts, ox_err *e) {
  if (opts && opts->no_external_data) return OX_OK;
  return ox_model_resolve_external(m, opts, e);
}

int ox_model_load_buffer(const uint8_t *data, size_t size, const char *base_dir,
                         const ox_load_opts *opts, ox_model **out, ox_err *e) {
  *out = NULL;
  ox_model *m = ox_model_new();
  if (!m) return ox_err_set(e, OX_ENOMEM, "out of memory");
  int rc = set_dir(m, base_dir, e);
  if (!rc) rc = ox_pb_decode_msg(&ox_pb_model_msg, data, size, m->arena, m->proto, e);
  if (!rc) rc = ox_pb_finish_load(m, opts, e);
  if (rc)
    ox_model_free(m);
  else
    *out = m;
  return rc;
}

int ox_pb_open_file(const char *path, ox_model **out, const uint8_t **data, size_t *size,
                    ox_err *e) {
  *out = NULL;
  *data = NULL;
  *size = 0;
  ox_model *m = ox_model_new();
  if (!m) return ox_err_set(e, OX_ENOMEM, "out of memory");
  int rc;
  if (strcmp(path, "-") == 0) {
    rc = ox_file_read_all(path, &m->owned, size, e);
    *data = m->owned;
  } else {
    ox_file_map fm;
    rc = ox_file_map_open(&fm, path, e);
    if (!rc) rc = add_map(m, &fm, e);
    *data = rc ? NULL : m->maps[0].data;
    *size = rc ? 0 : m->maps[0].size;
  }
  if (!rc) {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? ox_arena_strndup(m->arena, path, slash == path ? 1 : (size_t)(slash - path))
                      : ox_arena_strdup(m->arena, "");
    if (!dir)
      rc = ox_err_set(e, OX_ENOMEM, "out of memory");
    else
      m->dir = dir;
  }
  if (rc) {
    ox_model_free(m);
    *data = NULL;
    *size = 0;
  } else {
    *out = m;
  }
  return rc;
}

int ox_pb_decode_into(ox_model *m, const uint8_t *data, size_t size, ox_err *e) {
  return ox_pb_decode_msg(&ox_pb_model_msg, data, size, m->arena, m->proto, e);
}

int ox_model_load_file(const char *path, const ox_load_opts *opts, ox_model **out, ox_err *e) {
  ox_model *m = NULL;
  const uint8_t *data;
  size_t size;
  int rc = ox_pb_open_file(path, &m, &data, &size, e);
  if (rc) return rc;
  rc = ox_pb_decode_into(m, data, size, e);
  if (!rc) rc = ox_pb_finish_load(m, opts, e);
  if (rc) {
    ox_err_prefix(e, "%s", path);
    ox_model_free(m);
  } else {
    *out = m;
  }
  return rc;
}
