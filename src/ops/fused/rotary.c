/* rotary.c - RotaryFused (domain ai.onnxc, made by src/opt/rotary.c from
 * Hugging Face's rotate-half rotary embedding written out):
 *
 *   Y = X * cos + R * sin,   R = Concat(-X[..., split:], X[..., :split])
 *
 * along X's last axis (length D), cos and sin broadcast with X as Mul and
 * Add broadcast them. Each output row is made in one pass over the rows of
 * X, cos and sin, with the float operations of the nodes it replaces in
 * their order (product, product, sum: the same bits), where the unfused
 * graph wrote the two halves, the Concat and three products through memory.
 * The leading axes broadcast as the elementwise operators do (oc_bcast over
 * rows, spread over the thread pool); a last axis of cos or sin of length 1
 * is read as one value. */
#include "../fused.h"
#include "../opcore.h"

typedef struct rot_state {
  int64_t split;
} rot_state;

static int rot_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  int64_t split = ox_node_attr_int(info->node, "split", 0);
  if (split < 1)
    return oc_prep_fail(info, e, "split must be 1 or more, not %lld", (long long)split);
  rot_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  s->split = split;
  *state = s;
  return OX_OK;
}

typedef struct rot_job {
  const float *x, *cs, *sn;
  float *y;
  int64_t D;         /* X's last axis, and Y's */
  int64_t dc, ds;    /* cos's and sin's last axes: D or 1 */
  int64_t h;         /* the split, at most D */
  const oc_bcast *b; /* the leading axes, in rows */
} rot_job;

/* one row: y[j] = x[j] cos[j] + r[j] sin[j], r[j] = -x[h + j] for j < D - h,
 * x[j - (D - h)] after */
static void rot_row(const rot_job *j, const float *x, const float *c, const float *s, float *y) {
  int64_t D = j->D, n1 = D - j->h;
  if (j->dc == D && j->ds == D) {
    for (int64_t k = 0; k < n1; k++) {
      float a = x[k] * c[k], b = -x[j->h + k] * s[k];
      y[k] = a + b;
    }
    for (int64_t k = n1; k < D; k++) {
      float a = x[k] * c[k], b = x[k - n1] * s[k];
      y[k] = a + b;
    }
    return;
  }
  int64_t ic = j->dc == D ? 1 : 0, is = j->ds == D ? 1 : 0;
  for (int64_t k = 0; k < D; k++) {
    float r = k < n1 ? -x[j->h + k] : x[k - n1];
    float a = x[k] * c[k * ic], b = r * s[k * is];
    y[k] = a + b;
  }
}

/* output rows [r0, r1) of the leading axes' broadcast: b's coalesced
 * dims walked as one multi-index, each input's row offset following */
static void rot_range(void *arg, int64_t r0, int64_t r1) {
  const rot_job *j = arg;
  const oc_bcast *b = j->b;
  size_t r = b->rank;
  int64_t idx[OC_MAXRANK], off[3] = {0, 0, 0}, rem = r0;
  for (size_t d = r; d-- > 0;) {
    idx[d] = rem % b->dims[d];
    rem /= b->dims[d];
    for (int k = 0; k < 3; k++) off[k] += idx[d] * b->st[k][d];
  }
  for (int64_t row = r0; row < r1; row++) {
    rot_row(j, j->x + off[0] * j->D, j->cs + off[1] * j->dc, j->sn + off[2] * j->ds,
            j->y + row * j->D);
    for (size_t d = r; d-- > 0;) {
      idx[d]++;
      for (int k = 0; k < 3; k++) off[k] += b->st[k][d];
      if (idx[d] < b->dims[d]) break;
      for (int k = 0; k < 3; k++) off[k] -= b->st[k][d] * b->dims[d];
      idx[d] = 0;
    }
  }
}

static bool is_f32(const ox_value *v) {
  return v && v->kind == OX_VAL_TENSOR && v->dtype == OX_FLOAT;
}

static int rot_run(ox_kctx *c, void *st) {
  const rot_state *s = st;
  ox_value *in[3] = {ox_kctx_input(c, 0), ox_kctx_input(c, 1), ox_kctx_input(c, 2)};
  if (!is_f32(in[0]) || !is_f32(in[1]) || !is_f32(in[2]))
    return ox_kctx_fail(c, OX_ERUNTIME, "X, cos and sin must be float tensors");
  if (in[0]->rank == 0) return ox_kctx_fail(c, OX_ERUNTIME, "X must have rank 1 or more");
  int64_t D = in[0]->dims[in[0]->rank - 1], last[3];
  const int64_t *dims[3];
  size_t ranks[3];
  for (int k = 0; k < 3; k++) {
    last[k] = in[k]->rank ? in[k]->dims[in[k]->rank - 1] : 1;
    dims[k] = in[k]->dims;
    ranks[k] = in[k]->rank ? in[k]->rank - 1 : 0;
    if (k && last[k] != D && last[k] != 1)
      return ox_kctx_fail(c, OX_ERUNTIME, "the last axis of %s (%lld) is not X's (%lld) nor 1",
                          k == 1 ? "cos" : "sin", (long long)last[k], (long long)D);
  }
  /* the leading axes broadcast as rows */
  oc_bcast b;
  if (oc_bcast_init(&b, c, dims, ranks, 3)) return OX_ERUNTIME;
  int64_t od[OC_MAXRANK + 1];
  for (size_t d = 0; d < b.out_rank; d++) od[d] = b.out_dims[d];
  od[b.out_rank] = D;
  ox_value *y = ox_kctx_output(c, 0, OX_FLOAT, od, b.out_rank + 1);
  if (!y) return OX_ERUNTIME;
  if (y->numel == 0) return OX_OK;
  rot_job j = {in[0]->data, in[1]->data, in[2]->data, y->data,
               D,           last[1],     last[2],     s->split < D ? s->split : D,
               &b};
  ox_parallel_for(ox_kctx_pool(c), b.numel, 1 + 16384 / D, rot_range, &j);
  return OX_OK;
}

const ox_kernel_def ox_ops_rotary[] = {
    {OX_FUSED_DOMAIN, OX_ONNXC_ROTARY, 1, 1, rot_prepare, rot_run, NULL},
    {0},
};
