/* cmd_generate.c - `onnxc generate MODEL --ids 1,2,3 [--max-new-tokens N]
 * [--greedy | --top-k K --top-p P --temperature T --seed S] [--eos ID]...
 * [--context-length N] [--threads N]`: the generation loop of onnxc.h on a
 * decoder-only model. The new ids go to standard output as they come, on
 * one line; the timings to standard error. genai_config.json is read when
 * it lies beside the model. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "session_flags.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: onnxc generate MODEL --ids ID,ID,... [--max-new-tokens N]\n"
          "                      [--greedy | --top-k K --top-p P --temperature T --seed S]\n"
          "                      [--eos ID[,ID...]] [--context-length N] [--threads N]\n"
          "  --ids              the prompt's token ids (a tokenizer's output)\n"
          "  --max-new-tokens N the most new tokens (default 32)\n"
          "  --greedy           the likeliest token each step (the default)\n"
          "  --top-k K, --top-p P, --temperature T, --seed S\n"
          "                     sample instead: temperature, then the K likeliest, then the\n"
          "                     likeliest whose probabilities reach P; S seeds the draws\n"
          "  --eos ID[,ID...]   tokens that end generation (default: genai_config.json's)\n"
          "  --context-length N the most tokens, prompt included (default: the config's)\n"
          "  --threads N        worker threads (0: all cores)\n"
          "Layouts: no cache (input_ids -> logits), Optimum's decoder-with-past\n"
          "(past_key_values.N.key/value -> present.N.key/value) and onnxruntime-genai's\n"
          "shared past/present buffer (genai_config.json beside the model).\n"
          "Prints the new ids on one line; time to first token and tokens/s on stderr.\n");
}

/* "1,2,3" -> ids (malloc'd); false on a malformed or empty list */
static bool parse_ids(const char *s, int64_t **out, size_t *n) {
  size_t cap = 1;
  for (const char *p = s; *p; p++) cap += *p == ',';
  int64_t *ids = malloc(cap * sizeof *ids);
  if (!ids) return false;
  size_t k = 0;
  for (const char *p = s; *p;) {
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || (*end && *end != ',')) {
      free(ids);
      return false;
    }
    ids[k++] = v;
    p = *end ? end + 1 : end;
    if (*end && !*p) { /* a trailing comma */
      free(ids);
      return false;
    }
  }
  if (!k) {
    free(ids);
    return false;
  }
  *out = ids;
  *n = k;
  return true;
}

static bool parse_number(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

/* The folder of the model's file ("." for a bare name), for genai_config.json. */
static char *model_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  size_t n = slash == path ? 1 : (size_t)(slash - path);
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, path, n);
    d[n] = 0;
  }
  return d;
}

typedef struct gen_args {
  const char *model, *ids;
  onnxc_generate_options o;
  int64_t *eos;
  size_t n_eos;
  bool greedy, sampling;
} gen_args;

/* One option with its value; 1 taken, 0 not ours, -1 bad value (printed). */
static int gen_flag(gen_args *a, int argc, char **argv, int *i) {
  const char *f = argv[*i];
  static const struct {
    const char *flag;
    double lo, hi;
  } nums[] = {{"--max-new-tokens", 0, 1e12},
              {"--top-k", 0, 2147483647},
              {"--top-p", 0, 1},
              {"--temperature", 0, 1e30},
              {"--seed", 0, 18446744073709551615.0},
              {"--context-length", 1, 1e12}};
  for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
    if (strcmp(f, nums[k].flag) != 0) continue;
    double v;
    if (*i + 1 >= argc || !parse_number(argv[*i + 1], nums[k].lo, nums[k].hi, &v)) {
      fprintf(stderr, "onnxc generate: %s needs a number from %g to %g\n", f, nums[k].lo,
              nums[k].hi);
      return -1;
    }
    const char *val = argv[++*i];
    if (k == 0) a->o.max_new_tokens = (int64_t)v;
    if (k == 1) a->o.top_k = (int)v;
    if (k == 2) a->o.top_p = (float)v;
    if (k == 3) a->o.temperature = (float)v;
    if (k == 4) a->o.seed = strtoull(val, NULL, 10);
    if (k == 5) a->o.context_length = (int64_t)v;
    if (k >= 1 && k <= 4) a->sampling = true;
    return 1;
  }
  if (strcmp(f, "--greedy") == 0) {
    a->greedy = true;
  } else if ((strcmp(f, "--ids") == 0) && *i + 1 < argc) {
    a->ids = argv[++*i];
  } else if (strcmp(f, "--eos") == 0 && *i + 1 < argc) {
    int64_t *more;
    size_t n;
    if (!parse_ids(argv[++*i], &more, &n)) {
      fprintf(stderr, "onnxc generate: bad --eos '%s' (ids separated by commas)\n", argv[*i]);
      return -1;
    }
    int64_t *all = realloc(a->eos, (a->n_eos + n) * sizeof *all);
    if (!all) {
      free(more);
      return -1;
    }
    memcpy(all + a->n_eos, more, n * sizeof *more);
    free(more);
    a->eos = all;
    a->n_eos += n;
  } else {
    return 0;
  }
  return 1;
}

static int run_generation(onnxc_session *s, const int64_t *ids, size_t n_ids,
                          const onnxc_generate_options *o) {
  onnxc_error e = {0};
  onnxc_generator *g;
  if (onnxc_generate_start(s, ids, n_ids, o, &g, &e)) {
    fprintf(stderr, "onnxc generate: %s\n", e.msg);
    return 1;
  }
  int status = 0;
  const char *sep = "";
  for (int done = 0;;) {
    int64_t t;
    if (onnxc_generate_next(g, &t, &done, &e)) {
      fprintf(stderr, "%sonnxc generate: %s\n", *sep ? "\n" : "", e.msg);
      status = 1;
      break;
    }
    if (done) break;
    printf("%s%lld", sep, (long long)t);
    fflush(stdout); /* streamed: each token as soon as it is known */
    sep = " ";
  }
  if (!status) {
    printf("\n");
    onnxc_generate_stats st;
    onnxc_generate_get_stats(g, &st);
    double tps = st.new_tokens > 1 && st.decode_ms > 0
                     ? (double)(st.new_tokens - 1) * 1e3 / st.decode_ms
                     : 0;
    fprintf(stderr,
            "onnxc generate: %s, %zu prompt tokens, %zu new; time to first token %.2f ms; "
            "%.1f tokens/s after it; %llu cache bytes copied by the loop; cache %s\n",
            onnxc_generate_layout(g), st.prompt_tokens, st.new_tokens, st.first_token_ms, tps,
            (unsigned long long)st.cache_copied_bytes, onnxc_generate_cache_path(g));
  }
  onnxc_generate_free(g);
  return status;
}

int ox_cmd_generate(int argc, char **argv) {
  gen_args a = {0};
  a.o.max_new_tokens = 32;
  ox_cli_session_flags sf = {0};
  for (int i = 1; i < argc; i++) {
    if (ox_cli_is_help(argv[i])) {
      usage(stdout);
      free(a.eos);
      return 0;
    }
    int r = ox_cli_session_flag(&sf, argc, argv, &i, "generate");
    if (r == 0) r = gen_flag(&a, argc, argv, &i);
    if (r > 0) continue;
    if (r == 0 && argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc generate: unknown option '%s'\n", argv[i]);
      r = -1;
    } else if (r == 0 && !a.model) {
      a.model = argv[i];
      continue;
    } else if (r == 0) {
      fprintf(stderr, "onnxc generate: unexpected argument '%s'\n", argv[i]);
      r = -1;
    }
    free(a.eos);
    return 2;
  }
  int64_t *ids = NULL;
  size_t n_ids = 0;
  const char *why = !a.model                 ? "no MODEL"
                    : !a.ids                 ? "no --ids"
                    : a.greedy && a.sampling ? "--greedy with a sampling option"
                                             : NULL;
  if (!why && !parse_ids(a.ids, &ids, &n_ids))
    why = "--ids needs token ids separated by commas, at least one";
  if (why) {
    fprintf(stderr, "onnxc generate: %s (see onnxc generate --help)\n", why);
    free(a.eos);
    return 2;
  }
  a.o.do_sample = a.sampling;
  if (a.n_eos) {
    a.o.eos_ids = a.eos;
    a.o.n_eos = a.n_eos;
  }
  int status = 1;
  char *dir = model_dir(a.model);
  onnxc_session *s = NULL;
  onnxc_model *m = dir ? ox_cli_load_model(a.model) : NULL;
  if (m) {
    onnxc_error e = {0};
    onnxc_session_options so = ox_cli_session_options(&sf);
    a.o.config_dir = dir;
    if (onnxc_session_create(m, &so, &s, &e))
      fprintf(stderr, "onnxc: %s: %s\n", a.model, e.msg);
    else
      status = run_generation(s, ids, n_ids, &a.o);
  }
  onnxc_session_free(s);
  onnxc_model_free(m);
  free(dir);
  free(ids);
  free(a.eos);
  return status;
}
