/* profile.c - the report of a profiling session (opts.profile): time per
 * operator type and the slowest nodes, per run of the session, over every
 * prepared graph (subgraph nodes count once per execution). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

typedef struct {
  const char *op;
  uint64_t ns, calls, min_ns; /* min_ns: the sum of its nodes' fastest calls */
  size_t nodes;
} prof_op;

typedef struct {
  const rt_node *n;
  uint64_t ns, min_ns;
} prof_node;

static int by_ns_op(const void *a, const void *b) {
  uint64_t x = ((const prof_op *)a)->ns, y = ((const prof_op *)b)->ns;
  return x < y ? 1 : x > y ? -1 : 0;
}

static int by_ns_node(const void *a, const void *b) {
  uint64_t x = ((const prof_node *)a)->ns, y = ((const prof_node *)b)->ns;
  return x < y ? 1 : x > y ? -1 : 0;
}

void ox_session_profile_reset(ox_session *s) {
  for (size_t gi = 0; gi < s->n_graphs; gi++) {
    rt_graph *g = s->graphs[gi];
    for (size_t i = 0; i < g->n_nodes; i++) {
      __atomic_store_n(&g->nodes[i].prof_runs, 0, __ATOMIC_RELAXED);
      __atomic_store_n(&g->nodes[i].prof_ns, 0, __ATOMIC_RELAXED);
      __atomic_store_n(&g->nodes[i].prof_min_ns, 0, __ATOMIC_RELAXED);
      __atomic_store_n(&g->nodes[i].prof_cat_in, 0, __ATOMIC_RELAXED);
      __atomic_store_n(&g->nodes[i].prof_cat_placed, 0, __ATOMIC_RELAXED);
    }
  }
  __atomic_store_n(&s->prof_runs, 0, __ATOMIC_RELAXED);
}

char *ox_session_profile(const ox_session *s, size_t top_nodes) {
  size_t total_nodes = 0;
  for (size_t gi = 0; gi < s->n_graphs; gi++) total_nodes += s->graphs[gi]->n_nodes;
  prof_op *ops = calloc(total_nodes + 1, sizeof *ops);
  prof_node *nodes = calloc(total_nodes + 1, sizeof *nodes);
  ox_buf out = {0};
  if (!ops || !nodes) goto fail;
  size_t n_ops = 0, n_nodes = 0;
  uint64_t all = 0, cat_in = 0, cat_placed = 0;
  for (size_t gi = 0; gi < s->n_graphs; gi++) {
    const rt_graph *g = s->graphs[gi];
    for (size_t i = 0; i < g->n_nodes; i++) {
      const rt_node *rn = &g->nodes[i];
      cat_in += __atomic_load_n(&rn->prof_cat_in, __ATOMIC_RELAXED);
      cat_placed += __atomic_load_n(&rn->prof_cat_placed, __ATOMIC_RELAXED);
      /* atomic reads: runs may be adding while we read */
      uint64_t calls = __atomic_load_n(&rn->prof_runs, __ATOMIC_RELAXED);
      uint64_t ns = __atomic_load_n(&rn->prof_ns, __ATOMIC_RELAXED);
      uint64_t lo = __atomic_load_n(&rn->prof_min_ns, __ATOMIC_RELAXED);
      if (!calls) continue;
      const char *op = rn->node->op_type ? rn->node->op_type : "?";
      size_t k = 0;
      while (k < n_ops && strcmp(ops[k].op, op) != 0) k++;
      if (k == n_ops) ops[n_ops++].op = op;
      ops[k].ns += ns;
      ops[k].calls += calls;
      ops[k].min_ns += lo * calls; /* divided by the runs below, as ns */
      ops[k].nodes++;
      nodes[n_nodes++] = (prof_node){rn, ns, lo * calls};
      all += ns;
    }
  }
  qsort(ops, n_ops, sizeof *ops, by_ns_op);
  qsort(nodes, n_nodes, sizeof *nodes, by_ns_node);
  uint64_t n_runs = __atomic_load_n(&s->prof_runs, __ATOMIC_RELAXED);
  double runs = n_runs ? (double)n_runs : 1.0;
  uint64_t sum_min = 0;
  for (size_t k = 0; k < n_nodes; k++) sum_min += nodes[k].min_ns;
  ox_buf_printf(&out, "profile over %llu runs: %.3f ms per run in %zu nodes (fastest calls: %.3f)\n",
                (unsigned long long)n_runs, (double)all / 1e6 / runs, n_nodes,
                (double)sum_min / 1e6 / runs);
  uint64_t all_min = 0;
  for (size_t k = 0; k < n_ops; k++) all_min += ops[k].min_ns;
  ox_buf_printf(&out, "%-28s %6s %8s %12s %7s %12s %7s\n", "operator", "nodes", "calls",
                "ms per run", "share", "min ms", "share");
  for (size_t k = 0; k < n_ops; k++)
    ox_buf_printf(&out, "%-28s %6zu %8llu %12.4f %6.1f%% %12.4f %6.1f%%\n", ops[k].op,
                  ops[k].nodes, (unsigned long long)ops[k].calls, (double)ops[k].ns / 1e6 / runs,
                  all ? 100.0 * (double)ops[k].ns / (double)all : 0.0,
                  (double)ops[k].min_ns / 1e6 / runs,
                  all_min ? 100.0 * (double)ops[k].min_ns / (double)all_min : 0.0);
  if (cat_in)
    ox_buf_printf(&out, "Concat inputs written in place by their producers: %.1f of %.1f per run\n",
                  (double)cat_placed / runs, (double)cat_in / runs);
  if (top_nodes > n_nodes) top_nodes = n_nodes;
  /* each node's fastest call last (the better figure on a loaded machine) */
  if (top_nodes) ox_buf_printf(&out, "slowest nodes (ms per run):\n");
  for (size_t k = 0; k < top_nodes; k++)
    ox_buf_printf(&out, "  %10.4f  %s  [fastest %.4f]\n", (double)nodes[k].ns / 1e6 / runs,
                  nodes[k].n->path, (double)nodes[k].min_ns / 1e6 / runs);
  ox_buf_putc(&out, 0);
  free(ops);
  free(nodes);
  if (out.failed) {
    free(out.data);
    return NULL;
  }
  return (char *)out.data;
fail:
  free(ops);
  free(nodes);
  return NULL;
}
