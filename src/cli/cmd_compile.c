/* cmd_compile.c - `onnxc compile`: a model as dependency-free C source. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: onnxc compile MODEL -o FILE.c [--header FILE.h] [--prefix NAME]\n"
          "                     [--input NAME=D1,D2,...]... [--main]\n"
          "                     [--weights inline|blob FILE] [--weights-min BYTES]\n"
          "                     [--arena static|caller] [--target portable|avx2|avx512|cortex-m]\n"
          "                     [--float-only]\n"
          "\n"
          "Writes the model as one C99 file and its header: NAME_run() with one typed\n"
          "pointer per input and output, no malloc, no stdio, no threads, weights as\n"
          "static const arrays, intermediates in one static arena (docs/compile.md).\n"
          "Shapes must be static: fixed in the model or given with --input.\n"
          "  -o FILE.c          the source to write\n"
          "  --list-ops         print the operators the compiler has a generator for\n"
          "  --header FILE.h    the header (default: FILE.c with .h)\n"
          "  --prefix NAME      C prefix of the public names (default: the file's base name)\n"
          "  --input NAME=DIMS  bind the dims of graph input NAME (e.g. x=1,3,224,224)\n"
          "  --main             also write FILE_main.c: main() reads inputs NAME=FILE\n"
          "                     (.npy or TensorProto .pb) and writes OUTDIR/output_k.pb:\n"
          "                       cc -std=c99 -O2 m.c m_main.c -lm -o m && ./m -o out x=x.npy\n"
          "  --weights inline   weights as static const arrays in the .c file (default)\n"
          "  --weights blob FILE  constants of --weights-min bytes or more (default 1024)\n"
          "                     go into FILE, a binary blob the program hands over with\n"
          "                     NAME_set_weights(blob, size) (aligned to 8 bytes)\n"
          "  --arena static     NAME_run() on a static arena, and NAME_run_with_arena() (default)\n"
          "  --arena caller     only NAME_run_with_arena(arena, ...): all RAM is the caller's\n"
          "  --target T         portable (plain C99, default), avx2 / avx512 (x86-64: the node\n"
          "                     functions are compiled for that ISA and vectorised),\n"
          "                     cortex-m (single precision only: float64 values are refused)\n"
          "  --float-only       no double arithmetic in the generated code (single-precision\n"
          "                     FPUs): float64 values and nodes that would need a double are\n"
          "                     refused with an error naming them\n");
}

/* "dir/net.c" -> "dir/net" + suffix (malloc'd) */
static char *with_suffix(const char *path, const char *suffix) {
  size_t n = strlen(path);
  if (n > 2 && strcmp(path + n - 2, ".c") == 0) n -= 2;
  char *s = malloc(n + strlen(suffix) + 1);
  if (!s) return NULL;
  memcpy(s, path, n);
  strcpy(s + n, suffix);
  return s;
}

/* the base name of path without .c, as a C identifier */
static char *prefix_of(const char *path) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  char *s = with_suffix(b, "");
  if (!s) return NULL;
  for (char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
      *p = '_';
  return s;
}

int ox_cmd_compile(int argc, char **argv) {
  const char *model = NULL, *out = NULL, *header = NULL, *prefix = NULL;
  bool with_main = false, blob = false, caller_arena = false;
  const char *blob_path = NULL;
  size_t weights_min = 0;
  int target = ONNXC_COMPILE_PORTABLE;
  int float_only = 0;
  const char *bnames[64];
  const int64_t *bdims[64];
  int64_t *bstore[64];
  size_t branks[64], nb = 0;
  int rc = 2;
  char *hpath = NULL, *mpath = NULL, *pfx = NULL, *hbase = NULL;
  onnxc_model *m = NULL;
  onnxc_compile_output co = {0};
  for (int i = 1; i < argc; i++) {
    if (ox_cli_is_help(argv[i])) {
      usage(stdout);
      rc = 0;
      goto done;
    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      out = argv[++i];
    } else if (strcmp(argv[i], "--header") == 0 && i + 1 < argc) {
      header = argv[++i];
    } else if (strcmp(argv[i], "--prefix") == 0 && i + 1 < argc) {
      prefix = argv[++i];
    } else if (strcmp(argv[i], "--list-ops") == 0) {
      for (size_t k = 0; onnxc_compile_op_name(k); k++) printf("%s\n", onnxc_compile_op_name(k));
      rc = 0;
      goto done;
    } else if (strcmp(argv[i], "--float-only") == 0) {
      float_only = 1;
    } else if (strcmp(argv[i], "--main") == 0) {
      with_main = true;
    } else if (strcmp(argv[i], "--weights") == 0 && i + 1 < argc) {
      i++;
      if (strcmp(argv[i], "inline") == 0) {
        blob = false;
      } else if (strcmp(argv[i], "blob") == 0 && i + 1 < argc) {
        blob = true;
        blob_path = argv[++i];
      } else {
        fprintf(stderr, "onnxc compile: --weights takes 'inline' or 'blob FILE'\n");
        goto done;
      }
    } else if (strcmp(argv[i], "--weights-min") == 0 && i + 1 < argc) {
      char *end;
      unsigned long long v = strtoull(argv[++i], &end, 10);
      if (*end || !*argv[i] || v == 0) {
        fprintf(stderr, "onnxc compile: bad --weights-min '%s' (a byte count over 0)\n", argv[i]);
        goto done;
      }
      weights_min = (size_t)v;
    } else if (strcmp(argv[i], "--arena") == 0 && i + 1 < argc) {
      i++;
      if (strcmp(argv[i], "static") != 0 && strcmp(argv[i], "caller") != 0) {
        fprintf(stderr, "onnxc compile: --arena takes 'static' or 'caller'\n");
        goto done;
      }
      caller_arena = strcmp(argv[i], "caller") == 0;
    } else if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
      static const char *const names[] = {"portable", "avx2", "avx512", "cortex-m"};
      i++;
      target = -1;
      for (int t = 0; t < 4; t++)
        if (strcmp(argv[i], names[t]) == 0) target = t;
      if (target < 0) {
        fprintf(stderr, "onnxc compile: unknown --target '%s' (portable, avx2, avx512, cortex-m)\n",
                argv[i]);
        goto done;
      }
    } else if (strcmp(argv[i], "--input") == 0 && i + 1 < argc) {
      if (nb == 64 || !ox_cli_parse_binding(argv[++i], &bnames[nb], &bstore[nb], &branks[nb])) {
        fprintf(stderr, "onnxc compile: bad --input '%s' (expected NAME=D1,D2,...)\n", argv[i]);
        goto done;
      }
      bdims[nb] = bstore[nb];
      nb++;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc compile: unexpected argument '%s'\n", argv[i]);
      usage(stderr);
      goto done;
    } else if (!model) {
      model = argv[i];
    } else {
      fprintf(stderr, "onnxc compile: more than one model\n");
      goto done;
    }
  }
  if (!model || !out) {
    usage(stderr);
    goto done;
  }
  hpath = header ? strdup(header) : with_suffix(out, ".h");
  mpath = with_suffix(out, "_main.c");
  pfx = prefix ? strdup(prefix) : prefix_of(out);
  if (!hpath || !mpath || !pfx) {
    fprintf(stderr, "onnxc compile: out of memory\n");
    goto done;
  }
  /* the .c file includes the header by its base name: both sit side by side */
  const char *hb = strrchr(hpath, '/');
  hbase = strdup(hb ? hb + 1 : hpath);
  m = ox_cli_load_model(model);
  if (!m || !hbase) {
    rc = 1;
    goto done;
  }
  const char *mb = strrchr(model, '/');
  onnxc_compile_options o = {pfx,    hbase,        mb ? mb + 1 : model, nb,     bnames,
                             bdims,  branks,       with_main,           blob,   weights_min,
                             blob_path, caller_arena, target,     float_only};
  onnxc_error err = {0};
  if (onnxc_compile(m, &o, &co, &err) != ONNXC_OK) {
    fprintf(stderr, "onnxc compile: %s\n", err.msg);
    rc = 1;
    goto done;
  }
  if (ox_cli_write_file(out, co.source, strlen(co.source), &err) != ONNXC_OK ||
      ox_cli_write_file(hpath, co.header, strlen(co.header), &err) != ONNXC_OK ||
      (with_main &&
       ox_cli_write_file(mpath, co.main_source, strlen(co.main_source), &err) != ONNXC_OK) ||
      (co.weights && ox_cli_write_file(blob_path, co.weights, co.weights_bytes, &err) != ONNXC_OK)) {
    fprintf(stderr, "onnxc compile: %s\n", err.msg);
    rc = 1;
    goto done;
  }
  fprintf(stderr,
          "onnxc compile: %s, %s%s%s: %zu node functions, %zu bytes of constants inline, "
          "%zu-byte arena (%zu without in-place nodes)\n",
          out, hpath, with_main ? ", " : "", with_main ? mpath : "", co.n_functions, co.const_bytes,
          co.arena_bytes, co.arena_bytes_no_inplace);
  if (co.weights)
    fprintf(stderr, "onnxc compile: %s: %zu-byte weights blob\n", blob_path, co.weights_bytes);
  else if (blob)
    fprintf(stderr, "onnxc compile: no constant reaches --weights-min: all inline, no blob written\n");
  rc = 0;
done:
  onnxc_compile_output_free(&co);
  onnxc_model_free(m);
  for (size_t i = 0; i < nb; i++) free(bstore[i]);
  free(hpath);
  free(mpath);
  free(pfx);
  free(hbase);
  return rc;
}
