/* check_impl.h - state shared by the files of the checker (internal). */
#ifndef OX_CHECK_IMPL_H
#define OX_CHECK_IMPL_H

#include "../schema/schema.h"
#include "check.h"

/* Names defined in one graph or function, with the enclosing scope. */
typedef struct ox_ck_scope {
  ox_map names;
  const struct ox_ck_scope *parent;
} ox_ck_scope;

typedef struct ox_ck {
  const ox_model_proto *mp;
  int64_t ir;
  bool strict;
  const char *model_dir;
  /* opset imports in force: the model's, or a function's */
  const ox_opset *opsets;
  size_t n_opsets;
  bool implied_default; /* IR < 3: {"": 1} */
  bool is_main_graph;
  bool in_function;
  ox_buf *report;
  size_t n_errors;
  bool oom;
  ox_err first; /* the first error, for the caller's ox_err */
  /* path: components joined by " / " */
  char path[1024];
  size_t path_len;
} ox_ck;

/* Pushes a path component; returns the previous length for ox_ck_pop. */
size_t ox_ck_push(ox_ck *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void ox_ck_pop(ox_ck *c, size_t len);
/* Reports an error of `rule` at the current path. */
void ox_ck_fail(ox_ck *c, const char *rule, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void ox_ck_warn(ox_ck *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A name for messages: "x" or "(unnamed)". */
static inline const char *ox_ck_str(const char *s) { return s && s[0] ? s : "<unnamed>"; }

/* Data rules (check_data.c). */
void ox_ck_tensor(ox_ck *c, const ox_tensor *t);
void ox_ck_sparse(ox_ck *c, const ox_sparse_tensor *s);
void ox_ck_value_info(ox_ck *c, const ox_value_info *v);
/* Strict: graph names, signature types and calls of model-local functions
 * across the whole model (check_strict.c). */
void ox_ck_strict_model(ox_ck *c, const ox_model_proto *mp);
/* Strict: features newer than the declared IR version (check_ir.c). */
void ox_ck_ir_features(ox_ck *c, const ox_model_proto *mp);
/* Writes the type string of t ("tensor(float)", "seq(tensor(int64))") into
 * buf; false when the type is not fully known. */
bool ox_ck_type_str(const ox_type *t, char *buf, size_t cap);

#endif
