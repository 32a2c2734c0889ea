/* test_passes.c - every graph pass of the table (src/opt/passes.c) on its
 * own text model, without a session.
 *
 * For each pass NAME with a function, tests/opt/passes/NAME.onnxtxt is
 * rewritten by ox_opt_run twice: with NAME alone (every other pass
 * disabled), compared with NAME.expected.onnxtxt, and with the whole
 * pipeline but NAME, compared with NAME.disabled.onnxtxt. Graphs are
 * compared in the text printer's canonical form. NAME alone must change the
 * graph (the model is one where it fires).
 *
 * A pass may have more models, NAME@VARIANT.onnxtxt (the idioms of other
 * exporters), each with its own expected files; a variant ending "_transb"
 * runs with matmul_transb (the graph a session's pipeline gives the pass).
 * Every pass is also run a second time, alone, on what it made: a pass
 * must be idempotent (nothing left for it to rewrite).
 *
 * ONNXC_PASSES_WRITE=1 writes the expected files from what the passes make
 * (review them before committing). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"
#include "schema/onnxc_ops.h"
#include "text/text.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

#define PASS_DIR "tests/opt/passes/"

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = '\0';
  fclose(f);
  *size = (size_t)n;
  return s;
}

static ox_model_proto *parse(ox_arena *a, const char *path) {
  size_t n;
  char *text = read_file(path, &n);
  if (!text) return NULL;
  /* kept in the arena: the model may point into its text */
  char *kept = ox_arena_alloc(a, n + 1);
  if (kept) memcpy(kept, text, n + 1);
  free(text);
  ox_model_proto *m = NULL;
  ox_err e = {0};
  if (!kept || ox_text_parse_model(kept, n, path, a, &m, &e)) {
    fprintf(stderr, "%s: %s\n", path, e.msg);
    m = NULL;
  }
  return m;
}

static char *graph_text(const ox_graph *g) {
  ox_buf b = {0};
  ox_err e = {0};
  if (ox_text_print_graph(g, &b, &e)) {
    ox_buf_free(&b);
    return NULL;
  }
  ox_buf_putc(&b, '\0');
  return (char *)b.data;
}

/* a pass that rewrites what another one made runs with it; a model of
 * `base` ending "_transb" (attention_bhsd@..._transb: the scores as
 * MatMulTransBFused, as sessions run it) runs with matmul_transb */
static const char *prerequisite(const char *name, const char *base) {
  size_t n = strlen(base);
  bool transb = n > 7 && strcmp(base + n - 7, "_transb") == 0;
  return strcmp(name, "tied_gather") == 0 || transb ? "matmul_transb" : "";
}

/* m's graph (model `base`) through the pipeline: only `name` (only != 0;
 * with its prerequisite), or all but it */
static const ox_graph *run(ox_arena *a, const ox_model_proto *m, const char *name, const char *base,
                           int only) {
  const char *off[64];
  size_t n_off = 0;
  for (size_t i = 0; i < ox_opt_pass_count(); i++) {
    const char *p = ox_opt_pass_at(i)->name;
    bool on = strcmp(p, name) == 0 || (only && strcmp(p, prerequisite(name, base)) == 0);
    if (on != (only != 0)) off[n_off++] = p;
  }
  ox_opt_request r = {.level = 1,
                      .disabled = off,
                      .n_disabled = n_off,
                      .inputs_const = true,
                      .imports = m->opset_import,
                      .n_imports = m->n_opset_import};
  const ox_graph *g = NULL;
  ox_err e = {0};
  if (ox_opt_run(&r, a, m->graph, &g, NULL, &e)) {
    fprintf(stderr, "%s: %s\n", name, e.msg);
    return NULL;
  }
  return g;
}

/* writes m with graph g (ai.onnxc imported) to path, under a first line
 * `# what` saying what made it */
static void write_model(const ox_model_proto *m, const ox_graph *g, const char *path,
                        const char *what) {
  ox_model_proto copy = *m;
  ox_opset imp[16];
  size_t n = m->n_opset_import < 15 ? m->n_opset_import : 15;
  bool has = false;
  for (size_t i = 0; i < n; i++) {
    imp[i] = m->opset_import[i];
    has = has || (imp[i].domain && strcmp(imp[i].domain, OX_ONNXC_DOMAIN) == 0);
  }
  if (!has) imp[n++] = (ox_opset){.domain = (char *)OX_ONNXC_DOMAIN, .version = OX_ONNXC_OPSET, .has_version = true};
  copy.opset_import = imp;
  copy.n_opset_import = n;
  copy.graph = (ox_graph *)g;
  ox_buf b = {0};
  ox_err e = {0};
  FILE *f = fopen(path, "wb");
  if (f) fprintf(f, "# %s (tests/unit/test_passes.c; ONNXC_PASSES_WRITE=1 rewrites it)\n", what);
  if (f && !ox_text_print_model(&copy, &b, &e)) fwrite(b.data, 1, b.size, f);
  if (f) fclose(f);
  ox_buf_free(&b);
}

/* the graph of `path` printed, or NULL */
static char *expected(ox_arena *a, const char *path) {
  ox_model_proto *m = parse(a, path);
  return m ? graph_text(m->graph) : NULL;
}

/* pass p on model `base` (tests/opt/passes/base.onnxtxt) */
static void test_pass(const ox_opt_pass *p, const char *base, bool write) {
  ox_arena *a = ox_arena_new();
  char path[256], exp_path[256], dis_path[256];
  snprintf(path, sizeof path, PASS_DIR "%s.onnxtxt", base);
  snprintf(exp_path, sizeof exp_path, PASS_DIR "%s.expected.onnxtxt", base);
  snprintf(dis_path, sizeof dis_path, PASS_DIR "%s.disabled.onnxtxt", base);
  ox_model_proto *m = parse(a, path);
  if (!m) {
    fprintf(stderr, "pass %s: no model %s\n", p->name, path);
    fails++;
    ox_arena_free(a);
    return;
  }
  const ox_graph *alone = run(a, m, p->name, base, 1), *without = run(a, m, p->name, base, 0);
  CHECK(alone && without);
  if (!alone || !without) {
    ox_arena_free(a);
    return;
  }
  if (write) {
    char what[300];
    snprintf(what, sizeof what, "%s alone on %s.onnxtxt", p->name, base);
    write_model(m, alone, exp_path, what);
    snprintf(what, sizeof what, "every pass but %s on %s.onnxtxt", p->name, base);
    write_model(m, without, dis_path, what);
  }
  char *before = graph_text(m->graph), *got = graph_text(alone), *got_off = graph_text(without);
  char *want = expected(a, exp_path), *want_off = expected(a, dis_path);
  if (!want || !want_off) {
    fprintf(stderr, "pass %s: missing %s or %s\n", p->name, exp_path, dis_path);
    fails++;
  } else {
    if (strcmp(got, want) != 0) {
      fprintf(stderr, "pass %s alone: got\n%s\nexpected\n%s\n", p->name, got, want);
      fails++;
    }
    if (strcmp(got_off, want_off) != 0) {
      fprintf(stderr, "pipeline without %s: got\n%s\nexpected\n%s\n", p->name, got_off, want_off);
      fails++;
    }
  }
  if (strcmp(before, got) == 0) {
    fprintf(stderr, "pass %s did not change its model %s\n", p->name, base);
    fails++;
  }
  /* idempotent: alone again on its own output, nothing changes */
  ox_model_proto again = *m;
  ox_opset imp[16];
  size_t n_imp = m->n_opset_import < 15 ? m->n_opset_import : 15;
  memcpy(imp, m->opset_import, n_imp * sizeof *imp);
  imp[n_imp++] = (ox_opset){.domain = (char *)OX_ONNXC_DOMAIN, .version = OX_ONNXC_OPSET,
                            .has_version = true};
  again.opset_import = imp;
  again.n_opset_import = n_imp;
  again.graph = (ox_graph *)alone;
  const ox_graph *twice = run(a, &again, p->name, base, 1);
  char *got2 = twice ? graph_text(twice) : NULL;
  if (!got2 || strcmp(got2, got) != 0) {
    fprintf(stderr, "pass %s is not idempotent on %s: a second run gave\n%s\n", p->name, base,
            got2 ? got2 : "(error)");
    fails++;
  }
  free(got2);
  free(before);
  free(got);
  free(got_off);
  free(want);
  free(want_off);
  ox_arena_free(a);
}

/* the table itself: unique names, known needs, the runtime's entry */
static void test_table(void) {
  size_t n = ox_opt_pass_count();
  CHECK(n >= 18);
  CHECK(ox_opt_pass_at(n) == NULL);
  for (size_t i = 0; i < n; i++) {
    const ox_opt_pass *p = ox_opt_pass_at(i);
    CHECK(p->name && *p->name && p->description && *p->description && p->level >= 1);
    CHECK((p->run == NULL) == ((p->needs & OX_OPT_IN_RUNTIME) != 0));
    CHECK(ox_opt_pass_find(p->name) == p);
    for (size_t j = 0; j < i; j++) CHECK(strcmp(ox_opt_pass_at(j)->name, p->name) != 0);
  }
  /* today's order: the conv passes after the quantized ones, chains last */
  static const char *const order[] = {"identity", "cse",           "matmul_transb", "tied_gather",
                                      "layernorm",     "rmsnorm",       "rotary",
                                      "attention",     "attention_bhsd", "kv_cache",     "matmul_epi",    "swiglu",
                                      "qdq_conv",      "qdq_eltwise",   "dyn_matmul",
                                      "dq_matmul",     "conv_fold",     "conv_epilogue",
                                      "conv_prologue", "channel_shuffle", "conv_gate", "conv_maxpool",
                                      "elementwise_chain", "dead_constants"};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    CHECK(ox_opt_pass_at(i) && strcmp(ox_opt_pass_at(i)->name, order[i]) == 0);
  const ox_opt_pass *cf = ox_opt_pass_find("constant_folding");
  CHECK(cf && !cf->run);
  ox_opt_request r = {.level = 1};
  CHECK(ox_opt_pass_enabled(&r, cf));
  const char *off[] = {"constant_folding"};
  r.disabled = off;
  r.n_disabled = 1;
  CHECK(!ox_opt_pass_enabled(&r, cf));
  r.level = 0;
  r.n_disabled = 0;
  CHECK(!ox_opt_pass_enabled(&r, cf));
  r.level = 1;
  r.quant_fusion_off = true;
  CHECK(!ox_opt_pass_enabled(&r, ox_opt_pass_find("qdq_conv")));
  CHECK(ox_opt_pass_enabled(&r, ox_opt_pass_find("conv_epilogue")));
  /* an unknown name fails, naming it */
  ox_err e = {0};
  const char *bad[] = {"cse", "no_such_pass"};
  CHECK(ox_opt_check_names(bad, 2, &e) == OX_EINVAL && strstr(e.msg, "no_such_pass"));
  ox_arena *a = ox_arena_new();
  ox_model_proto *m = parse(a, PASS_DIR "cse.onnxtxt");
  r = (ox_opt_request){.level = 1, .disabled = bad, .n_disabled = 2};
  const ox_graph *g = NULL;
  e = (ox_err){0};
  CHECK(m && ox_opt_run(&r, a, m->graph, &g, NULL, &e) == OX_EINVAL &&
        strstr(e.msg, "no_such_pass"));
  /* level 0 changes nothing */
  r = (ox_opt_request){.level = 0, .imports = m ? m->opset_import : NULL};
  CHECK(m && ox_opt_run(&r, a, m->graph, &g, NULL, &e) == OX_OK && g == m->graph);
  ox_arena_free(a);
}

int main(void) {
  const char *w = getenv("ONNXC_PASSES_WRITE");
  bool write = w && *w == '1';
  test_table();
  for (size_t i = 0; i < ox_opt_pass_count(); i++)
    if (ox_opt_pass_at(i)->run) test_pass(ox_opt_pass_at(i), ox_opt_pass_at(i)->name, write);
  /* variants: NAME@VARIANT.onnxtxt */
  DIR *d = opendir(PASS_DIR);
  struct dirent *de;
  while (d && (de = readdir(d))) {
    const char *at = strchr(de->d_name, '@'), *dot = strrchr(de->d_name, '.');
    if (!at || !dot || strcmp(dot, ".onnxtxt") != 0 || strstr(de->d_name, ".expected.") ||
        strstr(de->d_name, ".disabled."))
      continue;
    char name[128], base[256];
    snprintf(name, sizeof name, "%.*s", (int)(at - de->d_name), de->d_name);
    snprintf(base, sizeof base, "%.*s", (int)(dot - de->d_name), de->d_name);
    const ox_opt_pass *p = ox_opt_pass_find(name);
    if (!p || !p->run) {
      fprintf(stderr, "%s: no pass named %s\n", de->d_name, name);
      fails++;
      continue;
    }
    test_pass(p, base, write);
  }
  if (d) closedir(d);
  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails ? 1 : 0;
}
