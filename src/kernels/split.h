/* split.h - how to cut a product-like piece of work into tasks for many
 * threads (split.c). The work is `outer` independent copies (images,
 * groups) of a two-dimensional block: A units (e.g. panels of output
 * channels) by B units (e.g. rows of the output image). A task takes
 * a_per units of A and b_per units of B of one copy; the caller gives the
 * estimated time of one task as a function of a_per and b_per (work, the
 * extra cost of repeating a part's set-up, per-task overhead), and the plan
 * is the split whose busiest thread finishes first when the tasks are taken
 * as threads free up. The rules tuned on two threads stay with their
 * callers; this serves the many-thread case, where a split along one axis
 * alone left most of a 16-core machine idle. */
#ifndef OX_KERNELS_SPLIT_H
#define OX_KERNELS_SPLIT_H

#include <stdint.h>

typedef double (*ox_split_cost_fn)(const void *ctx, int64_t a_per, int64_t b_per);

typedef struct ox_split {
  int64_t a_per, a_parts; /* a_parts = ceil(a_units / a_per) */
  int64_t b_per, b_parts;
  double busiest; /* the estimate for the busiest thread */
} ox_split;

/* The best split for nt threads with at most a_max_parts parts of A and at
 * most b_max_per units of B per task (a buffer's bound); a_max_parts 1
 * splits B alone. */
ox_split ox_split_plan(int nt, int64_t outer, int64_t a_units, int64_t a_max_parts,
                       int64_t b_units, int64_t b_max_per, ox_split_cost_fn cost,
                       const void *ctx);

#endif
