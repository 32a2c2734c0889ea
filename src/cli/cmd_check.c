/* cmd_check.c - `onnxc check MODEL [--full] [--strict]`: every error of the
 * model, one per line, then a summary. Exit 0 valid, 1 invalid, 2 unreadable. */
#include <onnxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: onnxc check MODEL... [--full] [--strict] [--quiet]\n"
          "\n"
          "Checks each model against the IR rules and the operator schemas and lists\n"
          "every error as `path: message [rule]`.\n"
          "  --strict  also the rules the reference checker leaves out (training-info\n"
          "            bindings, exact payload sizes, C90 names, opset range, ...)\n"
          "  --full    also strict shape inference\n"
          "  --quiet   print only the summary line\n"
          "  --rules   list the rules and exit\n"
          "Exit status: 0 all valid, 1 some model invalid, 2 some model unreadable.\n");
}

int ox_cmd_check(int argc, char **argv) {
  onnxc_check_options o = {0};
  bool quiet = false;
  int n_paths = 0;
  for (int i = 1; i < argc; i++) {
    if (ox_cli_is_help(argv[i])) {
      usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--full") == 0) {
      o.full = 1;
    } else if (strcmp(argv[i], "--strict") == 0) {
      o.strict = 1;
    } else if (strcmp(argv[i], "--rules") == 0) {
      for (size_t k = 0; k < onnxc_check_rule_count(); k++)
        printf("%-28s §%-5s %s\n", onnxc_check_rule_id(k), onnxc_check_rule_section(k),
               onnxc_check_rule_what(k));
      return 0;
    } else if (strcmp(argv[i], "--quiet") == 0) {
      quiet = true;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc: check: unknown option '%s'\n", argv[i]);
      return 2;
    } else {
      n_paths++;
    }
  }
  if (!n_paths) {
    usage(stderr);
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1]) continue;
    /* external data is not mapped: the checker judges the locations itself */
    onnxc_load_options lo = {.skip_checksum = 1, .no_external_data = 1};
    onnxc_model *m = NULL;
    onnxc_error e = {0};
    if (onnxc_model_load(argv[i], &lo, &m, &e) != ONNXC_OK) {
      fprintf(stderr, "onnxc: %s\n", e.msg);
      status = 2;
      continue;
    }
    char *report = NULL;
    onnxc_status rc = onnxc_check(m, &o, &report, &e);
    size_t n = 0;
    for (const char *p = report; p && *p;) {
      const char *nl = strchr(p, '\n');
      if (strncmp(p, "warning:", 8) != 0) n++;
      if (!nl) break;
      p = nl + 1;
    }
    if (!quiet && report) fputs(report, stdout);
    if (rc == ONNXC_OK) {
      printf("%s: valid\n", argv[i]);
    } else if (rc == ONNXC_ERR_INVALID_MODEL) {
      printf("%s: invalid, %zu error%s\n", argv[i], n, n == 1 ? "" : "s");
      if (status == 0) status = 1;
    } else {
      fprintf(stderr, "onnxc: %s\n", e.msg);
      status = 2;
    }
    free(report);
    onnxc_model_free(m);
  }
  return status;
}
