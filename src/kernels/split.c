/* split.c - split.h's planner. For each count of A parts (the distinct
 * part sizes only), a few counts of B parts: those that make the tasks one
 * to four rounds of nt, and the fewest B allows; each judged by rounds x
 * the cost of one (full-size) task. A few hundred evaluations at most:
 * cheap next to the work it splits. */
#include "split.h"

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

ox_split ox_split_plan(int nt, int64_t outer, int64_t a_units, int64_t a_max_parts,
                       int64_t b_units, int64_t b_max_per, ox_split_cost_fn cost,
                       const void *ctx) {
  if (nt < 1) nt = 1;
  if (outer < 1) outer = 1;
  if (a_units < 1) a_units = 1;
  if (b_units < 1) b_units = 1;
  if (b_max_per < 1 || b_max_per > b_units) b_max_per = b_units;
  if (a_max_parts < 1) a_max_parts = 1;
  if (a_max_parts > a_units) a_max_parts = a_units;
  if (a_max_parts > 4 * (int64_t)nt) a_max_parts = 4 * (int64_t)nt;
  int64_t b_min_parts = ceil_div(b_units, b_max_per);
  ox_split best = {a_units, 1, b_max_per, b_min_parts, 0.0};
  best.busiest = (double)ceil_div(outer * b_min_parts, nt) * cost(ctx, a_units, b_max_per);
  for (int64_t ap = 1; ap <= a_max_parts; ap++) {
    int64_t a_per = ceil_div(a_units, ap);
    if (ceil_div(a_units, a_per) != ap) continue; /* the same sizes as a smaller count */
    for (int k = 0; k <= 4; k++) {
      int64_t bp = k == 0 ? b_min_parts : ceil_div((int64_t)k * nt, outer * ap);
      if (bp < b_min_parts) bp = b_min_parts;
      if (bp > b_units) bp = b_units;
      int64_t b_per = ceil_div(b_units, bp);
      bp = ceil_div(b_units, b_per);
      double t = (double)ceil_div(outer * ap * bp, nt) * cost(ctx, a_per, b_per);
      /* (a clear gain only: fewer, larger tasks on a tie) */
      if (t < best.busiest * 0.98) best = (ox_split){a_per, ap, b_per, bp, t};
    }
  }
  return best;
}
