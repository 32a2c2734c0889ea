/* attn_decode.c - grouped-query attention's block pass, split-K merge and
 * rotary embedding (see attn_decode.h), written once as plain loops and
 * compiled for every level of levels.h, and the family's table. The block
 * pass here (dot products in sixteen partial sums, axpy value updates) is
 * the portable level's: the AVX2 and AVX-512 levels have passes of their
 * own (attn_decode_avx2.c, attn_decode_avx512.c) that share its softmax
 * step. */
#include "attn_decode.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "attn_decode_impl.h"
#include "levels.h"
#include "vmath.h"

/* q . k in sixteen lanes (one AVX-512 register, two AVX2 ones) */
OX_LEVEL_BODY float dot_c(const float *a, const float *b, int64_t n) {
  float s[16] = {0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int t = 0; t < 16; t++) s[t] += a[i + t] * b[i + t];
  float r = 0.0f;
  for (; i < n; i++) r += a[i] * b[i];
  for (int t = 0; t < 16; t++) r += s[t];
  return r;
}

OX_LEVEL_BODY void axpy_c(float *y, float a, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
}

/* between the two passes: the scores sc[G x n] capped, biased and turned
 * into e^(score - m) against each head's new running maximum m, the
 * running sums and accumulators rescaled to it */
OX_LEVEL_BODY void softmax_c(const ox_attn_dec *d, int64_t n, ox_attn_part *st, float *sc) {
  const ox_vmath_kernels *vm = ox_vmath_kernels_get();
  int64_t H = d->H;
  for (int64_t g = 0; g < d->G; g++) {
    float *row = sc + g * n;
    if (d->softcap > 0.0f) {
      for (int64_t j = 0; j < n; j++) row[j] /= d->softcap;
      vm->tanh(row, row, n);
      for (int64_t j = 0; j < n; j++) row[j] *= d->softcap;
    }
    if (d->bias) {
      const float *b = d->bias + g * d->bias_ld;
      for (int64_t j = 0; j < n; j++) row[j] += b[j];
    }
    float mx = vm->row_max(row, n), m0 = st->m[g];
    float mn = mx > m0 ? mx : m0;
    if (mn == -INFINITY) { /* every score so far masked out */
      memset(row, 0, (size_t)n * sizeof(float));
      continue;
    }
    float corr = m0 == -INFINITY ? 0.0f : expf(m0 - mn);
    double s = vm->exp_sum(row, mn, row, n);
    st->l[g] = st->l[g] * corr + (float)s;
    st->m[g] = mn;
    if (corr != 1.0f) {
      float *acc = st->acc + g * H;
      for (int64_t i = 0; i < H; i++) acc[i] *= corr;
    }
  }
}
#if OX_LEVELS_X86
OX_TARGET_AVX2 void ox_attn_decode_softmax_avx2(const ox_attn_dec *d, int64_t n, ox_attn_part *st,
                                                float *sc) {
  softmax_c(d, n, st, sc);
}
OX_TARGET_AVX512 void ox_attn_decode_softmax_avx512(const ox_attn_dec *d, int64_t n,
                                                    ox_attn_part *st, float *sc) {
  softmax_c(d, n, st, sc);
}
#endif

OX_LEVEL_BODY void block_c(const ox_attn_dec *d, const float *k, const float *v, int64_t n,
                           ox_attn_part *st, float *sc) {
  int64_t G = d->G, H = d->H;
  /* scores, key-major so that each key row is read from memory once and
   * from L1 by the other heads of the group */
  for (int64_t j = 0; j < n; j++) {
    const float *kj = k + j * H;
    for (int64_t g = 0; g < G; g++) sc[g * n + j] = dot_c(d->q + g * H, kj, H) * d->scale;
  }
  softmax_c(d, n, st, sc);
  for (int64_t j = 0; j < n; j++) {
    const float *vj = v + j * H;
    for (int64_t g = 0; g < G; g++) axpy_c(st->acc + g * H, sc[g * n + j], vj, H);
  }
}
OX_LEVELS_VOID(block,
               (const ox_attn_dec *d, const float *k, const float *v, int64_t n, ox_attn_part *st,
                float *sc),
               d, k, v, n, st, sc)

OX_LEVEL_BODY void merge_c(const float *m, const float *l, int64_t ld, const float *acc,
                           int64_t acc_ld, int64_t np, int64_t H, bool has_sink, float sink,
                           float *y) {
  float mx = has_sink ? sink : -INFINITY;
  for (int64_t i = 0; i < np; i++) mx = m[i * ld] > mx ? m[i * ld] : mx;
  memset(y, 0, (size_t)H * sizeof(float));
  if (mx == -INFINITY) return;
  double den = has_sink ? exp((double)sink - mx) : 0.0;
  for (int64_t i = 0; i < np; i++) {
    if (m[i * ld] == -INFINITY) continue;
    float w = expf(m[i * ld] - mx);
    den += (double)l[i * ld] * w;
    axpy_c(y, w, acc + i * acc_ld, H);
  }
  float inv = den > 0.0 ? (float)(1.0 / den) : 0.0f;
  for (int64_t i = 0; i < H; i++) y[i] *= inv;
}
OX_LEVELS_VOID(merge,
               (const float *m, const float *l, int64_t ld, const float *acc, int64_t acc_ld,
                int64_t np, int64_t H, bool has_sink, float sink, float *y),
               m, l, ld, acc, acc_ld, np, H, has_sink, sink, y)

OX_LEVEL_BODY void rotary_c(const float *x, float *y, int64_t R, const float *cs, const float *sn,
                            bool interleaved) {
  int64_t half = R / 2;
  if (interleaved) {
    for (int64_t i = 0; i < half; i++) {
      float a = x[2 * i], b = x[2 * i + 1];
      y[2 * i] = a * cs[i] - b * sn[i];
      y[2 * i + 1] = b * cs[i] + a * sn[i];
    }
  } else {
    for (int64_t i = 0; i < half; i++) {
      float a = x[i], b = x[i + half];
      y[i] = a * cs[i] - b * sn[i];
      y[i + half] = b * cs[i] + a * sn[i];
    }
  }
}
OX_LEVELS_VOID(rotary,
               (const float *x, float *y, int64_t R, const float *cs, const float *sn,
                bool interleaved),
               x, y, R, cs, sn, interleaved)

static ox_attn_decode_kernels table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_fill(void) {
  ox_isa lv = ox_level_pick("block");
  table.block = OX_LEVEL_SELECT(lv, block);
#if OX_LEVELS_X86 /* the vector levels' own passes (attn_decode_impl.h) */
  if (lv == OX_ISA_AVX512) table.block = ox_attn_decode_block_avx512;
  if (lv == OX_ISA_AVX2) table.block = ox_attn_decode_block_avx2;
#endif
  table.merge = OX_LEVEL_PICK(merge);
  table.rotary = OX_LEVEL_PICK(rotary);
}

const ox_attn_decode_kernels *ox_attn_decode_kernels_get(void) {
  pthread_once(&table_once, table_fill);
  return &table;
}
