/* cmd_test.c - `onnxc test [--jobs N] [--expected FILE] DIR...`: runs ONNX
 * conformance cases (a folder with model.onnx and test_data_set_N/, or a
 * light_X.onnx with light_X_output_0.pb), each in a child process so that a
 * crash or a hang fails that case only (--batch N: N cases a child, one after
 * another; a crash fails the case it was in and the rest run again in a new
 * child). Prints one line per failing case, then "N passed, N failed". */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "runio.h"
#include "session_flags.h"

typedef struct tcase {
  char *dir;   /* case folder (or the light folder) */
  char *model; /* model path */
  char *name;  /* "node/test_abs" */
  char *light_out;
  int status; /* 0 pass, 1 fail, 2 opset conversion refused */
  char *reason;
  size_t ran, same, refused; /* --sweep, --skip-unchanged: the child's counts */
  bool listed;                /* in the --expected list */
  bool alone;                 /* --batch: run again in a child of its own */
} tcase;

typedef struct tlist {
  tcase *v;
  size_t n, cap;
} tlist;

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *r = malloc(n);
  if (r) snprintf(r, n, "%s/%s", a, b);
  return r;
}

static const char *base_name(const char *p, size_t *len) {
  size_t n = strlen(p);
  while (n > 1 && p[n - 1] == '/') n--;
  size_t b = n;
  while (b > 0 && p[b - 1] != '/') b--;
  *len = n - b;
  return p + b;
}

/* "parent/case" from a folder path */
static char *case_name(const char *dir, const char *leaf) {
  size_t n;
  const char *b = base_name(dir, &n);
  char *r = malloc(n + strlen(leaf) + 2);
  if (r) snprintf(r, n + strlen(leaf) + 2, "%.*s/%s", (int)n, b, leaf);
  return r;
}

static int add_case(tlist *l, char *dir, char *model, char *name, char *light_out) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 256;
    tcase *v = realloc(l->v, cap * sizeof *v);
    if (!v) return -1;
    l->v = v;
    l->cap = cap;
  }
  tcase *c = &l->v[l->n++];
  memset(c, 0, sizeof *c);
  c->dir = dir;
  c->model = model;
  c->name = name;
  c->light_out = light_out;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entries of a folder (malloc'd names). */
static char **list_dir(const char *dir, size_t *n) {
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char **v = NULL;
  size_t cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 64;
      char **nv = realloc(v, cap * sizeof *nv);
      if (!nv) break;
      v = nv;
    }
    v[(*n)++] = strdup(de->d_name);
  }
  closedir(d);
  if (v) qsort(v, *n, sizeof *v, cmp_str);
  return v;
}

static void free_list(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

static void collect(tlist *l, const char *path, int depth) {
  char *model = join(path, "model.onnx");
  if (model && is_file(model)) {
    size_t n;
    const char *b = base_name(path, &n);
    char leaf[1024];
    snprintf(leaf, sizeof leaf, "%.*s", (int)n, b);
    /* name: parent folder / case folder */
    char *parent = strdup(path);
    size_t pl = strlen(parent);
    while (pl > 1 && parent[pl - 1] == '/') parent[--pl] = 0;
    char *slash = strrchr(parent, '/');
    char *name;
    if (slash) {
      *slash = 0;
      name = case_name(*parent ? parent : "/", leaf);
    } else {
      name = case_name(".", leaf);
    }
    free(parent);
    add_case(l, strdup(path), model, name, NULL);
    return;
  }
  free(model);
  if (depth > 3 || !is_dir(path)) return;
  size_t n;
  char **ents = list_dir(path, &n);
  for (size_t i = 0; i < n; i++) {
    const char *en = ents[i];
    size_t len = strlen(en);
    if (strncmp(en, "light_", 6) == 0 && len > 5 && strcmp(en + len - 5, ".onnx") == 0) {
      char out[1024];
      snprintf(out, sizeof out, "%.*s_output_0.pb", (int)(len - 5), en);
      char *leaf = strndup(en, len - 5);
      add_case(l, strdup(path), join(path, en), case_name(path, leaf), join(path, out));
      free(leaf);
      continue;
    }
    char *sub = join(path, en);
    if (sub && is_dir(sub)) collect(l, sub, depth + 1);
    free(sub);
  }
  free_list(ents, n);
}

/* ------------------------------------------------------------ one case */

static int numbered(const char *dir, const char *prefix, size_t k, char *out, size_t n) {
  snprintf(out, n, "%s/%s_%zu.pb", dir, prefix, k);
  return is_file(out);
}

/* input_k.pb bind to the inputs without an initializer, in order */
static int run_set(onnxc_session *s, const char *setdir, char *why, size_t wn) {
  onnxc_error e = {0};
  size_t n_in = onnxc_session_input_count(s), n_out = onnxc_session_output_count(s);
  onnxc_value **ins = calloc(n_in + 1, sizeof *ins), **outs = calloc(n_out + 1, sizeof *outs);
  const char **names = calloc(n_in + 1, sizeof *names);
  int rc = 1;
  size_t given = 0;
  char path[4096];
  if (!ins || !outs || !names) {
    snprintf(why, wn, "out of memory");
    goto done;
  }
  for (size_t k = 0; numbered(setdir, "input", k, path, sizeof path); k++) {
    if (given >= n_in) {
      snprintf(why, wn, "%s: more input files than model inputs", setdir);
      goto done;
    }
    ins[given] = ox_cli_read_value(path, onnxc_session_input_type(s, given), &e);
    names[given] = onnxc_session_input_name(s, given);
    if (!ins[given]) {
      snprintf(why, wn, "%s", e.msg);
      goto done;
    }
    given++;
  }
  if (onnxc_session_run(s, names, ins, given, NULL, outs, n_out, &e)) {
    snprintf(why, wn, "%s", e.msg);
    goto done;
  }
  for (size_t k = 0; k < n_out && numbered(setdir, "output", k, path, sizeof path); k++) {
    onnxc_value *want = ox_cli_read_value(path, onnxc_session_output_type(s, k), &e);
    if (!want) {
      snprintf(why, wn, "%s", e.msg);
      goto done;
    }
    char diff[700];
    int c = onnxc_value_compare(want, outs[k], 1e-3, 1e-7, diff, sizeof diff);
    onnxc_value_free(want);
    if (c) {
      size_t sl;
      const char *sb = base_name(setdir, &sl);
      snprintf(why, wn, "%.*s output %zu ('%s'): %s", (int)sl, sb, k,
               onnxc_session_output_name(s, k), diff);
      goto done;
    }
  }
  rc = 0;
done:
  for (size_t k = 0; k < given; k++) onnxc_value_free(ins[k]);
  if (outs)
    for (size_t k = 0; k < n_out; k++) onnxc_value_free(outs[k]);
  free(ins);
  free(outs);
  free(names);
  return rc;
}

static int run_light(onnxc_session *s, const char *out_path, char *why, size_t wn) {
  onnxc_error e = {0};
  if (onnxc_session_input_count(s) == 0) { /* only inputs with an initializer */
    snprintf(why, wn, "the model has no input");
    return 1;
  }
  onnxc_value *in = ox_cli_light_input(onnxc_session_input_type(s, 0), &e), *out = NULL;
  if (!in) {
    snprintf(why, wn, "%s", e.msg);
    return 1;
  }
  const char *nm = onnxc_session_input_name(s, 0), *on = onnxc_session_output_name(s, 0);
  int rc = 1;
  /* twice: a second run reuses what the first left (pooled buffers, Concat
   * inputs written in place), and its output is the one compared */
  onnxc_status run_rc = onnxc_session_run(s, &nm, &in, 1, &on, &out, 1, &e);
  if (run_rc == ONNXC_OK) {
    onnxc_value_free(out);
    out = NULL;
    run_rc = onnxc_session_run(s, &nm, &in, 1, &on, &out, 1, &e);
  }
  if (run_rc != ONNXC_OK) {
    snprintf(why, wn, "%s", e.msg);
  } else {
    onnxc_value *want = ox_cli_read_value(out_path, onnxc_session_output_type(s, 0), &e);
    if (!want) {
      snprintf(why, wn, "%s", e.msg);
    } else {
      char diff[700];
      rc = onnxc_value_compare(want, out, 1e-3, 1e-7, diff, sizeof diff);
      if (rc) snprintf(why, wn, "output 0: %s", diff);
      onnxc_value_free(want);
    }
  }
  onnxc_value_free(in);
  onnxc_value_free(out);
  return rc;
}

/* --opset: converts m to each opset of the list in turn (0: the lowest at
 * which its ops exist) and checks the result. 2 when the conversion is
 * refused (a clear error, not a wrong model). */
#define MAX_OPSETS 32 /* --sweep's list; a chain is shorter */
typedef struct opset_list {
  long long v[MAX_OPSETS];
  size_t n;
} opset_list;

static int convert_case(onnxc_model *m, const opset_list *ol, char *why, size_t wn) {
  onnxc_error e = {0};
  int64_t target = 0;
  for (size_t i = 0; i < ol->n; i++) {
    target = ol->v[i] > 0 ? ol->v[i] : onnxc_model_min_opset(m);
    onnxc_status rc = onnxc_convert_opset(m, target, &e);
    if (rc != ONNXC_OK) {
      snprintf(why, wn, "opset conversion refused: %s", e.msg);
      return rc == ONNXC_ERR_UNSUPPORTED ? 2 : 1;
    }
  }
  if (onnxc_check(m, NULL, NULL, &e) != ONNXC_OK) {
    snprintf(why, wn, "converted model (opset %lld) fails the checker: %s", (long long)target,
             e.msg);
    return 1;
  }
  return 0;
}

static bool parse_opsets(const char *s, opset_list *ol) {
  ol->n = 0;
  while (*s) {
    if (ol->n == MAX_OPSETS) return false;
    char *end;
    long long v;
    if (strncmp(s, "min", 3) == 0) {
      v = 0;
      end = (char *)s + 3;
    } else {
      v = strtoll(s, &end, 10);
      if (end == s || v < 1) return false;
    }
    ol->v[ol->n++] = v;
    if (*end == ',')
      end++;
    else if (*end)
      return false;
    s = end;
  }
  return ol->n > 0;
}

/* Runs m (the case's model, or its conversion) on the case's data sets. */
static int run_model(const tcase *c, onnxc_model *m, int threads, bool ctx_bodies, char *why,
                     size_t wn) {
  onnxc_error e = {0};
  onnxc_session *s = NULL;
  int rc = 1;
  if (ctx_bodies && onnxc_model_localize_context_bodies(m, NULL, &e) != ONNXC_OK) {
    snprintf(why, wn, "%s", e.msg);
    return 1;
  }
  ox_cli_session_flags sf = {.threads = threads};
  onnxc_session_options o = ox_cli_session_options(&sf);
  if (onnxc_session_create(m, &o, &s, &e) != ONNXC_OK) {
    snprintf(why, wn, "%s", e.msg);
    return 1;
  }
  if (c->light_out) {
    rc = run_light(s, c->light_out, why, wn);
    onnxc_session_free(s);
    return rc;
  }
  size_t n;
  char **ents = list_dir(c->dir, &n);
  size_t sets = 0;
  rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    if (strncmp(ents[i], "test_data_set_", 14) != 0) continue;
    char *sd = join(c->dir, ents[i]);
    if (sd && is_dir(sd)) {
      sets++;
      rc = run_set(s, sd, why, wn);
    }
    free(sd);
  }
  free_list(ents, n);
  if (!rc && sets == 0) {
    snprintf(why, wn, "no test_data_set_* folder");
    rc = 1;
  }
  onnxc_session_free(s);
  return rc;
}

/* --sweep: what one case did over the list (sent to the parent) */
typedef struct sweep_counts {
  size_t ran, same, refused;
} sweep_counts;

/* --sweep: the case's model converted from the original to each opset of the
 * list, in one process (one load, one fork). A conversion whose key
 * (sweep_key.c) equals an earlier one's is the same program for the runtime:
 * its outputs were checked with that one, it is not run again. A refusal is
 * counted; a failure ends the case naming the opset. */
static int sweep_case(const tcase *c, onnxc_model *orig, const opset_list *ol, int threads,
                      bool ctx_bodies, sweep_counts *sc, char *why, size_t wn) {
  onnxc_error e = {0};
  void *data = NULL;
  size_t size = 0;
  if (onnxc_model_encode(orig, &data, &size, &e) != ONNXC_OK) {
    snprintf(why, wn, "%s", e.msg);
    return 1;
  }
  char *keys[MAX_OPSETS] = {0};
  int rc = 0;
  for (size_t i = 0; i < ol->n && !rc; i++) {
    onnxc_model *m = NULL;
    if (onnxc_model_load_buffer(data, size, c->dir, NULL, &m, &e) != ONNXC_OK) {
      snprintf(why, wn, "%s", e.msg);
      rc = 1;
      break;
    }
    opset_list one = {.v = {ol->v[i]}, .n = 1};
    char sub[1000] = {0};
    int cr = convert_case(m, &one, sub, sizeof sub);
    if (cr == 2) {
      sc->refused++;
    } else if (cr) {
      rc = 1;
    } else {
      keys[i] = ox_cli_sweep_key(m);
      bool same = false;
      for (size_t j = 0; j < i && keys[i] && !same; j++) same = keys[j] && !strcmp(keys[i], keys[j]);
      if (same) {
        sc->same++;
      } else {
        sc->ran++;
        rc = run_model(c, m, threads, ctx_bodies, sub, sizeof sub);
      }
    }
    if (rc) snprintf(why, wn, "opset %lld: %s", ol->v[i], sub);
    onnxc_model_free(m);
  }
  for (size_t i = 0; i < ol->n; i++) free(keys[i]);
  free(data);
  return rc;
}

/* --opset with --skip-unchanged: the conversion is not run when it is the
 * same program for the runtime as the model before it (sweep_key.c): the
 * conformance tests of the unconverted models check those outputs. A case
 * of the --expected list is always run (its failure is what is checked). */
static int run_case(const tcase *c, int threads, bool ctx_bodies, const opset_list *opsets,
                    bool sweep, bool skip_unchanged, bool convert_only, sweep_counts *sc,
                    char *why, size_t wn) {
  onnxc_error e = {0};
  onnxc_model *m = NULL;
  int rc = 1;
  if (onnxc_model_load(c->model, NULL, &m, &e) != ONNXC_OK) {
    snprintf(why, wn, "%s", e.msg);
    return 1;
  }
  char *before = skip_unchanged && !c->listed ? ox_cli_sweep_key(m) : NULL;
  if (sweep) {
    rc = sweep_case(c, m, opsets, threads, ctx_bodies, sc, why, wn);
  } else if (!opsets->n || (rc = convert_case(m, opsets, why, wn)) == 0) {
    char *after = before ? ox_cli_sweep_key(m) : NULL;
    if (after && !strcmp(before, after)) {
      sc->same++;
    } else if (convert_only && !c->listed) {
      /* --convert-only: converted and checked, not run */
    } else {
      sc->ran++;
      rc = run_model(c, m, threads, ctx_bodies, why, wn);
    }
    free(after);
  }
  free(before);
  onnxc_model_free(m);
  return rc;
}

/* ------------------------------------------------------------ expected list */

typedef struct expected {
  char **names;
  size_t n;
  bool *seen;
  /* cases whose reason starts with "random": draws may match the reference
   * by chance, so a pass is not an error */
  char **random;
  size_t n_random;
} expected;

static int load_expected(const char *path, expected *x) {
  memset(x, 0, sizeof *x);
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "onnxc test: cannot open %s: %s\n", path, strerror(errno));
    return -1;
  }
  char line[4096];
  size_t cap = 0;
  while (fgets(line, sizeof line, f)) {
    char *p = line + strspn(line, " \t");
    if (*p == '#' || *p == '\n' || !*p) continue;
    size_t len = strcspn(p, " \t\r\n");
    if (x->n == cap) {
      cap = cap ? cap * 2 : 256;
      char **nv = realloc(x->names, cap * sizeof *nv);
      char **nr = realloc(x->random, cap * sizeof *nr);
      if (nr) x->random = nr;
      if (!nv || !nr) {
        if (nv) x->names = nv;
        break;
      }
      x->names = nv;
    }
    x->names[x->n++] = strndup(p, len);
    const char *why = p + len + strspn(p + len, " \t");
    if (strncmp(why, "random", 6) == 0) x->random[x->n_random++] = strndup(p, len);
  }
  fclose(f);
  if (x->n) qsort(x->names, x->n, sizeof *x->names, cmp_str);
  if (x->n_random) qsort(x->random, x->n_random, sizeof *x->random, cmp_str);
  x->seen = calloc(x->n + 1, sizeof *x->seen);
  return 0;
}

static long find_expected(const expected *x, const char *name) {
  if (!x->n) return -1;
  char *const *hit = bsearch(&name, x->names, x->n, sizeof *x->names, cmp_str);
  return hit ? (long)(hit - x->names) : -1;
}

/* ------------------------------------------------------------ driver */

/* A running child: the cases q[first .. first+n) of the queue. */
typedef struct child {
  pid_t pid;
  int fd;
  size_t first, n;
  double start;
} child;

/* --batch: a child that ended abnormally after reporting every case of its
 * batch (a leak or a sanitizer error at exit); its cases ran again one per
 * child, and when none of them fails there the batch itself is a failure. */
typedef struct batch_error {
  size_t first, n; /* in the queue */
  int wstatus;
} batch_error;

/* The cases to run, as indices into the list; cases run again are appended. */
typedef struct queue {
  size_t *v;
  size_t n, cap;
} queue;

static int push(queue *q, size_t i) {
  if (q->n == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 256;
    size_t *v = realloc(q->v, cap * sizeof *v);
    if (!v) return -1;
    q->v = v;
    q->cap = cap;
  }
  q->v[q->n++] = i;
  return 0;
}

/* One case's result, from a child to the parent: "code ran same refused
 * seconds length\n" then length bytes of the reason. Records stay under
 * 1.2 KB (the reason under 1100 bytes), so a batch's fit in a pipe's 64 KiB
 * and a child never waits on the parent, which reads when the child ends. */
static void send_record(int fd, int code, const sweep_counts *sc, double took, const char *why) {
  char rec[1300];
  size_t wl = strlen(why);
  int len = snprintf(rec, sizeof rec, "%d %zu %zu %zu %.3f %zu\n%s", code, sc->ran, sc->same,
                     sc->refused, took, wl, why);
  if (len > (int)sizeof rec - 1) len = (int)sizeof rec - 1;
  for (int off = 0; off < len;) {
    ssize_t w = write(fd, rec + off, (size_t)(len - off));
    if (w <= 0) break;
    off += (int)w;
  }
}

static bool parse_record(const char *buf, size_t n, size_t *off, int *code, sweep_counts *sc,
                         double *took, const char **why, size_t *why_n) {
  const char *p = buf + *off;
  const char *nl = memchr(p, '\n', n - *off);
  if (!nl) return false;
  int used = 0;
  if (sscanf(p, "%d %zu %zu %zu %lf %zu%n", code, &sc->ran, &sc->same, &sc->refused, took, why_n,
             &used) != 6 ||
      p + used != nl || *why_n > n - (size_t)(nl + 1 - buf))
    return false;
  *why = nl + 1;
  *off = (size_t)(nl + 1 - buf) + *why_n;
  return true;
}

/* Everything a child wrote (NUL-terminated; NULL when out of memory). */
static char *read_all(int fd, size_t *n) {
  size_t cap = 4096;
  char *buf = malloc(cap);
  *n = 0;
  ssize_t r;
  while (buf) {
    if (*n + 1 == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb;
      cap *= 2;
    }
    r = read(fd, buf + *n, cap - 1 - *n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    *n += (size_t)r;
  }
  if (buf) buf[*n] = 0;
  return buf;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: onnxc test [--jobs N] [--batch N] [--expected FILE] [--timeout SEC]\n"
          "                  [--threads N]\n"
          "                  [--opset N[,M..] [--allow-refusal] | --sweep N[,M..]]\n"
          "                  [--exclude PREFIX] DIR...\n"
          "  DIR             a case folder (model.onnx + test_data_set_*), or a folder of them\n"
          "  --jobs N        cases run in N processes at once (default: all cores)\n"
          "  --batch N       up to N cases a process, one after another (default 16):\n"
          "                  a crash or timeout fails its case, the others run again;\n"
          "                  an error at the end (a leak) runs the batch again one case\n"
          "                  a process; --expected's cases always run one a process\n"
          "  --expected FILE list of cases expected to fail (\"suite/case reason\" per line);\n"
          "                  the exit status is 0 when exactly those cases fail\n"
          "  --timeout SEC   a case running longer fails (default 300)\n"
          "  --threads N     threads per case (default 1 with several jobs, else all cores)\n"
          "  --slow SEC      report cases taking SEC seconds or more on standard error\n"
          "  --exclude PREFIX  do not run the cases whose name (\"node/test_x\") starts\n"
          "                  with PREFIX (repeatable)\n"
          "  --opset N[,M..]  convert each model to opset N (then M, ...; min: the lowest\n"
          "                  at which its ops exist) and check it before running it\n"
          "  --allow-refusal  with --opset: a case whose conversion is refused (a clear\n"
          "                  error naming the node) is counted apart, not as a failure\n"
          "  --sweep N[,M..]  convert each model to each opset of the list in turn (from\n"
          "                  the original, in one process per case), check and run each\n"
          "                  conversion; refusals are counted, not failures; a conversion\n"
          "                  that is the same program for the runtime as an earlier one\n"
          "                  (same graph, every node bound to the same operator version)\n"
          "                  is not run again\n"
          "  --skip-unchanged  with --opset: do not run a conversion that is the same\n"
          "                  program for the runtime as the unconverted model (the\n"
          "                  conformance tests run that one), unless --expected lists it\n"
          "  --convert-only  with --opset: convert and check each model, run none but the\n"
          "                  cases --expected lists (the conversion's code alone, e.g.\n"
          "                  under a sanitizer when the runs repeat covered kernels)\n"
          "  --ctx-bodies    run every node whose op has a context-dependent function body\n"
          "                  through the body built for it (tests the body builders)\n");
}

/* A case's result from its exit status: 0 passed, 3 conversion refused, else
 * failed (msg: why; none: the status). */
static void finish_code(tcase *c, int code, const char *msg) {
  free(c->reason);
  c->reason = NULL;
  c->status = code == 0 ? 0 : code == 3 ? 2 : 1;
  if (code == 0) return;
  char buf[1200];
  if (msg && *msg)
    snprintf(buf, sizeof buf, "%s", msg);
  else
    snprintf(buf, sizeof buf, "exited with status %d", code);
  for (char *p = buf; *p; p++)
    if (*p == '\n') *p = ' ';
  c->reason = strdup(buf);
}

/* ... or from the wait status of the child it ran in */
static void finish(tcase *c, int wstatus, const char *msg) {
  if (!WIFSIGNALED(wstatus)) {
    finish_code(c, WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 1, msg);
    return;
  }
  free(c->reason);
  c->status = 1;
  c->reason = strdup(WTERMSIG(wstatus) == SIGALRM   ? "timed out"
                     : WTERMSIG(wstatus) == SIGSEGV ? "crashed (SIGSEGV)"
                                                    : "crashed (signal)");
}

static void free_all(tlist *l, expected *x) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->v[i].dir);
    free(l->v[i].model);
    free(l->v[i].name);
    free(l->v[i].light_out);
    free(l->v[i].reason);
  }
  free(l->v);
  for (size_t i = 0; i < x->n; i++) free(x->names[i]);
  free(x->names);
  free(x->seen);
  for (size_t i = 0; i < x->n_random; i++) free(x->random[i]);
  free(x->random);
}

/* A case's child ends. Under a sanitizer: everything freed, then exit(),
 * whose handlers check for leaks. Otherwise _exit(): exit() in a child runs
 * the destructors of every shared library onnxc links (gRPC, TLS, ...) and
 * frees what the kernel reclaims anyway; with the copy-on-write faults that
 * this touching costs after a fork, it was 60% of a small case's CPU time
 * (36 -> 14 ms a case measured on `onnxc test` of 69 node cases). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OX_CHILD_CLEAN_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(leak_sanitizer)
#define OX_CHILD_CLEAN_EXIT 1
#endif
#endif
/* --batch: its default, and its bound (a batch's records fit in a pipe).
 * A child's start and end cost more than most cases: the fork's copy-on-write
 * faults, and under a sanitizer exit() and its leak check. Measured on 150
 * node cases, 2 jobs, CPU time (user+sys): release 1.9 s one case a child,
 * 0.32 s 16 a child; ASan+UBSan with leak checks 23.7 s and 2.7 s. The leak
 * check at a batch's end still sees every case's leak (and a batch that
 * leaks runs again one case a child, which names the case). */
#define MAX_BATCH 32
#define DEFAULT_BATCH 16
/* The case at queue position at runs again (a failure when it cannot). */
static void requeue(queue *q, tlist *l, size_t at) {
  size_t i = q->v[at];
  if (push(q, i)) finish_code(&l->v[i], 1, "onnxc test: out of memory to run it again");
}

static _Noreturn void child_exit(int status, child *kids, queue *q, batch_error *berr, tlist *l,
                                 expected *x) {
#ifdef OX_CHILD_CLEAN_EXIT
  free(kids);
  free(q->v);
  free(berr);
  free_all(l, x);
  exit(status);
#else
  (void)kids, (void)q, (void)berr, (void)l, (void)x;
  fflush(NULL);
  _exit(status);
#endif
}

int ox_cmd_test(int argc, char **argv) {
  int jobs = (int)sysconf(_SC_NPROCESSORS_ONLN), timeout = 300, threads = -1;
  int batch = DEFAULT_BATCH;
  double slow = 0;
  bool ctx_bodies = false;
  opset_list opsets = {0};
  bool allow_refusal = false, sweep = false, skip_unchanged = false, convert_only = false;
  const char *excl[16];
  size_t n_excl = 0;
  const char *expected_path = NULL;
  tlist l = {0};
  for (int i = 1; i < argc; i++) {
    if (ox_cli_is_help(argv[i])) {
      usage(stdout);
      return 0;
    } else if ((strcmp(argv[i], "--jobs") == 0 || strcmp(argv[i], "-j") == 0) && i + 1 < argc) {
      jobs = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
      batch = atoi(argv[++i]);
      if (batch < 1 || batch > MAX_BATCH) {
        fprintf(stderr, "onnxc test: --batch takes 1 to %d\n", MAX_BATCH);
        return 2;
      }
    } else if (strcmp(argv[i], "--expected") == 0 && i + 1 < argc) {
      expected_path = argv[++i];
    } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
      timeout = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--allow-refusal") == 0) {
      allow_refusal = true;
    } else if (strcmp(argv[i], "--exclude") == 0 && i + 1 < argc) {
      if (n_excl == sizeof excl / sizeof *excl) {
        fprintf(stderr, "onnxc test: too many --exclude\n");
        return 2;
      }
      excl[n_excl++] = argv[++i];
    } else if ((strcmp(argv[i], "--opset") == 0 || strcmp(argv[i], "--sweep") == 0) &&
               opsets.n) {
      fprintf(stderr, "onnxc test: one --opset or --sweep\n");
      return 2;
    } else if (strcmp(argv[i], "--opset") == 0 && i + 1 < argc) {
      if (!parse_opsets(argv[++i], &opsets)) {
        fprintf(stderr, "onnxc test: bad value for --opset: '%s'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "--sweep") == 0 && i + 1 < argc) {
      if (!parse_opsets(argv[++i], &opsets)) {
        fprintf(stderr, "onnxc test: bad value for --sweep: '%s'\n", argv[i]);
        return 2;
      }
      sweep = true;
    } else if (strcmp(argv[i], "--skip-unchanged") == 0) {
      skip_unchanged = true;
    } else if (strcmp(argv[i], "--convert-only") == 0) {
      convert_only = true;
    } else if (strcmp(argv[i], "--ctx-bodies") == 0) {
      ctx_bodies = true;
    } else if (strcmp(argv[i], "--slow") == 0 && i + 1 < argc) {
      slow = atof(argv[++i]);
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc test: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else {
      if (!is_dir(argv[i])) {
        fprintf(stderr, "onnxc test: %s is not a folder\n", argv[i]);
        return 2;
      }
      collect(&l, argv[i], 0);
    }
  }
  size_t skipped = 0;
  for (size_t i = 0, keep = 0; i < l.n; i++) {
    bool drop = false;
    for (size_t k = 0; k < n_excl && !drop; k++)
      drop = strncmp(l.v[i].name, excl[k], strlen(excl[k])) == 0;
    if (drop) {
      free(l.v[i].dir);
      free(l.v[i].model);
      free(l.v[i].name);
      free(l.v[i].light_out);
      skipped++;
    } else
      l.v[keep++] = l.v[i];
    if (i + 1 == l.n) l.n = keep;
  }
  if (jobs < 1) jobs = 1;
  if (threads < 0) threads = jobs > 1 ? 1 : 0;
  expected x = {0};
  if (expected_path && load_expected(expected_path, &x)) return 2;
  for (size_t i = 0; i < l.n; i++) l.v[i].listed = find_expected(&x, l.v[i].name) >= 0;
  if ((skip_unchanged || convert_only) && (!opsets.n || sweep)) {
    fprintf(stderr, "onnxc test: --skip-unchanged and --convert-only go with --opset\n");
    free_all(&l, &x);
    return 2;
  }
  fflush(stdout);
  fflush(stderr);

  /* the queue of cases to run: every case once, then those run again */
  queue q = {0};
  for (size_t i = 0; i < l.n; i++)
    if (push(&q, i)) {
      fprintf(stderr, "onnxc test: out of memory\n");
      return 2;
    }
  batch_error *berr = NULL;
  size_t n_berr = 0;
  child *kids = calloc((size_t)jobs, sizeof *kids);
  size_t next = 0, running = 0;
  while (next < q.n || running > 0) {
    while (running < (size_t)jobs && next < q.n) {
      /* the next batch: consecutive cases, none listed or to run alone */
      size_t take = 1;
      if (!l.v[q.v[next]].listed && !l.v[q.v[next]].alone)
        while (take < (size_t)batch && next + take < q.n && !l.v[q.v[next + take]].listed &&
               !l.v[q.v[next + take]].alone)
          take++;
      int fds[2];
      if (pipe(fds) != 0) {
        fprintf(stderr, "onnxc test: pipe: %s\n", strerror(errno));
        return 2;
      }
      pid_t pid = fork();
      if (pid < 0) {
        fprintf(stderr, "onnxc test: fork: %s\n", strerror(errno));
        return 2;
      }
      if (pid == 0) {
        close(fds[0]);
        int code = 0;
        for (size_t k = 0; k < take; k++) {
          alarm((unsigned)(timeout > 0 ? timeout : 0));
          char why[1100] = {0};
          sweep_counts sc = {0};
          double t0 = now_s();
          int rc = run_case(&l.v[q.v[next + k]], threads, ctx_bodies, &opsets, sweep,
                            skip_unchanged, convert_only, &sc, why, sizeof why);
          code = rc == 2 ? 3 : rc ? 1 : 0;
          send_record(fds[1], code, &sc, now_s() - t0, rc ? why : "");
        }
        close(fds[1]);
        /* one case: its status, as the parent reads a child of one case */
        child_exit(take == 1 ? code : 0, kids, &q, berr, &l, &x);
      }
      close(fds[1]);
      for (int j = 0; j < jobs; j++)
        if (kids[j].pid == 0) {
          kids[j].pid = pid;
          kids[j].fd = fds[0];
          kids[j].first = next;
          kids[j].n = take;
          kids[j].start = now_s();
          break;
        }
      next += take;
      running += 1;
    }
    int ws;
    pid_t done = wait(&ws);
    if (done < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int j = 0; j < jobs; j++)
      if (kids[j].pid == done) {
        child *k = &kids[j];
        size_t got_n = 0;
        char *buf = read_all(k->fd, &got_n);
        close(k->fd);
        size_t r = 0, off = 0;
        int code;
        double took;
        sweep_counts sc;
        const char *why;
        size_t why_n;
        while (r < k->n && buf && parse_record(buf, got_n, &off, &code, &sc, &took, &why, &why_n)) {
          tcase *tc = &l.v[q.v[k->first + r]];
          tc->ran = sc.ran, tc->same = sc.same, tc->refused = sc.refused;
          char msg[1200];
          snprintf(msg, sizeof msg, "%.*s", (int)why_n, why);
          if (k->n == 1)
            finish(tc, ws, msg); /* the exit status is the case's, a leak's included */
          else
            finish_code(tc, code, msg);
          if (slow > 0 && took >= slow) fprintf(stderr, "slow: %s took %.1f s\n", tc->name, took);
          r++;
        }
        free(buf);
        bool clean = WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
        if (r < k->n) {
          /* the case it was in when it crashed or timed out fails; the rest run again */
          tcase *tc = &l.v[q.v[k->first + r]];
          finish(tc, ws, "");
          if (slow > 0 && now_s() - k->start >= slow)
            fprintf(stderr, "slow: %s (a batch's) ended after %.1f s\n", tc->name,
                    now_s() - k->start);
          for (size_t i = r + 1; i < k->n; i++) requeue(&q, &l, k->first + i);
        } else if (k->n > 1 && !clean) {
          /* every case reported, then an error at exit (a leak): each runs
           * again in a child of its own, which names the one */
          for (size_t i = 0; i < k->n; i++) {
            l.v[q.v[k->first + i]].alone = true;
            requeue(&q, &l, k->first + i);
          }
          batch_error *nb = realloc(berr, (n_berr + 1) * sizeof *nb);
          if (nb) {
            berr = nb;
            berr[n_berr++] = (batch_error){q.n - k->n, k->n, ws};
          }
        }
        k->pid = 0;
        running--;
        break;
      }
  }
  free(kids);


  size_t passed = 0, failed = 0, unexpected_fail = 0, unexpected_pass = 0, expected_fail = 0;
  size_t refused = 0, ran = 0, same = 0, conv_refused = 0;
  for (size_t i = 0; i < l.n; i++) {
    tcase *c = &l.v[i];
    ran += c->ran;
    same += c->same;
    conv_refused += c->refused;
    long xi = find_expected(&x, c->name);
    if (xi >= 0) x.seen[xi] = true;
    if (c->status == 2 && allow_refusal) {
      refused++;
      if (xi >= 0) {
        unexpected_pass++;
        printf("unexpected refusal %s (listed in %s)\n", c->name, expected_path);
      }
    } else if (c->status == 0) {
      passed++;
      const char *key = c->name;
      bool random = x.n_random && bsearch(&key, x.random, x.n_random, sizeof *x.random, cmp_str);
      if (xi >= 0 && random) {
        printf("random case %s matched its reference this time\n", c->name);
      } else if (xi >= 0) {
        unexpected_pass++;
        printf("unexpected pass %s (listed in %s)\n", c->name, expected_path);
      }
    } else {
      failed++;
      if (xi >= 0)
        expected_fail++;
      else
        unexpected_fail++;
      printf("FAIL %s: %s\n", c->name, c->reason ? c->reason : "");
    }
  }
  for (size_t b = 0; b < n_berr; b++) {
    bool explained = false;
    for (size_t i = 0; i < berr[b].n; i++) explained |= l.v[q.v[berr[b].first + i]].status != 0;
    if (!explained) {
      /* its cases are not listed (listed cases run alone): an unexpected failure */
      failed++;
      unexpected_fail++;
      int ws = berr[b].wstatus;
      printf("FAIL a batch of %zu cases, %s .. %s: its process %s %d after every case passed "
             "(a leak or error at exit), and each passes in a process of its own\n",
             berr[b].n, l.v[q.v[berr[b].first]].name, l.v[q.v[berr[b].first + berr[b].n - 1]].name,
             WIFSIGNALED(ws) ? "ended on signal" : "exited with status",
             WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
    }
  }
  if (expected_path)
    printf("%zu expected failures, %zu unexpected failures, %zu unexpected passes\n", expected_fail,
           unexpected_fail, unexpected_pass);
  printf("%zu passed, %zu failed", passed, failed);
  if (allow_refusal) printf(", %zu refused", refused);
  if (skipped) printf(", %zu skipped", skipped);
  if (sweep)
    printf("; %zu opsets per case: %zu conversions run, %zu not run again (the same program for "
           "the runtime as an earlier opset's conversion, whose outputs were checked), %zu "
           "refused",
           opsets.n, ran, same, conv_refused);
  if (convert_only)
    printf("; converted and checked only (--convert-only): none run but --expected's cases");
  if (skip_unchanged)
    printf("; %zu conversions not run (the same program for the runtime as the unconverted "
           "model, which the conformance tests run)",
           same);
  printf("\n");
  free_all(&l, &x);
  free(q.v);
  free(berr);
  if (expected_path) return unexpected_fail || unexpected_pass ? 1 : 0;
  return failed ? 1 : 0;
}
