/* cmd_info.c - `onnxc info MODEL`: what a model holds, at a glance. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* an element type's name, "?" when unset or unknown */
static const char *elem_name(int32_t dt) {
  const char *n = dt ? onnxc_dtype_name(dt) : "";
  return *n ? n : "?";
}

static void put_type(ox_cli_text *b, const onnxc_type *t) {
  if (!t) {
    ox_cli_text_puts(b, "?");
    return;
  }
  onnxc_type_kind kind = onnxc_type_kind_of(t);
  switch (kind) {
    case ONNXC_TYPE_TENSOR:
    case ONNXC_TYPE_SPARSE_TENSOR: {
      if (kind == ONNXC_TYPE_SPARSE_TENSOR) ox_cli_text_puts(b, "sparse_tensor(");
      ox_cli_text_puts(b, elem_name(onnxc_type_elem_type(t)));
      int64_t rank = onnxc_type_rank(t);
      if (rank < 0)
        ox_cli_text_puts(b, "[unknown rank]");
      else {
        ox_cli_text_putc(b, '[');
        for (size_t i = 0; i < (size_t)rank; i++) {
          /* as stored: a malformed model's -1 or "" shows as such */
          const char *param = onnxc_type_dim_param(t, i);
          if (i) ox_cli_text_putc(b, ',');
          switch (onnxc_type_dim_kind(t, i)) {
            case ONNXC_DIM_VALUE: ox_cli_text_printf(b, "%" PRId64, onnxc_type_dim(t, i)); break;
            case ONNXC_DIM_PARAM: ox_cli_text_puts(b, param ? param : ""); break;
            default: ox_cli_text_putc(b, '?');
          }
        }
        ox_cli_text_putc(b, ']');
      }
      if (kind == ONNXC_TYPE_SPARSE_TENSOR) ox_cli_text_putc(b, ')');
      break;
    }
    case ONNXC_TYPE_SEQUENCE:
    case ONNXC_TYPE_OPTIONAL:
      ox_cli_text_puts(b, kind == ONNXC_TYPE_SEQUENCE ? "seq(" : "optional(");
      put_type(b, onnxc_type_element(t));
      ox_cli_text_putc(b, ')');
      break;
    case ONNXC_TYPE_MAP:
      ox_cli_text_printf(b, "map(%s, ", elem_name(onnxc_type_map_key(t)));
      put_type(b, onnxc_type_map_value(t));
      ox_cli_text_putc(b, ')');
      break;
    case ONNXC_TYPE_OPAQUE:
      ox_cli_text_printf(b, "opaque(%s, %s)", onnxc_type_opaque_domain(t),
                         onnxc_type_opaque_name(t));
      break;
    default:
      ox_cli_text_puts(b, "?");
  }
  const char *den = onnxc_type_denotation(t);
  if (den) ox_cli_text_printf(b, " (%s)", den);
}

static void put_values(ox_cli_text *b, const char *title, const onnxc_graph *g,
                       onnxc_graph_values which) {
  size_t n = onnxc_graph_value_count(g, which);
  ox_cli_text_printf(b, "%s: %zu\n", title, n);
  for (size_t i = 0; i < n; i++) {
    ox_cli_text_printf(b, "  %s: ", onnxc_graph_value_name(g, which, i));
    put_type(b, onnxc_graph_value_type(g, which, i));
    ox_cli_text_putc(b, '\n');
  }
}

/* ---- counting ---- */
typedef struct op_count {
  char *key; /* "domain\top", malloc'd */
  size_t n;
} op_count;

typedef struct stats {
  ox_cli_names ops; /* key -> index in counts */
  op_count *counts;
  size_t n_counts, cap;
  size_t nodes, sub_nodes;
  size_t n_init, n_ext;
  uint64_t bytes_inline, bytes_ext;
  bool oom;
} stats;

static void count_tensor(stats *s, const onnxc_tensor_proto *t) {
  if (!t) return;
  s->n_init++;
  if (onnxc_tensor_proto_is_external(t)) {
    s->n_ext++;
    s->bytes_ext += onnxc_tensor_proto_stored_bytes(t);
  } else
    s->bytes_inline += onnxc_tensor_proto_stored_bytes(t);
}

static void count_graph(stats *s, const onnxc_graph *g, bool sub, int depth);

/* one more node of (domain, op) */
static void count_op(stats *s, const char *dom, const char *op) {
  size_t len = strlen(dom) + strlen(op) + 2;
  char *key = malloc(len);
  if (!key) {
    s->oom = true;
    return;
  }
  snprintf(key, len, "%s\t%s", dom, op);
  size_t idx;
  if (ox_cli_names_get(&s->ops, key, &idx)) {
    s->counts[idx].n++;
    free(key);
    return;
  }
  if (s->n_counts == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    op_count *nc = realloc(s->counts, cap * sizeof *nc);
    if (!nc) {
      free(key);
      s->oom = true;
      return;
    }
    s->counts = nc;
    s->cap = cap;
  }
  s->counts[s->n_counts] = (op_count){key, 1};
  if (!ox_cli_names_put(&s->ops, key, s->n_counts++)) s->oom = true;
}

static void count_node(stats *s, const onnxc_node *nd, bool sub, int depth) {
  if (sub)
    s->sub_nodes++;
  else
    s->nodes++;
  const char *dom = onnxc_node_domain(nd);
  count_op(s, *dom ? dom : "ai.onnx", onnxc_node_op_type(nd));
  for (size_t j = 0; j < onnxc_node_attr_count(nd); j++)
    for (size_t k = 0; k < onnxc_node_attr_graph_count(nd, j); k++)
      count_graph(s, onnxc_node_attr_graph_at(nd, j, k), true, depth + 1);
}

static void count_graph(stats *s, const onnxc_graph *g, bool sub, int depth) {
  if (depth > 64) return;
  for (size_t i = 0; i < onnxc_graph_initializer_count(g); i++)
    count_tensor(s, onnxc_graph_initializer(g, i));
  for (size_t i = 0; i < onnxc_graph_sparse_initializer_count(g); i++) {
    count_tensor(s, onnxc_graph_sparse_values(g, i));
    count_tensor(s, onnxc_graph_sparse_indices(g, i));
  }
  for (size_t i = 0; i < onnxc_graph_node_count(g) && !s->oom; i++)
    count_node(s, onnxc_graph_node(g, i), sub, depth);
}

static int cmp_count(const void *a, const void *b) {
  const op_count *x = a, *y = b;
  if (x->n != y->n) return x->n < y->n ? 1 : -1;
  return strcmp(x->key, y->key);
}

static void put_metadata(ox_cli_text *b, const onnxc_model *m) {
  size_t n = onnxc_model_metadata_count(m);
  if (!n) return;
  ox_cli_text_puts(b, "metadata:\n");
  for (size_t i = 0; i < n; i++)
    ox_cli_text_printf(b, "  %s = %s\n", onnxc_model_metadata_key(m, i),
                       onnxc_model_metadata_value(m, i));
}

static void put_training(ox_cli_text *b, const onnxc_model *m) {
  size_t n = onnxc_model_training_info_count(m);
  if (!n) return;
  ox_cli_text_printf(b, "training_info: %zu\n", n);
  for (size_t i = 0; i < n; i++)
    ox_cli_text_printf(
        b,
        "  [%zu] initialization: %zu nodes, algorithm: %zu nodes, "
        "%zu initialization bindings, %zu update bindings\n",
        i, onnxc_graph_node_count(onnxc_model_training_initialization(m, i)),
        onnxc_graph_node_count(onnxc_model_training_algorithm(m, i)),
        onnxc_model_training_binding_count(m, i, ONNXC_TRAINING_INITIALIZATION_BINDING),
        onnxc_model_training_binding_count(m, i, ONNXC_TRAINING_UPDATE_BINDING));
}

/* Fields the model leaves out are not printed; present ones are, even when
 * empty or 0 (onnxc_model_has_field). */
static void describe(ox_cli_text *b, const char *path, const onnxc_model *m, stats *s) {
  ox_cli_text_printf(b, "model: %s\n", path);
  if (onnxc_model_has_field(m, ONNXC_MODEL_IR_VERSION))
    ox_cli_text_printf(b, "ir_version: %" PRId64 "\n", onnxc_model_ir_version(m));
  ox_cli_text_puts(b, "opset_import:");
  for (size_t i = 0; i < onnxc_model_opset_count(m); i++) {
    const char *dom = onnxc_model_opset_domain(m, i);
    ox_cli_text_printf(b, "%s %s %" PRId64, i ? "," : "", *dom ? dom : "ai.onnx",
                       onnxc_model_opset_version(m, i));
  }
  ox_cli_text_putc(b, '\n');
  if (onnxc_model_has_field(m, ONNXC_MODEL_PRODUCER_NAME) ||
      onnxc_model_has_field(m, ONNXC_MODEL_PRODUCER_VERSION))
    ox_cli_text_printf(b, "producer: %s %s\n", onnxc_model_producer_name(m),
                       onnxc_model_producer_version(m));
  if (onnxc_model_has_field(m, ONNXC_MODEL_DOMAIN))
    ox_cli_text_printf(b, "domain: %s\n", onnxc_model_domain(m));
  if (onnxc_model_has_field(m, ONNXC_MODEL_MODEL_VERSION))
    ox_cli_text_printf(b, "model_version: %" PRId64 "\n", onnxc_model_version(m));
  if (*onnxc_model_doc_string(m)) ox_cli_text_printf(b, "doc_string: %s\n", onnxc_model_doc_string(m));
  put_metadata(b, m);
  const onnxc_graph *g = onnxc_model_graph(m);
  if (g) {
    if (onnxc_model_has_field(m, ONNXC_MODEL_GRAPH_NAME))
      ox_cli_text_printf(b, "graph: %s\n", onnxc_graph_name(g));
    put_values(b, "inputs", g, ONNXC_GRAPH_INPUTS);
    put_values(b, "outputs", g, ONNXC_GRAPH_OUTPUTS);
    count_graph(s, g, false, 0);
  } else
    ox_cli_text_puts(b, "graph: none\n");
  size_t n_fn = onnxc_model_function_count(m);
  for (size_t i = 0; i < n_fn; i++) {
    const onnxc_function *f = onnxc_model_function(m, i);
    for (size_t k = 0; k < onnxc_function_node_count(f) && !s->oom; k++)
      count_node(s, onnxc_function_node(f, k), true, 1);
  }
  ox_cli_text_printf(b, "nodes: %zu", s->nodes);
  if (s->sub_nodes) ox_cli_text_printf(b, " (+ %zu in subgraphs and functions)", s->sub_nodes);
  ox_cli_text_putc(b, '\n');
  if (s->n_counts) qsort(s->counts, s->n_counts, sizeof *s->counts, cmp_count);
  for (size_t i = 0; i < s->n_counts; i++) {
    const char *tab = strchr(s->counts[i].key, '\t');
    ox_cli_text_printf(b, "  %-12.*s %-28s %zu\n", (int)(tab - s->counts[i].key),
                       s->counts[i].key, tab + 1, s->counts[i].n);
  }
  ox_cli_text_printf(b,
                     "initializers: %zu (inline: %zu tensors, %" PRIu64
                     " bytes; external: %zu tensors, "
                     "%" PRIu64 " bytes)\n",
                     s->n_init, s->n_init - s->n_ext, s->bytes_inline, s->n_ext, s->bytes_ext);
  ox_cli_text_printf(b, "functions: %zu\n", n_fn);
  for (size_t i = 0; i < n_fn; i++) {
    const onnxc_function *f = onnxc_model_function(m, i);
    const char *dom = onnxc_function_domain(f);
    ox_cli_text_printf(b, "  %s%s%s: %zu inputs, %zu outputs, %zu nodes\n", dom, *dom ? "." : "",
                       onnxc_function_name(f), onnxc_function_input_count(f),
                       onnxc_function_output_count(f), onnxc_function_node_count(f));
  }
  put_training(b, m);
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
  onnxc_model *m = ox_cli_load_model(path);
  if (!m) return 1;
  stats s = {0};
  ox_cli_text b = {0};
  describe(&b, path, m, &s);
  int rc = 0;
  if (s.oom || b.failed) {
    fprintf(stderr, "onnxc: out of memory\n");
    rc = 1;
  } else
    fwrite(b.data, 1, b.size, stdout);
  ox_cli_text_free(&b);
  for (size_t i = 0; i < s.n_counts; i++) free(s.counts[i].key);
  free(s.counts);
  ox_cli_names_free(&s.ops);
  onnxc_model_free(m);
  return rc;
}
