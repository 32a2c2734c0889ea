/* cmd_infer.c - `onnxc infer`: fill in the type and shape of every value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: onnxc infer MODEL... [-o OUT] [--strict] [--input NAME=D1,D2,...]... [--quiet]\n"
          "\n"
          "Infers the type and shape of every value (graph outputs and subgraphs\n"
          "included) and writes them as value_info. With several models (no -o),\n"
          "each is inferred in turn and only failures are printed; the exit status\n"
          "is 1 if any failed.\n"
          "  -o OUT             write the inferred model (binary or text by extension);\n"
          "                     without it, print the inferred value types\n"
          "  --strict           a conflict between declared and inferred types, or an\n"
          "                     operator that cannot be inferred, is an error\n"
          "  --input NAME=DIMS  bind the dims of graph input NAME (e.g. x=1,3,224,224)\n"
          "                     before inferring; symbols used there get the same numbers\n"
          "  --quiet            do not print warnings\n"
          "  --time             print the time the inference took (model loading excluded)\n");
}

static void print_type(const onnxc_type *t) {
  char buf[1024];
  fputs(ox_cli_type_str(t, buf, sizeof buf), stdout);
}

static void print_graph_types(const onnxc_graph *g, const char *prefix) {
  const onnxc_graph_values lists[3] = {ONNXC_GRAPH_INPUTS, ONNXC_GRAPH_VALUE_INFO,
                                       ONNXC_GRAPH_OUTPUTS};
  const char *what[3] = {"input", "value", "output"};
  for (int l = 0; l < 3; l++)
    for (size_t i = 0; i < onnxc_graph_value_count(g, lists[l]); i++) {
      printf("%s%-6s %s: ", prefix, what[l], onnxc_graph_value_name(g, lists[l], i));
      print_type(onnxc_graph_value_type(g, lists[l], i));
      printf("\n");
    }
  for (size_t i = 0; i < onnxc_graph_node_count(g); i++) {
    const onnxc_node *n = onnxc_graph_node(g, i);
    for (size_t j = 0; j < onnxc_node_attr_count(n); j++) {
      const onnxc_graph *sub = onnxc_node_attr_graph(n, j);
      if (!sub) continue;
      char p[256];
      snprintf(p, sizeof p, "%s%s.%s/", prefix,
               *onnxc_node_name(n) ? onnxc_node_name(n) : onnxc_node_op_type(n),
               onnxc_node_attr_name(n, j));
      print_graph_types(sub, p);
    }
  }
}

int ox_cmd_infer(int argc, char **argv) {
  const char *model = NULL, *out = NULL;
  const char **models = calloc((size_t)argc, sizeof(char *));
  size_t n_models = 0;
  if (!models) return 2;
  bool strict = false, quiet = false, timing = false;
  const char *bind_names[64];
  const int64_t *bind_dims[64];
  size_t bind_ranks[64];
  int64_t *stores[64];
  size_t nb = 0;
  int rc = 2;
  for (int i = 1; i < argc; i++) {
    if (ox_cli_is_help(argv[i])) {
      usage(stdout);
      rc = 0;
      goto done;
    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      out = argv[++i];
    } else if (strcmp(argv[i], "--strict") == 0) {
      strict = true;
    } else if (strcmp(argv[i], "--time") == 0) {
      timing = true;
    } else if (strcmp(argv[i], "--quiet") == 0) {
      quiet = true;
    } else if (strcmp(argv[i], "--input") == 0 && i + 1 < argc) {
      if (nb == 64 ||
          !ox_cli_parse_binding(argv[++i], &bind_names[nb], &stores[nb], &bind_ranks[nb])) {
        fprintf(stderr, "onnxc infer: bad --input '%s' (expected NAME=D1,D2,...)\n", argv[i]);
        goto done;
      }
      bind_dims[nb] = stores[nb];
      nb++;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc infer: unexpected argument '%s'\n", argv[i]);
      usage(stderr);
      goto done;
    } else {
      models[n_models++] = argv[i];
    }
  }
  if (n_models == 0 || (n_models > 1 && out)) {
    if (n_models > 1) fprintf(stderr, "onnxc infer: -o takes a single model\n");
    usage(stderr);
    goto done;
  }
  onnxc_infer_options o = {.strict = strict,
                           .n_bindings = nb,
                           .binding_names = bind_names,
                           .binding_dims = bind_dims,
                           .binding_ranks = bind_ranks};
  if (n_models > 1) {
    int bad = 0;
    for (size_t k = 0; k < n_models; k++) {
      onnxc_model *mk = ox_cli_load_model(models[k]);
      if (!mk) {
        bad++;
        continue;
      }
      onnxc_error ek = {0};
      char *wk = NULL;
      if (onnxc_infer_shapes(mk, &o, quiet ? NULL : &wk, &ek) != ONNXC_OK) {
        fprintf(stderr, "onnxc infer: %s: %s\n", models[k], ek.msg);
        bad++;
      }
      if (wk && *wk) fprintf(stderr, "%s:\n%s", models[k], wk);
      free(wk);
      onnxc_model_free(mk);
    }
    printf("%zu passed, %d failed\n", n_models - (size_t)bad, bad);
    rc = bad ? 1 : 0;
    goto done;
  }
  model = models[0];
  onnxc_model *m = ox_cli_load_model(model);
  if (!m) goto done;
  char *warn = NULL;
  onnxc_error e = {0};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  onnxc_status st = onnxc_infer_shapes(m, &o, &warn, &e);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (timing)
    fprintf(stderr, "inference: %.3f ms\n",
            (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
  if (warn && !quiet) fputs(warn, stderr);
  free(warn);
  if (st != ONNXC_OK) {
    fprintf(stderr, "onnxc infer: %s: %s\n", model, e.msg);
    onnxc_model_free(m);
    rc = 1;
    goto done;
  }
  if (out) {
    if (onnxc_model_save(m, out, NULL, &e) != ONNXC_OK) {
      fprintf(stderr, "onnxc infer: %s\n", e.msg);
      onnxc_model_free(m);
      goto done;
    }
  } else {
    print_graph_types(onnxc_model_graph(m), "");
  }
  onnxc_model_free(m);
  rc = 0;
done:
  free(models);
  for (size_t i = 0; i < nb; i++) free(stores[i]);
  return rc;
}
