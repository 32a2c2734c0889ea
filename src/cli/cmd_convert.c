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
          "  --batch LIST OUTDIR     instead of IN OUT: convert every file named in LIST\n"
          "                          (one path a line) to OUTDIR/N.onnx in this one process\n"
          "                          and print a line for each: 'SAME path' when the output\n"
          "                          is byte-identical to the input (then removed), 'DIFF\n"
          "                          path OUTDIR/N.onnx' when not, 'FAIL path: error' (exit 1)\n"
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

/* 1 when the two files hold the same bytes, 0 when not or unreadable */
static int same_bytes(const char *a, const char *b) {
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int same = fa && fb;
  static char ba[65536], bb[65536];
  while (same) {
    size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
    if (na != nb || memcmp(ba, bb, na)) same = 0;
    if (na < sizeof ba) break;
  }
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return same;
}

/* --batch: what `onnxc convert IN OUT` does for each IN of the list, without
 * a process per file (the shared test data holds thousands; each start of
 * onnxc costs more than converting a small model). */
static int convert_batch(const char *list, const char *outdir, const onnxc_load_options *lo,
                         const onnxc_save_options *so, long long opset) {
  FILE *f = fopen(list, "r");
  if (!f) {
    fprintf(stderr, "onnxc convert: cannot open %s: %s\n", list, strerror(errno));
    return 2;
  }
  char in[4096], out[4200];
  size_t k = 0, failed = 0;
  while (fgets(in, sizeof in, f)) {
    in[strcspn(in, "\r\n")] = 0;
    if (!*in) continue;
    snprintf(out, sizeof out, "%s/%zu.onnx", outdir, k++);
    onnxc_error e = {0};
    onnxc_model *m = NULL;
    onnxc_status rc = onnxc_model_load(in, lo, &m, &e);
    if (rc == ONNXC_OK && opset) rc = onnxc_convert_opset(m, opset, &e);
    if (rc == ONNXC_OK) rc = onnxc_model_save(m, out, so, &e);
    onnxc_model_free(m);
    if (rc != ONNXC_OK) {
      failed++;
      for (char *c = e.msg; *c; c++) /* one line per file */
        if (*c == '\n' || *c == '\r') *c = ' ';
      printf("FAIL %s: %s\n", in, e.msg);
    } else if (same_bytes(in, out)) {
      printf("SAME %s\n", in);
      remove(out);
    } else {
      printf("DIFF %s %s\n", in, out);
    }
    fflush(stdout); /* a crash later leaves the lines so far */
  }
  fclose(f);
  return failed ? 1 : 0;
}

int ox_cmd_convert(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  onnxc_save_options so = {.size_threshold = 1024, .align = 4096};
  onnxc_load_options lo = {0};
  long long opset = 0;
  bool optimize = false;
  const char *batch = NULL;
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
                 strcmp(a, "--align") == 0 || strcmp(a, "--opset") == 0 ||
                 strcmp(a, "--batch") == 0;
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
    else if (strcmp(a, "--batch") == 0)
      batch = argv[++i];
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
  if (batch && (!in || out || optimize)) {
    fprintf(stderr, "onnxc convert: --batch LIST takes one OUTDIR (and no --optimize)\n");
    return 2;
  }
  if (!batch && (!in || !out)) {
    help(stderr);
    return 2;
  }
  if (so.external_data && so.all_inline) {
    fprintf(stderr, "onnxc convert: --external-data and --no-external-data exclude each other\n");
    return 2;
  }
  if (batch) return convert_batch(batch, in, &lo, &so, opset);
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
