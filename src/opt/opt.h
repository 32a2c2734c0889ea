/* opt.h - what the layers above see of src/opt/: the table of graph passes
 * and the one call that runs them.
 *
 * Every rewrite is a pass (a file of src/opt/ with a function taking the
 * pass view of pass.h), listed once in passes.c in the order it runs, with
 * its name, level, default, description and what it needs. The runtime
 * (session creation), onnxc_model_optimize and the unit tests call
 * ox_opt_run; users switch passes off by name. */
#ifndef OX_OPT_OPT_H
#define OX_OPT_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/base.h"
#include "../ir/ir.h"

struct ox_pass_view;

/* what a pass needs of the request (ox_opt_pass.needs) */
enum {
  OX_OPT_QUANT = 1,       /* a quantized-unit fusion: skipped under quant_fusion_off */
  OX_OPT_LOW_BIT = 2,     /* reads low_bit_int8 */
  OX_OPT_IN_RUNTIME = 4,  /* done by the runtime (run has no function): the runtime
                             asks ox_opt_pass_enabled */
};

typedef struct ox_opt_pass {
  const char *name;
  int level;       /* runs at optimization_level >= level */
  bool default_on; /* runs unless disabled (false: never, for now) */
  unsigned needs;  /* OX_OPT_* */
  const char *description;
  int (*run)(struct ox_pass_view *v); /* NULL for OX_OPT_IN_RUNTIME */
} ox_opt_pass;

size_t ox_opt_pass_count(void);
/* the i-th pass in running order, NULL past the end */
const ox_opt_pass *ox_opt_pass_at(size_t i);
/* the pass of that name, or NULL */
const ox_opt_pass *ox_opt_pass_find(const char *name);
/* OX_OK when every name is a pass; else OX_EINVAL naming the first that is not */
int ox_opt_check_names(const char *const *names, size_t n, ox_err *e);

typedef struct ox_opt_request {
  int level; /* the session's optimization_level (< 1: nothing runs) */
  const char *const *disabled; /* pass names switched off */
  size_t n_disabled;
  bool quant_fusion_off; /* leave the OX_OPT_QUANT passes out */
  bool low_bit_int8;     /* dq_matmul asks for int8 decode products */
  /* initializers that back graph inputs count as constants (the session's
   * defaults_const); otherwise only pure initializers do */
  bool inputs_const;
  /* per node of the graph, the opset its domain imports; NULL: from
   * imports (a default-domain node without any import counts as opset 1) */
  const int64_t *node_opsets;
  const ox_opset *imports;
  size_t n_imports;
} ox_opt_request;

/* the pass would run for this request (level, default, disabled list,
 * quant_fusion_off) */
bool ox_opt_pass_enabled(const ox_opt_request *r, const ox_opt_pass *p);

/* Runs the enabled passes of the table, in order, over g's main-graph
 * nodes (subgraphs are left as they are). *out is g when nothing changed,
 * else a new graph in arena a sharing g's unchanged parts (g is never
 * modified); *out_opsets (when not NULL) gets the opset of each of *out's
 * nodes (1 for the ai.onnxc nodes passes made), or NULL when *out is g. */
int ox_opt_run(const ox_opt_request *r, ox_arena *a, const ox_graph *g, const ox_graph **out,
               const int64_t **out_opsets, ox_err *e);

/* Whether graph input `past` of g (a session's optimised graph) is a cache
 * the kv_cache pass made appendable in place (its "<past>.onnxc_cache"
 * input is there); when not, why says what did not match (kv_cache.c). */
bool ox_opt_kv_cache_of(const ox_graph *g, const char *past, char *why, size_t size);

#endif
