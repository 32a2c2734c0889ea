/* repo.c - the model repository as Triton and KServe lay it out:
 *
 *   DIR/<model>/<version>/model.onnx   (or model.onnxtxt; external data beside it)
 *   DIR/<model>/config.json            optional: {"max_batch_size": 8,
 *                                                  "max_queue_delay_microseconds": 500}
 *
 * The highest version of a model is the one loaded and served. A loaded
 * version is one model and one session shared by every request; requests take
 * a reference, so that a reload or unload frees it only after the last one. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "serve.h"

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* a name that is one plain path component */
static bool good_name(const char *name) {
  return name[0] && name[0] != '.' && !strchr(name, '/') && strlen(name) < 256;
}

static ox_serve_model *find(ox_serve_repo *r, const char *name) {
  for (size_t i = 0; i < r->n_models; i++)
    if (strcmp(r->models[i]->name, name) == 0) return r->models[i];
  return NULL;
}

/* finds or adds an entry; entries stay until the server stops so that a
   model's metrics survive unload and reload. Under r->lock. */
static ox_serve_model *find_or_add(ox_serve_repo *r, const char *name) {
  ox_serve_model *m = find(r, name);
  if (m) return m;
  if (r->n_models == r->cap_models) {
    size_t cap = r->cap_models ? r->cap_models * 2 : 16;
    ox_serve_model **p = realloc(r->models, cap * sizeof *p);
    if (!p) return NULL;
    r->models = p;
    r->cap_models = cap;
  }
  m = calloc(1, sizeof *m);
  if (!m || !(m->name = strdup(name))) {
    free(m);
    return NULL;
  }
  snprintf(m->reason, sizeof m->reason, "not loaded");
  r->models[r->n_models++] = m;
  return m;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* the model file of a version folder, or false */
static bool model_file(const char *dir, const char *name, int64_t version, char *path,
                       size_t size) {
  snprintf(path, size, "%s/%s/%lld/model.onnx", dir, name, (long long)version);
  if (is_file(path)) return true;
  snprintf(path, size, "%s/%s/%lld/model.onnxtxt", dir, name, (long long)version);
  return is_file(path);
}

/* numeric version folders holding a model file, ascending */
static size_t scan_versions(const char *dir, const char *name, int64_t *out, size_t max) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  DIR *d = opendir(path);
  if (!d) return 0;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < max) {
    char *end;
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    errno = 0;
    long long v = strtoll(e->d_name, &end, 10);
    if (errno || *end || v <= 0) continue;
    char file[4096];
    if (model_file(dir, name, v, file, sizeof file)) out[n++] = v;
  }
  closedir(d);
  qsort(out, n, sizeof *out, cmp_i64);
  return n;
}

void ox_serve_repo_rescan(ox_serve_repo *r) {
  DIR *d = opendir(r->dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!good_name(e->d_name)) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", r->dir, e->d_name);
    if (!is_dir(path)) continue;
    int64_t vs[64];
    size_t n = scan_versions(r->dir, e->d_name, vs, 64);
    pthread_mutex_lock(&r->lock);
    ox_serve_model *m = find_or_add(r, e->d_name);
    if (m) {
      memcpy(m->versions, vs, n * sizeof *vs);
      m->n_versions = n;
    }
    pthread_mutex_unlock(&r->lock);
  }
  closedir(d);
}

int ox_serve_repo_open(ox_serve_repo *r, const char *dir, int threads, int max_batch,
                       uint64_t delay_ns, char *err, size_t errsz) {
  memset(r, 0, sizeof *r);
  if (!is_dir(dir)) {
    snprintf(err, errsz, "model repository '%s' is not a folder", dir);
    return -1;
  }
  onnxc_error e = {0};
  if (onnxc_env_create(threads, &r->env, &e)) {
    snprintf(err, errsz, "%s", e.msg);
    return -1;
  }
  if (!(r->dir = strdup(dir))) {
    onnxc_env_free(r->env);
    snprintf(err, errsz, "out of memory");
    return -1;
  }
  r->default_max_batch = max_batch;
  r->default_delay_ns = delay_ns;
  pthread_mutex_init(&r->lock, NULL);
  pthread_mutex_init(&r->load_lock, NULL);
  return 0;
}

static void version_free(ox_serve_version *v) {
  onnxc_session_free(v->session);
  onnxc_model_free(v->model);
  free(v->model_name);
  free(v);
}

void ox_serve_version_release(ox_serve_version *v) {
  if (v && atomic_fetch_sub(&v->refs, 1) == 1) version_free(v);
}

void ox_serve_repo_close(ox_serve_repo *r) {
  for (size_t i = 0; i < r->n_models; i++) {
    ox_serve_version_release(r->models[i]->loaded);
    free(r->models[i]->name);
    free(r->models[i]);
  }
  free(r->models);
  free(r->dir);
  /* the env's pool goes after every session that used it */
  onnxc_env_free(r->env);
  pthread_mutex_destroy(&r->lock);
  pthread_mutex_destroy(&r->load_lock);
}

/* Reads DIR/name/config.json. Absent file: the defaults. */
static int read_config(ox_serve_repo *r, const char *name, int *max_batch, uint64_t *delay_ns,
                       char *err, size_t errsz) {
  *max_batch = r->default_max_batch;
  *delay_ns = r->default_delay_ns;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/config.json", r->dir, name);
  if (!is_file(path)) return 0;
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (!j || !json_is_object(j)) {
    snprintf(err, errsz, "%s: %s", path, j ? "not a JSON object" : je.text);
    json_decref(j);
    return -1;
  }
  json_t *mb = json_object_get(j, "max_batch_size"),
         *md = json_object_get(j, "max_queue_delay_microseconds");
  int rc = 0;
  if (mb &&
      (!json_is_integer(mb) || json_integer_value(mb) < 0 || json_integer_value(mb) > 1 << 20)) {
    snprintf(err, errsz, "%s: max_batch_size must be an integer in 0..1048576", path);
    rc = -1;
  } else if (md && (!json_is_integer(md) || json_integer_value(md) < 0 ||
                    json_integer_value(md) > 60000000)) {
    snprintf(err, errsz, "%s: max_queue_delay_microseconds must be an integer in 0..60000000",
             path);
    rc = -1;
  } else {
    if (mb) *max_batch = (int)json_integer_value(mb);
    if (md) *delay_ns = (uint64_t)json_integer_value(md) * 1000u;
  }
  json_decref(j);
  return rc;
}

/* every input and output is a tensor of a protocol datatype (the protocol
   carries nothing else); batching needs a dynamic leading dim on all of them */
static int check_io(onnxc_session *s, bool *batchable, char *err, size_t errsz) {
  *batchable = onnxc_session_input_count(s) > 0;
  for (int out = 0; out < 2; out++) {
    size_t n = out ? onnxc_session_output_count(s) : onnxc_session_input_count(s);
    for (size_t i = 0; i < n; i++) {
      const onnxc_type *t = out ? onnxc_session_output_type(s, i) : onnxc_session_input_type(s, i);
      const char *name = out ? onnxc_session_output_name(s, i) : onnxc_session_input_name(s, i);
      if (onnxc_type_kind_of(t) != ONNXC_TYPE_TENSOR ||
          !ox_serve_dtype_name(onnxc_type_elem_type(t))) {
        char desc[128];
        onnxc_type_describe(t, desc, sizeof desc);
        snprintf(err, errsz, "%s '%s' is %s: the protocol carries tensors of its datatypes only",
                 out ? "output" : "input", name, desc);
        return -1;
      }
      if (onnxc_type_rank(t) < 1 || onnxc_type_dim(t, 0) >= 0) *batchable = false;
    }
  }
  return 0;
}

int ox_serve_repo_load(ox_serve_repo *r, const char *name, bool *notfound, char *err,
                       size_t errsz) {
  *notfound = false;
  if (!good_name(name)) {
    *notfound = true;
    snprintf(err, errsz, "'%s' is not a model name", name);
    return -1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", r->dir, name);
  if (!is_dir(path)) {
    *notfound = true;
    snprintf(err, errsz, "no model '%s' in the repository", name);
    return -1;
  }
  pthread_mutex_lock(&r->load_lock);
  int64_t vs[64];
  size_t nv = scan_versions(r->dir, name, vs, 64);
  onnxc_error e = {0};
  onnxc_model *m = NULL;
  onnxc_session *s = NULL;
  ox_serve_version *v = NULL;
  int max_batch = 0;
  uint64_t delay = 0;
  bool batchable = false;
  int rc = -1;
  if (!nv) {
    snprintf(err, errsz, "model '%s' has no version folder with a model.onnx", name);
    goto done;
  }
  if (read_config(r, name, &max_batch, &delay, err, errsz)) goto done;
  if (!model_file(r->dir, name, vs[nv - 1], path, sizeof path)) {
    snprintf(err, errsz, "model '%s' version %lld disappeared", name, (long long)vs[nv - 1]);
    goto done;
  }
  onnxc_session_options o = {0};
  o.env = r->env;
  o.optimization_level = 1;                   /* as `onnxc run`: fold constants, pack weights */
  if (onnxc_model_load(path, NULL, &m, &e)) { /* the message names the file */
    snprintf(err, errsz, "%s", e.msg);
    goto done;
  }
  if (onnxc_session_create(m, &o, &s, &e)) {
    snprintf(err, errsz, "%s: %s", path, e.msg);
    goto done;
  }
  if (check_io(s, &batchable, err, errsz)) goto done;
  if (!(v = calloc(1, sizeof *v)) || !(v->model_name = strdup(name))) {
    snprintf(err, errsz, "out of memory");
    goto done;
  }
  atomic_init(&v->refs, 1); /* the repository's own */
  v->version = vs[nv - 1];
  v->model = m;
  v->session = s;
  v->max_batch = batchable && max_batch > 1 ? max_batch : 0;
  v->max_delay_ns = delay;
  if (max_batch > 1 && !batchable)
    fprintf(stderr,
            "onnxc serve: model '%s': dynamic batching off: an input or output has no dynamic "
            "leading dim\n",
            name);
  rc = 0;
done:
  pthread_mutex_lock(&r->lock);
  ox_serve_model *entry = find_or_add(r, name);
  ox_serve_version *old = NULL;
  if (entry) {
    memcpy(entry->versions, vs, nv * sizeof *vs);
    entry->n_versions = nv;
    if (rc == 0) {
      v->metrics = &entry->metrics;
      old = entry->loaded;
      entry->loaded = v;
      entry->reason[0] = 0;
    } else {
      snprintf(entry->reason, sizeof entry->reason, "%s", err);
    }
  } else if (rc == 0) {
    snprintf(err, errsz, "out of memory");
    rc = -1;
  }
  pthread_mutex_unlock(&r->lock);
  if (rc != 0) {
    if (v) {
      free(v->model_name);
      free(v);
    }
    onnxc_session_free(s);
    onnxc_model_free(m);
  }
  ox_serve_version_release(old);
  pthread_mutex_unlock(&r->load_lock);
  return rc;
}

int ox_serve_repo_unload(ox_serve_repo *r, const char *name, char *err, size_t errsz) {
  pthread_mutex_lock(&r->load_lock);
  pthread_mutex_lock(&r->lock);
  ox_serve_model *m = find(r, name);
  ox_serve_version *old = NULL;
  if (m) {
    old = m->loaded;
    m->loaded = NULL;
    snprintf(m->reason, sizeof m->reason, "unloaded");
  } else {
    snprintf(err, errsz, "no model '%s' in the repository", name);
  }
  pthread_mutex_unlock(&r->lock);
  ox_serve_version_release(old); /* in-flight requests keep it alive until they finish */
  pthread_mutex_unlock(&r->load_lock);
  return m ? 0 : -1;
}

void ox_serve_repo_load_all(ox_serve_repo *r) {
  ox_serve_repo_rescan(r);
  pthread_mutex_lock(&r->lock);
  size_t n = r->n_models;
  char **names = calloc(n + 1, sizeof *names);
  for (size_t i = 0; names && i < n; i++) names[i] = strdup(r->models[i]->name);
  pthread_mutex_unlock(&r->lock);
  for (size_t i = 0; names && i < n; i++) {
    char err[512];
    bool nf;
    if (!names[i]) continue;
    if (ox_serve_repo_load(r, names[i], &nf, err, sizeof err))
      fprintf(stderr, "onnxc serve: model '%s' not loaded: %s\n", names[i], err);
    else
      fprintf(stderr, "onnxc serve: model '%s' loaded\n", names[i]);
    free(names[i]);
  }
  free(names);
}

ox_serve_version *ox_serve_repo_acquire(ox_serve_repo *r, const char *name, int64_t version,
                                        char *err, size_t errsz) {
  pthread_mutex_lock(&r->lock);
  ox_serve_model *m = find(r, name);
  ox_serve_version *v = m ? m->loaded : NULL;
  if (!m)
    snprintf(err, errsz, "unknown model '%s'", name);
  else if (!v)
    snprintf(err, errsz, "model '%s' is not loaded (%s)", name, m->reason);
  else if (version >= 0 && v->version != version) {
    snprintf(err, errsz, "model '%s' has no version %lld loaded (version %lld is served)", name,
             (long long)version, (long long)v->version);
    v = NULL;
  }
  if (v) atomic_fetch_add(&v->refs, 1);
  pthread_mutex_unlock(&r->lock);
  return v;
}
