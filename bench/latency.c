/* latency.c - run latency of one model, and optionally a check of its
 * first output against a TensorProto file.
 *
 *   onnxc_latency MODEL [--threads N] [--reps R] [--int NAME=V] [--shape NAME=AxBxC]
 *                 [--expect FILE.pb]
 *
 * Every graph input without an initializer is filled as the light models
 * expect: float inputs with arange(n) / n (unknown dims = 1, or the --shape
 * given for that name), integer inputs with the --int value given for that
 * name (else 0). Prints the session
 * creation time and the median / minimum of R runs (after one warm-up run).
 * With --expect, compares output 0 (rtol 1e-3, atol 1e-7) and exits 1 when
 * it differs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/floatconv.h"
#include "ops/registry.h"
#include "proto/proto.h"
#include "runtime/session.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double elem_f64(const ox_value *v, int64_t i) {
  switch (v->dtype) {
    case OX_FLOAT:
      return ((const float *)v->data)[i];
    case OX_DOUBLE:
      return ((const double *)v->data)[i];
    case OX_FLOAT16:
      return ox_f16_to_f32(((const uint16_t *)v->data)[i]);
    case OX_INT64:
      return (double)((const int64_t *)v->data)[i];
    case OX_INT32:
      return ((const int32_t *)v->data)[i];
    default:
      return NAN;
  }
}

/* "NAME=..." entry of list for name, or NULL. */
static const char *named(const char *name, int n, char **list) {
  size_t l = strlen(name);
  for (int i = 0; i < n; i++)
    if (strncmp(list[i], name, l) == 0 && list[i][l] == '=') return list[i] + l + 1;
  return NULL;
}

static ox_value *make_input(const ox_type *t, const char *name, int n_ints, char **ints,
                            int n_shapes, char **shapes, ox_err *e) {
  int64_t dims[16];
  size_t rank = 0;
  int32_t dt = t && t->has_elem_type ? t->elem_type : OX_FLOAT;
  const char *shape = named(name, n_shapes, shapes);
  if (shape) {
    while (*shape && rank < 16) {
      char *end;
      dims[rank++] = strtoll(shape, &end, 10);
      shape = *end == 'x' ? end + 1 : end + strlen(end);
    }
  } else if (t && t->shape) {
    for (size_t d = 0; d < t->shape->n_dim && d < 16; d++)
      dims[rank++] = t->shape->dim[d].has_value ? t->shape->dim[d].value : 1;
  }
  ox_value *v = ox_tensor_new(dt, dims, rank, e);
  if (!v) return NULL;
  int64_t iv = 0;
  for (int i = 0; i < n_ints; i++) {
    size_t l = strlen(name);
    if (strncmp(ints[i], name, l) == 0 && ints[i][l] == '=')
      iv = strtoll(ints[i] + l + 1, NULL, 10);
  }
  for (int64_t i = 0; i < v->numel; i++) {
    double x = (double)i / (double)v->numel;
    switch (dt) {
      case OX_FLOAT:
        ((float *)v->data)[i] = (float)x;
        break;
      case OX_DOUBLE:
        ((double *)v->data)[i] = x;
        break;
      case OX_INT64:
        ((int64_t *)v->data)[i] = iv;
        break;
      case OX_INT32:
        ((int32_t *)v->data)[i] = (int32_t)iv;
        break;
      default:
        break;
    }
  }
  return v;
}

int main(int argc, char **argv) {
  const char *model = NULL, *expect = NULL;
  int threads = 1, reps = 10, n_ints = 0, n_shapes = 0;
  char *ints[16], *shapes[16];
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--int") == 0 && i + 1 < argc && n_ints < 16)
      ints[n_ints++] = argv[++i];
    else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc && n_shapes < 16)
      shapes[n_shapes++] = argv[++i];
    else if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc)
      expect = argv[++i];
    else if (!model)
      model = argv[i];
    else
      model = NULL, reps = 0, argc = 0; /* unknown argument: usage */
  }
  if (!model || reps < 1) {
    fprintf(stderr,
            "usage: onnxc_latency MODEL [--threads N] [--reps R] [--int NAME=V] "
            "[--shape NAME=AxB] [--expect FILE.pb]\n");
    return 2;
  }
  ox_err e = {0};
  ox_model *m = NULL;
  if (ox_model_load_file(model, NULL, &m, &e)) {
    fprintf(stderr, "%s: %s\n", model, e.msg);
    return 1;
  }
  ox_session_opts so = {threads, 1, NULL, NULL};
  so.kernels = &ox_registry_builtin;
  ox_session *s = NULL;
  double t0 = now_s();
  if (ox_session_create(m, &so, &s, &e)) {
    fprintf(stderr, "%s: %s\n", model, e.msg);
    return 1;
  }
  double t_sess = now_s() - t0;
  ox_value *in[64];
  const char *names[64];
  size_t k = 0;
  for (size_t i = 0; i < ox_session_n_inputs(s) && k < 64; i++) {
    if (ox_session_input_has_default(s, i)) continue;
    names[k] = ox_session_input_name(s, i);
    in[k] = make_input(ox_session_input_type(s, i), names[k], n_ints, ints, n_shapes, shapes, &e);
    if (!in[k]) {
      fprintf(stderr, "%s: %s\n", model, e.msg);
      return 1;
    }
    k++;
  }
  size_t no = ox_session_n_outputs(s);
  ox_value **out = calloc(no ? no : 1, sizeof *out);
  double *times = malloc(sizeof(double) * (size_t)reps);
  double *cpu = malloc(sizeof(double) * (size_t)reps);
  int rc = 0;
  if (!out || !times || !cpu) return 1;
  for (int r = -1; r < reps; r++) {
    for (size_t o = 0; o < no; o++) {
      if (out[o]) ox_value_unref(out[o]);
      out[o] = NULL;
    }
    double a = now_s(), ac = cpu_s();
    if (ox_session_run(s, names, in, k, NULL, out, no, &e)) {
      fprintf(stderr, "%s: %s\n", model, e.msg);
      return 1;
    }
    if (r >= 0) times[r] = now_s() - a, cpu[r] = cpu_s() - ac;
  }
  qsort(times, (size_t)reps, sizeof(double), cmp_double);
  qsort(cpu, (size_t)reps, sizeof(double), cmp_double);
  printf(
      "%s: median %.2f ms, min %.2f ms, cpu median %.2f ms (%d runs, %d thread%s), "
      "session %.1f ms\n",
      model, times[reps / 2] * 1e3, times[0] * 1e3, cpu[reps / 2] * 1e3, reps, threads,
      threads == 1 ? "" : "s", t_sess * 1e3);
  if (expect) {
    uint8_t *d = NULL;
    size_t n = 0;
    ox_arena *a = ox_arena_new();
    ox_tensor *t = NULL;
    ox_value *want = NULL;
    if (!a || ox_file_read_all(expect, &d, &n, &e) || ox_pb_decode_tensor(d, n, a, &t, &e) ||
        !(want = ox_value_from_tensor_proto(t, false, &e))) {
      fprintf(stderr, "%s: %s\n", expect, e.msg);
      return 1;
    }
    const ox_value *got = out[0];
    double maxdiff = 0.0;
    if (!got || got->numel != want->numel) {
      printf("  output 0: %lld elements, expected %lld\n", got ? (long long)got->numel : -1LL,
             (long long)want->numel);
      rc = 1;
    } else {
      int64_t bad = 0;
      for (int64_t i = 0; i < want->numel; i++) {
        double g = elem_f64(got, i), w = elem_f64(want, i), df = fabs(g - w);
        if (df > maxdiff) maxdiff = df;
        if (!(df <= 1e-7 + 1e-3 * fabs(w)) && !(isnan(g) && isnan(w))) bad++;
      }
      printf("  output 0 vs %s: max |diff| %.3g, %lld of %lld outside tolerance\n", expect, maxdiff,
             (long long)bad, (long long)want->numel);
      rc = bad ? 1 : 0;
    }
    ox_value_unref(want);
    ox_arena_free(a);
    free(d);
  }
  for (size_t o = 0; o < no; o++)
    if (out[o]) ox_value_unref(out[o]);
  for (size_t i = 0; i < k; i++) ox_value_unref(in[i]);
  free(out);
  free(times);
  free(cpu);
  ox_session_free(s);
  ox_model_free(m);
  return rc;
}
