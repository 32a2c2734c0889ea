/* cmd_train.c - `onnxc train MODEL [--init] [--steps N] [--algorithm K]
 * [-i [NAME=]FILE]... [--print NAME]... [--threads N] --save OUT`.
 *
 * Runs the initialization step (with --init), then N training steps of
 * training_info[K] on the same inputs, and writes the model with the state
 * variables (the initializers named in the bindings) updated: binary, or text
 * by extension. --print NAME prints a value of each step (e.g. the loss). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/ir.h"
#include "../runtime/session.h"
#include "../api/model_file.h"
#include "../ops/registry.h"
#include "../proto/proto.h"
#include "../runtime/training.h"
#include "cli.h"
#include "runio.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: onnxc train MODEL [--init] [--steps N] [--algorithm K] [-i [NAME=]FILE]...\n"
          "                   [--print NAME]... [--threads N] --save OUT\n"
          "  --init          run the initialization step first (initialization_binding)\n"
          "  --steps N       training steps to run (default 1)\n"
          "  --algorithm K   which TrainingInfoProto's algorithm to run (default 0)\n"
          "  -i [NAME=]FILE  a training input (.pb TensorProto or .npy), fed to every step;\n"
          "                  without NAME= the k-th input without an initializer (inference\n"
          "                  graph inputs first, then the algorithm graph's)\n"
          "  --print NAME    print this value (an output of the inference or algorithm\n"
          "                  graph) after each step\n"
          "  --save OUT      write the trained model (.onnx binary, .onnxtxt text)\n");
}

static bool is_state(const ox_training *t, const char *name) {
  for (size_t i = 0; i < ox_training_n_state(t); i++)
    if (!strcmp(ox_training_state_name(t, i), name)) return true;
  return false;
}

static bool has_init(const ox_graph *g, const char *name) {
  for (size_t i = 0; g && i < g->n_initializer; i++)
    if (g->initializer[i].name && !strcmp(g->initializer[i].name, name)) return true;
  return false;
}

/* The inputs a step must be fed, in order: graph inputs of the inference
 * graph, then of the algorithm graph, without an initializer and not state. */
static size_t free_inputs(const ox_model *m, const ox_training *t, size_t k, const char **out) {
  const ox_graph *gs[2] = {m->proto->graph, m->proto->training_info[k].algorithm};
  size_t n = 0;
  for (size_t j = 0; j < 2; j++)
    for (size_t i = 0; gs[j] && i < gs[j]->n_input; i++) {
      const char *nm = gs[j]->input[i].name;
      if (has_init(gs[0], nm) || has_init(gs[1], nm) || is_state(t, nm)) continue;
      if (out) out[n] = nm;
      n++;
    }
  return n;
}

int ox_cmd_train(int argc, char **argv) {
  const char *model_path = NULL, *save = NULL;
  long steps = 1, algo = 0;
  int threads = 0;
  bool init = false;
  char **ins = calloc((size_t)argc + 1, sizeof *ins);
  const char **prints = calloc((size_t)argc + 1, sizeof *prints);
  size_t n_ins = 0, n_prints = 0;
  if (!ins || !prints) {
    free(ins);
    free(prints);
    return 1;
  }
  int status = 2;
  for (int i = 1; i < argc; i++) {
    char *end = NULL;
    if (ox_cli_is_help(argv[i])) {
      usage(stdout);
      status = 0;
      goto out;
    } else if (!strcmp(argv[i], "--init")) {
      init = true;
    } else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = strtol(argv[++i], &end, 10);
      if (*end || steps < 0) {
        fprintf(stderr, "onnxc train: --steps needs a count >= 0, not '%s'\n", argv[i]);
        goto out;
      }
    } else if (!strcmp(argv[i], "--algorithm") && i + 1 < argc) {
      algo = strtol(argv[++i], &end, 10);
      if (*end || algo < 0) {
        fprintf(stderr, "onnxc train: --algorithm needs an index >= 0, not '%s'\n", argv[i]);
        goto out;
      }
    } else if (!strcmp(argv[i], "-i") && i + 1 < argc) {
      ins[n_ins++] = argv[++i];
    } else if (!strcmp(argv[i], "--print") && i + 1 < argc) {
      prints[n_prints++] = argv[++i];
    } else if (!strcmp(argv[i], "--save") && i + 1 < argc) {
      save = argv[++i];
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = atoi(argv[++i]);
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc train: unknown option '%s'\n", argv[i]);
      usage(stderr);
      goto out;
    } else if (!model_path) {
      model_path = argv[i];
    } else {
      fprintf(stderr, "onnxc train: unexpected argument '%s'\n", argv[i]);
      goto out;
    }
  }
  if (!model_path || !save) {
    usage(stderr);
    goto out;
  }
  status = 1;
  ox_err e = {0};
  ox_training *t = NULL;
  ox_value **vals = calloc(n_ins + 1, sizeof *vals), **outs = calloc(n_prints + 1, sizeof *outs);
  const char **names = calloc(n_ins + 1, sizeof *names), **avail = NULL;
  ox_model *m = (ox_model *)ox_cli_load_model(model_path);
  if (!m || !vals || !outs || !names) goto done;
  if (ox_training_new(m, &(ox_session_opts){.threads = threads, .kernels = &ox_registry_builtin}, &t, &e)) {
    fprintf(stderr, "onnxc: %s: %s\n", model_path, e.msg);
    goto done;
  }
  if (steps > 0 && (size_t)algo >= m->proto->n_training_info) {
    fprintf(stderr, "onnxc: %s: the model has %zu training_info entries, no entry %ld\n",
            model_path, m->proto->n_training_info, algo);
    goto done;
  }
  size_t n_avail = steps > 0 ? free_inputs(m, t, (size_t)algo, NULL) : 0, next = 0;
  avail = calloc(n_avail + 1, sizeof *avail);
  if (!avail) goto done;
  if (steps > 0) free_inputs(m, t, (size_t)algo, avail);
  for (size_t k = 0; k < n_ins; k++) {
    const char *arg = ins[k], *eq = strchr(arg, '='), *file = arg;
    if (eq) {
      char *nm = ox_arena_strndup(m->arena, arg, (size_t)(eq - arg));
      if (!nm) goto done;
      names[k] = nm;
      file = eq + 1;
    } else {
      if (next >= n_avail) {
        fprintf(stderr, "onnxc: too many inputs: a training step takes %zu\n", n_avail);
        goto done;
      }
      names[k] = avail[next++];
    }
    vals[k] = (ox_value *)ox_cli_read_value(file, NULL, (onnxc_error *)&e);
    if (!vals[k]) {
      fprintf(stderr, "onnxc: %s\n", e.msg);
      goto done;
    }
  }
  if (init && ox_training_init(t, &e)) {
    fprintf(stderr, "onnxc: %s: initialization: %s\n", model_path, e.msg);
    goto done;
  }
  for (long s = 1; s <= steps; s++) {
    if (ox_training_step(t, (size_t)algo, names, vals, n_ins, prints, outs, n_prints, &e)) {
      fprintf(stderr, "onnxc: %s: step %ld: %s\n", model_path, s, e.msg);
      goto done;
    }
    for (size_t k = 0; k < n_prints; k++) {
      printf("step %ld: ", s);
      ox_cli_print_value(stdout, prints[k], (onnxc_value *)outs[k]);
      ox_value_unref(outs[k]);
      outs[k] = NULL;
    }
  }
  if (ox_training_write_back(t, m, &e) || ox_api_model_save(m, save, NULL, &e)) {
    fprintf(stderr, "onnxc: %s\n", e.msg);
    goto done;
  }
  status = 0;
done:
  for (size_t k = 0; vals && k < n_ins; k++) ox_value_unref(vals[k]);
  free(vals);
  free(outs);
  free(names);
  free(avail);
  ox_training_free(t);
  ox_model_free(m);
out:
  free(ins);
  free(prints);
  return status;
}
