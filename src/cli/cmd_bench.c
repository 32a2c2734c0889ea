/* cmd_bench.c - `onnxc bench MODEL [--threads N] [--runs N] [--warmup N]
 * [--callers N] [-i [NAME=]FILE]...`: measures run latency and, with
 * --callers, the throughput of N threads running one session at once.
 * Inputs not given are filled with arange(n)/n (floats) or zeros, unknown
 * dims taken as 1. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "runio.h"
#include "session_flags.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* --input NAME=D1,D2,...: the dims of a made-up input */
typedef struct bench_dims {
  const char *name;
  size_t name_len, rank;
  int64_t dims[16];
} bench_dims;

static bool parse_dims(const char *arg, bench_dims *b) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg) return false;
  b->name = arg;
  b->name_len = (size_t)(eq - arg);
  b->rank = 0;
  const char *p = eq + 1;
  if (!*p) return true; /* a scalar */
  for (;;) {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || v < 0 || b->rank == 16) return false;
    b->dims[b->rank++] = v;
    if (*end == 0) return true;
    if (*end != ',') return false;
    p = end + 1;
  }
}

/* A made-up input: the given dims, else the declared ones with unknown
 * dims taken as 1; floats count up from 0 to 1, other types are zeros. */
static onnxc_value *synth_input(const char *name, const onnxc_type *t, const bench_dims *bd,
                                size_t n_bd, onnxc_error *e) {
  if (onnxc_type_kind_of(t) != ONNXC_TYPE_TENSOR) {
    e->code = ONNXC_ERR_UNSUPPORTED;
    snprintf(e->msg, sizeof e->msg, "cannot make up a non-tensor input; pass -i");
    return NULL;
  }
  int64_t dims[16];
  int64_t declared_rank = onnxc_type_rank(t);
  size_t rank = declared_rank > 0 ? (size_t)declared_rank : 0; /* unknown rank: a scalar */
  if (rank > 16) {
    e->code = ONNXC_ERR_UNSUPPORTED;
    snprintf(e->msg, sizeof e->msg, "input of rank %zu", rank);
    return NULL;
  }
  for (size_t i = 0; i < rank; i++) {
    int64_t d = onnxc_type_dim(t, i);
    dims[i] = d >= 0 ? d : 1;
  }
  for (size_t k = 0; k < n_bd; k++)
    if (strlen(name) == bd[k].name_len && !strncmp(name, bd[k].name, bd[k].name_len)) {
      rank = bd[k].rank;
      memcpy(dims, bd[k].dims, rank * sizeof *dims);
    }
  if (onnxc_type_elem_type(t) == 1 /* float */) return ox_cli_ramp(dims, rank, e);
  return onnxc_tensor_create(onnxc_type_elem_type(t), dims, rank, e);
}

/* One of --callers threads: `runs` runs of the shared session and inputs. */
typedef struct bench_caller {
  onnxc_session *s;
  const char **names;
  onnxc_value **vals;
  size_t n_in, n_out;
  int runs, failed;
  char msg[1100];
} bench_caller;

static void *caller_main(void *arg) {
  bench_caller *c = arg;
  onnxc_value **outs = calloc(c->n_out + 1, sizeof *outs);
  for (int r = 0; outs && r < c->runs && !c->failed; r++) {
    onnxc_error e = {0};
    if (onnxc_session_run(c->s, c->names, c->vals, c->n_in, NULL, outs, c->n_out, &e)) {
      c->failed = 1;
      snprintf(c->msg, sizeof c->msg, "%s", e.msg);
    }
    for (size_t k = 0; k < c->n_out; k++) {
      onnxc_value_free(outs[k]);
      outs[k] = NULL;
    }
  }
  if (!outs) c->failed = 1;
  free(outs);
  return NULL;
}

/* Throughput of `callers` threads running the session at once. */
static int throughput(onnxc_session *s, const char **names, onnxc_value **vals, size_t n_in,
                      size_t n_out, int callers, int runs) {
  bench_caller *cs = calloc((size_t)callers, sizeof *cs);
  pthread_t *t = calloc((size_t)callers, sizeof *t);
  int started = 0, failed = 0;
  if (!cs || !t) {
    free(cs);
    free(t);
    return 1;
  }
  double a = now_ms();
  for (int i = 0; i < callers; i++) {
    cs[i] = (bench_caller){s, names, vals, n_in, n_out, runs, 0, ""};
    if (pthread_create(&t[i], NULL, caller_main, &cs[i]) != 0) break;
    started++;
  }
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
  double b = now_ms();
  for (int i = 0; i < started; i++)
    if (cs[i].failed && !failed++) fprintf(stderr, "onnxc: %s\n", cs[i].msg);
  if (started < callers) {
    fprintf(stderr, "onnxc: could start only %d of %d callers\n", started, callers);
    failed++;
  }
  if (!failed)
    printf("throughput: %.1f runs/s with %d concurrent callers (%d runs each, %.1f ms)\n",
           (double)started * runs / ((b - a) / 1e3), started, runs, b - a);
  free(cs);
  free(t);
  return failed ? 1 : 0;
}

int ox_cmd_bench(int argc, char **argv) {
  const char *model_path = NULL;
  int runs = 10, warmup = 2, callers = 0;
  bool profile = false;
  ox_cli_session_flags sf = {0};
  char **ins = calloc((size_t)argc + 1, sizeof *ins);
  bench_dims *bd = calloc((size_t)argc + 1, sizeof *bd);
  size_t n_ins = 0, n_bd = 0;
  if (!ins || !bd) {
    free(ins);
    free(bd);
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    int pf = ox_cli_session_flag(&sf, argc, argv, &i, "bench");
    if (pf || strcmp(argv[i], "--list-passes") == 0) {
      if (!pf) ox_cli_list_passes(stdout);
      if (pf > 0) continue;
      free(ins);
      free(bd);
      return pf ? 2 : 0;
    }
    if (ox_cli_is_help(argv[i])) {
      printf(
          "usage: onnxc bench MODEL [--threads N] [--runs N] [--warmup N] [--profile] "
          "[--callers N] [-i [NAME=]FILE]... [--input NAME=D1,D2,...]...\n"
          "  --max-memory SIZE  the most tensor memory a run may hold (K, M, G, T suffixes)\n"
          "  --callers  then N threads run the one session at once, --runs each:\n"
          "             prints runs per second\n"
          "  --profile  time every node; print the time per operator type and the\n"
          "             slowest nodes, per measured run (warm-up runs, which also make\n"
          "             lazily prepared kernels, are not counted; the timing adds a little)\n"
          "  --input    dims of a made-up input (default: declared dims, unknown = 1)\n"
          "  --no-quant-fusion  run quantized (QDQ) units in float, as written\n"
          "  --low-bit-int8  decode products by 8/4/2-bit weights with int8 activations\n"
          "             (as onnxruntime does by default; see onnxc run --help)\n"
          "  --parallel-branches  run nodes that do not depend on each other side by\n"
          "             side, one thread each (see onnxc run --help)\n"
          OX_CLI_PASS_FLAGS_HELP);
      free(ins);
      free(bd);
      return 0;
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
      warmup = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--callers") == 0 && i + 1 < argc) {
      callers = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--input") == 0 && i + 1 < argc) {
      if (!parse_dims(argv[++i], &bd[n_bd])) {
        fprintf(stderr, "onnxc bench: bad --input '%s' (expected NAME=D1,D2,...)\n", argv[i]);
        free(ins);
        free(bd);
        return 2;
      }
      n_bd++;
    } else if (strcmp(argv[i], "--profile") == 0) {
      profile = true;
    } else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) {
      ins[n_ins++] = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc bench: unknown option '%s'\n", argv[i]);
      free(ins);
      free(bd);
      return 2;
    } else {
      model_path = argv[i];
    }
  }
  if (!model_path || runs < 1) {
    fprintf(stderr, "usage: onnxc bench MODEL [--threads N] [--runs N] [--warmup N]\n");
    free(ins);
    free(bd);
    return 2;
  }
  int status = 1;
  onnxc_error e = {0};
  onnxc_session *s = NULL;
  onnxc_value **vals = NULL, **outs = NULL;
  const char **names = NULL;
  double *times = NULL;
  size_t n_in = 0, n_out = 0;
  double t0 = now_ms();
  onnxc_model *m = ox_cli_load_model(model_path);
  if (!m) goto done;
  double t1 = now_ms();
  onnxc_session_options o = ox_cli_session_options(&sf);
  o.profile = profile;
  if (onnxc_session_create(m, &o, &s, &e)) {
    fprintf(stderr, "onnxc: %s: %s\n", model_path, e.msg);
    goto done;
  }
  double t2 = now_ms();
  n_in = onnxc_session_input_count(s); /* those without an initializer */
  n_out = onnxc_session_output_count(s);
  vals = calloc(n_in + 1, sizeof *vals);
  names = calloc(n_in + 1, sizeof *names);
  outs = calloc(n_out + 1, sizeof *outs);
  times = calloc((size_t)runs, sizeof *times);
  if (!vals || !names || !outs || !times) goto done;
  size_t next = 0;
  for (size_t i = 0; i < n_in; i++) {
    names[i] = onnxc_session_input_name(s, i);
    const char *file = NULL;
    for (size_t k = 0; k < n_ins && !file; k++) {
      const char *eq = strchr(ins[k], '=');
      if (eq && strncmp(ins[k], names[i], (size_t)(eq - ins[k])) == 0 &&
          strlen(names[i]) == (size_t)(eq - ins[k]))
        file = eq + 1;
    }
    if (!file && next < n_ins && !strchr(ins[next], '=')) file = ins[next++];
    const onnxc_type *type = onnxc_session_input_type(s, i);
    vals[i] = file ? ox_cli_read_value(file, type, &e) : synth_input(names[i], type, bd, n_bd, &e);
    if (!vals[i]) {
      fprintf(stderr, "onnxc: input '%s': %s\n", names[i], e.msg);
      goto done;
    }
  }
  for (int r = 0; r < warmup + runs; r++) {
    double a = now_ms();
    if (onnxc_session_run(s, names, vals, n_in, NULL, outs, n_out, &e)) {
      fprintf(stderr, "onnxc: %s\n", e.msg);
      goto done;
    }
    double b = now_ms();
    for (size_t k = 0; k < n_out; k++) {
      onnxc_value_free(outs[k]);
      outs[k] = NULL;
    }
    if (r >= warmup) times[r - warmup] = b - a;
    if (profile && r + 1 == warmup) onnxc_session_profile_reset(s); /* runs measured only */
  }
  qsort(times, (size_t)runs, sizeof *times, cmp_d);
  double sum = 0;
  for (int r = 0; r < runs; r++) sum += times[r];
  printf("load %.2f ms, session %.2f ms\n", t1 - t0, t2 - t1);
  printf("run: mean %.3f ms, median %.3f ms, min %.3f ms, max %.3f ms (%d runs, %d threads)\n",
         sum / runs, times[runs / 2], times[0], times[runs - 1], runs, onnxc_session_threads(s));
  if (profile) {
    char *rep = onnxc_session_profile_top(s, 15);
    if (rep) fputs(rep, stdout);
    free(rep);
  }
  if (callers > 0 && throughput(s, names, vals, n_in, n_out, callers, runs)) goto done;
  status = 0;
done:
  if (vals)
    for (size_t i = 0; i < n_in; i++) onnxc_value_free(vals[i]);
  free(vals);
  free(names);
  free(outs);
  free(times);
  free(ins);
  free(bd);
  onnxc_session_free(s);
  onnxc_model_free(m);
  return status;
}
