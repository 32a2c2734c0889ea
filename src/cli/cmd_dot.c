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

#include "../ir/ir.h"
#include "../infer/infer.h"
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
  ox_buf out;
  ox_buf edges; /* written after every node: an edge statement inside a
                   cluster would make its ends members of that cluster */
  int max_depth;
  int64_t fold; /* initializers with more elements are folded into labels */
  bool shapes;
  unsigned long next_id;
  const ox_model_proto *mp;
} dot;

/* A DOT string body: quotes and backslashes escaped, newlines as \n. */
static void put_escaped(ox_buf *b, const char *s) {
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\')
      ox_buf_putc(b, '\\'), ox_buf_putc(b, *s);
    else if (*s == '\n')
      ox_buf_puts(b, "\\n");
    else if ((unsigned char)*s >= 0x20)
      ox_buf_putc(b, *s);
  }
}

static const char *type_label(const dot *d, const ox_type *t, char *buf, size_t n) {
  if (!t) return "";
  ox_cli_type_str((const onnxc_type *)t, buf, n);
  if (!d->shapes) { /* the declared type without its shape */
    char *br = strchr(buf, '[');
    if (br && t->kind == OX_TYPE_TENSOR) *br = 0;
  }
  return buf;
}

/* ------------------------------------------------------------ scopes */

/* Where each value of a graph comes from: name -> DOT id of its producer,
 * its type, and whether it is a folded initializer. */
typedef struct vinfo {
  char id[32];
  const ox_type *type;
  const ox_tensor *folded;
} vinfo;

typedef struct scope {
  ox_map names; /* name -> index + 1 into v */
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
  if (ox_map_put(&s->names, name, s->n) != OX_OK) return NULL;
  return v;
}

static const vinfo *scope_find(const scope *s, const char *name) {
  for (; s; s = s->parent) {
    uintptr_t k;
    if (ox_map_get(&s->names, name, &k)) return &s->v[k - 1];
  }
  return NULL;
}

static void scope_free(scope *s) {
  ox_map_free(&s->names);
  free(s->v);
}

/* The type of a value from the graph's declarations, if any. */
static const ox_type *declared(const ox_value_info *v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (v[i].name && strcmp(v[i].name, name) == 0) return v[i].type;
  return NULL;
}

static const ox_type *value_type(const ox_graph *g, const char *name) {
  const ox_type *t = declared(g->value_info, g->n_value_info, name);
  if (!t) t = declared(g->output, g->n_output, name);
  if (!t) t = declared(g->input, g->n_input, name);
  return t;
}

static bool numel_of(const ox_tensor *t, int64_t *n) { return ox_numel(t->dims, t->n_dims, n); }

/* ------------------------------------------------------------ graphs */

static void new_id(dot *d, char *id, size_t n) { snprintf(id, n, "n%lu", d->next_id++); }

static void emit_value_node(dot *d, const char *id, const char *shape, const char *color,
                            const char *name, const char *type) {
  ox_buf *b = &d->out;
  ox_buf_printf(b, "  %s [shape=%s, style=filled, fillcolor=\"%s\", label=\"", id, shape, color);
  put_escaped(b, name);
  if (type && *type) {
    ox_buf_puts(b, "\\n");
    put_escaped(b, type);
  }
  ox_buf_puts(b, "\"];\n");
}

static void emit_edge(dot *d, const char *from, const char *to, const ox_type *t, const char *style) {
  char tb[512];
  ox_buf_printf(&d->edges, "  %s -> %s [label=\"", from, to);
  put_escaped(&d->edges, type_label(d, t, tb, sizeof tb));
  ox_buf_printf(&d->edges, "\"%s%s];\n", style ? ", style=" : "", style ? style : "");
}

static const ox_function *local_function(const ox_model_proto *mp, const ox_node *n) {
  for (size_t i = 0; i < mp->n_functions; i++) {
    const ox_function *f = &mp->functions[i];
    const char *fd = f->domain ? f->domain : "", *nd = n->domain ? n->domain : "";
    const char *fo = f->overload ? f->overload : "", *no = n->overload ? n->overload : "";
    if (f->name && n->op_type && strcmp(f->name, n->op_type) == 0 && strcmp(fd, nd) == 0 &&
        strcmp(fo, no) == 0)
      return f;
  }
  return NULL;
}

static int emit_nodes(dot *d, const ox_node *nodes, size_t n_nodes, const ox_graph *g, scope *sc,
                      int depth);

/* Inputs, initializers, nodes and outputs of g, inside the current cluster. */
static int emit_graph(dot *d, const ox_graph *g, const scope *parent, int depth, char *out_ids,
                      size_t n_out_ids) {
  scope sc = {.parent = parent};
  ox_map_init(&sc.names);
  char tb[512];
  int rc = OX_OK;
  for (size_t i = 0; i < g->n_initializer && rc == OX_OK; i++) {
    const ox_tensor *t = &g->initializer[i];
    vinfo *v = scope_add(&sc, t->name);
    if (!v) continue;
    int64_t n = 0;
    ox_type tt = {.kind = OX_TYPE_TENSOR, .elem_type = t->data_type, .has_elem_type = true};
    ox_shape sh = {0};
    ox_dim dims[16];
    if (t->n_dims <= 16) {
      for (size_t k = 0; k < t->n_dims; k++)
        dims[k] = (ox_dim){.value = t->dims[k], .has_value = true};
      sh.dim = dims;
      sh.n_dim = t->n_dims;
      tt.shape = &sh;
    }
    v->type = value_type(g, t->name);
    if (numel_of(t, &n) && n > d->fold) {
      v->folded = t;
      continue;
    }
    new_id(d, v->id, sizeof v->id);
    emit_value_node(d, v->id, "note", "lightyellow", t->name, type_label(d, &tt, tb, sizeof tb));
  }
  for (size_t i = 0; i < g->n_input; i++) {
    const ox_value_info *vi = &g->input[i];
    const vinfo *had = vi->name ? scope_find(&sc, vi->name) : NULL;
    if (had && had->folded) continue; /* an initializer-backed input (IR < 4) */
    if (had && had->id[0]) continue;
    vinfo *v = scope_add(&sc, vi->name);
    if (!v) continue;
    v->type = vi->type;
    new_id(d, v->id, sizeof v->id);
    emit_value_node(d, v->id, "ellipse", "lightblue", vi->name, type_label(d, vi->type, tb, sizeof tb));
  }
  rc = emit_nodes(d, g->node, g->n_node, g, &sc, depth);
  for (size_t i = 0; i < g->n_output && rc == OX_OK; i++) {
    const ox_value_info *vi = &g->output[i];
    char id[32];
    new_id(d, id, sizeof id);
    emit_value_node(d, id, "ellipse", "lightpink", vi->name, NULL);
    const vinfo *src = vi->name ? scope_find(&sc, vi->name) : NULL;
    if (src && src->id[0]) emit_edge(d, src->id, id, vi->type ? vi->type : src->type, NULL);
    if (out_ids && i < n_out_ids) snprintf(out_ids + 32 * i, 32, "%s", id);
  }
  scope_free(&sc);
  return d->out.failed ? OX_ENOMEM : rc;
}

static int emit_nodes(dot *d, const ox_node *nodes, size_t n_nodes, const ox_graph *g, scope *sc,
                      int depth) {
  char tb[512];
  for (size_t i = 0; i < n_nodes; i++) {
    const ox_node *n = &nodes[i];
    char id[32];
    new_id(d, id, sizeof id);
    const char *dom = n->domain ? n->domain : "";
    bool fused = strcmp(dom, "ai.onnxc") == 0;
    const ox_function *fn = local_function(d->mp, n);
    ox_buf *b = &d->out;
    ox_buf_printf(b, "  %s [shape=box, style=\"rounded,filled\", fillcolor=\"%s\", label=\"", id,
                  fused ? "orange" : fn ? "palegreen" : "whitesmoke");
    if (*dom && !ox_is_default_domain(dom)) {
      put_escaped(b, dom);
      ox_buf_putc(b, '.');
    }
    put_escaped(b, n->op_type ? n->op_type : "?");
    if (fused) ox_buf_puts(b, " (fused)");
    if (fn) ox_buf_puts(b, " (function)");
    if (n->name && *n->name) {
      ox_buf_puts(b, "\\n");
      put_escaped(b, n->name);
    }
    for (size_t k = 0; k < n->n_input; k++) { /* folded initializers */
      const vinfo *v = n->input[k] && *n->input[k] ? scope_find(sc, n->input[k]) : NULL;
      if (!v || !v->folded) continue;
      const ox_tensor *t = v->folded;
      ox_type tt = {.kind = OX_TYPE_TENSOR, .elem_type = t->data_type, .has_elem_type = true};
      ox_buf_puts(b, "\\n");
      put_escaped(b, n->input[k]);
      ox_buf_puts(b, ": ");
      put_escaped(b, type_label(d, &tt, tb, sizeof tb));
      ox_buf_putc(b, '[');
      for (size_t j = 0; j < t->n_dims; j++) ox_buf_printf(b, "%s%lld", j ? "," : "", (long long)t->dims[j]);
      ox_buf_putc(b, ']');
    }
    ox_buf_puts(b, "\"];\n");
    for (size_t k = 0; k < n->n_input; k++) {
      const char *in = n->input[k];
      if (!in || !*in) continue;
      const vinfo *v = scope_find(sc, in);
      if (!v || !v->id[0]) continue;
      bool outer = !ox_map_get(&sc->names, in, &(uintptr_t){0});
      emit_edge(d, v->id, id, v->type ? v->type : value_type(g, in), outer ? "dashed" : NULL);
    }
    /* subgraphs as nested clusters; their outputs lead back to this node */
    for (size_t k = 0; k < n->n_attribute && depth < d->max_depth; k++) {
      const ox_attr *a = &n->attribute[k];
      size_t ng = a->g ? 1 : a->n_graphs;
      for (size_t j = 0; j < ng; j++) {
        const ox_graph *sg = a->g ? a->g : &a->graphs[j];
        ox_buf_printf(b, " subgraph cluster_%lu {\n  style=dashed; color=gray40; label=\"",
                      d->next_id++);
        put_escaped(b, n->op_type);
        ox_buf_puts(b, " ");
        put_escaped(b, a->name);
        ox_buf_puts(b, ": ");
        put_escaped(b, sg->name ? sg->name : "");
        ox_buf_puts(b, "\";\n");
        char *outs = calloc(sg->n_output ? sg->n_output : 1, 32);
        if (!outs) return OX_ENOMEM;
        int rc = emit_graph(d, sg, sc, depth + 1, outs, sg->n_output);
        ox_buf_puts(b, " }\n");
        for (size_t o = 0; rc == OX_OK && o < sg->n_output; o++)
          if (outs[32 * o])
            ox_buf_printf(&d->edges, "  %s -> %s [style=dotted, arrowhead=empty];\n",
                          outs + 32 * o, id);
        free(outs);
        if (rc) return rc;
      }
    }
    for (size_t k = 0; k < n->n_output; k++) {
      vinfo *v = scope_add(sc, n->output[k]);
      if (!v) continue;
      snprintf(v->id, sizeof v->id, "%s", id);
      v->type = value_type(g, n->output[k]);
    }
  }
  return d->out.failed ? OX_ENOMEM : OX_OK;
}

/* A model-local function: its inputs, body and outputs in a cluster. */
static int emit_function(dot *d, const ox_function *f) {
  ox_buf *b = &d->out;
  ox_buf_printf(b, " subgraph cluster_%lu {\n  style=filled; fillcolor=honeydew; label=\"function ",
                d->next_id++);
  if (f->domain && *f->domain) {
    put_escaped(b, f->domain);
    ox_buf_putc(b, '.');
  }
  put_escaped(b, f->name ? f->name : "?");
  ox_buf_puts(b, "\";\n");
  ox_graph g = {.name = f->name, .value_info = f->value_info, .n_value_info = f->n_value_info};
  scope sc = {0};
  ox_map_init(&sc.names);
  for (size_t i = 0; i < f->n_input; i++) {
    vinfo *v = scope_add(&sc, f->input[i]);
    if (!v) continue;
    new_id(d, v->id, sizeof v->id);
    emit_value_node(d, v->id, "ellipse", "lightblue", f->input[i], NULL);
  }
  int rc = emit_nodes(d, f->node, f->n_node, &g, &sc, 0);
  for (size_t i = 0; i < f->n_output && rc == OX_OK; i++) {
    char id[32];
    new_id(d, id, sizeof id);
    emit_value_node(d, id, "ellipse", "lightpink", f->output[i], NULL);
    const vinfo *src = scope_find(&sc, f->output[i]);
    if (src && src->id[0]) emit_edge(d, src->id, id, NULL, NULL);
  }
  scope_free(&sc);
  ox_buf_puts(b, " }\n");
  return d->out.failed ? OX_ENOMEM : rc;
}

static int emit_model(dot *d, const ox_model_proto *mp) {
  const ox_graph *g = mp->graph;
  ox_buf_puts(&d->out, "digraph onnx {\n  rankdir=TB;\n"
                       "  node [fontname=\"Helvetica\", fontsize=10];\n"
                       "  edge [fontname=\"Helvetica\", fontsize=8];\n  label=\"");
  put_escaped(&d->out, g && g->name ? g->name : "");
  ox_buf_puts(&d->out, "\"; labelloc=t;\n");
  int rc = g ? emit_graph(d, g, NULL, 0, NULL, 0) : OX_OK;
  for (size_t i = 0; rc == OX_OK && i < mp->n_functions; i++) rc = emit_function(d, &mp->functions[i]);
  if (d->edges.size) ox_buf_append(&d->out, d->edges.data, d->edges.size);
  ox_buf_puts(&d->out, "}\n");
  return d->out.failed || d->edges.failed ? OX_ENOMEM : rc;
}

/* ------------------------------------------------------------ writing */

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

/* Pipes the DOT text to `dot -T<fmt> -o path` (argv, no shell). */
static int run_graphviz(const ox_buf *text, const char *fmt, const char *path) {
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
  ox_model *m = (ox_model *)ox_cli_load_model(model);
  if (!m) return 2;
  if (d.shapes) { /* best effort: a model inference cannot type is still drawn */
    ox_err e = {0};
    ox_infer_opts io = {0};
    if (ox_infer_model(m, &io, NULL, &e) != OX_OK)
      fprintf(stderr, "onnxc: dot: warning: shapes not inferred: %s\n", e.msg);
  }
  d.mp = m->proto;
  int rc = emit_model(&d, m->proto);
  int status = 0;
  if (rc != OX_OK) {
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
  ox_buf_free(&d.out);
  ox_buf_free(&d.edges);
  ox_model_free(m);
  return status;
}
