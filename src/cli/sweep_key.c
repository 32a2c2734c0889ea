/* sweep_key.c - what `onnxc test --sweep` compares to run a converted model
 * once: two conversions of one case with the same key are the same program
 * for the runtime, so the second gives the outputs the first was checked
 * for.
 *
 * The key is the model as ONNX text without its opset_import line (the
 * conversions of one case to two opsets always differ there), followed by,
 * for every node (subgraphs included), the version of the operator it binds
 * to: the since_version of its schema at the model's opset. Two opsets
 * between which none of the model's operators changed bind every node to
 * the same schema, which is all the runtime reads of the opset, except for
 * operators it may expand through a function body chosen by opset (their
 * raw opset goes into the key instead). Models the walk cannot see through
 * (local functions, GRAPHS attributes) get no key: always run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int64_t opset_of(const onnxc_model *m, const char *domain) {
  if (strcmp(domain, "ai.onnx") == 0) domain = "";
  for (size_t i = 0; i < onnxc_model_opset_count(m); i++) {
    const char *d = onnxc_model_opset_domain(m, i);
    if (strcmp(d, "ai.onnx") == 0) d = "";
    if (strcmp(d, domain) == 0) return onnxc_model_opset_version(m, i);
  }
  return -1;
}

static void add_graph(ox_cli_text *k, const onnxc_model *m, const onnxc_graph *g, int depth) {
  if (!g || depth > 64) {
    k->failed = true;
    return;
  }
  for (size_t i = 0; i < onnxc_graph_node_count(g) && !k->failed; i++) {
    const onnxc_node *n = onnxc_graph_node(g, i);
    const char *dom = onnxc_node_domain(n), *op = onnxc_node_op_type(n);
    int64_t opset = opset_of(m, dom);
    const onnxc_schema *s = onnxc_schema_lookup(dom, op, opset);
    if (s && !onnxc_schema_function_count(s) && !onnxc_schema_has_context_body(s))
      ox_cli_text_printf(k, "%s:%s@%d\n", dom, op, onnxc_schema_since_version(s));
    else
      ox_cli_text_printf(k, "%s:%s opset %lld\n", dom, op, (long long)opset);
    for (size_t a = 0; a < onnxc_node_attr_count(n) && !k->failed; a++) {
      onnxc_attr_type t = onnxc_node_attr_type(n, a);
      if (t == ONNXC_ATTR_GRAPHS) k->failed = true; /* no accessor for graph j */
      if (t == ONNXC_ATTR_GRAPH) add_graph(k, m, onnxc_node_attr_graph(n, a), depth + 1);
    }
  }
}

char *ox_cli_sweep_key(const onnxc_model *m) {
  if (onnxc_model_function_count(m) > 0) return NULL;
  onnxc_error e = {0};
  char *text = NULL;
  if (onnxc_model_print(m, &text, &e) != ONNXC_OK) return NULL;
  ox_cli_text k = {0};
  /* the text line by line, opset_import's left out */
  for (const char *p = text; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
    const char *q = p + strspn(p, " \t");
    if (strncmp(q, "opset_import:", 13) != 0) ox_cli_text_put(&k, p, len);
    p += len;
  }
  free(text);
  ox_cli_text_puts(&k, "--\n");
  add_graph(&k, m, onnxc_model_graph(m), 0);
  if (k.failed || !k.data) {
    ox_cli_text_free(&k);
    return NULL;
  }
  return k.data;
}
