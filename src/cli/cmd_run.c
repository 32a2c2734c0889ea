/* cmd_run.c - `onnxc run MODEL [-i [NAME=]FILE]... [-o OUTDIR] [--threads N]
 * [--max-memory SIZE] [--no-quant-fusion] [--low-bit-int8] [--disable-pass NAME]...`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "runio.h"
#include "session_flags.h"

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: onnxc run MODEL [-i [NAME=]FILE]... [-o OUTDIR] [--threads N] [--max-memory SIZE]\n"
      "                 [--no-quant-fusion] [--low-bit-int8] [--parallel-branches]\n"
      "                 [--disable-pass NAME]...\n"
      "  -i [NAME=]FILE  an input: TensorProto/SequenceProto/MapProto/OptionalProto .pb\n"
      "                  (by the input's declared type) or .npy; without NAME= the k-th -i\n"
      "                  binds to the k-th graph input that has no initializer\n"
      "  -o OUTDIR       write output k to OUTDIR/output_k.pb (else print a summary)\n"
      "  --threads N     worker threads (0: all cores)\n"
      "  --max-memory SIZE  the most tensor memory the run may hold (bytes; K, M, G, T\n"
      "                  suffixes): a model asking for more fails with a clear error\n"
      "  --no-quant-fusion  run quantized (QDQ) units as the float arithmetic the\n"
      "                  model writes, not as integer kernels\n"
      "  --low-bit-int8  one- and two-row products by weight-only quantized (8/4/2-bit)\n"
      "                  matrices quantize the activations to int8 per block, as\n"
      "                  onnxruntime does by default: faster decode, error up to 1/254\n"
      "                  of a block's largest activation (default: float, exact)\n"
      "  --parallel-branches  nodes that do not depend on each other (inception\n"
      "                  branches, detection heads) run side by side, one thread each;\n"
      "                  a node alone at its step still uses every thread\n"
      OX_CLI_PASS_FLAGS_HELP);
}

int ox_cmd_run(int argc, char **argv) {
  const char *model_path = NULL, *outdir = NULL;
  ox_cli_session_flags sf = {0};
  char **ins = calloc((size_t)argc + 1, sizeof *ins);
  size_t n_ins = 0;
  if (!ins) return 1;
  for (int i = 1; i < argc; i++) {
    int pf = ox_cli_session_flag(&sf, argc, argv, &i, "run");
    if (pf) {
      if (pf > 0) continue;
      free(ins);
      return 2;
    }
    if (strcmp(argv[i], "--list-passes") == 0) {
      ox_cli_list_passes(stdout);
      free(ins);
      return 0;
    }
    if (ox_cli_is_help(argv[i])) {
      usage(stdout);
      free(ins);
      return 0;
    } else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) {
      ins[n_ins++] = argv[++i];
    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      outdir = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc run: unknown option '%s'\n", argv[i]);
      usage(stderr);
      free(ins);
      return 2;
    } else if (!model_path) {
      model_path = argv[i];
    } else {
      fprintf(stderr, "onnxc run: unexpected argument '%s'\n", argv[i]);
      free(ins);
      return 2;
    }
  }
  if (!model_path) {
    usage(stderr);
    free(ins);
    return 2;
  }
  int status = 1;
  onnxc_error e = {0};
  onnxc_session *s = NULL;
  onnxc_value **vals = NULL, **outs = NULL;
  const char **names = NULL;
  size_t n_out = 0;
  onnxc_model *m = ox_cli_load_model(model_path);
  if (!m) goto done;
  onnxc_session_options o = ox_cli_session_options(&sf);
  if (onnxc_session_create(m, &o, &s, &e)) {
    fprintf(stderr, "onnxc: %s: %s\n", model_path, e.msg);
    goto done;
  }
  size_t n_graph_in = onnxc_session_graph_input_count(s);
  n_out = onnxc_session_output_count(s);
  vals = calloc(n_ins + 1, sizeof *vals);
  names = calloc(n_ins + 1, sizeof *names);
  outs = calloc(n_out + 1, sizeof *outs);
  if (!vals || !names || !outs) {
    fprintf(stderr, "onnxc: out of memory\n");
    goto done;
  }
  size_t next_free = 0; /* next input without an initializer */
  for (size_t k = 0; k < n_ins; k++) {
    const char *arg = ins[k], *eq = strchr(arg, '='), *file = arg;
    size_t idx = n_graph_in;
    if (eq) {
      for (size_t j = 0; j < n_graph_in; j++)
        if (strlen(onnxc_session_graph_input_name(s, j)) == (size_t)(eq - arg) &&
            strncmp(onnxc_session_graph_input_name(s, j), arg, (size_t)(eq - arg)) == 0)
          idx = j;
      if (idx == n_graph_in) {
        fprintf(stderr, "onnxc: the model has no input named '%.*s'\n", (int)(eq - arg), arg);
        goto done;
      }
      file = eq + 1;
    } else {
      while (next_free < n_graph_in && onnxc_session_graph_input_has_default(s, next_free))
        next_free++;
      if (next_free == n_graph_in) {
        fprintf(stderr, "onnxc: too many inputs: the model takes %zu\n", next_free);
        goto done;
      }
      idx = next_free++;
    }
    names[k] = onnxc_session_graph_input_name(s, idx);
    vals[k] = ox_cli_read_value(file, onnxc_session_graph_input_type(s, idx), &e);
    if (!vals[k]) {
      fprintf(stderr, "onnxc: %s\n", e.msg);
      goto done;
    }
  }
  if (onnxc_session_run(s, names, vals, n_ins, NULL, outs, n_out, &e)) {
    fprintf(stderr, "onnxc: %s\n", e.msg);
    goto done;
  }
  if (outdir) {
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
      fprintf(stderr, "onnxc: cannot create %s: %s\n", outdir, strerror(errno));
      goto done;
    }
    for (size_t k = 0; k < n_out; k++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/output_%zu.pb", outdir, k);
      if (onnxc_value_write_file(path, outs[k], onnxc_session_output_name(s, k), &e)) {
        fprintf(stderr, "onnxc: %s\n", e.msg);
        goto done;
      }
    }
  } else {
    for (size_t k = 0; k < n_out; k++)
      ox_cli_print_value(stdout, onnxc_session_output_name(s, k), outs[k]);
  }
  status = 0;
done:
  if (outs)
    for (size_t k = 0; k < n_out; k++) onnxc_value_free(outs[k]);
  if (vals)
    for (size_t k = 0; k < n_ins; k++) onnxc_value_free(vals[k]);
  free(outs);
  free(vals);
  free(names);
  free(ins);
  onnxc_session_free(s);
  onnxc_model_free(m);
  return status;
}
