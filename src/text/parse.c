/* parse.c - parser of the ONNX textual syntax (Syntax.md, as implemented by
 * the reference, plus the extensions listed in docs/text-format.md).
 *
 * This file holds graphs, nodes, functions, models and the entry points;
 * the lexical layer is in lex.c, types, headers, tensors and value infos in
 * parse_value.c, attributes in parse_attr.c (shared declarations in
 * parse_int.h). Errors longjmp back to the entry point here: every allocation
 * is in the model's arena or in the parser's scratch buffer, which the entry
 * point frees, so nothing leaks on the error path. */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_int.h"

/* ---- graphs and nodes ---- */

/* id-list with the reference's rules for empty operands */
static void parse_operands(tp_parser *p, char ***arr, size_t *n, char end) {
  for (;;) {
    int c = tp_peek(p);
    if (c == ',') {
      char *e = ox_arena_strdup(p->a, "");
      CHK(e);
      tp_push_str(p, arr, n, e);
      p->pos++;
      continue;
    }
    if (c == (unsigned char)end) break;
    if (!tp_at_qid(p)) {
      char w[64];
      snprintf(w, sizeof w, "a value name or '%c'", end);
      tp_fail_expected(p, w);
    }
    tp_push_str(p, arr, n, tp_take_qid(p, "a value name"));
    if (!tp_accept(p, ',')) break;
  }
}

static void parse_attr_list(tp_parser *p, ox_attr **arr, size_t *n) {
  tp_expect(p, '<', "to open the attribute list");
  if (tp_accept(p, '>')) return;
  do {
    ox_attr *at = OX_VEC_PUSH(p->a, *arr, *n);
    CHK(at);
    bool hv;
    tp_parse_attr(p, at, false, &hv);
  } while (tp_accept(p, ','));
  tp_expect(p, '>', "after the attribute list");
}

static void parse_node(tp_parser *p, ox_node *nd) {
  if (tp_at_header(p)) {
    tp_hdr h;
    tp_parse_header(p, &h);
    tp_header_allow(p, &h, TP_H_DOC | TP_H_META, "a node");
    if (h.has & TP_H_DOC) nd->doc_string = h.doc;
    if (h.has & TP_H_META) nd->metadata_props = h.meta, nd->n_metadata_props = h.n_meta;
  }
  if (tp_accept(p, '[')) {
    if (tp_accept(p, ']')) {
      nd->name = ox_arena_strdup(p->a, "");
      CHK(nd->name);
    } else {
      nd->name = tp_take_qid(p, "a node name");
      tp_expect(p, ']', "after the node name");
    }
  }
  parse_operands(p, &nd->output, &nd->n_output, '=');
  tp_expect(p, '=', "after the node outputs");
  /* [domain '.'] op: segments separated by dots, each an identifier or a
   * quoted string; a leading '.' means the empty domain */
  size_t start = (tp_ws(p), p->pos);
  char *dom = NULL, *last = NULL;
  size_t ns = 0;
  bool lead_dot = tp_accept(p, '.');
  do {
    if (++ns > 64) tp_fail_at(p, start, "operator name with too many dots");
    char *seg = tp_take_qid(p, "an operator name");
    if (last) {
      dom = dom ? ox_arena_printf(p->a, "%s.%s", dom, last) : last;
      CHK(dom);
    }
    last = seg;
  } while (tp_accept(p, '.'));
  nd->op_type = last;
  if (!dom && lead_dot) CHK(dom = ox_arena_strdup(p->a, ""));
  nd->domain = dom;
  if (tp_accept(p, ':')) nd->overload = tp_take_qid(p, "an overload name");
  bool attrs = false;
  if (tp_peek(p) == '<') {
    parse_attr_list(p, &nd->attribute, &nd->n_attribute);
    attrs = true;
  }
  tp_expect(p, '(', attrs ? "after the attribute list" : "to open the input list");
  parse_operands(p, &nd->input, &nd->n_input, ')');
  tp_expect(p, ')', "after the input list");
  if (!attrs && tp_peek(p) == '<' && !tp_at_header(p))
    parse_attr_list(p, &nd->attribute, &nd->n_attribute);
}

static void parse_node_list(tp_parser *p, ox_node **arr, size_t *n) {
  tp_expect(p, '{', "to open the node list");
  while (tp_peek(p) != '}') {
    if (tp_peek(p) < 0) tp_fail_expected(p, "'}' to close the node list");
    ox_node *nd = OX_VEC_PUSH(p->a, *arr, *n);
    CHK(nd);
    parse_node(p, nd);
  }
  p->pos++;
}

/* an entry of an input list or of the `<...>` list after the outputs */
static void parse_graph_entry(tp_parser *p, ox_graph *g, bool is_input) {
  ox_value_info v = {0};
  tp_hdr h;
  tp_ws(p);
  size_t at = p->pos;
  tp_parse_value_info(p, &v, &h);
  if (tp_accept(p, '=')) {
    ox_tensor *t = OX_VEC_PUSH(p->a, g->initializer, g->n_initializer);
    CHK(t);
    if (!v.type) tp_fail_at(p, at, "an initializer needs a type");
    tp_tensor_from_type(p, t, v.type, at);
    t->name = v.name;
    tp_hdr th = h;
    th.has &= ~(unsigned)TP_H_DEN; /* a denotation belongs to the value's type */
    tp_apply_tensor_header(p, &th, t);
    if (!tp_parse_tensor_body(p, t, &h)) tp_fail_expected(p, "'{' or '[' for the initializer data");
    if (!is_input) return;
    h.has &= TP_H_DOC | TP_H_META | TP_H_DEN; /* the rest was for the tensor */
  }
  if (is_input) {
    tp_apply_vi_header(p, &h, &v);
    ox_value_info *d = OX_VEC_PUSH(p->a, g->input, g->n_input);
    CHK(d);
    *d = v;
  } else {
    tp_apply_vi_header(p, &h, &v);
    ox_value_info *d = OX_VEC_PUSH(p->a, g->value_info, g->n_value_info);
    CHK(d);
    *d = v;
  }
}

ox_graph *tp_parse_graph(tp_parser *p, ox_graph *g) {
  tp_enter(p);
  if (tp_peek(p) == '<') {
    tp_hdr h;
    tp_parse_header(p, &h);
    tp_header_allow(p, &h, TP_H_DOC | TP_H_META | TP_H_SPARSE | TP_H_QA, "a graph");
    if (h.has & TP_H_QA) g->quantization_annotation = h.qa, g->n_quantization_annotation = h.n_qa;
    if (h.has & TP_H_DOC) g->doc_string = h.doc;
    if (h.has & TP_H_META) g->metadata_props = h.meta, g->n_metadata_props = h.n_meta;
    if (h.has & TP_H_SPARSE) g->sparse_initializer = h.sparse, g->n_sparse_initializer = h.n_sparse;
  }
  g->name = tp_take_qid(p, "a graph name");
  if (tp_accept(p, '(')) {
    if (!tp_accept(p, ')')) {
      do parse_graph_entry(p, g, true);
      while (tp_accept(p, ','));
      tp_expect(p, ')', "after the input list");
    }
  }
  if (!tp_accept_arrow(p)) tp_fail_expected(p, "'=>' after the graph inputs");
  tp_expect(p, '(', "to open the output list");
  if (!tp_accept(p, ')')) {
    do {
      ox_value_info *v = OX_VEC_PUSH(p->a, g->output, g->n_output);
      CHK(v);
      tp_hdr h;
      tp_parse_value_info(p, v, &h);
      tp_apply_vi_header(p, &h, v);
    } while (tp_accept(p, ','));
    tp_expect(p, ')', "after the output list");
  }
  if (tp_accept(p, '<')) {
    if (!tp_accept(p, '>')) {
      do parse_graph_entry(p, g, false);
      while (tp_accept(p, ','));
      tp_expect(p, '>', "after the initializers and value infos");
    }
  }
  parse_node_list(p, &g->node, &g->n_node);
  p->depth--;
  return g;
}

/* ---- functions and models ---- */
static void parse_opsets(tp_parser *p, ox_opset **arr, size_t *n) {
  tp_expect(p, '[', "to open the opset list");
  if (tp_accept(p, ']')) return;
  do {
    ox_opset *o = OX_VEC_PUSH(p->a, *arr, *n);
    CHK(o);
    if (tp_at_number(p)) { /* a version alone: the domain field is absent */
      o->version = tp_lit_i64(p, tp_take_number(p, "an opset version"));
      o->has_version = true;
      continue;
    }
    o->domain = tp_take_name_str(p);
    tp_expect(p, ':', "after the opset domain");
    o->version = tp_lit_i64(p, tp_take_number(p, "an opset version"));
    o->has_version = true;
  } while (tp_accept(p, ','));
  tp_expect(p, ']', "after the opset list");
}

static void parse_function(tp_parser *p, ox_function *f) {
  if (tp_accept(p, '<')) {
    do {
      size_t kat = (tp_ws(p), p->pos);
      const char *k;
      size_t kn = tp_peek_id(p, &k);
      if (!kn) tp_fail_expected(p, "a function header key");
      p->pos += kn;
      tp_expect(p, ':', "after the key");
      if (tp_word_eq(k, kn, "domain"))
        f->domain = tp_take_name_str(p);
      else if (tp_word_eq(k, kn, "overload"))
        f->overload = tp_take_name_str(p);
      else if (tp_word_eq(k, kn, "doc_string"))
        f->doc_string = tp_take_name_str(p);
      else if (tp_word_eq(k, kn, "opset_import"))
        parse_opsets(p, &f->opset_import, &f->n_opset_import);
      else if (tp_word_eq(k, kn, "metadata_props"))
        tp_parse_str_pairs(p, &f->metadata_props, &f->n_metadata_props, true);
      else
        tp_fail_at(p, kat, "unknown function header key '%.*s'", (int)kn, k);
    } while (tp_accept(p, ','));
    tp_expect(p, '>', "after the function header");
  }
  f->name = tp_take_qid(p, "a function name");
  if (tp_accept(p, '<')) {
    do {
      ox_attr a = {0};
      bool hv;
      tp_parse_attr(p, &a, true, &hv);
      if (hv) {
        ox_attr *d = OX_VEC_PUSH(p->a, f->attribute_proto, f->n_attribute_proto);
        CHK(d);
        *d = a;
      } else {
        tp_push_str(p, &f->attribute, &f->n_attribute, a.name);
      }
    } while (tp_accept(p, ','));
    tp_expect(p, '>', "after the function attributes");
  }
  for (int io = 0; io < 2; io++) {
    tp_expect(p, '(', io ? "to open the function outputs" : "to open the function inputs");
    if (!tp_accept(p, ')')) {
      do {
        ox_value_info v = {0};
        tp_hdr h;
        tp_parse_value_info(p, &v, &h);
        tp_apply_vi_header(p, &h, &v);
        tp_push_str(p, io ? &f->output : &f->input, io ? &f->n_output : &f->n_input, v.name);
        if (v.type) {
          ox_value_info *d = OX_VEC_PUSH(p->a, f->value_info, f->n_value_info);
          CHK(d);
          *d = v;
        }
      } while (tp_accept(p, ','));
      tp_expect(p, ')', io ? "after the function outputs" : "after the function inputs");
    }
    if (!io && !tp_accept_arrow(p)) tp_fail_expected(p, "'=>' after the function inputs");
  }
  if (tp_accept(p, '<')) {
    if (!tp_accept(p, '>')) {
      do {
        ox_value_info *v = OX_VEC_PUSH(p->a, f->value_info, f->n_value_info);
        CHK(v);
        tp_hdr h;
        tp_parse_value_info(p, v, &h);
        tp_apply_vi_header(p, &h, v);
      } while (tp_accept(p, ','));
      tp_expect(p, '>', "after the function value infos");
    }
  }
  parse_node_list(p, &f->node, &f->n_node);
}

/* `[{name: "n", num_devices: 2, device: ["a", "b"]}, ...]` */
static void parse_configurations(tp_parser *p, ox_model_proto *m) {
  tp_expect(p, '[', "to open the configurations");
  if (tp_accept(p, ']')) return;
  do {
    ox_device_config *c = OX_VEC_PUSH(p->a, m->configuration, m->n_configuration);
    CHK(c);
    tp_expect(p, '{', "to open a configuration");
    if (!tp_accept(p, '}')) {
      do {
        if (tp_accept_word(p, "name")) {
          tp_expect(p, ':', "after name");
          c->name = tp_take_name_str(p);
        } else if (tp_accept_word(p, "num_devices")) {
          tp_expect(p, ':', "after num_devices");
          size_t at = (tp_ws(p), p->pos);
          int64_t v = tp_lit_i64(p, tp_take_number(p, "a number of devices"));
          if (v < INT32_MIN || v > INT32_MAX) tp_fail_at(p, at, "num_devices out of range");
          c->num_devices = (int32_t)v, c->has_num_devices = true;
        } else if (tp_accept_word(p, "device")) {
          tp_expect(p, ':', "after device");
          tp_expect(p, '[', "to open the device list");
          if (!tp_accept(p, ']')) {
            do tp_push_str(p, &c->device, &c->n_device, tp_take_name_str(p));
            while (tp_accept(p, ','));
            tp_expect(p, ']', "after the device list");
          }
        } else {
          tp_fail_expected(p, "name, num_devices or device");
        }
      } while (tp_accept(p, ','));
      tp_expect(p, '}', "after the configuration");
    }
  } while (tp_accept(p, ','));
  tp_expect(p, ']', "after the configurations");
}

/* `training { initialization: GRAPH, algorithm: GRAPH,
 *             initialization_binding: [...], update_binding: [...] }` */
static void parse_training(tp_parser *p, ox_training_info *t) {
  tp_expect(p, '{', "to open the training info");
  if (tp_accept(p, '}')) return;
  do {
    size_t kat = (tp_ws(p), p->pos);
    const char *k;
    size_t kn = tp_peek_id(p, &k);
    if (!kn) tp_fail_expected(p, "a training info key");
    p->pos += kn;
    tp_expect(p, ':', "after the key");
    if (tp_word_eq(k, kn, "initialization") || tp_word_eq(k, kn, "algorithm")) {
      ox_graph *g = ox_arena_alloc(p->a, sizeof *g);
      CHK(g);
      tp_parse_graph(p, g);
      if (k[0] == 'i')
        t->initialization = g;
      else
        t->algorithm = g;
    } else if (tp_word_eq(k, kn, "initialization_binding")) {
      tp_parse_str_pairs(p, &t->initialization_binding, &t->n_initialization_binding, true);
    } else if (tp_word_eq(k, kn, "update_binding")) {
      tp_parse_str_pairs(p, &t->update_binding, &t->n_update_binding, true);
    } else {
      tp_fail_at(p, kat, "unknown training info key '%.*s'", (int)kn, k);
    }
  } while (tp_accept(p, ','));
  tp_expect(p, '}', "after the training info");
}

static bool at_training(tp_parser *p) {
  const char *w;
  size_t wn = tp_peek_id(p, &w);
  if (!tp_word_eq(w, wn, "training")) return false;
  size_t save = p->pos;
  p->pos += wn;
  bool r = tp_peek(p) == '{';
  p->pos = save;
  return r;
}

static void parse_model_header(tp_parser *p, ox_model_proto *m) {
  tp_expect(p, '<', "to open the model header");
  if (tp_accept(p, '>')) return;
  do {
    size_t kat = (tp_ws(p), p->pos);
    const char *k;
    size_t kn = tp_peek_id(p, &k);
    if (!kn) tp_fail_expected(p, "a model header key");
    p->pos += kn;
    tp_expect(p, ':', "after the key");
    if (tp_word_eq(k, kn, "ir_version")) {
      m->ir_version = tp_lit_i64(p, tp_take_number(p, "an IR version"));
      m->has_ir_version = true;
    } else if (tp_word_eq(k, kn, "model_version")) {
      m->model_version = tp_lit_i64(p, tp_take_number(p, "a model version"));
      m->has_model_version = true;
    } else if (tp_word_eq(k, kn, "opset_import")) {
      parse_opsets(p, &m->opset_import, &m->n_opset_import);
    } else if (tp_word_eq(k, kn, "producer_name")) {
      m->producer_name = tp_take_name_str(p);
    } else if (tp_word_eq(k, kn, "producer_version")) {
      m->producer_version = tp_take_name_str(p);
    } else if (tp_word_eq(k, kn, "domain")) {
      m->domain = tp_take_name_str(p);
    } else if (tp_word_eq(k, kn, "doc_string")) {
      m->doc_string = tp_take_name_str(p);
    } else if (tp_word_eq(k, kn, "metadata_props")) {
      tp_parse_str_pairs(p, &m->metadata_props, &m->n_metadata_props, true);
    } else if (tp_word_eq(k, kn, "configuration")) {
      parse_configurations(p, m);
    } else {
      tp_fail_at(p, kat, "unknown model header key '%.*s'", (int)kn, k);
    }
  } while (tp_accept(p, ','));
  tp_expect(p, '>', "after the model header");
}

/* ---- entry points ---- */
typedef enum { WHAT_MODEL, WHAT_GRAPH, WHAT_FUNCTION } what_t;

static int run(const char *text, size_t size, const char *name, ox_arena *a, what_t what,
               void **out, ox_err *e) {
  if (!text && size) return ox_err_set(e, OX_EINVAL, "%s: no text", name ? name : "<text>");
  tp_parser *p = calloc(1, sizeof *p);
  if (!p) return ox_err_set(e, OX_ENOMEM, "out of memory");
  p->s = text ? text : "";
  p->n = size;
  if (size >= 3 && memcmp(p->s, "\xEF\xBB\xBF", 3) == 0) p->pos = 3; /* a UTF-8 byte order mark */
  p->name = name;
  p->a = a;
  p->e = e;
  locale_t cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  locale_t old = cloc ? uselocale(cloc) : (locale_t)0;
  int rc = OX_OK;
  if (setjmp(p->jb)) {
    rc = e ? e->code : OX_EPARSE;
    if (rc == OX_OK) rc = OX_EPARSE;
  } else {
    void *r = NULL;
    if (what == WHAT_MODEL) {
      ox_model_proto *m = ox_arena_alloc(a, sizeof *m);
      CHK(m);
      if (tp_peek(p) == '<') parse_model_header(p, m);
      m->graph = ox_arena_alloc(a, sizeof *m->graph);
      CHK(m->graph);
      tp_parse_graph(p, m->graph);
      while (tp_peek(p) >= 0) {
        if (at_training(p)) {
          p->pos += strlen("training");
          ox_training_info *t = OX_VEC_PUSH(a, m->training_info, m->n_training_info);
          CHK(t);
          parse_training(p, t);
          continue;
        }
        ox_function *f = OX_VEC_PUSH(a, m->functions, m->n_functions);
        CHK(f);
        parse_function(p, f);
      }
      r = m;
    } else if (what == WHAT_GRAPH) {
      ox_graph *g = ox_arena_alloc(a, sizeof *g);
      CHK(g);
      tp_parse_graph(p, g);
      r = g;
    } else {
      ox_function *f = ox_arena_alloc(a, sizeof *f);
      CHK(f);
      parse_function(p, f);
      r = f;
    }
    if (tp_peek(p) >= 0) tp_fail_expected(p, "end of input");
    *out = r;
  }
  if (cloc) {
    uselocale(old);
    freelocale(cloc);
  }
  ox_buf_free(&p->scratch);
  free(p);
  return rc;
}

int ox_text_parse_model(const char *text, size_t size, const char *name, ox_arena *a,
                        ox_model_proto **out, ox_err *e) {
  void *r = NULL;
  int rc = run(text, size, name, a, WHAT_MODEL, &r, e);
  if (rc == OX_OK) *out = r;
  return rc;
}

int ox_text_parse_graph(const char *text, size_t size, const char *name, ox_arena *a,
                        ox_graph **out, ox_err *e) {
  void *r = NULL;
  int rc = run(text, size, name, a, WHAT_GRAPH, &r, e);
  if (rc == OX_OK) *out = r;
  return rc;
}

int ox_text_parse_function(const char *text, size_t size, const char *name, ox_arena *a,
                           ox_function **out, ox_err *e) {
  void *r = NULL;
  int rc = run(text, size, name, a, WHAT_FUNCTION, &r, e);
  if (rc == OX_OK) *out = r;
  return rc;
}
