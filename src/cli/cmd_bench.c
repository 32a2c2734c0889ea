/* cmd_bench.c - `onnxc bench MODEL [--threads N] [--runs N] [--warmup N]
 * [-i [NAME=]FILE]...`: measures run latency. Inputs not given are filled
 * with arange(n)/n (floats) or zeros, unknown dims taken as 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "runio.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static ox_value *synth_input(const ox_type *t, ox_err *e) {
  if (!t || t->kind != OX_TYPE_TENSOR)
    return ox_err_set(e, OX_EUNSUPPORTED, "cannot make up a non-tensor input; pass -i"), NULL;
  if (t->elem_type == OX_FLOAT) return ox_cli_light_input(t, e);
  int64_t dims[16];
  size_t rank = t->shape ? t->shape->n_dim : 0;
  if (rank > 16) return ox_err_set(e, OX_EUNSUPPORTED, "input of rank %zu", rank), NULL;
  for (size_t i = 0; i < rank; i++)
    dims[i] = t->shape->dim[i].has_value ? t->shape->dim[i].value : 1;
  return ox_tensor_new(t->elem_type, dims, rank, e);
}

int ox_cmd_bench(int argc, char **argv) {
  const char *model_path = NULL;
  int threads = 0, runs = 10, warmup = 2;
  char **ins = calloc((size_t)argc + 1, sizeof *ins);
  size_t n_ins = 0;
  if (!ins) return 1;
  for (int i = 1; i < argc; i++) {
    if (ox_cli_is_help(argv[i])) {
      printf(
          "usage: onnxc bench MODEL [--threads N] [--runs N] [--warmup N] [-i [NAME=]FILE]...\n");
      free(ins);
      return 0;
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
      warmup = atoi(argv[++i]);
    } else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) {
      ins[n_ins++] = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc bench: unknown option '%s'\n", argv[i]);
      free(ins);
      return 2;
    } else {
      model_path = argv[i];
    }
  }
  if (!model_path || runs < 1) {
    fprintf(stderr, "usage: onnxc bench MODEL [--threads N] [--runs N] [--warmup N]\n");
    free(ins);
    return 2;
  }
  int status = 1;
  ox_err e = {0};
  ox_session *s = NULL;
  ox_value **vals = NULL, **outs = NULL;
  const char **names = NULL;
  double *times = NULL;
  size_t n_in = 0, n_out = 0;
  double t0 = now_ms();
  ox_model *m = ox_cli_load_model(model_path);
  if (!m) goto done;
  double t1 = now_ms();
  ox_session_opts o = {0};
  o.optimization_level = 1; /* constant folding */
  o.threads = threads;
  if (ox_session_create(m, &o, &s, &e)) {
    fprintf(stderr, "onnxc: %s: %s\n", model_path, e.msg);
    goto done;
  }
  double t2 = now_ms();
  n_in = ox_session_n_inputs(s);
  n_out = ox_session_n_outputs(s);
  vals = calloc(n_in + 1, sizeof *vals);
  names = calloc(n_in + 1, sizeof *names);
  outs = calloc(n_out + 1, sizeof *outs);
  times = calloc((size_t)runs, sizeof *times);
  if (!vals || !names || !outs || !times) goto done;
  size_t next = 0;
  for (size_t i = 0; i < n_in; i++) {
    names[i] = ox_session_input_name(s, i);
    if (ox_session_input_has_default(s, i)) continue;
    const char *file = NULL;
    for (size_t k = 0; k < n_ins && !file; k++) {
      const char *eq = strchr(ins[k], '=');
      if (eq && strncmp(ins[k], names[i], (size_t)(eq - ins[k])) == 0 &&
          strlen(names[i]) == (size_t)(eq - ins[k]))
        file = eq + 1;
    }
    if (!file && next < n_ins && !strchr(ins[next], '=')) file = ins[next++];
    vals[i] = file ? ox_cli_read_value(file, ox_session_input_type(s, i), NULL, &e)
                   : synth_input(ox_session_input_type(s, i), &e);
    if (!vals[i]) {
      fprintf(stderr, "onnxc: input '%s': %s\n", names[i], e.msg);
      goto done;
    }
  }
  for (int r = 0; r < warmup + runs; r++) {
    double a = now_ms();
    if (ox_session_run(s, names, vals, n_in, NULL, outs, n_out, &e)) {
      fprintf(stderr, "onnxc: %s\n", e.msg);
      goto done;
    }
    double b = now_ms();
    for (size_t k = 0; k < n_out; k++) {
      ox_value_unref(outs[k]);
      outs[k] = NULL;
    }
    if (r >= warmup) times[r - warmup] = b - a;
  }
  qsort(times, (size_t)runs, sizeof *times, cmp_d);
  double sum = 0;
  for (int r = 0; r < runs; r++) sum += times[r];
  printf("load %.2f ms, session %.2f ms\n", t1 - t0, t2 - t1);
  printf("run: mean %.3f ms, median %.3f ms, min %.3f ms, max %.3f ms (%d runs, %d threads)\n",
         sum / runs, times[runs / 2], times[0], times[runs - 1], runs, ox_session_threads(s));
  status = 0;
done:
  if (vals)
    for (size_t i = 0; i < n_in; i++) ox_value_unref(vals[i]);
  free(vals);
  free(names);
  free(outs);
  free(times);
  free(ins);
  ox_session_free(s);
  ox_model_free(m);
  return status;
}
