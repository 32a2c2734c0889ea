/* save.c - writing a binary model file (streamed to disk), moving
 * tensor data to an external file or back inline on the way. The model is
 * not modified: the encoder writes substitute tensors instead. Files are
 * written next to their destination and renamed into place, so saving over
 * the file a model was mapped from is safe. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pb.h"

/* ---- tensor pointer -> substitute (open addressing) ---- */
typedef struct subst_map {
  const ox_tensor **keys;
  ox_tensor **vals;
  size_t cap, count;
} subst_map;

static size_t hash_ptr(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x;
}

static int subst_put(subst_map *m, const ox_tensor *k, ox_tensor *v) {
  if ((m->count + 1) * 2 > m->cap) {
    size_t nc = m->cap ? m->cap * 2 : 64;
    const ox_tensor **nk = calloc(nc, sizeof *nk);
    ox_tensor **nv = calloc(nc, sizeof *nv);
    if (!nk || !nv) {
      free(nk);
      free(nv);
      return OX_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      size_t j = hash_ptr(m->keys[i]) & (nc - 1);
      while (nk[j]) j = (j + 1) & (nc - 1);
      nk[j] = m->keys[i];
      nv[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = nc;
  }
  size_t j = hash_ptr(k) & (m->cap - 1);
  while (m->keys[j] && m->keys[j] != k) j = (j + 1) & (m->cap - 1);
  if (!m->keys[j]) m->count++;
  m->keys[j] = k;
  m->vals[j] = v;
  return OX_OK;
}

static const ox_tensor *subst_get(void *ud, const ox_tensor *t) {
  const subst_map *m = ud;
  if (!m->cap) return t;
  size_t j = hash_ptr(t) & (m->cap - 1);
  while (m->keys[j]) {
    if (m->keys[j] == t) return m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return t;
}

/* ---- the save plan ---- */
typedef struct saver {
  const ox_model *m;
  const ox_save_opts *o;
  ox_arena *a;
  subst_map map;
  int fd;           /* external data file, or -1 */
  const char *path; /* its path, for messages */
  const char *loc;  /* its location as written in the model */
  uint64_t pos;     /* logical end of the external file */
  size_t threshold, align;
  bool to_external;
  bool relocate; /* move the external tensors only (to follow the model elsewhere) */
} saver;

/* Is p inside one of the model's file mappings (so that dropping its pages
 * after use is harmless)? */
static bool in_mapping(const ox_model *m, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < m->n_maps; i++) {
    const ox_file_map *f = &m->maps[i];
    if (f->map_size && p >= f->data && n <= f->map_size && (size_t)(p - f->data) <= f->map_size - n)
      return true;
  }
  return false;
}

static bool all_zero(const uint8_t *p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    memcpy(&v, p + i, 8);
    if (v) return false;
  }
  for (; i < n; i++)
    if (p[i]) return false;
  return true;
}

/* Copies n bytes to the external file at s->pos. Zero blocks become holes;
 * pages of mapped sources are released after use so resident memory stays
 * small even for data larger than memory. */
static int copy_out(saver *s, const uint8_t *src, size_t n, ox_err *e) {
  const size_t chunk = 1u << 20;
  bool mapped = in_mapping(s->m, src, n);
  long pg = sysconf(_SC_PAGESIZE);
  size_t page = pg > 0 ? (size_t)pg : 4096;
  for (size_t done = 0; done < n;) {
    size_t k = n - done < chunk ? n - done : chunk;
    const uint8_t *p = src + done;
    if (!all_zero(p, k)) {
      for (size_t w = 0; w < k;) {
        ssize_t r = pwrite(s->fd, p + w, k - w, (off_t)(s->pos + w));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return ox_err_set(e, OX_EIO, "%s: write failed: %s", s->path, strerror(errno));
        w += (size_t)r;
      }
    }
    if (mapped) {
      uintptr_t lo = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
      uintptr_t hi = ((uintptr_t)p + k) & ~(uintptr_t)(page - 1);
      if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
    done += k;
    s->pos += k;
  }
  return OX_OK;
}

static int plan_one(void *ud, ox_tensor *t, const char *where, ox_err *e) {
  saver *s = ud;
  (void)where;
  bool ext = t->has_data_location && t->data_location == 1;
  if (ext && !t->external.data) {
    if (!s->to_external && !s->o->all_inline) return OX_OK; /* kept as a reference */
    return ox_err_set(e, OX_EINVAL, "tensor '%s': its external data were not loaded",
                      t->name ? t->name : "");
  }
  ox_bytes payload = ext ? t->external : t->raw_data;
  if (!payload.data) return OX_OK;
  bool out_ext =
      s->to_external && (s->relocate ? ext : payload.size >= s->threshold) && payload.size > 0;
  if (!ext && !out_ext) return OX_OK; /* inline stays inline */
  if (ext && !out_ext && !s->to_external && !s->o->all_inline) return OX_OK; /* unchanged */
  ox_tensor *c = ox_arena_alloc(s->a, sizeof *c);
  if (!c) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *c = *t;
  c->external.data = NULL;
  c->external.size = 0;
  if (!out_ext) { /* back inline */
    c->raw_data = payload;
    c->has_data_location = false;
    c->data_location = 0;
    c->external_data = NULL;
    c->n_external_data = 0;
  } else {
    uint64_t off = (s->pos + s->align - 1) / s->align * s->align;
    s->pos = off;
    int rc = copy_out(s, payload.data, payload.size, e);
    if (rc) return rc;
    c->raw_data.data = NULL;
    c->raw_data.size = 0;
    c->has_data_location = true;
    c->data_location = 1;
    c->n_external_data = 0;
    c->external_data = NULL;
    const char *kv[3][2] = {{"location", s->loc}, {"offset", NULL}, {"length", NULL}};
    kv[1][1] = ox_arena_printf(s->a, "%llu", (unsigned long long)off);
    kv[2][1] = ox_arena_printf(s->a, "%zu", payload.size);
    for (int i = 0; i < 3; i++) {
      ox_str_pair *p = OX_VEC_PUSH(s->a, c->external_data, c->n_external_data);
      if (!p || !kv[i][1]) return ox_err_set(e, OX_ENOMEM, "out of memory");
      p->key = (char *)kv[i][0];
      p->value = (char *)kv[i][1];
    }
  }
  return subst_put(&s->map, t, c) ? ox_err_set(e, OX_ENOMEM, "out of memory") : OX_OK;
}

/* Opens "<path>.tmp.XXXXXX" for writing; *tmp receives its name (malloc). */
static int open_tmp(const char *path, char **tmp, int *fd, ox_err *e) {
  size_t n = strlen(path) + 16;
  *tmp = malloc(n);
  if (!*tmp) return ox_err_set(e, OX_ENOMEM, "out of memory");
  snprintf(*tmp, n, "%s.tmp.XXXXXX", path);
  *fd = mkstemp(*tmp);
  if (*fd < 0) {
    int rc = ox_err_set(e, OX_EIO, "%s: cannot create: %s", path, strerror(errno));
    free(*tmp);
    *tmp = NULL;
    return rc;
  }
  fchmod(*fd, 0644);
  return OX_OK;
}

static int close_rename(int fd, char *tmp, const char *path, int rc, ox_err *e) {
  if (fd >= 0 && close(fd) != 0 && !rc)
    rc = ox_err_set(e, OX_EIO, "%s: write failed: %s", path, strerror(errno));
  if (tmp) {
    if (!rc && rename(tmp, path) != 0)
      rc = ox_err_set(e, OX_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
    if (rc) unlink(tmp);
    free(tmp);
  }
  return rc;
}

/* Rejects a location that could not be read back by the loader's rules. */
static int check_out_location(const char *loc, ox_err *e) {
  if (!*loc || loc[0] == '/')
    return ox_err_set(e, OX_EINVAL, "external data file '%s' must be a relative path", loc);
  for (const char *p = loc; *p;) {
    const char *q = strchr(p, '/');
    size_t n = q ? (size_t)(q - p) : strlen(p);
    if (n == 2 && p[0] == '.' && p[1] == '.')
      return ox_err_set(e, OX_EINVAL, "external data file '%s' must stay inside the model folder",
                        loc);
    p += n + (q != NULL);
  }
  return OX_OK;
}

static int count_external(void *ud, ox_tensor *t, const char *where, ox_err *e) {
  (void)where;
  (void)e;
  if (t->has_data_location && t->data_location == 1 && t->external.data) ++*(size_t *)ud;
  return OX_OK;
}

/* Do path's folder and dir name the same folder? */
static bool same_folder(const char *path, const char *dir) {
  const char *slash = strrchr(path, '/');
  char out_dir[4096];
  snprintf(out_dir, sizeof out_dir, "%.*s", slash ? (int)(slash - path + (slash == path)) : 1,
           slash ? path : ".");
  char *a = realpath(out_dir, NULL), *b = realpath(*dir ? dir : ".", NULL);
  bool same = a && b && strcmp(a, b) == 0;
  free(a);
  free(b);
  return same;
}

static int tensor_walk(const ox_model *m, saver *s, ox_err *e) {
  /* plan_one does not modify the tensors; the walker's signature is shared
   * with the loader, which does */
  return ox_pb_walk_tensors((ox_model_proto *)m->proto, plan_one, s, e);
}

int ox_model_save_file(const ox_model *m, const char *path, const ox_save_opts *opts, ox_err *e) {
  ox_save_opts dflt = {0};
  const ox_save_opts *o = opts ? opts : &dflt;
  /* Saved to another folder without a choice about external data: the
   * external tensors follow the model into "<name>.data" next to it. */
  size_t n_ext = 0;
  const char *ext_name = o->external_data;
  char *follow = NULL;
  if (!o->external_data && !o->all_inline &&
      ox_pb_walk_tensors((ox_model_proto *)m->proto, count_external, &n_ext, e) == OX_OK && n_ext &&
      !same_folder(path, m->dir)) {
    const char *slash = strrchr(path, '/');
    follow = malloc(strlen(path) + 6);
    if (!follow) return ox_err_set(e, OX_ENOMEM, "out of memory");
    sprintf(follow, "%s.data", slash ? slash + 1 : path);
    ext_name = follow;
  }
  saver s = {.m = m, .o = o, .fd = -1};
  s.threshold = o->size_threshold ? o->size_threshold : 1024;
  s.align = o->align ? o->align : 4096;
  s.to_external = ext_name != NULL;
  s.relocate = follow != NULL;
  s.a = ox_arena_new();
  if (!s.a) {
    free(follow);
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  char *ext_tmp = NULL, *ext_path = NULL;
  int rc = OX_OK;
  if (s.to_external) {
    rc = check_out_location(ext_name, e);
    if (!rc) {
      const char *slash = strrchr(path, '/');
      ext_path = slash ? ox_arena_printf(s.a, "%.*s/%s", (int)(slash - path), path, ext_name)
                       : ox_arena_strdup(s.a, ext_name);
      if (!ext_path) rc = ox_err_set(e, OX_ENOMEM, "out of memory");
    }
    if (!rc) rc = open_tmp(ext_path, &ext_tmp, &s.fd, e);
    s.path = ext_path;
    s.loc = ext_name;
  }
  if (!rc) rc = tensor_walk(m, &s, e);
  if (!rc && s.fd >= 0 && ftruncate(s.fd, (off_t)s.pos) != 0)
    rc = ox_err_set(e, OX_EIO, "%s: %s", ext_path, strerror(errno));
  rc = close_rename(s.fd, ext_tmp, ext_path, rc, e);
  char *tmp = NULL;
  int fd = -1;
  if (!rc) rc = open_tmp(path, &tmp, &fd, e);
  if (!rc) {
    ox_buf b = {0};
    pb_sink sink = {.buf = &b, .fd = fd, .path = path, .subst = subst_get, .ud = &s.map};
    rc = ox_pb_encode_msg(&ox_pb_model_msg, m->proto, &sink, e);
    ox_buf_free(&b);
  }
  rc = close_rename(fd, tmp, path, rc, e);
  free(s.map.keys);
  free(s.map.vals);
  ox_arena_free(s.a);
  free(follow);
  return rc;
}
