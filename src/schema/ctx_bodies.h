/* ctx_bodies.h - internal interface of the context-dependent body builders. */
#ifndef OX_CTX_BODIES_H
#define OX_CTX_BODIES_H

#include <stdarg.h>
#include <stdio.h>

#include "schema.h"

enum { OX_CTX_OK = 0, OX_CTX_NONE = 1, OX_CTX_NEED_TYPES = 2, OX_CTX_BAD_NODE = 3 };

typedef struct bctx {
  const ox_schema *s;
  int64_t opset;
  const ox_node *node;
  const int32_t *dtypes;
  const ox_type *const *types; /* may be NULL */
  size_t n_inputs;
  ox_buf *out;
} bctx;

int32_t ox_ctx_in_dtype(const bctx *c, size_t k);
int64_t ox_ctx_int(const bctx *c, const char *name, int64_t dflt);
float ox_ctx_float(const bctx *c, const char *name, float dflt);
void ox_ctx_header(bctx *c, int64_t body_opset);
void ox_ctx_line(bctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
const char *ox_ctx_f(char *buf, size_t n, float v);
bool ox_ctx_has_in(const bctx *c, size_t k);
bool ox_ctx_has_out(const bctx *c, size_t k);

/* builders in ctx_bodies_more.c */
int ox_ctx_nllloss(bctx *c);
int ox_ctx_sceloss(bctx *c);
int ox_ctx_bernoulli(bctx *c);
int ox_ctx_centercroppad(bctx *c);
int ox_ctx_rotary(bctx *c);
int ox_ctx_sequencemap(bctx *c);
int ox_ctx_causalconv(bctx *c);
int ox_ctx_attention(bctx *c); /* ctx_bodies_attn.c */
int ox_ctx_linearattention(bctx *c);
int ox_ctx_flexattention(bctx *c);
int ox_ctx_graph_nodes(bctx *c, const ox_graph *g);

#endif
