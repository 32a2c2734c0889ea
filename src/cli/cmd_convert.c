/* cmd_convert.c - `onnxc convert IN OUT`: binary <-> text, tensor data
 * to or from an external file, and opset conversion. */
#include <errno.h>
#include <onnxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pass_flags.h"

static void help(FILE *f) {
  fprintf(f,
          "usage: onnxc convert IN OUT [OPTIONS]\n"
          "\n"
          "Reads IN (binary .onnx or ONNX text) and writes OUT: text when OUT ends in\n"
          ".onnxtxt, .onnxtext or .txt, binary otherwise.\n"
          "\n"
          "options:\n"
          "  --opset N               convert the model to import the default domain (ai.onnx)\n"
          "                          at opset N, adapting every node whose operator changed;\n"
          "                          fails naming the node when that cannot keep its meaning\n"
          "  --external-data FILE    write tensor data of at least --size-threshold bytes\n"
          "                          to FILE (relative to OUT's folder)\n"
          "  --size-threshold BYTES  smallest tensor moved to the external file (default 1024)\n"
          "  --align BYTES           alignment of each tensor in FILE (default 4096)\n"
          "  --no-external-data      bring all external data back into OUT\n"
          "  --skip-checksum         do not verify SHA-1 checksums of external data\n"
          "  --optimize              write the graph as a session runs it: the optimisation\n"
          "                          passes applied (fused units are ai.onnxc operators, which\n"
          "                          onnxc runs; constant folding stays in the runtime; a\n"
          "                          model below IR version 4 is written as version 4)\n"
          "  --disable-pass NAME[,NAME]  with --optimize: leave a graph pass out (repeatable)\n"
          "  --list-passes           list the graph passes (name, level, on/off by default,\n"
          "                          what each rewrites) in the order they run, and exit\n"
          "  -h, --help              show this help\n");
}

static bool parse_size(const char *s, size_t *v) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-') return false;
  *v = (size_t)x;
  return true;
}

/* Saves the graph a session (optimization level 1) would run: the model
 * onnxc_model_optimize makes (it imports ai.onnxc for the fused nodes). */
static onnxc_status save_optimized(const onnxc_model *m, const char *out,
                                   const onnxc_save_options *so, const ox_cli_passes *off,
                                   onnxc_error *e) {
  onnxc_optimize_options oo = {.optimization_level = 1,
                               .disabled_passes = off->names,
                               .n_disabled_passes = off->n};
  onnxc_model *om = NULL;
  onnxc_status rc = onnxc_model_optimize(m, &oo, &om, e);
  if (rc == ONNXC_OK) rc = onnxc_model_save(om, out, so, e);
  onnxc_model_free(om);
  return rc;
}

int ox_cmd_convert(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  onnxc_save_options so = {.size_threshold = 1024, .align = 4096};
  onnxc_load_options lo = {0};
  long long opset = 0;
  bool optimize = false;
  ox_cli_passes off = {0};
  for (int i = 1; i < argc; i++) {
    int pf = ox_cli_disable_pass(&off, argc, argv, &i, "convert");
    if (pf > 0) continue;
    if (pf < 0) return 2;
    if (strcmp(argv[i], "--list-passes") == 0) {
      ox_cli_list_passes(stdout);
      return 0;
    }
    const char *a = argv[i];
    if (ox_cli_is_help(a)) {
      help(stdout);
      return 0;
    }
    bool needs = strcmp(a, "--external-data") == 0 || strcmp(a, "--size-threshold") == 0 ||
                 strcmp(a, "--align") == 0 || strcmp(a, "--opset") == 0;
    if (needs && i + 1 >= argc) {
      fprintf(stderr, "onnxc convert: %s needs a value\n", a);
      return 2;
    }
    if (strcmp(a, "--external-data") == 0)
      so.external_data = argv[++i];
    else if (strcmp(a, "--opset") == 0) {
      char *end;
      errno = 0;
      opset = strtoll(argv[++i], &end, 10);
      if (errno || end == argv[i] || *end || opset < 1) {
        fprintf(stderr, "onnxc convert: bad value for --opset: '%s'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(a, "--size-threshold") == 0 || strcmp(a, "--align") == 0) {
      size_t *dst = a[2] == 's' ? &so.size_threshold : &so.align;
      if (!parse_size(argv[++i], dst) || (dst == &so.align && *dst == 0)) {
        fprintf(stderr, "onnxc convert: bad value for %s: '%s'\n", a, argv[i]);
        return 2;
      }
      if (dst == &so.size_threshold && *dst == 0) *dst = 1;
    } else if (strcmp(a, "--no-external-data") == 0)
      so.all_inline = 1;
    else if (strcmp(a, "--skip-checksum") == 0)
      lo.skip_checksum = 1;
    else if (strcmp(a, "--optimize") == 0)
      optimize = true;
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "onnxc convert: unknown option '%s' (see onnxc convert --help)\n", a);
      return 2;
    } else if (!in)
      in = a;
    else if (!out)
      out = a;
    else {
      fprintf(stderr, "onnxc convert: too many arguments\n");
      return 2;
    }
  }
  if (!in || !out) {
    help(stderr);
    return 2;
  }
  if (so.external_data && so.all_inline) {
    fprintf(stderr, "onnxc convert: --external-data and --no-external-data exclude each other\n");
    return 2;
  }
  onnxc_error e = {0};
  onnxc_model *m = NULL;
  if (onnxc_model_load(in, &lo, &m, &e) != ONNXC_OK) {
    fprintf(stderr, "onnxc: %s\n", e.msg);
    return 1;
  }
  if (opset && onnxc_convert_opset(m, opset, &e) != ONNXC_OK) {
    fprintf(stderr, "onnxc: %s\n", e.msg);
    onnxc_model_free(m);
    return 1;
  }
  if (off.n && !optimize) {
    fprintf(stderr, "onnxc convert: --disable-pass needs --optimize\n");
    onnxc_model_free(m);
    return 2;
  }
  onnxc_status rc =
      optimize ? save_optimized(m, out, &so, &off, &e) : onnxc_model_save(m, out, &so, &e);
  if (rc != ONNXC_OK) fprintf(stderr, "onnxc: %s\n", e.msg);
  onnxc_model_free(m);
  return rc != ONNXC_OK ? 1 : 0;
}
