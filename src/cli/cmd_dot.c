/* cmd_dot.c - `onnxc dot`: the graph as a Graphviz picture.
 *
 * The model's types are inferred first (on the loaded copy), so that edges
 * carry element type and shape, symbolic dims kept. One box per node (op
 * type and name; nodes of the runtime's fused domain ai.onnxc and calls of
 * model-local functions are marked and coloured); graph inputs, outputs and
 * small initializers are ellipses and notes of their own colours; larger
 * initializers are listed inside the label of each node that reads them, so
 * that weights do not crowd the picture. Subgraphs (If, Loop, Scan, ...)
 * are nested clusters down to --depth levels, and model-local functions are
 * clusters of their own. The DOT text is written as is (.dot) or piped to
 * Graphviz's `dot` program for SVG, PNG or PDF. */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

static void usage(FILE *f) {
  fprintf(f,
          "usage: onnxc dot MODEL [-o FILE.svg|.png|.pdf|.dot] [--no-shapes] [--depth N]\n"
          "                 [--fold N]\n"
          "\n"
          "Draws the graph: a box per node (op type and name; fused nodes and calls of\n"
          "model-local functions marked), edges labelled with element type and inferred\n"
          "shape, graph inputs, outputs and initializers apart, subgraphs of If, Loop\n"
          "and Scan as nested clusters, model-local functions as clusters of their own.\n"
          "  -o FILE      .svg, .png or .pdf through Graphviz's `dot` program; .dot (or no\n"
          "               -o: standard output) writes the Graphviz text itself\n"
          "  --no-shapes  do not infer shapes; edges are labelled with declared types only\n"
          "  --depth N    draw subgraphs down to N levels (default: all; 0: none)\n"
          "  --fold N     initializers of more than N elements (default 16) are listed in\n"
          "               the label of the nodes that read them instead of drawn apart\n");
}

/* ------------------------------------------------------------ output text */

typedef struct dot {
  ox_cli_text out;
  ox_cli_text edges; /* written after every node: an edge statement inside a
                        cluster would make its ends members of that cluster */
  int max_depth;
  int64_t fold; /* initializers with more elements are folded into labels */
  bool shapes;
  unsigned long next_id;
  const onnxc_model *m;
} dot;

/* A DOT string body: quotes and backslashes escaped, newlines as \n. */
static void put_escaped(ox_cli_text *b, const char *s) {
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\')
      ox_cli_text_putc(b, '\\'), ox_cli_text_putc(b, *s);
    else if (*s == '\n')
      ox_cli_text_puts(b, "\\n");
    else if ((unsigned char)*s >= 0x20)
      ox_cli_text_putc(b, *s);
  }
}

/* A declared type as an edge or input label; without --shapes a tensor's
 * shape is cut off. */
static const char *type_label(const dot *d, const onnxc_type *t, char *buf, size_t n) {
  if (!t) return "";
  ox_cli_type_str(t, buf, n);
  if (!d->shapes) {
    char *br = strchr(buf, '[');
    if (br && onnxc_type_kind_of(t) == ONNXC_TYPE_TENSOR) *br = 0;
  }
  return buf;
}

/* An initializer's label in the form type_label gives a tensor type: the
 * element type, then with_dims its dims (up to 16; more: "[...]"), else
 * "[...]", which --no-shapes cuts off. */
static const char *init_label(const dot *d, const onnxc_tensor_proto *t, bool with_dims,
                              char *buf, size_t n) {
  const char *en = onnxc_dtype_name(onnxc_tensor_proto_dtype(t));
  size_t rank = onnxc_tensor_proto_rank(t);
  int k = snprintf(buf, n, "%s", *en ? en : "?");
  if (!d->shapes) return buf;
  if (!with_dims || rank > 16) {
    snprintf(buf + k, n - (size_t)k, "[...]");
    return buf;
  }
  k += snprintf(buf + k, n - (size_t)k, "[");
  for (size_t i = 0; i < rank && (size_t)k < n; i++) {
    int64_t v = onnxc_tensor_proto_dim(t, i);
    if (v >= 0)
      k += snprintf(buf + k, n - (size_t)k, "%s%lld", i ? "," : "", (long long)v);
    else
      k += snprintf(buf + k, n - (size_t)k, "%s?", i ? "," : "");
  }
  if ((size_t)k < n) snprintf(buf + k, n - (size_t)k, "]");
  return buf;
}

/* ------------------------------------------------------------ scopes */

/* Where each value of a graph comes from: name -> DOT id of its producer,
 * its type, and whether it is a folded initializer. */
typedef struct vinfo {
  char id[32];
  const onnxc_type *type;
  const onnxc_tensor_proto *folded;
} vinfo;

typedef struct scope {
  ox_cli_names names; /* name -> index into v */
  vinfo *v;
  size_t n, cap;
  const struct scope *parent;
} scope;

static vinfo *scope_add(scope *s, const char *name) {
  if (!name || !*name) return NULL;
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    vinfo *nv = realloc(s->v, cap * sizeof *nv);
    if (!nv) return NULL;
    s->v = nv;
    s->cap = cap;
  }
  vinfo *v = &s->v[s->n++];
  memset(v, 0, sizeof *v);
  if (!ox_cli_names_put(&s->names, name, s->n - 1)) return NULL;
  return v;
}

static const vinfo *scope_find(const scope *s, const char *name) {
  for (; s; s = s->parent) {
    size_t k;
    if (ox_cli_names_get(&s->names, name, &k)) return &s->v[k];
  }
  return NULL;
}

static void scope_free(scope *s) {
  ox_cli_names_free(&s->names);
  free(s->v);
}

/* The nodes being drawn and where their values' types are declared: a
 * graph (value_info, outputs, inputs) or a model-local function (its
 * value_info). */
typedef struct body {
  const onnxc_graph *g;
  const onnxc_function *f;
} body;

static size_t body_node_count(const body *b) {
  return b->f ? onnxc_function_node_count(b->f) : onnxc_graph_node_count(b->g);
}

static const onnxc_node *body_node(const body *b, size_t i) {
  return b->f ? onnxc_function_node(b->f, i) : onnxc_graph_node(b->g, i);
}

static const onnxc_type *declared(const onnxc_graph *g, onnxc_graph_values which,
                                  const char *name) {
  for (size_t i = 0; i < onnxc_graph_value_count(g, which); i++)
    if (strcmp(onnxc_graph_value_name(g, which, i), name) == 0)
      return onnxc_graph_value_type(g, which, i);
  return NULL;
}

/* The type of a value from the declarations, if any. */
static const onnxc_type *value_type(const body *b, const char *name) {
  if (b->f) {
    for (size_t i = 0; i < onnxc_function_value_info_count(b->f); i++)
      if (strcmp(onnxc_function_value_info_name(b->f, i), name) == 0)
        return onnxc_function_value_info_type(b->f, i);
    return NULL;
  }
  const onnxc_type *t = declared(b->g, ONNXC_GRAPH_VALUE_INFO, name);
  if (!t) t = declared(b->g, ONNXC_GRAPH_OUTPUTS, name);
  if (!t) t = declared(b->g, ONNXC_GRAPH_INPUTS, name);
  return t;
}

/* The element count; false for a negative dim or on overflow. */
static bool numel_of(const onnxc_tensor_proto *t, int64_t *n) {
  int64_t r = 1;
  for (size_t i = 0; i < onnxc_tensor_proto_rank(t); i++) {
    int64_t d = onnxc_tensor_proto_dim(t, i);
    if (d < 0 || __builtin_mul_overflow(r, d, &r)) return false;
  }
  *n = r;
  return true;
}

/* ------------------------------------------------------------ graphs */

static void new_id(dot *d, char *id, size_t n) { snprintf(id, n, "n%lu", d->next_id++); }

static void emit_value_node(dot *d, const char *id, const char *shape, const char *color,
                            const char *name, const char *type) {
  ox_cli_text *b = &d->out;
  ox_cli_text_printf(b, "  %s [shape=%s, style=filled, fillcolor=\"%s\", label=\"", id, shape,
                     color);
  put_escaped(b, name);
  if (type && *type) {
    ox_cli_text_puts(b, "\\n");
    put_escaped(b, type);
  }
  ox_cli_text_puts(b, "\"];\n");
}

static void emit_edge(dot *d, const char *from, const char *to, const onnxc_type *t,
                      const char *style) {
  char tb[512];
  ox_cli_text_printf(&d->edges, "  %s -> %s [label=\"", from, to);
  put_escaped(&d->edges, type_label(d, t, tb, sizeof tb));
  ox_cli_text_printf(&d->edges, "\"%s%s];\n", style ? ", style=" : "", style ? style : "");
}

/* The model-local function a node calls, or NULL. */
static const onnxc_function *local_function(const onnxc_model *m, const onnxc_node *n) {
  for (size_t i = 0; i < onnxc_model_function_count(m); i++) {
    const onnxc_function *f = onnxc_model_function(m, i);
    const char *name = onnxc_function_name(f);
    if (*name && strcmp(name, onnxc_node_op_type(n)) == 0 &&
        strcmp(onnxc_function_domain(f), onnxc_node_domain(n)) == 0 &&
        strcmp(onnxc_function_overload(f), onnxc_node_overload(n)) == 0)
      return f;
  }
  return NULL;
}

static bool is_default_domain(const char *d) { return !*d || strcmp(d, "ai.onnx") == 0; }

static int emit_nodes(dot *d, const body *bd, scope *sc, int depth);

/* Inputs, initializers, nodes and outputs of g, inside the current cluster.
 * 0, or -1 when out of memory. */
static int emit_graph(dot *d, const onnxc_graph *g, const scope *parent, int depth, char *out_ids,
                      size_t n_out_ids) {
  scope sc = {.parent = parent};
  body bd = {g, NULL};
  char tb[512];
  for (size_t i = 0; i < onnxc_graph_initializer_count(g); i++) {
    const onnxc_tensor_proto *t = onnxc_graph_initializer(g, i);
    const char *name = onnxc_tensor_proto_name(t);
    vinfo *v = scope_add(&sc, name);
    if (!v) continue;
    int64_t n = 0;
    v->type = value_type(&bd, name);
    if (numel_of(t, &n) && n > d->fold) {
      v->folded = t;
      continue;
    }
    new_id(d, v->id, sizeof v->id);
    emit_value_node(d, v->id, "note", "lightyellow", name, init_label(d, t, true, tb, sizeof tb));
  }
  for (size_t i = 0; i < onnxc_graph_value_count(g, ONNXC_GRAPH_INPUTS); i++) {
    const char *name = onnxc_graph_value_name(g, ONNXC_GRAPH_INPUTS, i);
    const onnxc_type *type = onnxc_graph_value_type(g, ONNXC_GRAPH_INPUTS, i);
    const vinfo *had = scope_find(&sc, name);
    if (had && had->folded) continue; /* an initializer-backed input (IR < 4) */
    if (had && had->id[0]) continue;
    vinfo *v = scope_add(&sc, name);
    if (!v) continue;
    v->type = type;
    new_id(d, v->id, sizeof v->id);
    emit_value_node(d, v->id, "ellipse", "lightblue", name, type_label(d, type, tb, sizeof tb));
  }
  int rc = emit_nodes(d, &bd, &sc, depth);
  for (size_t i = 0; i < onnxc_graph_value_count(g, ONNXC_GRAPH_OUTPUTS) && rc == 0; i++) {
    const char *name = onnxc_graph_value_name(g, ONNXC_GRAPH_OUTPUTS, i);
    const onnxc_type *type = onnxc_graph_value_type(g, ONNXC_GRAPH_OUTPUTS, i);
    char id[32];
    new_id(d, id, sizeof id);
    emit_value_node(d, id, "ellipse", "lightpink", name, NULL);
    const vinfo *src = scope_find(&sc, name);
    if (src && src->id[0]) emit_edge(d, src->id, id, type ? type : src->type, NULL);
    if (out_ids && i < n_out_ids) snprintf(out_ids + 32 * i, 32, "%s", id);
  }
  scope_free(&sc);
  return d->out.failed ? -1 : rc;
}

/* A node's box: op type (domain-qualified outside ai.onnx), marks, name,
 * and the folded initializers it reads. */
static void emit_node_box(dot *d, const onnxc_node *n, const char *id, const scope *sc) {
  char tb[512];
  const char *dom = onnxc_node_domain(n), *op = onnxc_node_op_type(n);
  bool fused = strcmp(dom, "ai.onnxc") == 0;
  bool fn = local_function(d->m, n) != NULL;
  ox_cli_text *b = &d->out;
  ox_cli_text_printf(b, "  %s [shape=box, style=\"rounded,filled\", fillcolor=\"%s\", label=\"",
                     id, fused ? "orange" : fn ? "palegreen" : "whitesmoke");
  if (!is_default_domain(dom)) {
    put_escaped(b, dom);
    ox_cli_text_putc(b, '.');
  }
  put_escaped(b, *op ? op : "?");
  if (fused) ox_cli_text_puts(b, " (fused)");
  if (fn) ox_cli_text_puts(b, " (function)");
  if (*onnxc_node_name(n)) {
    ox_cli_text_puts(b, "\\n");
    put_escaped(b, onnxc_node_name(n));
  }
  for (size_t k = 0; k < onnxc_node_input_count(n); k++) {
    const char *in = onnxc_node_input(n, k);
    const vinfo *v = *in ? scope_find(sc, in) : NULL;
    if (!v || !v->folded) continue;
    const onnxc_tensor_proto *t = v->folded;
    ox_cli_text_puts(b, "\\n");
    put_escaped(b, in);
    ox_cli_text_puts(b, ": ");
    put_escaped(b, init_label(d, t, false, tb, sizeof tb));
    ox_cli_text_putc(b, '[');
    for (size_t j = 0; j < onnxc_tensor_proto_rank(t); j++)
      ox_cli_text_printf(b, "%s%lld", j ? "," : "", (long long)onnxc_tensor_proto_dim(t, j));
    ox_cli_text_putc(b, ']');
  }
  ox_cli_text_puts(b, "\"];\n");
}

/* Subgraphs of n's attributes as nested clusters; their outputs lead back
 * to the node. */
static int emit_subgraphs(dot *d, const onnxc_node *n, const char *id, const scope *sc,
                          int depth) {
  ox_cli_text *b = &d->out;
  for (size_t k = 0; k < onnxc_node_attr_count(n) && depth < d->max_depth; k++) {
    /* a GRAPH attribute's graph, else a GRAPHS attribute's list */
    const onnxc_graph *one = onnxc_node_attr_graph(n, k);
    size_t ng = one ? 1 : onnxc_node_attr_graph_count(n, k);
    for (size_t j = 0; j < ng; j++) {
      const onnxc_graph *sg = one ? one : onnxc_node_attr_graph_at(n, k, j);
      size_t n_out = onnxc_graph_value_count(sg, ONNXC_GRAPH_OUTPUTS);
      ox_cli_text_printf(b, " subgraph cluster_%lu {\n  style=dashed; color=gray40; label=\"",
                         d->next_id++);
      put_escaped(b, onnxc_node_op_type(n));
      ox_cli_text_puts(b, " ");
      put_escaped(b, onnxc_node_attr_name(n, k));
      ox_cli_text_puts(b, ": ");
      put_escaped(b, onnxc_graph_name(sg));
      ox_cli_text_puts(b, "\";\n");
      char *outs = calloc(n_out ? n_out : 1, 32);
      if (!outs) return -1;
      int rc = emit_graph(d, sg, sc, depth + 1, outs, n_out);
      ox_cli_text_puts(b, " }\n");
      for (size_t o = 0; rc == 0 && o < n_out; o++)
        if (outs[32 * o])
          ox_cli_text_printf(&d->edges, "  %s -> %s [style=dotted, arrowhead=empty];\n",
                             outs + 32 * o, id);
      free(outs);
      if (rc) return rc;
    }
  }
  return 0;
}

static int emit_nodes(dot *d, const body *bd, scope *sc, int depth) {
  for (size_t i = 0; i < body_node_count(bd); i++) {
    const onnxc_node *n = body_node(bd, i);
    char id[32];
    new_id(d, id, sizeof id);
    emit_node_box(d, n, id, sc);
    for (size_t k = 0; k < onnxc_node_input_count(n); k++) {
      const char *in = onnxc_node_input(n, k);
      if (!*in) continue;
      const vinfo *v = scope_find(sc, in);
      if (!v || !v->id[0]) continue;
      bool outer = !ox_cli_names_get(&sc->names, in, NULL);
      emit_edge(d, v->id, id, v->type ? v->type : value_type(bd, in), outer ? "dashed" : NULL);
    }
    if (emit_subgraphs(d, n, id, sc, depth)) return -1;
    for (size_t k = 0; k < onnxc_node_output_count(n); k++) {
      const char *out = onnxc_node_output(n, k);
      vinfo *v = scope_add(sc, out);
      if (!v) continue;
      snprintf(v->id, sizeof v->id, "%s", id);
      v->type = value_type(bd, out);
    }
  }
  return d->out.failed ? -1 : 0;
}

/* A model-local function: its inputs, body and outputs in a cluster. */
static int emit_function(dot *d, const onnxc_function *f) {
  ox_cli_text *b = &d->out;
  const char *dom = onnxc_function_domain(f), *name = onnxc_function_name(f);
  ox_cli_text_printf(b,
                     " subgraph cluster_%lu {\n  style=filled; fillcolor=honeydew; label=\"function ",
                     d->next_id++);
  if (*dom) {
    put_escaped(b, dom);
    ox_cli_text_putc(b, '.');
  }
  put_escaped(b, *name ? name : "?");
  ox_cli_text_puts(b, "\";\n");
  body bd = {NULL, f};
  scope sc = {0};
  for (size_t i = 0; i < onnxc_function_input_count(f); i++) {
    vinfo *v = scope_add(&sc, onnxc_function_input(f, i));
    if (!v) continue;
    new_id(d, v->id, sizeof v->id);
    emit_value_node(d, v->id, "ellipse", "lightblue", onnxc_function_input(f, i), NULL);
  }
  int rc = emit_nodes(d, &bd, &sc, 0);
  for (size_t i = 0; i < onnxc_function_output_count(f) && rc == 0; i++) {
    const char *out = onnxc_function_output(f, i);
    char id[32];
    new_id(d, id, sizeof id);
    emit_value_node(d, id, "ellipse", "lightpink", out, NULL);
    const vinfo *src = scope_find(&sc, out);
    if (src && src->id[0]) emit_edge(d, src->id, id, NULL, NULL);
  }
  scope_free(&sc);
  ox_cli_text_puts(b, " }\n");
  return d->out.failed ? -1 : rc;
}

static int emit_model(dot *d, const onnxc_model *m) {
  const onnxc_graph *g = onnxc_model_graph(m);
  ox_cli_text_puts(&d->out, "digraph onnx {\n  rankdir=TB;\n"
                            "  node [fontname=\"Helvetica\", fontsize=10];\n"
                            "  edge [fontname=\"Helvetica\", fontsize=8];\n  label=\"");
  put_escaped(&d->out, onnxc_graph_name(g));
  ox_cli_text_puts(&d->out, "\"; labelloc=t;\n");
  int rc = g ? emit_graph(d, g, NULL, 0, NULL, 0) : 0;
  for (size_t i = 0; rc == 0 && i < onnxc_model_function_count(m); i++)
    rc = emit_function(d, onnxc_model_function(m, i));
  if (d->edges.size) ox_cli_text_put(&d->out, d->edges.data, d->edges.size);
  ox_cli_text_puts(&d->out, "}\n");
  return d->out.failed || d->edges.failed ? -1 : rc;
}

/* ------------------------------------------------------------ writing */

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

/* Pipes the DOT text to `dot -T<fmt> -o path` (argv, no shell). */
static int run_graphviz(const ox_cli_text *text, const char *fmt, const char *path) {
  int fds[2];
  if (pipe(fds) != 0) {
    fprintf(stderr, "onnxc: dot: pipe: %s\n", strerror(errno));
    return 2;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  char tflag[16];
  snprintf(tflag, sizeof tflag, "-T%s", fmt);
  char *argv[] = {"dot", tflag, "-o", (char *)path, NULL};
  pid_t pid;
  int err = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[0]);
  if (err) {
    close(fds[1]);
    fprintf(stderr,
            "onnxc: dot: cannot run Graphviz's `dot` (%s); install graphviz, or write .dot text "
            "with -o FILE.dot\n",
            strerror(err));
    return 2;
  }
  void (*old)(int) = signal(SIGPIPE, SIG_IGN);
  size_t off = 0;
  while (off < text->size) {
    ssize_t k = write(fds[1], text->data + off, text->size - off);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    off += (size_t)k;
  }
  close(fds[1]);
  signal(SIGPIPE, old);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (off < text->size || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "onnxc: dot: Graphviz failed to write %s\n", path);
    return 2;
  }
  return 0;
}

int ox_cmd_dot(int argc, char **argv) {
  const char *model = NULL, *out = NULL;
  dot d = {.max_depth = 1 << 20, .fold = 16, .shapes = true};
  for (int i = 1; i < argc; i++) {
    char *end;
    if (ox_cli_is_help(argv[i])) {
      usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      out = argv[++i];
    } else if (strcmp(argv[i], "--no-shapes") == 0) {
      d.shapes = false;
    } else if ((strcmp(argv[i], "--depth") == 0 || strcmp(argv[i], "--fold") == 0) && i + 1 < argc) {
      bool depth = argv[i][2] == 'd';
      long long v = strtoll(argv[++i], &end, 10);
      if (*end || v < 0 || (depth && v > 1000000)) {
        fprintf(stderr, "onnxc: dot: %s takes a whole number >= 0, not '%s'\n", argv[i - 1],
                argv[i]);
        return 2;
      }
      if (depth) d.max_depth = (int)v;
      else d.fold = v;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc: dot: unknown option %s\n", argv[i]);
      usage(stderr);
      return 2;
    } else if (!model) {
      model = argv[i];
    } else {
      fprintf(stderr, "onnxc: dot: one model at a time\n");
      return 2;
    }
  }
  if (!model) {
    usage(stderr);
    return 2;
  }
  const char *fmt = NULL;
  if (out && !ends_with(out, ".dot") && !ends_with(out, ".gv")) {
    fmt = ends_with(out, ".svg") ? "svg" : ends_with(out, ".png") ? "png"
                                        : ends_with(out, ".pdf") ? "pdf"
                                                                 : NULL;
    if (!fmt) {
      fprintf(stderr, "onnxc: dot: %s: the output must end in .svg, .png, .pdf or .dot\n", out);
      return 2;
    }
  }
  onnxc_model *m = ox_cli_load_model(model);
  if (!m) return 2;
  if (d.shapes) { /* best effort: a model inference cannot type is still drawn */
    onnxc_error e = {0};
    if (onnxc_infer_shapes(m, NULL, NULL, &e) != ONNXC_OK)
      fprintf(stderr, "onnxc: dot: warning: shapes not inferred: %s\n", e.msg);
  }
  d.m = m;
  int rc = emit_model(&d, m);
  int status = 0;
  if (rc != 0) {
    fprintf(stderr, "onnxc: dot: out of memory\n");
    status = 2;
  } else if (fmt) {
    status = run_graphviz(&d.out, fmt, out);
  } else {
    FILE *f = out ? fopen(out, "wb") : stdout;
    if (!f || fwrite(d.out.data, 1, d.out.size, f) != d.out.size) {
      fprintf(stderr, "onnxc: dot: cannot write %s: %s\n", out ? out : "standard output",
              strerror(errno));
      status = 2;
    }
    if (f && f != stdout && fclose(f) != 0) status = 2;
  }
  ox_cli_text_free(&d.out);
  ox_cli_text_free(&d.edges);
  onnxc_model_free(m);
  return status;
}
