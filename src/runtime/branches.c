/* branches.c - independent nodes side by side: the parallel_branches session
 * option (onnxruntime's parallel execution mode).
 *
 * A node's level is one more than the highest level of the nodes whose
 * outputs it reads; a node with subgraphs, which may read any earlier value
 * through them, is one more than every node before it. The nodes of one
 * level do not depend on each other, so when a level holds several they may
 * run as tasks of the thread pool, one thread each (their kernels see no
 * pool: the branches of an inception block or of a detection head are each
 * too small to split well over many threads, but together they fill them);
 * each level runs the way measured faster (side_by_side). A level of one
 * node runs it over the whole pool, as node by node does.
 *
 * Buffers: a value is released once every node up to its last reader in
 * graph order is done (all its readers come before that one), that is after
 * the highest level among those nodes: later than node by node, so a run may
 * hold more memory at a time. The run's buffer pool, frames and in-place
 * Concat buffers take the run's lock while a level runs side by side
 * (executor.c); Concat layouts are learned after each level, by one thread. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt.h"

int ox_rt_plan_levels(ox_session *s, rt_graph *g, ox_err *e) {
  size_t n = g->n_nodes;
  if (n < 2) return OX_OK;
  uint32_t *lv = ox_arena_calloc(s->arena, n, sizeof *lv);
  uint32_t *upto = ox_arena_calloc(s->arena, n, sizeof *upto); /* highest level of nodes 0..i */
  if (!lv || !upto) return ox_err_set(e, OX_ENOMEM, "out of memory");
  uint32_t top = 0;
  for (size_t i = 0; i < n; i++) {
    const rt_node *rn = &g->nodes[i];
    uint32_t l = 0;
    for (size_t j = 0; j < rn->node->n_input; j++) {
      int32_t k = rn->in[j];
      int64_t p = k >= 0 ? g->slots[k].producer : -1;
      if (p >= 0 && (size_t)p < i && lv[p] + 1 > l) l = lv[p] + 1;
    }
    if (rn->n_subs && i > 0 && top + 1 > l) l = top + 1;
    lv[i] = l;
    if (l > top) top = l;
    upto[i] = top;
  }
  size_t nl = (size_t)top + 1;
  uint32_t *start = ox_arena_calloc(s->arena, nl + 1, sizeof *start);
  uint32_t *order = ox_arena_calloc(s->arena, n, sizeof *order);
  uint32_t *rstart = ox_arena_calloc(s->arena, nl + 1, sizeof *rstart);
  if (!start || !order || !rstart) return ox_err_set(e, OX_ENOMEM, "out of memory");
  size_t n_rel = 0, width = 0;
  for (size_t i = 0; i < n; i++) {
    start[lv[i] + 1]++;
    rstart[upto[i] + 1] += (uint32_t)g->nodes[i].n_rel;
    n_rel += g->nodes[i].n_rel;
  }
  for (size_t l = 0; l < nl; l++) {
    if (start[l + 1] > width) width = start[l + 1];
    start[l + 1] += start[l];
    rstart[l + 1] += rstart[l];
  }
  if (width < 2) return OX_OK; /* a chain: nothing to run side by side */
  int32_t *rel = ox_arena_calloc(s->arena, n_rel + 1, sizeof *rel);
  uint64_t *ns = ox_arena_calloc(s->arena, 2 * nl, sizeof *ns);
  uint32_t *fill = calloc(nl * 2, sizeof *fill);
  if (!rel || !ns || !fill) {
    free(fill);
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    order[start[lv[i]] + fill[lv[i]]++] = (uint32_t)i;
    const rt_node *rn = &g->nodes[i];
    for (size_t j = 0; j < rn->n_rel; j++) rel[rstart[upto[i]] + fill[nl + upto[i]]++] = rn->rel[j];
  }
  free(fill);
  g->levels = lv;
  g->lv_start = start;
  g->lv_node = order;
  g->lv_rel_start = rstart;
  g->lv_rel = rel;
  g->lv_ns = ns;
  g->n_levels = nl;
  g->max_width = width;
  return OX_OK;
}

typedef struct lv_job {
  const ox_kctx *base;
  const uint32_t *nodes; /* the level's nodes that run */
  ox_value **scratch;    /* per task: max_in + max_out call slots */
  ox_err *errs;          /* per task */
  int *rcs;
} lv_job;

static void lv_task(void *arg, int64_t lo, int64_t hi) {
  lv_job *j = arg;
  rt_graph *g = j->base->g;
  for (int64_t t = lo; t < hi; t++) {
    ox_kctx c = *j->base;
    c.n = &g->nodes[j->nodes[t]];
    c.serial = true;
    c.in = j->scratch + (size_t)t * (g->max_in + g->max_out);
    c.out = c.in + g->max_in;
    c.e = &j->errs[t];
    j->errs[t].code = OX_OK;
    j->errs[t].msg[0] = 0;
    j->rcs[t] = ox_rt_run_node(&c);
  }
}

/* per-task scratch of the run for g's widest level (kept for later runs) */
static bool scratch_for(rt_run *r, rt_graph *g, lv_job *j, uint32_t **ids) {
  size_t w = g->max_width, slots = w * (g->max_in + g->max_out);
  size_t bytes = slots * sizeof(ox_value *) + w * (sizeof(ox_err) + sizeof(int) + sizeof(uint32_t));
  size_t words = (bytes + sizeof(ox_value *) - 1) / sizeof(ox_value *);
  if (r->n_par_scratch < words) {
    ox_value **p = realloc(r->par_scratch, words * sizeof *p);
    if (!p) return false;
    r->par_scratch = p;
    r->n_par_scratch = words;
  }
  memset(r->par_scratch, 0, slots * sizeof(ox_value *));
  j->scratch = r->par_scratch;
  j->errs = (ox_err *)(void *)(r->par_scratch + slots);
  j->rcs = (int *)(void *)(j->errs + w);
  *ids = (uint32_t *)(void *)(j->rcs + w);
  return true;
}

/* the mean time per node below which a level always runs node by node */
#define LV_MIN_NS 100000u

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* a running mean (3/4 of the old), 1 ns at least so that 0 stays "unseen" */
static void note_time(uint64_t *at, uint64_t ns) {
  uint64_t old = __atomic_load_n(at, __ATOMIC_RELAXED);
  uint64_t v = old ? (3 * old + ns) / 4 : ns;
  __atomic_store_n(at, v ? v : 1, __ATOMIC_RELAXED);
}

/* Side by side only pays where the level's nodes are each too small for
 * the pool and about as long as each other (a 3x3 convolution beside a 1x1
 * one of the same input leaves threads waiting): rather than guess from
 * shapes, a level runs once each way and then the faster way, trying the
 * other again every 64 runs (shapes, load and thread counts change). The
 * first run is not timed: it also prepares kernels lazily. */
static bool side_by_side(const rt_graph *g, size_t l, size_t m, uint64_t runs) {
  uint64_t seq = __atomic_load_n(&g->lv_ns[2 * l], __ATOMIC_RELAXED);
  uint64_t con = __atomic_load_n(&g->lv_ns[2 * l + 1], __ATOMIC_RELAXED);
  if (!seq) return false;
  /* nodes of a few microseconds each (shape arithmetic, a detector's
   * per-class filtering) cost less than handing them to other threads and
   * taking the run's lock for their outputs: not worth timing */
  if (seq < (uint64_t)m * LV_MIN_NS) return false;
  if (!con) return true;
  bool faster = con < seq;
  return runs % 64 == 63 ? !faster : faster;
}

int ox_rt_run_levels(rt_run *r, rt_graph *g, ox_kctx *ctx) {
  ox_value **vals = ctx->vals;
  ox_err *e = ctx->e;
  lv_job job = {.base = ctx};
  uint32_t *ids = NULL;
  if (!r->mu_ready) {
    /* recursive: an output placed in a Concat's buffer makes that buffer
     * from the pool while the output's allocation holds the lock */
    pthread_mutexattr_t at;
    bool ok = pthread_mutexattr_init(&at) == 0;
    ok = ok && pthread_mutexattr_settype(&at, PTHREAD_MUTEX_RECURSIVE) == 0 &&
         pthread_mutex_init(&r->mu, &at) == 0;
    pthread_mutexattr_destroy(&at);
    if (!ok) return ox_err_set(e, OX_ENOMEM, "out of memory");
    r->mu_ready = true;
  }
  if (!scratch_for(r, g, &job, &ids)) return ox_err_set(e, OX_ENOMEM, "out of memory");
  job.nodes = ids;
  uint64_t runs = __atomic_fetch_add(&g->lv_runs, 1, __ATOMIC_RELAXED);
  int rc = OX_OK;
  for (size_t l = 0; l < g->n_levels && !rc; l++) {
    size_t m = 0;
    for (uint32_t t = g->lv_start[l]; t < g->lv_start[l + 1]; t++)
      if (!g->nodes[g->lv_node[t]].folded) ids[m++] = g->lv_node[t];
    if (m && ox_rt_cancelled(r))
      return ox_err_set(e, OX_ECANCELLED, "cancelled by the caller before %s",
                        g->nodes[ids[0]].path);
    if (m == 1) {
      ctx->n = &g->nodes[ids[0]];
      rc = ox_rt_run_node(ctx);
    } else if (m > 1 && !side_by_side(g, l, m, runs)) {
      uint64_t t0 = now_ns();
      for (size_t t = 0; t < m && !rc; t++) {
        ctx->n = &g->nodes[ids[t]];
        rc = ox_rt_run_node(ctx);
      }
      if (!rc && runs) note_time(&g->lv_ns[2 * l], now_ns() - t0);
    } else if (m > 1) {
      uint64_t t0 = now_ns();
      r->concurrent = true;
      ox_parallel_for(r->pool, (int64_t)m, 1, lv_task, &job);
      r->concurrent = false;
      note_time(&g->lv_ns[2 * l + 1], now_ns() - t0);
      /* the first failure in graph order names the run's error; the
       * other nodes' outputs stay in their slots, released with the frame */
      for (size_t t = 0; t < m && !rc; t++)
        if (job.rcs[t]) {
          rc = job.rcs[t];
          if (e) *e = job.errs[t];
        }
    }
    for (size_t t = 0; t < m && !rc; t++) {
      const rt_node *rn = &g->nodes[ids[t]];
      if (rn->cat1 && ctx->kept_frame) ox_rt_cat_learn(r, g, (size_t)rn->cat1 - 1, vals);
    }
    if (rc) break;
    for (uint32_t t = g->lv_rel_start[l]; t < g->lv_rel_start[l + 1]; t++) {
      int32_t k = g->lv_rel[t];
      if (vals[k]) {
        ox_rt_release(r, vals[k]);
        vals[k] = NULL;
      }
    }
  }
  return rc;
}
