/* conv_fold.c - constants that follow a convolution folded into its weights.
 *
 * A Conv with constant float32 weights (and bias) whose output feeds only an
 * inference-mode BatchNormalization with constant parameters, or only a Mul
 * or Add by a constant that is a scalar or one value per output channel,
 * gets new weights and bias (computed in double, stored as float; new
 * initializers named W#foldedN) and the following node is dropped; repeated
 * while the Conv's only reader is such a node. Runs before the epilogue
 * fusion (conv_epilogue.c), which then sees the Conv's activation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pass.h"

/* A float32 constant with M elements per output channel of a Conv whose
 * output has rank r, or with one element: *per set to its length (1 or M). */
static bool channel_const(const ox_pass_view *v, const char *name, int64_t m, size_t r,
                          ox_pass_floats *c, int64_t *per) {
  if (!v->graph_float_const(v, name, c) || c->rank > r) return false;
  if (c->numel == 1) {
    *per = 1;
    return true;
  }
  for (size_t d = 0; d < c->rank; d++) {
    size_t axis = r - c->rank + d;
    if (c->dims[d] != (axis == 1 ? m : 1)) return false;
  }
  *per = m;
  return true;
}

/* BatchNormalization in inference mode with per-channel constants. */
static bool bn_foldable(const ox_pass_view *v, size_t j, int64_t m, ox_pass_floats *p) {
  const ox_node *n = &v->nodes[j];
  int64_t ver = v->opsets[j];
  if (!ox_opt_op_is(n, "BatchNormalization") || n->n_input != 5 || ver < 7) return false;
  for (size_t o = 1; o < n->n_output; o++)
    if (n->output[o] && *n->output[o]) return false;
  if (ver >= 14 && ox_node_attr_int(n, "training_mode", 0) != 0) return false;
  if (ver < 9 && ox_node_attr_int(n, "spatial", 1) != 1) return false;
  for (size_t k = 1; k < 5; k++)
    if (!v->graph_float_const(v, n->input[k], &p[k - 1]) || p[k - 1].rank != 1 ||
        p[k - 1].numel != m)
      return false;
  return true;
}

/* Folds the BatchNormalization / Mul / Add nodes that follow Conv node i. */
static int fold_at(ox_pass_view *v, size_t i) {
  ox_node *c = &v->nodes[i];
  if (!ox_opt_op_is(c, "Conv") || c->n_input < 2 || c->n_input > 3 || c->n_output != 1)
    return OX_OK;
  ox_pass_floats w, b;
  bool has_b = c->n_input == 3 && *c->input[2] && v->graph_float_const(v, c->input[2], &b);
  if (!v->graph_float_const(v, c->input[1], &w) || w.rank < 3 || w.dims[0] < 1) return OX_OK;
  int64_t m = w.dims[0], per_m = w.numel / m;
  if (c->n_input == 3 && *c->input[2] && (!has_b || b.rank != 1 || b.numel != m)) return OX_OK;
  double *sd = NULL, *bd = NULL; /* per channel: weight scale, bias */
  const char *out = c->output[0];
  size_t folded = 0;
  int64_t j;
  while ((j = v->sole_reader(v, out)) > (int64_t)i) {
    const ox_node *n = &v->nodes[j];
    ox_pass_floats p[4], k;
    int64_t per = 0;
    int kind = 0; /* 1 BN, 2 Mul, 3 Add */
    if (bn_foldable(v, (size_t)j, m, p) && strcmp(n->input[0], out) == 0) {
      kind = 1;
    } else if ((ox_opt_op_is(n, "Mul") || ox_opt_op_is(n, "Add")) && n->n_input == 2 &&
               v->opsets[j] >= 7 && n->n_output == 1) {
      const char *other = strcmp(n->input[0], out) == 0 ? n->input[1] : n->input[0];
      if (strcmp(other, out) != 0 && channel_const(v, other, m, w.rank, &k, &per))
        kind = ox_opt_op_is(n, "Mul") ? 2 : 3;
    }
    if (!kind) break;
    if (!sd) {
      sd = malloc((size_t)m * sizeof *sd);
      bd = malloc((size_t)m * sizeof *bd);
      if (!sd || !bd) {
        free(sd);
        free(bd);
        return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
      }
      for (int64_t q = 0; q < m; q++) {
        sd[q] = 1;
        bd[q] = has_b ? b.data[q] : 0.0;
      }
    }
    for (int64_t q = 0; q < m; q++) {
      double sc = 1, sh = 0;
      if (kind == 1) {
        double eps = ox_node_attr_float(n, "epsilon", 1e-5f);
        const float *scale = p[0].data, *bias = p[1].data, *mean = p[2].data, *var = p[3].data;
        sc = (double)scale[q] / sqrt((double)var[q] + eps);
        sh = (double)bias[q] - (double)mean[q] * sc;
      } else {
        double kv = k.data[per == 1 ? 0 : q];
        if (kind == 2)
          sc = kv;
        else
          sh = kv;
      }
      sd[q] *= sc;
      bd[q] = bd[q] * sc + sh;
    }
    v->drop[j] = true;
    out = n->output[0];
    folded++;
  }
  if (!folded) return OX_OK;
  const char *wn = NULL, *bn = NULL;
  float *wf = NULL, *bf = NULL;
  int rc = v->new_float_init(v, c->input[1], w.dims, w.rank, &wf, &wn);
  if (!rc) rc = v->new_float_init(v, out, &m, 1, &bf, &bn);
  if (!rc) {
    for (int64_t q = 0; q < m; q++) {
      for (int64_t r = 0; r < per_m; r++)
        wf[q * per_m + r] = (float)((double)w.data[q * per_m + r] * sd[q]);
      bf[q] = (float)bd[q];
    }
  }
  free(sd);
  free(bd);
  if (rc) return rc;
  char **in = ox_arena_calloc(v->a, 4, sizeof *in);
  char **o = ox_arena_calloc(v->a, 2, sizeof *o);
  if (!in || !o) return ox_err_set(v->e, OX_ENOMEM, "out of memory fusing the graph");
  in[0] = c->input[0];
  in[1] = (char *)wn;
  in[2] = (char *)bn;
  o[0] = (char *)out;
  c->input = in;
  c->n_input = 3;
  c->output = o;
  return OX_OK;
}

int ox_opt_conv_fold(ox_pass_view *v) {
  for (size_t i = 0; i < v->n_node; i++) {
    int rc = fold_at(v, i);
    if (rc) return rc;
  }
  return OX_OK;
}
