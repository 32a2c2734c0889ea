/* parse_attr.c - attributes in the text parser: `name (: type)? = value`,
 * single values and lists, with the reference's rules for telling a tensor,
 * a type, a graph and a string apart (parse_int.h). */
#include <ctype.h>
#include <string.h>

#include "parse_int.h"

/* ---- attributes ---- */
typedef struct sval {
  int kind; /* ox_attr_type of a single value */
  tp_lit l;
  ox_bytes s;
  ox_tensor *t;
  ox_graph *g;
  ox_type *tp;
  ox_sparse_tensor *sp;
} sval;

static int singleton_of(int t) {
  switch (t) {
    case OX_ATTR_FLOATS:
      return OX_ATTR_FLOAT;
    case OX_ATTR_INTS:
      return OX_ATTR_INT;
    case OX_ATTR_STRINGS:
      return OX_ATTR_STRING;
    case OX_ATTR_TENSORS:
      return OX_ATTR_TENSOR;
    case OX_ATTR_GRAPHS:
      return OX_ATTR_GRAPH;
    case OX_ATTR_SPARSE_TENSORS:
      return OX_ATTR_SPARSE_TENSOR;
    case OX_ATTR_TYPE_PROTOS:
      return OX_ATTR_TYPE_PROTO;
    default:
      return 0;
  }
}

static int list_of(int t) {
  switch (t) {
    case OX_ATTR_FLOAT:
      return OX_ATTR_FLOATS;
    case OX_ATTR_INT:
      return OX_ATTR_INTS;
    case OX_ATTR_STRING:
      return OX_ATTR_STRINGS;
    case OX_ATTR_TENSOR:
      return OX_ATTR_TENSORS;
    case OX_ATTR_GRAPH:
      return OX_ATTR_GRAPHS;
    case OX_ATTR_SPARSE_TENSOR:
      return OX_ATTR_SPARSE_TENSORS;
    case OX_ATTR_TYPE_PROTO:
      return OX_ATTR_TYPE_PROTOS;
    default:
      return 0;
  }
}

/* true when a graph starts at the cursor: name followed by '(' or '=>' */
static bool at_graph_after_name(tp_parser *p) {
  int c = tp_peek(p);
  return c == '(' || (c == '=' && tp_peek_at(p, 1) == '>');
}

/* the same, after skipping the n bytes of a name at the cursor */
static bool at_graph_after_name_skip(tp_parser *p, size_t n) {
  size_t save = p->pos;
  p->pos += n;
  bool r = at_graph_after_name(p);
  p->pos = save;
  return r;
}

/* expected: singleton type annotation (0 if none) */
static void parse_single_value(tp_parser *p, sval *v, int expected) {
  memset(v, 0, sizeof *v);
  int c = tp_peek(p);
  size_t at = p->pos;
  if (c == '<') {
    /* a header for the value that follows: a graph or a tensor */
    size_t save = p->pos;
    tp_hdr h;
    tp_parse_header(p, &h);
    if (tp_at_type(p)) {
      p->pos = save;
      v->kind = OX_ATTR_TENSOR;
      v->t = ox_arena_alloc(p->a, sizeof *v->t);
      CHK(v->t);
      tp_parse_tensor_const(p, v->t);
    } else {
      p->pos = save;
      v->kind = OX_ATTR_GRAPH;
      v->g = ox_arena_alloc(p->a, sizeof *v->g);
      CHK(v->g);
      tp_parse_graph(p, v->g);
    }
  } else if (c == '"') {
    size_t len;
    char *s = tp_take_qstr(p, &len);
    if (expected != OX_ATTR_STRING && at_graph_after_name(p)) {
      p->pos = at;
      v->kind = OX_ATTR_GRAPH;
      v->g = ox_arena_alloc(p->a, sizeof *v->g);
      CHK(v->g);
      tp_parse_graph(p, v->g);
    } else {
      v->kind = OX_ATTR_STRING;
      v->s = tp_to_bytes(s, len);
    }
  } else if (tp_at_number(p)) {
    v->l = tp_take_number(p, "a number");
    v->kind = v->l.is_float ? OX_ATTR_FLOAT : OX_ATTR_INT;
  } else if (c >= 0 && (isalpha(c) || c == '_')) {
    const char *w;
    size_t wn = tp_peek_id(p, &w);
    bool payload =
        tp_word_ieq(w, wn, "nan") && tp_peek_at(p, wn) == '(' && TP_DIGIT(tp_peek_at(p, wn + 1));
    if (tp_is_special_float(w, wn) && (payload || !at_graph_after_name_skip(p, wn))) {
      v->l = tp_take_number(p, "a number");
      v->kind = OX_ATTR_FLOAT;
    } else if (tp_word_eq(w, wn, "sparse_tensor") && (p->pos += wn, tp_peek(p) == '{')) {
      v->kind = OX_ATTR_SPARSE_TENSOR;
      v->sp = ox_arena_alloc(p->a, sizeof *v->sp);
      CHK(v->sp);
      tp_parse_sparse_body(p, v->sp);
    } else if (p->pos = at, tp_is_type_keyword(w, wn)) {
      ox_type *ty = tp_parse_type(p);
      int nc = tp_peek(p);
      bool tensor =
          expected == OX_ATTR_TENSOR ||
          (expected != OX_ATTR_TYPE_PROTO && (nc == '{' || nc == '=' || nc == '"' || nc == '[' ||
                                              nc == '_' || (nc >= 0 && isalpha(nc))));
      if (tensor) {
        p->pos = at;
        v->kind = OX_ATTR_TENSOR;
        v->t = ox_arena_alloc(p->a, sizeof *v->t);
        CHK(v->t);
        tp_parse_tensor_const(p, v->t);
      } else {
        v->kind = OX_ATTR_TYPE_PROTO;
        v->tp = ty;
      }
    } else {
      v->kind = OX_ATTR_GRAPH;
      v->g = ox_arena_alloc(p->a, sizeof *v->g);
      CHK(v->g);
      tp_parse_graph(p, v->g);
    }
  } else {
    tp_fail_expected(p, "an attribute value");
  }
  (void)at;
}

/* store a single value into the attribute (singleton) or append (list) */
static void store_value(tp_parser *p, ox_attr *a, const sval *v, int want, bool list, size_t at) {
  int k = v->kind;
  if (k == OX_ATTR_INT && want == OX_ATTR_FLOAT) k = OX_ATTR_FLOAT;
  if (want && k != want) {
    tp_fail_at(p, at, "expected a %s value, found a %s value", ox_text_attr_type_names[want],
               ox_text_attr_type_names[k]);
  }
  switch (k) {
    case OX_ATTR_FLOAT: {
      float f = tp_lit_f32(p, v->l);
      if (!list) {
        a->f = f, a->has_f = true;
      } else {
        float *d = OX_VEC_PUSH(p->a, a->floats, a->n_floats);
        CHK(d);
        *d = f;
      }
      break;
    }
    case OX_ATTR_INT: {
      int64_t i = tp_lit_i64(p, v->l);
      if (!list) {
        a->i = i, a->has_i = true;
      } else {
        int64_t *d = OX_VEC_PUSH(p->a, a->ints, a->n_ints);
        CHK(d);
        *d = i;
      }
      break;
    }
    case OX_ATTR_STRING:
      if (!list) {
        a->s = v->s;
      } else {
        ox_bytes *d = OX_VEC_PUSH(p->a, a->strings, a->n_strings);
        CHK(d);
        *d = v->s;
      }
      break;
    case OX_ATTR_TENSOR:
      if (!list) {
        a->t = v->t;
      } else {
        ox_tensor *d = OX_VEC_PUSH(p->a, a->tensors, a->n_tensors);
        CHK(d);
        *d = *v->t;
      }
      break;
    case OX_ATTR_GRAPH:
      if (!list) {
        a->g = v->g;
      } else {
        ox_graph *d = OX_VEC_PUSH(p->a, a->graphs, a->n_graphs);
        CHK(d);
        *d = *v->g;
      }
      break;
    case OX_ATTR_SPARSE_TENSOR:
      if (!list) {
        a->sparse_tensor = v->sp;
      } else {
        ox_sparse_tensor *d = OX_VEC_PUSH(p->a, a->sparse_tensors, a->n_sparse_tensors);
        CHK(d);
        *d = *v->sp;
      }
      break;
    case OX_ATTR_TYPE_PROTO:
      if (!list) {
        a->tp = v->tp;
      } else {
        ox_type *d = OX_VEC_PUSH(p->a, a->type_protos, a->n_type_protos);
        CHK(d);
        *d = *v->tp;
      }
      break;
    default:
      tp_fail_at(p, at, "bad attribute value");
  }
}

static void parse_attr_value(tp_parser *p, ox_attr *a, int annotated) {
  if (tp_accept(p, '@')) {
    a->ref_attr_name = tp_take_qid(p, "the name of the referenced attribute");
    return;
  }
  if (tp_peek(p) == '[') {
    size_t at = p->pos;
    p->pos++;
    tp_enter(p);
    int want = annotated ? singleton_of(annotated) : 0;
    if (annotated && !want)
      tp_fail_at(p, at, "a %s attribute cannot take a list", ox_text_attr_type_names[annotated]);
    if (tp_accept(p, ']')) {
      if (!annotated) tp_fail_at(p, at, "an empty list needs a type annotation (e.g. ': ints')");
      p->depth--;
      return;
    }
    /* the first element fixes the kind; ints become floats if a float follows */
    size_t first_ints = a->n_ints;
    do {
      tp_ws(p);
      size_t eat = p->pos;
      sval v;
      parse_single_value(p, &v, want);
      if (!want) {
        want = v.kind;
        if (!annotated) a->type = list_of(want), a->has_type = true;
      } else if (want == OX_ATTR_INT && v.kind == OX_ATTR_FLOAT && !annotated) {
        /* promote: [1, 2.5] is a list of floats */
        for (size_t i = first_ints; i < a->n_ints; i++) {
          float *d = OX_VEC_PUSH(p->a, a->floats, a->n_floats);
          CHK(d);
          *d = (float)a->ints[i];
        }
        a->ints = NULL, a->n_ints = 0;
        want = OX_ATTR_FLOAT;
        a->type = OX_ATTR_FLOATS;
      }
      store_value(p, a, &v, want, true, eat);
    } while (tp_accept(p, ','));
    tp_expect(p, ']', "after the list");
    p->depth--;
    return;
  }
  tp_ws(p);
  size_t at = p->pos;
  if (annotated && singleton_of(annotated))
    tp_fail_at(p, at, "a %s attribute needs a list '[...]'", ox_text_attr_type_names[annotated]);
  sval v;
  parse_single_value(p, &v, annotated);
  int k = v.kind == OX_ATTR_INT && annotated == OX_ATTR_FLOAT ? OX_ATTR_FLOAT : v.kind;
  if (!annotated) a->type = k, a->has_type = true;
  store_value(p, a, &v, annotated ? annotated : k, false, at);
}

/* [header] name (':' type)? '=' value. For function attributes the value
 * may be missing (bare name): *has_value tells. */
void tp_parse_attr(tp_parser *p, ox_attr *a, bool fun_attr, bool *has_value) {
  *has_value = true;
  if (tp_peek(p) == '<') {
    tp_hdr h;
    tp_parse_header(p, &h);
    tp_header_allow(p, &h, TP_H_DOC, "an attribute");
    if (h.has & TP_H_DOC) a->doc_string = h.doc;
  }
  a->name = tp_take_qid(p, "an attribute name");
  int annotated = 0;
  if (tp_accept(p, ':')) {
    const char *w;
    size_t wn = tp_peek_id(p, &w);
    for (int i = 1; i < 15 && wn; i++)
      if (tp_word_eq(w, wn, ox_text_attr_type_names[i])) annotated = i;
    if (!annotated) tp_fail_expected(p, "an attribute type (int, float, string, tensor, ...)");
    p->pos += wn;
    a->type = annotated;
    a->has_type = true;
  }
  if (fun_attr && !annotated && !a->doc_string && tp_peek(p) != '=') {
    *has_value = false;
    return;
  }
  tp_expect(p, '=', "after the attribute name");
  parse_attr_value(p, a, annotated);
}
