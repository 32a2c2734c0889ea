/* test_concurrent.c - one session, many threads: every output of every
 * concurrent run must equal, bit for bit, the output of a serial run.
 *
 *   test_concurrent [--threads N] [--runs M] [--session-threads K] PATH...
 *
 * PATH is a conformance case (a folder with model.onnx and test_data_set_0/),
 * a folder of such cases, or a model file: its float inputs get a ramp in
 * the shape given by a preceding `--dims NAME=d0,d1,..` (else the declared
 * one, unknown dims 1), and `--i64 NAME=V` gives an int64 scalar input. For each model: a session with K threads (its pool is
 * shared by the runs, so most runs also take the inline path), one serial
 * run as the reference, then N threads each running M times — half of the
 * threads with their own per-run thread count (1, or K + 1 through the
 * session's extra pools), one thread polling a terminate flag that stays 0.
 * A model whose two serial runs differ (random operators) is only run
 * concurrently for crashes and races. The concurrent runs use a second
 * session that has not run yet: state made lazily by a first run is made
 * under the race. Built also with ThreadSanitizer
 * (build-tsan/, `make test`), where a data race fails the test. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/api/model_file.h"
#include "../../src/ops/registry.h"
#include "../../src/cli/runio.h"
#include "../../src/runtime/session.h"
#include "../../src/proto/proto.h"
#include "../../src/text/text.h"

typedef struct model_case {
  const char *path;
  ox_session *s;
  const char **names;
  ox_value **ins;
  size_t n_in, n_out;
  ox_value **want;
  bool deterministic;
} model_case;

/* Input specs for model files, from --dims and --i64. */
typedef struct input_spec {
  const char *name;
  int64_t dims[8];
  size_t rank;
  bool is_i64;
  int64_t i64;
} input_spec;
static input_spec specs[32];
static size_t n_specs;

static const input_spec *spec_for(const char *name) {
  for (size_t i = 0; i < n_specs; i++)
    if (strcmp(specs[i].name, name) == 0) return &specs[i];
  return NULL;
}

/* "NAME=1,512" or "NAME=16000": false when malformed. */
static bool add_spec(char *arg, bool is_i64) {
  char *eq = strchr(arg, '=');
  if (!eq || n_specs == 32) return false;
  *eq = 0;
  input_spec *sp = &specs[n_specs++];
  *sp = (input_spec){.name = arg, .is_i64 = is_i64};
  for (char *p = eq + 1; *p;) {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p) return false;
    if (is_i64) {
      sp->i64 = v;
      return *end == 0;
    }
    if (sp->rank == 8) return false;
    sp->dims[sp->rank++] = v;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return false;
  }
  return true;
}

typedef struct worker {
  model_case *mc;
  pthread_barrier_t *start; /* all threads begin together, so that runs overlap */
  int index, runs;
  int session_threads;
  int mismatches, errors;
  char first[1100];
} worker;


/* Exact equality: kind, type, shape and every byte (strings by content). */
static bool same_value(const ox_value *a, const ox_value *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case OX_VAL_TENSOR:
    if (a->dtype != b->dtype || !ox_shape_equal(a->dims, a->rank, b->dims, b->rank)) return false;
    if (a->dtype == OX_STRING) {
      char *const *x = a->data, *const *y = b->data;
      for (int64_t i = 0; i < a->numel; i++)
        if (strcmp(x[i] ? x[i] : "", y[i] ? y[i] : "") != 0) return false;
      return true;
    }
    return a->nbytes == b->nbytes && (!a->nbytes || memcmp(a->data, b->data, a->nbytes) == 0);
  case OX_VAL_SEQUENCE:
    if (a->n_items != b->n_items) return false;
    for (size_t i = 0; i < a->n_items; i++)
      if (!same_value(a->items[i], b->items[i])) return false;
    return true;
  case OX_VAL_MAP:
    return same_value(a->keys, b->keys) && same_value(a->vals, b->vals);
  case OX_VAL_OPTIONAL:
    return same_value(a->elem, b->elem);
  case OX_VAL_SPARSE:
    return ox_shape_equal(a->dims, a->rank, b->dims, b->rank) &&
           same_value(a->sp_values, b->sp_values) && same_value(a->sp_indices, b->sp_indices);
  }
  return false;
}

static void free_values(ox_value **v, size_t n) {
  for (size_t i = 0; v && i < n; i++) ox_value_unref(v[i]);
}

static void *worker_main(void *arg) {
  worker *w = arg;
  model_case *mc = w->mc;
  ox_value **outs = calloc(mc->n_out + 1, sizeof *outs);
  volatile int terminate = 0;
  ox_run_opts ro = {0};
  if (w->index % 4 == 1) ro.threads = 1;
  if (w->index % 4 == 3) ro.threads = w->session_threads + 1;
  if (w->index % 4 == 2) {
    ro.terminate = &terminate;
    ro.tag = "polled";
  }
  pthread_barrier_wait(w->start);
  for (int r = 0; outs && r < w->runs; r++) {
    ox_err e = {0};
    int rc = ox_session_run_opts(mc->s, &ro, mc->names, mc->ins, mc->n_in, NULL, outs, mc->n_out,
                                 &e);
    if (rc) {
      if (!w->errors++) snprintf(w->first, sizeof w->first, "run failed: %s", e.msg);
      continue;
    }
    for (size_t k = 0; k < mc->n_out; k++)
      if (mc->deterministic && !same_value(mc->want[k], outs[k]) && !w->mismatches++)
        snprintf(w->first, sizeof w->first, "output %zu differs from the serial run", k);
    free_values(outs, mc->n_out);
  }
  if (!outs) w->errors++;
  free(outs);
  return NULL;
}

/* Inputs from test_data_set_0 when there is one, else a ramp per input. */
static int load_inputs(model_case *mc, const char *dir, ox_err *e) {
  size_t n = ox_session_n_inputs(mc->s);
  mc->names = calloc(n + 1, sizeof *mc->names);
  mc->ins = calloc(n + 1, sizeof *mc->ins);
  if (!mc->names || !mc->ins) return ox_err_set(e, OX_ENOMEM, "out of memory");
  char path[4096];
  for (size_t i = 0, k = 0; i < n; i++) {
    if (ox_session_input_has_default(mc->s, i)) continue;
    const ox_type *t = ox_session_input_type(mc->s, i);
    if (dir) {
      snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, k++);
      if (!ox_path_is_file(path)) return ox_err_set(e, OX_EINVAL, "%s is missing", path);
      onnxc_value_read_file(path, (const onnxc_type *)t, (onnxc_value **)&mc->ins[mc->n_in],
                            (onnxc_error *)e);
    } else {
      const input_spec *sp = spec_for(ox_session_input_name(mc->s, i));
      if (sp && sp->is_i64)
        mc->ins[mc->n_in] = ox_tensor_scalar_i64(sp->i64, e);
      else if (sp)
        mc->ins[mc->n_in] = (ox_value *)ox_cli_ramp(sp->dims, sp->rank, (onnxc_error *)e);
      else
        mc->ins[mc->n_in] =
            (ox_value *)ox_cli_light_input((const onnxc_type *)t, (onnxc_error *)e);
    }
    if (!mc->ins[mc->n_in]) return e->code ? e->code : OX_EINVAL;
    mc->names[mc->n_in++] = ox_session_input_name(mc->s, i);
  }
  return OX_OK;
}

static int serial_run(model_case *mc, ox_value **outs, ox_err *e) {
  return ox_session_run(mc->s, mc->names, mc->ins, mc->n_in, NULL, outs, mc->n_out, e);
}

/* Returns 0 when every concurrent output matched; prints a line otherwise. */
static int check_model(const char *model_path, const char *case_dir, int n_threads, int runs,
                       int session_threads, int *n_models) {
  ox_err e = {0};
  ox_model *m = NULL;
  model_case mc = {.path = model_path};
  ox_session *serial_s = NULL; /* the session of the serial runs */
  int failed = 0;
  if (ox_api_model_load(model_path, &(ox_load_opts){0}, &m, &e)) {
    printf("%s: cannot load: %s\n", model_path, e.msg);
    return 1;
  }
  ox_session_opts so = {.threads = session_threads, .optimization_level = 1, .kernels = &ox_registry_builtin};
  if (ox_session_create(m, &so, &mc.s, &e)) {
    /* cases the runtime does not support are the conformance suite's business */
    printf("%s: not run (no session: %s)\n", model_path, e.msg);
    ox_model_free(m);
    return 0;
  }
  mc.n_out = ox_session_n_outputs(mc.s);
  mc.want = calloc(mc.n_out + 1, sizeof *mc.want);
  ox_value **again = calloc(mc.n_out + 1, sizeof *again);
  worker *ws = calloc((size_t)n_threads, sizeof *ws);
  pthread_t *tids = calloc((size_t)n_threads, sizeof *tids);
  if (!mc.want || !again || !ws || !tids) {
    printf("%s: out of memory\n", model_path);
    failed = 1;
    goto done;
  }
  if (load_inputs(&mc, case_dir, &e) || serial_run(&mc, mc.want, &e)) {
    /* a case that fails serially is the conformance suite's business */
    printf("%s: not run (serial run: %s)\n", model_path, e.msg);
    goto done;
  }
  /* deterministic when three more serial runs give the same outputs: a
   * random op's small output can repeat by chance once (test_bernoulli_double
   * did), three times hardly */
  mc.deterministic = true;
  for (int r = 0; r < 3 && mc.deterministic; r++) {
    if (serial_run(&mc, again, &e)) {
      printf("%s: serial run %d failed: %s\n", model_path, r + 2, e.msg);
      failed = 1;
      goto done;
    }
    for (size_t k = 0; k < mc.n_out; k++)
      if (!same_value(mc.want[k], again[k])) mc.deterministic = false;
    free_values(again, mc.n_out);
    memset(again, 0, mc.n_out * sizeof *again);
  }
  (*n_models)++;
  if (!mc.deterministic) printf("%s: outputs vary between runs: checked for failures only\n", model_path);
  /* the concurrent runs use a second session made now, so that what a
   * session makes on its first run (a convolution's Winograd kernels) is
   * made while the threads race */
  serial_s = mc.s;
  if (ox_session_create(m, &so, &mc.s, &e)) {
    printf("%s: second session: %s\n", model_path, e.msg);
    mc.s = NULL;
    failed = 1;
    goto done;
  }
  int started = 0;
  pthread_barrier_t start;
  if (pthread_barrier_init(&start, NULL, (unsigned)n_threads)) {
    printf("%s: cannot make a barrier\n", model_path);
    failed = 1;
    goto done;
  }
  for (int t = 0; t < n_threads; t++) {
    ws[t] = (worker){.mc = &mc, .start = &start, .index = t, .runs = runs,
                     .session_threads = session_threads};
    if (pthread_create(&tids[t], NULL, worker_main, &ws[t]) != 0) break;
    started++;
  }
  if (started < n_threads) {
    /* the barrier would wait forever: this cannot be recovered in a test */
    printf("%s: could only start %d threads\n", model_path, started);
    fflush(stdout);
    _exit(1);
  }
  for (int t = 0; t < started; t++) pthread_join(tids[t], NULL);
  pthread_barrier_destroy(&start);
  for (int t = 0; t < started; t++)
    if (ws[t].errors || ws[t].mismatches) {
      printf("%s: thread %d: %d errors, %d mismatches; first: %s\n", model_path, t, ws[t].errors,
             ws[t].mismatches, ws[t].first);
      failed = 1;
    }
done:
  if (mc.want) free_values(mc.want, mc.n_out);
  if (again) free_values(again, mc.n_out);
  free(mc.want);
  free(again);
  free_values(mc.ins, mc.n_in);
  free(mc.ins);
  free(mc.names);
  free(ws);
  free(tids);
  ox_session_free(mc.s);
  ox_session_free(serial_s);
  ox_model_free(m);
  return failed;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A case folder, a folder of cases (sorted), or a model file. */
static int check_path(const char *path, int n_threads, int runs, int st, int *n_models) {
  char model[4096];
  if (!ox_path_is_dir(path)) return check_model(path, NULL, n_threads, runs, st, n_models);
  snprintf(model, sizeof model, "%s/model.onnx", path);
  if (ox_path_is_file(model)) return check_model(model, path, n_threads, runs, st, n_models);
  DIR *d = opendir(path);
  if (!d) {
    printf("%s: cannot open\n", path);
    return 1;
  }
  char **ents = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **ne = realloc(ents, cap * sizeof *ne);
      if (!ne) break;
      ents = ne;
    }
    ents[n++] = strdup(de->d_name);
  }
  closedir(d);
  if (n) qsort(ents, n, sizeof *ents, cmp_str);
  int failed = 0;
  for (size_t i = 0; i < n; i++) {
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", path, ents[i]);
    if (ox_path_is_dir(sub)) failed |= check_path(sub, n_threads, runs, st, n_models);
    free(ents[i]);
  }
  free(ents);
  return failed;
}

int main(int argc, char **argv) {
  int n_threads = 4, runs = 20, session_threads = 2, n_models = 0, failed = 0, n_paths = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      n_threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--session-threads") == 0 && i + 1 < argc)
      session_threads = atoi(argv[++i]);
    else if ((strcmp(argv[i], "--dims") == 0 || strcmp(argv[i], "--i64") == 0) && i + 1 < argc) {
      bool is_i64 = argv[i][2] == 'i';
      if (!add_spec(argv[++i], is_i64)) {
        fprintf(stderr, "test_concurrent: bad input spec '%s'\n", argv[i]);
        return 2;
      }
    } else {
      failed |= check_path(argv[i], n_threads, runs, session_threads, &n_models);
      n_paths++;
    }
  }
  if (!n_paths || n_threads < 1 || runs < 1) {
    fprintf(stderr, "usage: test_concurrent [--threads N] [--runs M] [--session-threads K]\n"
                    "                       [--dims NAME=d0,d1,..] [--i64 NAME=V] PATH...\n");
    return 2;
  }
  printf("%d models, %d threads x %d runs each: %s\n", n_models, n_threads, runs,
         failed ? "FAILED" : "all outputs equal the serial runs");
  return failed || n_models == 0;
}
