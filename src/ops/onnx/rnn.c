/* rnn.c - the recurrent layers RNN, GRU and LSTM (forward, reverse,
 * bidirectional; layout 0 and 1; sequence_lens; initial states; peepholes;
 * clip; linear_before_reset; input_forget). Per direction the input
 * projection X W^T of every step is one GEMM; each step then does H R^T and
 * the gate arithmetic in float32. */
#include <strings.h>

#include "../../kernels/gemm.h"
#include "../nn_common.h"

enum { RNN_PLAIN, RNN_GRU, RNN_LSTM };

typedef struct rnn_attrs {
  int kind, gates, n_act; /* n_act activations per direction */
  int64_t hidden, layout;
  int dirs;
  bool reverse_only, lbr, input_forget, has_clip;
  float clip;
  nn_act act[2][3];
} rnn_attrs;

static bool act_parse(const char *s, size_t len, nn_act *a) {
  static const struct {
    const char *name;
    nn_act_kind kind;
    float alpha, beta;
  } tab[] = {
      {"Relu", NN_ACT_RELU, 0, 0},
      {"Tanh", NN_ACT_TANH, 0, 0},
      {"Sigmoid", NN_ACT_SIGMOID, 0, 0},
      {"Affine", NN_ACT_AFFINE, 1.0f, 0.0f},
      {"LeakyRelu", NN_ACT_LEAKYRELU, 0.01f, 0},
      {"ThresholdedRelu", NN_ACT_THRESHOLDEDRELU, 1.0f, 0},
      {"ScaledTanh", NN_ACT_SCALEDTANH, 1.0f, 1.0f},
      {"HardSigmoid", NN_ACT_HARDSIGMOID, 0.2f, 0.5f},
      {"Elu", NN_ACT_ELU, 1.0f, 0},
      {"Softsign", NN_ACT_SOFTSIGN, 0, 0},
      {"Softplus", NN_ACT_SOFTPLUS, 0, 0},
  };
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strlen(tab[i].name) == len && strncasecmp(tab[i].name, s, len) == 0) {
      a->kind = tab[i].kind, a->alpha = tab[i].alpha, a->beta = tab[i].beta;
      return true;
    }
  return false;
}

static bool act_uses_alpha(nn_act_kind k) {
  return k == NN_ACT_AFFINE || k == NN_ACT_LEAKYRELU || k == NN_ACT_THRESHOLDEDRELU ||
         k == NN_ACT_SCALEDTANH || k == NN_ACT_HARDSIGMOID || k == NN_ACT_ELU;
}
static bool act_uses_beta(nn_act_kind k) {
  return k == NN_ACT_AFFINE || k == NN_ACT_SCALEDTANH || k == NN_ACT_HARDSIGMOID;
}

static int rnn_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  const ox_node *n = info->node;
  const char *name = n->name ? n->name : "";
  rnn_attrs *a = ox_arena_calloc(info->arena, 1, sizeof *a);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  a->kind = strcmp(n->op_type, "GRU") == 0    ? RNN_GRU
            : strcmp(n->op_type, "LSTM") == 0 ? RNN_LSTM
                                              : RNN_PLAIN;
  a->gates = a->kind == RNN_GRU ? 3 : a->kind == RNN_LSTM ? 4 : 1;
  a->n_act = a->kind == RNN_GRU ? 2 : a->kind == RNN_LSTM ? 3 : 1;
  a->hidden = ox_node_attr_int(n, "hidden_size", 0);
  a->layout = ox_node_attr_int(n, "layout", 0);
  a->lbr = ox_node_attr_int(n, "linear_before_reset", 0) != 0;
  a->input_forget = ox_node_attr_int(n, "input_forget", 0) != 0;
  const ox_attr *cl = ox_node_attr(n, "clip");
  a->has_clip = cl != NULL;
  a->clip = cl ? cl->f : 0.0f;
  const char *dir = ox_node_attr_str(n, "direction", "forward");
  if (strcmp(dir, "forward") == 0)
    a->dirs = 1;
  else if (strcmp(dir, "reverse") == 0)
    a->dirs = 1, a->reverse_only = true;
  else if (strcmp(dir, "bidirectional") == 0)
    a->dirs = 2;
  else
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): unknown direction '%s'", name, n->op_type,
                      dir);
  if (a->layout != 0 && a->layout != 1)
    return ox_err_set(e, OX_EMODEL, "node '%s' (%s): layout must be 0 or 1", name, n->op_type);
  /* default activations */
  for (int d = 0; d < 2; d++) {
    if (a->kind == RNN_PLAIN) act_parse("Tanh", 4, &a->act[d][0]);
    if (a->kind != RNN_PLAIN) act_parse("Sigmoid", 7, &a->act[d][0]);
    if (a->kind != RNN_PLAIN) act_parse("Tanh", 4, &a->act[d][1]);
    if (a->kind == RNN_LSTM) act_parse("Tanh", 4, &a->act[d][2]);
  }
  const ox_attr *acts = ox_node_attr(n, "activations");
  if (acts && acts->n_strings) {
    const ox_attr *al = ox_node_attr(n, "activation_alpha"),
                  *be = ox_node_attr(n, "activation_beta");
    size_t ia = 0, ib = 0, need = (size_t)(a->n_act * a->dirs);
    if (acts->n_strings != need && acts->n_strings != (size_t)a->n_act)
      return ox_err_set(e, OX_EMODEL, "node '%s' (%s): %zu activations given, expected %zu", name,
                        n->op_type, acts->n_strings, need);
    for (size_t i = 0; i < need; i++) {
      const ox_bytes *s = &acts->strings[i % acts->n_strings];
      nn_act *ac = &a->act[i / (size_t)a->n_act][i % (size_t)a->n_act];
      if (!act_parse((const char *)s->data, s->size, ac))
        return ox_err_set(e, OX_EUNSUPPORTED, "node '%s' (%s): unknown activation '%.*s'", name,
                          n->op_type, (int)s->size, (const char *)s->data);
      if (i >= acts->n_strings) continue; /* repeated list: alpha/beta already taken */
      if (act_uses_alpha(ac->kind) && al && ia < al->n_floats) ac->alpha = al->floats[ia++];
      if (act_uses_beta(ac->kind) && be && ib < be->n_floats) ac->beta = be->floats[ib++];
    }
    if (acts->n_strings < need)
      for (int k = 0; k < a->n_act; k++) a->act[1][k] = a->act[0][k];
  }
  *state = a;
  return OX_OK;
}

static inline float clipv(const rnn_attrs *a, float v) {
  if (!a->has_clip) return v;
  return v < -a->clip ? -a->clip : v > a->clip ? a->clip : v;
}

typedef struct rnn_io {
  int64_t S, Bn, I, H;
  const float *x;                /* [S, B, I] (sequence-major) */
  const float *W, *R, *Bias, *P; /* per direction */
  const float *h0, *c0;          /* [B, H] or NULL */
  const int64_t *lens;           /* [B] */
  float *y;                      /* [S, dirs, B, H] sequence-major, or NULL */
  float *hT, *cT;                /* [B, H] */
  int dir, dirs;
  bool backward;
} rnn_io;

static inline float wb_or0(const float *p, int64_t i) { return p ? p[i] : 0.0f; }

static int rnn_direction(ox_kctx *c, const rnn_attrs *a, const rnn_io *io) {
  int64_t S = io->S, Bn = io->Bn, H = io->H, G = a->gates, GH = G * H;
  ox_thread_pool *pool = ox_kctx_pool(c);
  float *xw = nn_falloc(S, Bn, GH, 1);
  float *hr = nn_falloc(Bn, GH, 1, 1);
  float *h = nn_falloc(Bn, H, 1, 1);
  float *cs = nn_falloc(Bn, H, 1, 1);
  float *tmp = nn_falloc(Bn, H, 1, 1);
  float *hn = nn_falloc(Bn, H, 1, 1);
  int rc = OX_OK;
  if (!xw || !hr || !h || !cs || !tmp || !hn) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  if (io->h0) memcpy(h, io->h0, (size_t)(Bn * H) * sizeof(float));
  if (io->c0) memcpy(cs, io->c0, (size_t)(Bn * H) * sizeof(float));
  if (S * Bn > 0)
    ox_gemm(&(ox_gemm_desc){.M = S * Bn, .N = GH, .K = io->I, .A = io->x, .lda = io->I,
                            .B = io->W, .ldb = io->I, .trans_b = true, .alpha = 1.0f, .C = xw,
                            .ldc = GH, .pool = pool});
  const nn_act *f = &a->act[io->dir][0], *g = &a->act[io->dir][1], *hh = &a->act[io->dir][2];
  const float *wb = io->Bias, *rb = io->Bias ? io->Bias + GH : NULL;
  for (int64_t step = 0; step < S; step++) {
    /* H R^T for all gates, except the GRU hidden gate without linear_before_reset */
    int64_t ng = a->kind == RNN_GRU && !a->lbr ? 2 * H : GH;
    ox_gemm(&(ox_gemm_desc){.M = Bn, .N = ng, .K = H, .A = h, .lda = H, .B = io->R, .ldb = H,
                            .trans_b = true, .alpha = 1.0f, .C = hr, .ldc = GH, .pool = pool});
    for (int64_t b = 0; b < Bn; b++) {
      int64_t len = io->lens ? io->lens[b] : S;
      float *hb = h + b * H, *cb = cs + b * H, *hnb = hn + b * H;
      if (step >= len) { /* padded step: state kept, output zero */
        memcpy(hnb, hb, (size_t)H * sizeof(float));
        continue;
      }
      int64_t t = io->backward ? len - 1 - step : step;
      const float *xg = xw + (t * Bn + b) * GH;
      float *rg = hr + b * GH;
      for (int64_t j = 0; j < H; j++) {
        float bias[4] = {0, 0, 0, 0};
        if (wb)
          for (int k = 0; k < G; k++) bias[k] = wb[k * H + j] + rb[k * H + j];
        if (a->kind == RNN_PLAIN) {
          hnb[j] = nn_act_apply(f, clipv(a, xg[j] + rg[j] + bias[0]));
        } else if (a->kind == RNN_GRU) {
          float z = nn_act_apply(f, clipv(a, xg[j] + rg[j] + bias[0]));
          float r = nn_act_apply(f, clipv(a, xg[H + j] + rg[H + j] + bias[1]));
          rg[j] = z, rg[H + j] = r; /* kept for the hidden gate below */
          if (a->lbr) {
            float hc =
                xg[2 * H + j] + wb_or0(wb, 2 * H + j) + r * (rg[2 * H + j] + wb_or0(rb, 2 * H + j));
            hnb[j] = (1.0f - z) * nn_act_apply(g, clipv(a, hc)) + z * hb[j];
          } else {
            tmp[b * H + j] = r * hb[j];
          }
        } else {
          const float *P = io->P;
          float cprev = cb[j];
          float ig = xg[j] + rg[j] + bias[0] + (P ? P[j] * cprev : 0.0f);
          float fg = xg[2 * H + j] + rg[2 * H + j] + bias[2] + (P ? P[2 * H + j] * cprev : 0.0f);
          float cg = xg[3 * H + j] + rg[3 * H + j] + bias[3];
          float iv = nn_act_apply(f, clipv(a, ig));
          float fv = a->input_forget ? 1.0f - iv : nn_act_apply(f, clipv(a, fg));
          float cv = nn_act_apply(g, clipv(a, cg));
          float cn = fv * cprev + iv * cv;
          float og = xg[H + j] + rg[H + j] + bias[1] + (P ? P[H + j] * cn : 0.0f);
          float ov = nn_act_apply(f, clipv(a, og));
          cb[j] = cn;
          hnb[j] = ov * nn_act_apply(hh, cn);
        }
      }
    }
    if (a->kind == RNN_GRU && !a->lbr) {
      /* (r . H) Rh^T, then the hidden gate and the new state */
      ox_gemm(&(ox_gemm_desc){.M = Bn, .N = H, .K = H, .A = tmp, .lda = H,
                              .B = io->R + 2 * H * H, .ldb = H, .trans_b = true, .alpha = 1.0f,
                              .C = hr + 2 * H, .ldc = GH, .pool = pool});
      for (int64_t b = 0; b < Bn; b++) {
        int64_t len = io->lens ? io->lens[b] : S;
        if (step >= len) continue;
        int64_t t = io->backward ? len - 1 - step : step;
        const float *xg = xw + (t * Bn + b) * GH;
        const float *rg = hr + b * GH;
        float *hb = h + b * H, *hnb = hn + b * H;
        for (int64_t j = 0; j < H; j++) {
          float hc = xg[2 * H + j] + rg[2 * H + j] + wb_or0(wb, 2 * H + j) + wb_or0(rb, 2 * H + j);
          float z = rg[j];
          hnb[j] = (1.0f - z) * nn_act_apply(g, clipv(a, hc)) + z * hb[j];
        }
      }
    }
    memcpy(h, hn, (size_t)(Bn * H) * sizeof(float));
    if (io->y)
      for (int64_t b = 0; b < Bn; b++) {
        int64_t len = io->lens ? io->lens[b] : S;
        if (step >= len) continue;
        int64_t t = io->backward ? len - 1 - step : step;
        memcpy(io->y + ((t * io->dirs + io->dir) * Bn + b) * H, h + b * H,
               (size_t)H * sizeof(float));
      }
  }
  memcpy(io->hT, h, (size_t)(Bn * H) * sizeof(float));
  if (io->cT) memcpy(io->cT, cs, (size_t)(Bn * H) * sizeof(float));
done:
  free(xw);
  free(hr);
  free(h);
  free(cs);
  free(tmp);
  free(hn);
  return rc;
}

/* Copies a [A, B, K] float tensor to [B, A, K] (layout 1 <-> layout 0). */
static void swap01(const float *src, float *dst, int64_t A, int64_t B, int64_t K) {
  for (int64_t i = 0; i < A; i++)
    for (int64_t j = 0; j < B; j++)
      memcpy(dst + (j * A + i) * K, src + (i * B + j) * K, (size_t)K * sizeof(float));
}

static int rnn_run(ox_kctx *c, void *st) {
  const rnn_attrs *a = st;
  ox_value *X = ox_kctx_input(c, 0), *W = ox_kctx_input(c, 1), *R = ox_kctx_input(c, 2);
  ox_value *Bv = ox_kctx_input(c, 3), *L = ox_kctx_input(c, 4), *H0 = ox_kctx_input(c, 5);
  ox_value *C0 = a->kind == RNN_LSTM ? ox_kctx_input(c, 6) : NULL;
  ox_value *Pv = a->kind == RNN_LSTM ? ox_kctx_input(c, 7) : NULL;
  if (!X || !W || !R || !nn_is_real(X->dtype))
    return ox_kctx_fail(c, OX_ERUNTIME, "X, W and R are required float tensors");
  if (X->rank != 3 || W->rank != 3 || R->rank != 3)
    return ox_kctx_fail(c, OX_ERUNTIME, "X, W and R must have rank 3");
  int64_t S = a->layout ? X->dims[1] : X->dims[0], Bn = a->layout ? X->dims[0] : X->dims[1];
  int64_t I = X->dims[2], D = a->dirs, G = a->gates;
  int64_t H = a->hidden > 0 ? a->hidden : R->dims[2];
  if (W->dims[0] != D || W->dims[1] != G * H || W->dims[2] != I)
    return ox_kctx_fail(c, OX_ERUNTIME, "W must have shape [%lld, %lld, %lld]", (long long)D,
                        (long long)(G * H), (long long)I);
  if (R->dims[0] != D || R->dims[1] != G * H || R->dims[2] != H)
    return ox_kctx_fail(c, OX_ERUNTIME, "R must have shape [%lld, %lld, %lld]", (long long)D,
                        (long long)(G * H), (long long)H);
  if (Bv && Bv->numel != D * 2 * G * H)
    return ox_kctx_fail(c, OX_ERUNTIME, "B must have shape [%lld, %lld]", (long long)D,
                        (long long)(2 * G * H));
  if (Pv && Pv->numel != D * 3 * H)
    return ox_kctx_fail(c, OX_ERUNTIME, "P must have shape [%lld, %lld]", (long long)D,
                        (long long)(3 * H));
  if (H0 && H0->numel != D * Bn * H)
    return ox_kctx_fail(c, OX_ERUNTIME, "initial_h has a wrong shape");
  if (C0 && C0->numel != D * Bn * H)
    return ox_kctx_fail(c, OX_ERUNTIME, "initial_c has a wrong shape");
  if (L && (L->numel != Bn || (L->dtype != OX_INT32 && L->dtype != OX_INT64)))
    return ox_kctx_fail(c, OX_ERUNTIME, "sequence_lens must be int32 [batch_size]");
  int rc = OX_OK;
  nn_fbuf fx = {0}, fw = {0}, fr = {0}, fb = {0}, fh = {0}, fc = {0}, fp = {0};
  float *xs = NULL, *ys = NULL, *hs = NULL, *cs = NULL, *h0 = NULL, *c0 = NULL;
  int64_t *lens = NULL;
  if ((rc = nn_fload(c, X, &fx)) || (rc = nn_fload(c, W, &fw)) || (rc = nn_fload(c, R, &fr)) ||
      (Bv && (rc = nn_fload(c, Bv, &fb))) || (H0 && (rc = nn_fload(c, H0, &fh))) ||
      (C0 && (rc = nn_fload(c, C0, &fc))) || (Pv && (rc = nn_fload(c, Pv, &fp))))
    goto done;
  xs = malloc(((size_t)X->numel + 1) * sizeof(float));
  ys = nn_falloc(S, D, Bn, H);
  hs = nn_falloc(D, Bn, H, 1);
  cs = nn_falloc(D, Bn, H, 1);
  h0 = nn_falloc(D, Bn, H, 1);
  c0 = nn_falloc(D, Bn, H, 1);
  lens = malloc(((size_t)Bn + 1) * sizeof(int64_t));
  if (!xs || !ys || !hs || !cs || !h0 || !c0 || !lens) {
    rc = ox_kctx_fail(c, OX_ENOMEM, "out of memory");
    goto done;
  }
  if (a->layout)
    swap01(fx.p, xs, Bn, S, I);
  else
    memcpy(xs, fx.p, (size_t)X->numel * sizeof(float));
  if (H0) {
    if (a->layout)
      swap01(fh.p, h0, Bn, D, H);
    else
      memcpy(h0, fh.p, (size_t)(D * Bn * H) * sizeof(float));
  }
  if (C0) {
    if (a->layout)
      swap01(fc.p, c0, Bn, D, H);
    else
      memcpy(c0, fc.p, (size_t)(D * Bn * H) * sizeof(float));
  }
  for (int64_t b = 0; b < Bn; b++) {
    lens[b] = L ? nn_get_int(L->data, L->dtype, b) : S;
    if (lens[b] < 0 || lens[b] > S) {
      rc = ox_kctx_fail(c, OX_ERUNTIME, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                        (long long)b, (long long)lens[b], (long long)S);
      goto done;
    }
  }
  for (int d = 0; d < (int)D; d++) {
    rnn_io io = {S,
                 Bn,
                 I,
                 H,
                 xs,
                 fw.p + d * G * H * I,
                 fr.p + d * G * H * H,
                 Bv ? fb.p + d * 2 * G * H : NULL,
                 Pv ? fp.p + d * 3 * H : NULL,
                 H0 ? h0 + d * Bn * H : NULL,
                 C0 ? c0 + d * Bn * H : NULL,
                 lens,
                 ys,
                 hs + d * Bn * H,
                 cs + d * Bn * H,
                 d,
                 (int)D,
                 a->reverse_only || d == 1};
    if ((rc = rnn_direction(c, a, &io))) goto done;
  }
  /* outputs: Y [S, D, B, H] (layout 1: [B, S, D, H]), Y_h / Y_c [D, B, H] (layout 1: [B, D, H]) */
  for (size_t o = 0; o < ox_kctx_n_outputs(c) && o < 3; o++) {
    if (!ox_kctx_output_wanted(c, o)) continue;
    if (o == 2 && a->kind != RNN_LSTM) break;
    int64_t dims[4];
    const float *src = o == 0 ? ys : o == 1 ? hs : cs;
    int64_t outer = o == 0 ? S : D, inner = o == 0 ? D * Bn * H : Bn * H;
    if (o == 0) {
      int64_t d0[4] = {S, D, Bn, H}, d1[4] = {Bn, S, D, H};
      memcpy(dims, a->layout ? d1 : d0, sizeof dims);
    } else {
      int64_t d0[3] = {D, Bn, H}, d1[3] = {Bn, D, H};
      memcpy(dims, a->layout ? d1 : d0, 3 * sizeof(int64_t));
    }
    ox_value *out = ox_kctx_output(c, o, X->dtype, dims, o == 0 ? 4 : 3);
    if (!out) {
      rc = OX_ERUNTIME;
      goto done;
    }
    nn_fbuf fo;
    if ((rc = nn_fout(c, out, &fo))) goto done;
    if (a->layout) {
      /* [outer, Bn, rest] -> [Bn, outer, rest] */
      int64_t rest = inner / (Bn ? Bn : 1);
      if (o == 0) {
        for (int64_t s = 0; s < S; s++)
          for (int64_t d = 0; d < D; d++)
            for (int64_t b = 0; b < Bn; b++)
              memcpy(fo.p + ((b * S + s) * D + d) * H, src + ((s * D + d) * Bn + b) * H,
                     (size_t)H * sizeof(float));
      } else {
        swap01(src, fo.p, outer, Bn, rest);
      }
    } else {
      memcpy(fo.p, src, (size_t)(outer * inner) * sizeof(float));
    }
    nn_fstore(out, &fo);
  }
done:
  nn_ffree(&fx), nn_ffree(&fw), nn_ffree(&fr), nn_ffree(&fb), nn_ffree(&fh), nn_ffree(&fc);
  nn_ffree(&fp);
  free(xs), free(ys), free(hs), free(cs), free(h0), free(c0), free(lens);
  return rc;
}

const ox_kernel_def ox_ops_rnn[] = {
    {"", "RNN", 1, 1000, rnn_prepare, rnn_run, NULL},
    {"", "GRU", 1, 1000, rnn_prepare, rnn_run, NULL},
    {"", "LSTM", 1, 1000, rnn_prepare, rnn_run, NULL},
    {0},
};
