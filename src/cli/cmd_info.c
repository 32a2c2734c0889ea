/* cmd_info.c - `onnxc info MODEL`: what a model holds, at a glance. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/ir.h"
#include "cli.h"

static void help(FILE *f) {
  fprintf(f,
          "usage: onnxc info MODEL\n"
          "\n"
          "Prints the IR version, opset imports, producer, domain, model version, doc\n"
          "string, metadata, graph inputs and outputs with types and shapes, the number of\n"
          "nodes per (domain, op) (subgraphs included), initializers (count and bytes,\n"
          "inline and external), functions and training info of MODEL (binary or text).\n"
          "\n"
          "options:\n"
          "  -h, --help   show this help\n");
}

static void put_type(ox_buf *b, const ox_type *t) {
  if (!t) {
    ox_buf_puts(b, "?");
    return;
  }
  const ox_dtype_info *d = ox_dtype_get(t->elem_type);
  const char *en = t->has_elem_type && d ? d->name : "?";
  switch (t->kind) {
    case OX_TYPE_TENSOR:
    case OX_TYPE_SPARSE_TENSOR:
      if (t->kind == OX_TYPE_SPARSE_TENSOR) ox_buf_puts(b, "sparse_tensor(");
      ox_buf_puts(b, en);
      if (!t->shape)
        ox_buf_puts(b, "[unknown rank]");
      else {
        ox_buf_putc(b, '[');
        for (size_t i = 0; i < t->shape->n_dim; i++) {
          const ox_dim *dm = &t->shape->dim[i];
          if (i) ox_buf_putc(b, ',');
          if (dm->has_value)
            ox_buf_printf(b, "%" PRId64, dm->value);
          else if (dm->param)
            ox_buf_puts(b, dm->param);
          else
            ox_buf_putc(b, '?');
        }
        ox_buf_putc(b, ']');
      }
      if (t->kind == OX_TYPE_SPARSE_TENSOR) ox_buf_putc(b, ')');
      break;
    case OX_TYPE_SEQUENCE:
    case OX_TYPE_OPTIONAL:
      ox_buf_puts(b, t->kind == OX_TYPE_SEQUENCE ? "seq(" : "optional(");
      put_type(b, t->elem);
      ox_buf_putc(b, ')');
      break;
    case OX_TYPE_MAP:
      ox_buf_printf(b, "map(%s, ", en);
      put_type(b, t->elem);
      ox_buf_putc(b, ')');
      break;
    case OX_TYPE_OPAQUE:
      ox_buf_printf(b, "opaque(%s, %s)", t->opaque_domain ? t->opaque_domain : "",
                    t->opaque_name ? t->opaque_name : "");
      break;
    default:
      ox_buf_puts(b, "?");
  }
  if (t->denotation) ox_buf_printf(b, " (%s)", t->denotation);
}

static void put_values(ox_buf *b, const char *title, const ox_value_info *v, size_t n) {
  ox_buf_printf(b, "%s: %zu\n", title, n);
  for (size_t i = 0; i < n; i++) {
    ox_buf_printf(b, "  %s: ", v[i].name ? v[i].name : "");
    put_type(b, v[i].type);
    ox_buf_putc(b, '\n');
  }
}

/* ---- counting ---- */
typedef struct op_count {
  const char *key; /* "domain\top" */
  size_t n;
} op_count;

typedef struct stats {
  ox_arena *a;
  ox_map ops; /* key -> index in counts */
  op_count *counts;
  size_t n_counts;
  size_t nodes, sub_nodes;
  size_t n_init, n_ext;
  uint64_t bytes_inline, bytes_ext;
  bool oom;
} stats;

static uint64_t inline_bytes(const ox_tensor *t) {
  uint64_t n = t->raw_data.size;
  n += (uint64_t)t->n_float_data * 4 + (uint64_t)t->n_int32_data * 4 +
       (uint64_t)t->n_int64_data * 8 + (uint64_t)t->n_double_data * 8 +
       (uint64_t)t->n_uint64_data * 8;
  for (size_t i = 0; i < t->n_string_data; i++) n += t->string_data[i].size;
  return n;
}

static void count_tensor(stats *s, const ox_tensor *t) {
  s->n_init++;
  if (t->has_data_location && t->data_location == 1) {
    s->n_ext++;
    uint64_t len = t->external.size;
    if (!t->external.data)
      for (size_t i = 0; i < t->n_external_data; i++)
        if (t->external_data[i].key && strcmp(t->external_data[i].key, "length") == 0)
          len = strtoull(t->external_data[i].value ? t->external_data[i].value : "0", NULL, 10);
    s->bytes_ext += len;
  } else
    s->bytes_inline += inline_bytes(t);
}

static void count_graph(stats *s, const ox_graph *g, bool sub, int depth);

static void count_nodes(stats *s, const ox_node *nodes, size_t n, bool sub, int depth) {
  for (size_t i = 0; i < n; i++) {
    const ox_node *nd = &nodes[i];
    if (sub)
      s->sub_nodes++;
    else
      s->nodes++;
    const char *dom = nd->domain && *nd->domain ? nd->domain : "ai.onnx";
    char *key = ox_arena_printf(s->a, "%s\t%s", dom, nd->op_type ? nd->op_type : "");
    uintptr_t idx;
    if (!key) {
      s->oom = true;
      return;
    }
    if (ox_map_get(&s->ops, key, &idx))
      s->counts[idx].n++;
    else {
      op_count *c = OX_VEC_PUSH(s->a, s->counts, s->n_counts);
      if (!c || ox_map_put(&s->ops, key, s->n_counts - 1)) {
        s->oom = true;
        return;
      }
      c->key = key;
      c->n = 1;
    }
    for (size_t j = 0; j < nd->n_attribute; j++) {
      const ox_attr *at = &nd->attribute[j];
      if (at->g) count_graph(s, at->g, true, depth + 1);
      for (size_t k = 0; k < at->n_graphs; k++) count_graph(s, &at->graphs[k], true, depth + 1);
    }
  }
}

static void count_graph(stats *s, const ox_graph *g, bool sub, int depth) {
  if (depth > 64) return;
  for (size_t i = 0; i < g->n_initializer; i++) count_tensor(s, &g->initializer[i]);
  for (size_t i = 0; i < g->n_sparse_initializer; i++) {
    const ox_sparse_tensor *sp = &g->sparse_initializer[i];
    if (sp->values) count_tensor(s, sp->values);
    if (sp->indices) count_tensor(s, sp->indices);
  }
  count_nodes(s, g->node, g->n_node, sub, depth);
}

static int cmp_count(const void *a, const void *b) {
  const op_count *x = a, *y = b;
  if (x->n != y->n) return x->n < y->n ? 1 : -1;
  return strcmp(x->key, y->key);
}

static void put_str_pairs(ox_buf *b, const char *title, const ox_str_pair *p, size_t n) {
  if (!n) return;
  ox_buf_printf(b, "%s:\n", title);
  for (size_t i = 0; i < n; i++)
    ox_buf_printf(b, "  %s = %s\n", p[i].key ? p[i].key : "", p[i].value ? p[i].value : "");
}

static void describe(ox_buf *b, const char *path, const ox_model *model, stats *s) {
  const ox_model_proto *m = model->proto;
  ox_buf_printf(b, "model: %s\n", path);
  if (m->has_ir_version) ox_buf_printf(b, "ir_version: %" PRId64 "\n", m->ir_version);
  ox_buf_puts(b, "opset_import:");
  for (size_t i = 0; i < m->n_opset_import; i++)
    ox_buf_printf(b, "%s %s %" PRId64, i ? "," : "",
                  m->opset_import[i].domain && *m->opset_import[i].domain
                      ? m->opset_import[i].domain
                      : "ai.onnx",
                  m->opset_import[i].version);
  ox_buf_putc(b, '\n');
  if (m->producer_name || m->producer_version)
    ox_buf_printf(b, "producer: %s %s\n", m->producer_name ? m->producer_name : "",
                  m->producer_version ? m->producer_version : "");
  if (m->domain) ox_buf_printf(b, "domain: %s\n", m->domain);
  if (m->has_model_version) ox_buf_printf(b, "model_version: %" PRId64 "\n", m->model_version);
  if (m->doc_string && *m->doc_string) ox_buf_printf(b, "doc_string: %s\n", m->doc_string);
  put_str_pairs(b, "metadata", m->metadata_props, m->n_metadata_props);
  const ox_graph *g = m->graph;
  if (g) {
    if (g->name) ox_buf_printf(b, "graph: %s\n", g->name);
    put_values(b, "inputs", g->input, g->n_input);
    put_values(b, "outputs", g->output, g->n_output);
    count_graph(s, g, false, 0);
  } else
    ox_buf_puts(b, "graph: none\n");
  for (size_t i = 0; i < m->n_functions; i++)
    count_nodes(s, m->functions[i].node, m->functions[i].n_node, true, 1);
  ox_buf_printf(b, "nodes: %zu", s->nodes);
  if (s->sub_nodes) ox_buf_printf(b, " (+ %zu in subgraphs and functions)", s->sub_nodes);
  ox_buf_putc(b, '\n');
  if (s->n_counts) qsort(s->counts, s->n_counts, sizeof *s->counts, cmp_count);
  for (size_t i = 0; i < s->n_counts; i++) {
    const char *tab = strchr(s->counts[i].key, '\t');
    ox_buf_printf(b, "  %-12.*s %-28s %zu\n", (int)(tab - s->counts[i].key), s->counts[i].key,
                  tab + 1, s->counts[i].n);
  }
  ox_buf_printf(b,
                "initializers: %zu (inline: %zu tensors, %" PRIu64
                " bytes; external: %zu tensors, "
                "%" PRIu64 " bytes)\n",
                s->n_init, s->n_init - s->n_ext, s->bytes_inline, s->n_ext, s->bytes_ext);
  ox_buf_printf(b, "functions: %zu\n", m->n_functions);
  for (size_t i = 0; i < m->n_functions; i++) {
    const ox_function *f = &m->functions[i];
    ox_buf_printf(b, "  %s%s%s: %zu inputs, %zu outputs, %zu nodes\n",
                  f->domain && *f->domain ? f->domain : "", f->domain && *f->domain ? "." : "",
                  f->name ? f->name : "", f->n_input, f->n_output, f->n_node);
  }
  if (m->n_training_info) {
    ox_buf_printf(b, "training_info: %zu\n", m->n_training_info);
    for (size_t i = 0; i < m->n_training_info; i++) {
      const ox_training_info *t = &m->training_info[i];
      ox_buf_printf(b,
                    "  [%zu] initialization: %zu nodes, algorithm: %zu nodes, "
                    "%zu initialization bindings, %zu update bindings\n",
                    i, t->initialization ? t->initialization->n_node : 0,
                    t->algorithm ? t->algorithm->n_node : 0, t->n_initialization_binding,
                    t->n_update_binding);
    }
  }
}

int ox_cmd_info(int argc, char **argv) {
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (ox_cli_is_help(argv[i])) {
      help(stdout);
      return 0;
    }
    if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "onnxc info: unknown option '%s' (see onnxc info --help)\n", argv[i]);
      return 2;
    }
    if (path) {
      fprintf(stderr, "onnxc info: one model at a time\n");
      return 2;
    }
    path = argv[i];
  }
  if (!path) {
    help(stderr);
    return 2;
  }
  ox_model *m = (ox_model *)ox_cli_load_model(path);
  if (!m) return 1;
  stats s = {.a = ox_arena_new()};
  ox_map_init(&s.ops);
  ox_buf b = {0};
  if (s.a) describe(&b, path, m, &s);
  int rc = 0;
  if (!s.a || s.oom || b.failed) {
    fprintf(stderr, "onnxc: out of memory\n");
    rc = 1;
  } else
    fwrite(b.data, 1, b.size, stdout);
  ox_buf_free(&b);
  ox_map_free(&s.ops);
  ox_arena_free(s.a);
  ox_model_free(m);
  return rc;
}
