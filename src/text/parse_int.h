/* parse_int.h - what the files of the text parser share: the parser state,
 * the lexical layer (lex.c), the type, header, tensor and value-info parsers
 * (parse_value.c), attributes (parse_attr.c) and graphs (parse.c).
 *
 * A recursive-descent parser straight over the bytes (no token array).
 * Errors longjmp back to the entry point (parse.c): every allocation is in
 * the model's arena or in the parser's scratch buffer, which the entry point
 * frees, so nothing leaks on the error path. */
#ifndef OX_TEXT_PARSE_INT_H
#define OX_TEXT_PARSE_INT_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/base.h"
#include "text.h"
#include "text_int.h"

typedef struct tp_parser {
  const char *s;
  size_t n, pos;
  const char *name;
  ox_arena *a;
  ox_err *e;
  jmp_buf jb;
  int depth;
  ox_buf scratch;
} tp_parser;

/* ---- errors (lex.c) ---- */
/* Formats "name:line:col: msg" + the source line + a caret, then jumps out. */
_Noreturn void tp_fail_at(tp_parser *p, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* "expected <what>, found <what is at the cursor>" */
_Noreturn void tp_fail_expected(tp_parser *p, const char *what);
_Noreturn void tp_oom(tp_parser *p);

#define CHK(x)           \
  do {                   \
    if (!(x)) tp_oom(p); \
  } while (0)

/* ---- words (lex.c) ---- */
bool tp_word_eq(const char *s, size_t n, const char *w);
bool tp_word_ieq(const char *s, size_t n, const char *w); /* w in lower case */
int32_t tp_dtype_of(const char *s, size_t n);             /* 0 if not a type name */
bool tp_is_type_keyword(const char *s, size_t n);
bool tp_is_special_float(const char *s, size_t n); /* inf, infinity, nan (any case) */

/* ---- lexical layer (lex.c): each skips whitespace and comments first ---- */
void tp_ws(tp_parser *p);
int tp_peek(tp_parser *p); /* the next byte, -1 at the end */
int tp_peek_at(tp_parser *p, size_t off);
bool tp_accept(tp_parser *p, char c);
void tp_expect(tp_parser *p, char c, const char *where);
bool tp_accept_arrow(tp_parser *p);
/* identifier at the cursor (after whitespace); len 0 if none */
size_t tp_peek_id(tp_parser *p, const char **s);
bool tp_accept_word(tp_parser *p, const char *w);
char *tp_take_id(tp_parser *p, const char *what);
/* A quoted string: a backslash takes the next byte literally. Returns the
 * bytes NUL-terminated in the arena; *len excludes the terminator. */
char *tp_take_qstr(tp_parser *p, size_t *len);
char *tp_take_name_str(tp_parser *p);              /* a string used as a name: no NUL inside */
char *tp_take_qid(tp_parser *p, const char *what); /* identifier or quoted string */
bool tp_at_qid(tp_parser *p);

/* ---- numbers (lex.c) ---- */
#define TP_DIGIT(c) ((c) >= '0' && (c) <= '9')

typedef struct tp_lit {
  size_t start, len;
  bool is_float; /* has '.', an exponent, or is inf/nan */
} tp_lit;

bool tp_at_number(tp_parser *p);
tp_lit tp_take_number(tp_parser *p, const char *what);
int64_t tp_lit_i64(tp_parser *p, tp_lit l);
uint64_t tp_lit_u64(tp_parser *p, tp_lit l);
double tp_lit_f64(tp_parser *p, tp_lit l);
float tp_lit_f32(tp_parser *p, tp_lit l);

/* ---- small shared pieces (lex.c) ---- */
ox_bytes tp_to_bytes(const char *s, size_t n);
void tp_push_str(tp_parser *p, char ***arr, size_t *n, char *s);
/* one more level of nesting (types, graphs, lists); the caller decrements
 * p->depth when it leaves */
void tp_enter(tp_parser *p);
/* `["k": "v", ...]` */
void tp_parse_str_pairs(tp_parser *p, ox_str_pair **arr, size_t *n, bool allow_empty);

/* ---- headers: <key: value, ...> before a graph, node, value, tensor or
 * attribute, for the fields the reference syntax has no place for
 * (parse_value.c). ---- */
enum {
  TP_H_DOC = 1,
  TP_H_META = 2,
  TP_H_RAW = 4,
  TP_H_LOC = 8,
  TP_H_SPARSE = 16,
  TP_H_QA = 32,
  TP_H_SEG = 64,
  TP_H_DEN = 128
};
typedef struct tp_hdr {
  unsigned has; /* TP_H_* of the keys present */
  size_t at;
  char *doc;
  ox_str_pair *meta;
  size_t n_meta;
  bool raw;
  int32_t location;
  ox_sparse_tensor *sparse;
  size_t n_sparse;
  ox_tensor_annotation *qa;
  size_t n_qa;
  int64_t seg[2];
  char *denotation;
} tp_hdr;

/* true when '<' at the cursor opens a header rather than an attribute list */
bool tp_at_header(tp_parser *p);
void tp_parse_header(tp_parser *p, tp_hdr *h);
/* fails when h has a key outside `allowed` */
void tp_header_allow(tp_parser *p, const tp_hdr *h, unsigned allowed, const char *what);

/* ---- types, tensors, value infos (parse_value.c) ---- */
ox_type *tp_parse_type(tp_parser *p);
bool tp_at_type(tp_parser *p);
void tp_apply_tensor_header(tp_parser *p, const tp_hdr *h, ox_tensor *t);
/* tensor-body after the type and name: `{...}`, `[...]` (external) or none.
 * Returns false when there is no body. */
bool tp_parse_tensor_body(tp_parser *p, ox_tensor *t, const tp_hdr *h);
/* sets data_type and dims of t from a tensor type; the type must be concrete */
void tp_tensor_from_type(tp_parser *p, ox_tensor *t, const ox_type *ty, size_t at);
/* tensor-constant: [header] type name? '='? body */
void tp_parse_tensor_const(tp_parser *p, ox_tensor *t);
/* `{ dims: [..], values: T, indices: T }` after `sparse_tensor` */
ox_sparse_tensor *tp_parse_sparse_body(tp_parser *p, ox_sparse_tensor *st);
void tp_apply_vi_header(tp_parser *p, const tp_hdr *h, ox_value_info *v);
/* [header] type? name */
void tp_parse_value_info(tp_parser *p, ox_value_info *v, tp_hdr *h);

/* ---- attributes (parse_attr.c) ---- */
/* [header] name (':' type)? '=' value. For function attributes the value
 * may be missing (bare name): *has_value tells. */
void tp_parse_attr(tp_parser *p, ox_attr *a, bool fun_attr, bool *has_value);

/* ---- graphs (parse.c) ---- */
ox_graph *tp_parse_graph(tp_parser *p, ox_graph *g);

#endif
