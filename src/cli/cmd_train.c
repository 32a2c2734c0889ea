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

static bool is_state(const onnxc_training *t, const char *name) {
  for (size_t i = 0; i < onnxc_training_state_count(t); i++)
    if (!strcmp(onnxc_training_state_name(t, i), name)) return true;
  return false;
}

/* The inputs a step must be fed, in order: graph inputs of the inference
 * graph, then of the algorithm graph, without an initializer and not state. */
static size_t free_inputs(const onnxc_model *m, const onnxc_training *t, size_t k,
                          const char **out) {
  const onnxc_graph *gs[2] = {onnxc_model_graph(m), onnxc_model_training_algorithm(m, k)};
  size_t n = 0;
  for (size_t j = 0; j < 2; j++)
    for (size_t i = 0; gs[j] && i < onnxc_graph_value_count(gs[j], ONNXC_GRAPH_INPUTS); i++) {
      const char *nm = onnxc_graph_value_name(gs[j], ONNXC_GRAPH_INPUTS, i);
      if (onnxc_graph_has_initializer(gs[0], nm) || onnxc_graph_has_initializer(gs[1], nm) ||
          is_state(t, nm))
        continue;
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
  onnxc_error e = {0};
  onnxc_training *t = NULL;
  onnxc_value **vals = calloc(n_ins + 1, sizeof *vals), **outs = calloc(n_prints + 1, sizeof *outs);
  const char **names = calloc(n_ins + 1, sizeof *names), **avail = NULL;
  char **owned = calloc(n_ins + 1, sizeof *owned); /* the NAME of each NAME=FILE */
  onnxc_model *m = ox_cli_load_model(model_path);
  if (!m || !vals || !outs || !names || !owned) goto done;
  if (onnxc_training_create(m, &(onnxc_session_options){.threads = threads}, &t, &e)) {
    fprintf(stderr, "onnxc: %s: %s\n", model_path, e.msg);
    goto done;
  }
  if (steps > 0 && (size_t)algo >= onnxc_model_training_info_count(m)) {
    fprintf(stderr, "onnxc: %s: the model has %zu training_info entries, no entry %ld\n",
            model_path, onnxc_model_training_info_count(m), algo);
    goto done;
  }
  size_t n_avail = steps > 0 ? free_inputs(m, t, (size_t)algo, NULL) : 0, next = 0;
  avail = calloc(n_avail + 1, sizeof *avail);
  if (!avail) goto done;
  if (steps > 0) free_inputs(m, t, (size_t)algo, avail);
  for (size_t k = 0; k < n_ins; k++) {
    const char *arg = ins[k], *eq = strchr(arg, '='), *file = arg;
    if (eq) {
      char *nm = strndup(arg, (size_t)(eq - arg));
      if (!nm) goto done;
      names[k] = owned[k] = nm;
      file = eq + 1;
    } else {
      if (next >= n_avail) {
        fprintf(stderr, "onnxc: too many inputs: a training step takes %zu\n", n_avail);
        goto done;
      }
      names[k] = avail[next++];
    }
    vals[k] = ox_cli_read_value(file, NULL, &e);
    if (!vals[k]) {
      fprintf(stderr, "onnxc: %s\n", e.msg);
      goto done;
    }
  }
  if (init && onnxc_training_init(t, &e)) {
    fprintf(stderr, "onnxc: %s: initialization: %s\n", model_path, e.msg);
    goto done;
  }
  for (long s = 1; s <= steps; s++) {
    if (onnxc_training_step(t, (size_t)algo, names, vals, n_ins, prints, outs, n_prints, &e)) {
      fprintf(stderr, "onnxc: %s: step %ld: %s\n", model_path, s, e.msg);
      goto done;
    }
    for (size_t k = 0; k < n_prints; k++) {
      printf("step %ld: ", s);
      ox_cli_print_value(stdout, prints[k], outs[k]);
      onnxc_value_free(outs[k]);
      outs[k] = NULL;
    }
  }
  if (onnxc_model_update_initializers(m, t, &e) || onnxc_model_save(m, save, NULL, &e)) {
    fprintf(stderr, "onnxc: %s\n", e.msg);
    goto done;
  }
  status = 0;
done:
  for (size_t k = 0; vals && k < n_ins; k++) onnxc_value_free(vals[k]);
  for (size_t k = 0; owned && k < n_ins; k++) free(owned[k]);
  free(owned);
  free(vals);
  free(outs);
  free(names);
  free(avail);
  onnxc_training_free(t);
  onnxc_model_free(m);
out:
  free(ins);
  free(prints);
  return status;
}
