/* graph_view.h - the host behind the pass view (graph_view.c), as the
 * pipeline (pipeline.c) drives it: a working copy of a graph's nodes, the
 * drop and replacement marks, what is known about names (constants, readers,
 * float32 values) and the initializers passes made. */
#ifndef OX_OPT_GRAPH_VIEW_H
#define OX_OPT_GRAPH_VIEW_H

#include "pass.h"

typedef struct ox_opt_host ox_opt_host;

/* A host over g's main-graph nodes, opsets[i] the opset of node i;
 * inputs_const: initializers backing graph inputs are constants. Fills v
 * (its arrays live in arena a). NULL on OOM (e set). */
ox_opt_host *ox_opt_host_new(ox_arena *a, const ox_graph *g, const int64_t *opsets,
                             bool inputs_const, bool low_bit_int8, ox_pass_view *v, ox_err *e);
/* a rename callback ran out of memory */
bool ox_opt_host_oom(const ox_opt_host *h);
/* the initializers passes made */
const ox_tensor *ox_opt_host_inits(const ox_opt_host *h, size_t *n);
/* the graph inputs passes added (appended to the graph's own) */
const ox_value_info *ox_opt_host_new_inputs(const ox_opt_host *h, size_t *n);
void ox_opt_host_free(ox_opt_host *h);

#endif
