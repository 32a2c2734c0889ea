/* executor.c - runs a prepared graph: frames of value slots, kernel calls,
 * release after last use into a size-keyed pool, subgraph calls, the
 * ox_kctx_* accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt.h"

#define OX_VPOOL_CAP 256

/* ------------------------------------------------------------ buffer pool */

/* A value's count is read with the same atomics ox_value_ref uses: a tensor
 * of this run with count 1 is this run's alone. */
static int refs(const ox_value *v) { return __atomic_load_n(&v->refcount, __ATOMIC_ACQUIRE); }

/* While nodes of one level run side by side (branches.c) the run's pool,
 * frames and Concat buffers are shared by several threads: these take the
 * run's lock then, and nothing otherwise. */
static void run_lock(rt_run *r) {
  if (r && r->concurrent) pthread_mutex_lock(&r->mu);
}
static void run_unlock(rt_run *r) {
  if (r && r->concurrent) pthread_mutex_unlock(&r->mu);
}

static void release_locked(rt_run *r, ox_value *v) {
  if (!v) return;
  /* the last view of a buffer (a placed Concat input, a Reshape) hands the
   * buffer itself to the pool rather than freeing it */
  if (r && v->kind == OX_VAL_TENSOR && !v->owns_data && v->base && refs(v) == 1 &&
      refs(v->base) == 1) {
    ox_value *b = v->base;
    v->base = NULL;
    ox_value_unref(v);
    release_locked(r, b);
    return;
  }
  if (r && refs(v) == 1 && v->kind == OX_VAL_TENSOR && v->owns_data && v->data &&
      v->dtype != OX_STRING && v->dims == v->small_dims && v->nbytes >= 64) {
    if (!r->vpool) r->vpool = calloc(OX_VPOOL_CAP, sizeof *r->vpool);
    if (r->vpool) {
      if (r->n_vpool == OX_VPOOL_CAP) { /* full: drop the oldest */
        ox_value_unref(r->vpool[0]);
        memmove(r->vpool, r->vpool + 1, (OX_VPOOL_CAP - 1) * sizeof *r->vpool);
        r->n_vpool--;
      }
      r->vpool[r->n_vpool++] = v;
      return;
    }
  }
  ox_value_unref(v);
}

void ox_rt_release(rt_run *r, ox_value *v) {
  if (!v) return;
  run_lock(r);
  release_locked(r, v);
  run_unlock(r);
}

void ox_rt_run_free(rt_run *r) {
  if (!r) return;
  if (r->mu_ready) pthread_mutex_destroy(&r->mu);
  free(r->par_scratch);
  for (size_t i = 0; i < r->n_vpool; i++) ox_value_unref(r->vpool[i]);
  free(r->vpool);
  for (size_t i = 0; i < r->n_frames; i++) {
    free(r->frames[i].vals);
    ox_rt_cat_lays_free(r->frames[i].lays, r->frames[i].n_lays);
  }
  free(r->frames);
  free(r);
}

/* A tensor from the run's pool with exactly nbytes of storage, or NULL. */
static ox_value *pool_take(rt_run *r, int32_t dtype, const int64_t *dims, size_t rank,
                           size_t nbytes, int64_t numel) {
  if (!r || rank > 8) return NULL;
  for (size_t i = r->n_vpool; i-- > 0;) {
    ox_value *v = r->vpool[i];
    if (v->nbytes != nbytes) continue;
    r->vpool[i] = r->vpool[--r->n_vpool];
    v->dtype = dtype;
    v->rank = rank;
    if (rank) memcpy(v->small_dims, dims, rank * sizeof *dims);
    v->numel = numel;
    return v;
  }
  return NULL;
}

ox_value *ox_rt_tensor_take(rt_run *r, int32_t dtype, const int64_t *dims, size_t rank, ox_err *e) {
  size_t es = ox_value_elem_size(dtype), nbytes;
  int64_t numel;
  if (dtype != OX_STRING && es && ox_numel(dims, rank, &numel) && numel >= 0 &&
      ox_mul_size((size_t)numel, es, &nbytes) && nbytes >= 64) {
    run_lock(r);
    ox_value *v = pool_take(r, dtype, dims, rank, nbytes, numel);
    run_unlock(r);
    if (v) return v;
  }
  return ox_tensor_new_uninit(dtype, dims, rank, e);
}

bool ox_rt_cancelled(const rt_run *r) {
  const ox_session *s = r->s;
  if (s->opts.cancel && s->opts.cancel(s->opts.cancel_user)) return true;
  const ox_run_opts *ro = r->ro;
  if (!ro) return false;
  if (ro->terminate && __atomic_load_n(ro->terminate, __ATOMIC_RELAXED)) return true;
  return ro->cancel && ro->cancel(ro->cancel_user);
}

/* ------------------------------------------------------------ kctx */

size_t ox_kctx_n_inputs(const ox_kctx *c) { return c->n->node->n_input; }
size_t ox_kctx_n_outputs(const ox_kctx *c) { return c->n->node->n_output; }

ox_value *ox_kctx_input(ox_kctx *c, size_t i) { return i < c->n->node->n_input ? c->in[i] : NULL; }

static ox_value *alloc_output(ox_kctx *c, size_t i, int32_t dtype, const int64_t *dims, size_t rank,
                              bool zero) {
  rt_node *rn = c->n;
  if (i >= rn->node->n_output) {
    ox_kctx_fail(c, OX_ERUNTIME, "output %zu does not exist (the node has %zu)", i,
                 rn->node->n_output);
    return NULL;
  }
  size_t es = ox_value_elem_size(dtype);
  int64_t numel = 1;
  size_t nbytes = 0;
  bool ok = es != 0 && (rank == 0 || dims);
  for (size_t k = 0; ok && k < rank; k++)
    if (dims[k] < 0) ok = false;
  if (ok && !ox_numel(dims, rank, &numel)) ok = false;
  if (ok && !ox_mul_size((size_t)numel, es, &nbytes)) ok = false;
  bool may_alias = rn->k && (rn->k->alias_outputs >> i & 1u);
  ox_value *v = ok ? ox_rt_out_take(c, rn->out[i], dtype, dims, rank, may_alias) : NULL;
  run_lock(c->run);
  if (!v && ok && c->kept_frame) v = ox_rt_cat_take(c, rn->out[i], dtype, dims, rank);
  if (!v && ok && dtype != OX_STRING && nbytes >= 64)
    v = pool_take(c->run, dtype, dims, rank, nbytes, numel);
  run_unlock(c->run);
  if (!v) {
    ox_err e2 = {0};
    v = ox_tensor_new_uninit(dtype, dims, rank, &e2);
    if (!v) {
      char shape[256];
      int k = 0;
      for (size_t d = 0; d < rank && k < 200; d++)
        k += snprintf(shape + k, sizeof shape - (size_t)k, "%s%lld", d ? "," : "",
                      (long long)dims[d]);
      shape[k < 0 ? 0 : k] = 0;
      ox_kctx_fail(c, e2.code ? e2.code : OX_ENOMEM, "output %zu of shape [%s]: %s", i, shape,
                   e2.msg);
      return NULL;
    }
  }
  if (zero && dtype != OX_STRING) memset(v->data, 0, v->nbytes);
  if (c->out[i]) ox_rt_release(c->run, c->out[i]);
  c->out[i] = v;
  return v;
}

/* true when [p, p + n) overlaps tensor v's storage */
static bool overlaps(const ox_value *v, const void *p, size_t n) {
  if (!v || v->kind != OX_VAL_TENSOR || !v->data || !v->nbytes || !n) return false;
  const char *a = v->data, *b = p;
  return a < b + n && b < a + v->nbytes;
}

ox_value *ox_rt_out_take(ox_kctx *c, int32_t k, int32_t dtype, const int64_t *dims, size_t rank,
                         bool may_alias) {
  rt_run *r = c->run;
  rt_graph *g = c->g;
  if (!r || !r->placed || k < 0 || g != c->s->main) return NULL;
  for (size_t j = 0; j < g->n_out; j++) {
    ox_value *b = r->placed[j];
    if (g->out[j] != k || !b || b->kind != OX_VAL_TENSOR || b->dtype != dtype ||
        !ox_shape_equal(b->dims, b->rank, dims, rank))
      continue;
    /* over an input of the node or of the graph: only where the kernel
     * writes that output in place of its input (ox_kernel_def.alias_outputs);
     * anything else reads its inputs after it wrote, or Concat copies them */
    if (!may_alias) {
      for (size_t i = 0; i < c->n->node->n_input; i++)
        if (overlaps(c->in[i], b->data, b->nbytes)) return NULL;
      for (size_t i = 0; i < g->n_in; i++)
        if (g->in[i] >= 0 && overlaps(c->vals[g->in[i]], b->data, b->nbytes)) return NULL;
    }
    return ox_value_ref(b);
  }
  return NULL;
}

ox_value *ox_kctx_output(ox_kctx *c, size_t i, int32_t dtype, const int64_t *dims, size_t rank) {
  return alloc_output(c, i, dtype, dims, rank, false);
}

ox_value *ox_kctx_output_zero(ox_kctx *c, size_t i, int32_t dtype, const int64_t *dims,
                              size_t rank) {
  return alloc_output(c, i, dtype, dims, rank, true);
}

int ox_kctx_set_output(ox_kctx *c, size_t i, ox_value *v) {
  rt_node *rn = c->n;
  if (i >= rn->node->n_output) {
    ox_value_unref(v);
    return ox_kctx_fail(c, OX_ERUNTIME, "output %zu does not exist", i);
  }
  if (c->out[i]) ox_rt_release(c->run, c->out[i]);
  c->out[i] = v;
  return OX_OK;
}

bool ox_kctx_output_wanted(const ox_kctx *c, size_t i) {
  return i < c->n->node->n_output && c->n->wanted[i];
}

const ox_node *ox_kctx_node(const ox_kctx *c) { return c->n->node; }
const ox_kinfo *ox_kctx_info(const ox_kctx *c) { return &c->n->info; }
ox_thread_pool *ox_kctx_pool(const ox_kctx *c) {
  if (c->serial) return NULL; /* one of several nodes running side by side */
  return c->run ? c->run->pool : c->s->pool;
}

int ox_kctx_fail(ox_kctx *c, int code, const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ox_err_set(c->e, code ? code : OX_ERUNTIME, "%s: %s", c->n->path, msg);
}

int ox_kctx_error(const ox_kctx *c) { return c->e ? c->e->code : OX_OK; }

int ox_kctx_check_cancel(ox_kctx *c) {
  if (c->run && ox_rt_cancelled(c->run))
    return ox_err_set(c->e, OX_ECANCELLED, "%s: cancelled by the caller", c->n->path);
  return OX_OK;
}

int ox_kctx_run_subgraph(ox_kctx *c, const ox_graph *g, ox_value *const *inputs, size_t n_inputs,
                         ox_value **outputs, size_t n_outputs) {
  rt_node *rn = c->n;
  for (size_t i = 0; i < rn->n_subs; i++)
    if (rn->sub_src[i] == g) {
      rt_graph *sg = rn->subs[i];
      if (n_inputs != sg->n_in)
        return ox_kctx_fail(c, OX_EMODEL, "subgraph '%s' declares %zu inputs, %zu given",
                            g->name ? g->name : "", sg->n_in, n_inputs);
      if (n_outputs != sg->n_out)
        return ox_kctx_fail(c, OX_EMODEL, "subgraph '%s' declares %zu outputs, %zu expected",
                            g->name ? g->name : "", sg->n_out, n_outputs);
      if (!c->run) return ox_kctx_fail(c, OX_ERUNTIME, "subgraphs do not run at preparation");
      return ox_rt_run_graph(c->run, sg, c->vals, inputs, n_inputs, outputs, n_outputs, c->e);
    }
  return ox_kctx_fail(c, OX_EINVAL, "the graph given is not an attribute of this node");
}

/* ------------------------------------------------------------ running */

static void clear_frame(rt_run *r, rt_graph *g, ox_value **vals) {
  for (size_t k = 0; k < g->n_slots; k++)
    if (vals[k]) {
      ox_rt_release(r, vals[k]);
      vals[k] = NULL;
    }
}

/* The run's frame for g (made on first use and kept), or a fresh one when g
 * is already running in this run (re-entered). NULL on OOM. */
static ox_value **frame_take_locked(rt_run *r, rt_graph *g, bool *fresh) {
  size_t n = g->n_slots + g->max_in + g->max_out + 1;
  *fresh = false;
  if (g->id < r->n_frames && r->frames[g->id].vals && !r->frames[g->id].busy) {
    r->frames[g->id].busy = true;
    return r->frames[g->id].vals;
  }
  if (g->id < r->n_frames && r->frames[g->id].busy) {
    *fresh = true;
    return calloc(n, sizeof(ox_value *));
  }
  if (g->id >= r->n_frames) {
    size_t cap = r->s->n_graphs > g->id ? r->s->n_graphs : g->id + 1;
    rt_frame *f = realloc(r->frames, cap * sizeof *f);
    if (!f) return NULL;
    memset(f + r->n_frames, 0, (cap - r->n_frames) * sizeof *f);
    r->frames = f;
    r->n_frames = cap;
  }
  r->frames[g->id].vals = calloc(n, sizeof(ox_value *));
  if (!r->frames[g->id].vals) return NULL;
  r->frames[g->id].busy = true;
  return r->frames[g->id].vals;
}

static ox_value **frame_take(rt_run *r, rt_graph *g, bool *fresh) {
  run_lock(r);
  ox_value **v = frame_take_locked(r, g, fresh);
  run_unlock(r);
  return v;
}

static void frame_give(rt_run *r, rt_graph *g, ox_value **vals, bool fresh) {
  if (fresh) {
    free(vals);
    return;
  }
  run_lock(r);
  r->frames[g->id].busy = false;
  run_unlock(r);
}

/* Runs ctx->n: gathers its inputs from ctx->vals, calls the kernel (timed
 * with opts.profile) and stores its outputs in their slots. On failure the
 * outputs made so far are released and *ctx->e names the node. */
int ox_rt_run_node(ox_kctx *ctx) {
  rt_node *rn = ctx->n;
  const ox_node *n = rn->node;
  rt_run *r = ctx->run;
  ox_value **vals = ctx->vals, **node_in = ctx->in, **node_out = ctx->out;
  ox_err *e = ctx->e;
  int rc;
  for (size_t j = 0; j < n->n_input; j++) node_in[j] = rn->in[j] >= 0 ? vals[rn->in[j]] : NULL;
  for (size_t j = 0; j < n->n_output; j++) node_out[j] = NULL;
  if (ctx->s->opts.profile) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = rn->k->run(ctx, rn->state);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
    __atomic_fetch_add(&rn->prof_ns, ns, __ATOMIC_RELAXED);
    __atomic_fetch_add(&rn->prof_runs, 1, __ATOMIC_RELAXED);
    uint64_t lo = __atomic_load_n(&rn->prof_min_ns, __ATOMIC_RELAXED);
    while ((lo == 0 || ns < lo) &&
           !__atomic_compare_exchange_n(&rn->prof_min_ns, &lo, ns ? ns : 1, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
  } else {
    rc = rn->k->run(ctx, rn->state);
  }
  for (size_t j = 0; j < n->n_input; j++) node_in[j] = NULL;
  if (rc) {
    if (e && (e->code == OX_OK || !e->msg[0])) ox_err_set(e, rc, "%s: failed", rn->path);
    if (e && !e->code) e->code = rc;
    for (size_t j = 0; j < n->n_output; j++) {
      ox_rt_release(r, node_out[j]);
      node_out[j] = NULL;
    }
    return rc;
  }
  for (size_t j = 0; j < n->n_output; j++) {
    ox_value *v = node_out[j];
    node_out[j] = NULL;
    int32_t k = rn->out[j];
    if (k < 0) {
      ox_rt_release(r, v);
      continue;
    }
    if (vals[k]) ox_rt_release(r, vals[k]);
    vals[k] = v;
  }
  return OX_OK;
}

int ox_rt_run_graph(rt_run *r, rt_graph *g, ox_value **parent_vals, ox_value *const *inputs,
                    size_t n_in, ox_value **outputs, size_t n_out, ox_err *e) {
  ox_session *s = r->s;
  bool fresh;
  ox_value **vals = frame_take(r, g, &fresh);
  if (!vals) return ox_err_set(e, OX_ENOMEM, "out of memory");
  ox_value **node_in = vals + g->n_slots, **node_out = node_in + g->max_in;
  int rc = OX_OK;
  for (size_t k = 0; k < n_out; k++) outputs[k] = NULL;
  for (size_t k = 0; k < g->n_slots; k++) {
    const rt_slot *sl = &g->slots[k];
    if (sl->cst)
      vals[k] = ox_value_ref(sl->cst);
    else if (sl->import >= 0 && parent_vals)
      vals[k] = ox_value_ref(parent_vals[sl->import]);
  }
  for (size_t i = 0; i < n_in && i < g->n_in; i++) {
    if (!inputs[i]) continue;
    int32_t k = g->in[i];
    if (vals[k]) ox_value_unref(vals[k]);
    vals[k] = ox_value_ref(inputs[i]);
  }
  ox_kctx ctx = {.s = s, .run = r, .g = g, .vals = vals, .in = node_in, .out = node_out, .e = e};
  ctx.kept_frame = !fresh && g->n_cats > 0; /* Concat layouts live in kept frames */
  if (g->levels && r->pool && ox_thread_pool_size(r->pool) > 1 && !s->opts.max_memory) {
    rc = ox_rt_run_levels(r, g, &ctx);
    if (rc) goto done;
  } else {
    for (size_t i = 0; i < g->n_nodes; i++) {
      rt_node *rn = &g->nodes[i];
      if (!rn->folded) {
        if (ox_rt_cancelled(r)) {
          rc = ox_err_set(e, OX_ECANCELLED, "cancelled by the caller before %s", rn->path);
          goto done;
        }
        ctx.n = rn;
        if ((rc = ox_rt_run_node(&ctx))) goto done;
        if (rn->cat1 && ctx.kept_frame) ox_rt_cat_learn(r, g, (size_t)rn->cat1 - 1, vals);
      }
      for (size_t j = 0; j < rn->n_rel; j++) {
        int32_t k = rn->rel[j];
        if (vals[k]) {
          ox_rt_release(r, vals[k]);
          vals[k] = NULL;
        }
      }
    }
  }
  for (size_t k = 0; k < n_out; k++) {
    outputs[k] = ox_value_ref(vals[g->out[k]]);
    if (!outputs[k] && !(g->g->output[k].type && g->g->output[k].type->kind == OX_TYPE_OPTIONAL)) {
      rc = ox_err_set(e, OX_ERUNTIME, "%s%sgraph output '%s' was not produced", g->path,
                      *g->path ? ": " : "", g->g->output[k].name);
      for (size_t j = 0; j <= k; j++) {
        ox_value_unref(outputs[j]);
        outputs[j] = NULL;
      }
      goto done;
    }
  }
done:
  clear_frame(r, g, vals);
  frame_give(r, g, vals, fresh);
  return rc;
}
