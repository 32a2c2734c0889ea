/* wqgemm.c - float products with packed low-bit weights (see wqgemm.h).
 *
 * Layout: columns in groups of 64; in a group, each unit row holds the
 * 32-bit units of the 64 columns for R = 32 / bits consecutive rows (one
 * 512-bit load per 16 columns). In a unit, row r is the field of `bits`
 * bits at bit 8 (r % 4) + bits (r / 4): each byte holds rows r, r + 4, ...,
 * so that one shift and mask gives four consecutive rows as the four bytes
 * vpdpbusd multiplies with four int8 activations. Weights are unsigned offsets
 * (a signed q as q + 2^(bits-1), its zero point likewise): q - z is the same
 * integer. Columns past N (the last group) have weight 0, scale 0 and zero
 * point 0, and contribute nothing. */
#include "wqgemm.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "levels.h"

#define GRP 64 /* columns per group */

static const uint32_t *grp_units(const ox_wq_matrix *W, int64_t g) {
  return W->q + g * (W->Kp / W->rows_unit) * GRP;
}

/* bit position of row r of a unit */
static inline int field_pos(int bits, int r) { return 8 * (r % 4) + bits * (r / 4); }

void ox_wq_free(ox_wq_matrix *w) {
  if (!w) return;
  ox_free_streamed(w->q);
  ox_free_streamed(w->scale);
  ox_free_streamed(w->zero);
  memset(w, 0, sizeof *w);
}

int ox_wq_pack(int bits, bool q_signed, int64_t K, int64_t N, const void *q, const float *scale,
               int64_t n_scale, const void *zp, int64_t kb, ox_wq_matrix *out, ox_err *e) {
  memset(out, 0, sizeof *out);
  if (bits != 8 && bits != 4 && bits != 2)
    return ox_err_set(e, OX_EUNSUPPORTED, "%d-bit weights are not supported", bits);
  if (K < 1 || N < 1 || kb < 1) return ox_err_set(e, OX_EINVAL, "empty weight matrix");
  int64_t R = 32 / bits;
  int64_t Kp = (K + R - 1) / R * R;
  if (kb >= K) kb = Kp;
  if (kb % R)
    return ox_err_set(e, OX_EUNSUPPORTED,
                      "a block of %lld rows splits the 32-bit units of %d-bit weights",
                      (long long)kb, bits);
  int64_t n_blk = (Kp + kb - 1) / kb, n_grp = (N + GRP - 1) / GRP;
  if (n_scale != 1 && n_scale != n_blk * N)
    return ox_err_set(e, OX_EINVAL, "%lld scales for %lld blocks of %lld columns",
                      (long long)n_scale, (long long)n_blk, (long long)N);
  size_t nq = 0, ns = 0;
  if (!ox_mul_size((size_t)n_grp * GRP * sizeof(uint32_t), (size_t)(Kp / R), &nq) ||
      !ox_mul_size((size_t)n_grp * GRP * sizeof(float), (size_t)n_blk, &ns))
    return ox_err_set(e, OX_ENOMEM, "weight matrix too large");
  out->q = ox_alloc_streamed(nq);
  out->scale = ox_alloc_streamed(ns);
  out->zero = zp ? ox_alloc_streamed(ns / 4) : NULL;
  if (!out->q || !out->scale || (zp && !out->zero)) {
    ox_wq_free(out);
    return ox_err_set(e, OX_ENOMEM, "out of memory packing a weight matrix");
  }
  memset(out->q, 0, nq);
  memset(out->scale, 0, ns);
  if (zp) memset(out->zero, 0, ns / 4);
  out->bits = bits;
  out->K = K;
  out->N = N;
  out->rows_unit = R;
  out->Kp = Kp;
  out->kb = kb;
  out->n_blk = n_blk;
  out->n_grp = n_grp;
  out->finite = true;
  int off = q_signed ? 1 << (bits - 1) : 0, mask = (1 << bits) - 1;
  out->zero_all = off;
  for (int64_t g = 0; g < n_grp; g++) {
    uint32_t *dst = out->q + g * (Kp / R) * GRP;
    float *sd = out->scale + g * n_blk * GRP;
    uint8_t *zd = zp ? out->zero + g * n_blk * GRP : NULL;
    int64_t n0 = g * GRP, nc = N - n0 < GRP ? N - n0 : GRP;
    for (int64_t k = 0; k < K; k++) {
      uint32_t *unit = dst + (k / R) * GRP;
      int pos = field_pos(bits, (int)(k % R));
      for (int64_t c = 0; c < nc; c++) {
        int64_t i = k * N + n0 + c;
        int v = q_signed ? ((const int8_t *)q)[i] + off : ((const uint8_t *)q)[i];
        unit[c] |= (uint32_t)(v & mask) << pos;
      }
    }
    for (int64_t b = 0; b < n_blk; b++)
      for (int64_t c = 0; c < nc; c++) {
        int64_t i = b * N + n0 + c;
        float s = scale[n_scale == 1 ? 0 : i];
        sd[b * GRP + c] = s;
        if (zp) {
          int64_t zi = n_scale == 1 ? 0 : i;
          int z = q_signed ? ((const int8_t *)zp)[zi] : ((const uint8_t *)zp)[zi];
          zd[b * GRP + c] = (uint8_t)(z + off);
        }
        if (!isfinite(s)) out->finite = false;
      }
  }
  return OX_OK;
}

/* ---------------------------------------------------------------- slab */

/* The float weights of group g, rows [0, K), as DequantizeLinear gives
 * them: (q - z) * s with q - z an exact integer. */
OX_LEVEL_BODY void dequant_group_c(const ox_wq_matrix *W, int64_t g, float *slab) {
  const uint32_t *src = grp_units(W, g);
  const float *sd = W->scale + g * W->n_blk * GRP;
  int bits = W->bits;
  int64_t R = W->rows_unit;
  uint32_t mask = (1u << bits) - 1;
  uint8_t zall[GRP];
  memset(zall, W->zero_all, sizeof zall);
  for (int64_t k = 0; k < W->K; k++) {
    const uint32_t *unit = src + (k / R) * GRP;
    const float *s = sd + (k / W->kb) * GRP;
    const uint8_t *z = W->zero ? W->zero + (g * W->n_blk + k / W->kb) * GRP : zall;
    unsigned pos = (unsigned)field_pos(bits, (int)(k % R));
    float *o = slab + k * GRP;
    for (int c = 0; c < GRP; c++) o[c] = (float)((int)((unit[c] >> pos) & mask) - (int)z[c]) * s[c];
  }
}

OX_LEVELS_VOID(dequant_group, (const ox_wq_matrix *W, int64_t g, float *slab), W, g, slab)

typedef struct wq_table wq_table;
static const wq_table *wq_dispatch(void);

/* ---------------------------------------------------------- block sums */

/* One row against group g: out[64]. `a` is the row (Kp values, zeros past
 * K), asum[b] its sum over block b. The int8 form reads instead aq (the
 * row quantized per block, Kp values), ascale[b] (the block's scale) and
 * qsum[b] (the sum of its aq). */
typedef struct bsum_row {
  const float *a;
  const float *asum;
  const int8_t *aq;
  const float *ascale, *qsum;
  const int8_t *fx;     /* fixed-point form: digit planes d0, d1, d2 (Kp each) */
  const int32_t *fxsum; /* [n_blk][3]: each digit's sum over the block */
  const float *fxunit;  /* [n_blk]: the value of 1 in the block's fixed point */
} bsum_row;
typedef void (*bsum_fn)(const ox_wq_matrix *W, int64_t g, const bsum_row *r, float *out);

/* y += s (2^bits S - (2^bits + z) asum): the block's contribution from
 * S = sum_k a_k (1 + q_k / 2^bits) */
static inline float block_term(float S, float s, float z, float asum, float two_b) {
  return s * (two_b * S - (two_b + z) * asum);
}

/* The forms in plain C: the float form sums a_k (1 + q_k / 2^bits) in
 * float, the int8 form aq_k q_k exactly in integers and applies
 * y += s ascale (dot - z qsum) per block, the fixed-point form each digit
 * plane's d_k (q_k - z) exactly and y += s unit (E2 2^16 + E1 2^8 + E0). */
enum { FORM_FLOAT, FORM_INT8, FORM_FIXED };
static inline void bsum_plain(const ox_wq_matrix *W, int64_t g, const bsum_row *r, float *out,
                              int form) {
  const uint32_t *q = grp_units(W, g);
  const float *sd = W->scale + g * W->n_blk * GRP;
  const uint8_t *zd = W->zero ? W->zero + g * W->n_blk * GRP : NULL;
  int bits = W->bits;
  int64_t R = W->rows_unit;
  uint32_t mask = (1u << bits) - 1;
  float two_b = (float)(1 << bits), inv = 1.0f / two_b;
  float y[GRP] = {0};
  for (int64_t b = 0; b < W->n_blk; b++) {
    int64_t k0 = b * W->kb, k1 = k0 + W->kb < W->Kp ? k0 + W->kb : W->Kp;
    float S[GRP] = {0};
    int32_t d[3][GRP] = {{0}};
    for (int64_t k = k0; k < k1; k++) {
      const uint32_t *unit = q + (k / R) * GRP;
      unsigned pos = (unsigned)field_pos(bits, (int)(k % R));
      if (form == FORM_INT8) {
        int32_t ak = r->aq[k];
        for (int c = 0; c < GRP; c++) d[0][c] += ak * (int32_t)((unit[c] >> pos) & mask);
      } else if (form == FORM_FIXED) {
        for (int p = 0; p < 3; p++) {
          int32_t ak = r->fx[p * W->Kp + k];
          for (int c = 0; c < GRP; c++) d[p][c] += ak * (int32_t)((unit[c] >> pos) & mask);
        }
      } else {
        float ak = r->a[k];
        for (int c = 0; c < GRP; c++) S[c] += ak * (1.0f + (float)((unit[c] >> pos) & mask) * inv);
      }
    }
    for (int c = 0; c < GRP; c++) {
      int zi = zd ? zd[b * GRP + c] : W->zero_all;
      float z = (float)zi;
      if (form == FORM_INT8) {
        y[c] += sd[b * GRP + c] * r->ascale[b] * ((float)d[0][c] - z * r->qsum[b]);
      } else if (form == FORM_FIXED) {
        const int32_t *ds = r->fxsum + 3 * b;
        float e0 = (float)(d[0][c] - zi * ds[0]), e1 = (float)(d[1][c] - zi * ds[1]),
              e2 = (float)(d[2][c] - zi * ds[2]);
        y[c] = fmaf(fmaf(e2, 65536.0f, fmaf(e1, 256.0f, e0)), sd[b * GRP + c] * r->fxunit[b], y[c]);
      } else {
        y[c] += block_term(S[c], sd[b * GRP + c], z, r->asum[b], two_b);
      }
    }
  }
  memcpy(out, y, sizeof y);
}

static void bsum_portable(const ox_wq_matrix *W, int64_t g, const bsum_row *r, float *out) {
  bsum_plain(W, g, r, out, FORM_FLOAT);
}

static void bsum_i8_portable(const ox_wq_matrix *W, int64_t g, const bsum_row *r, float *out) {
  bsum_plain(W, g, r, out, FORM_INT8);
}

static void bsum_fx_portable(const ox_wq_matrix *W, int64_t g, const bsum_row *r, float *out) {
  bsum_plain(W, g, r, out, FORM_FIXED);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86 1

/* The block's contribution for 16 columns: s (2^bits S - (2^bits + z) asum) */
#define BLOCK_TERM512(S, s, z, as, tb) \
  _mm512_mul_ps((s), _mm512_fmsub_ps((tb), (S), _mm512_mul_ps(_mm512_add_ps((tb), (z)), (as))))

__attribute__((target("avx512f"), always_inline)) static inline __m512 zero16(const ox_wq_matrix *W,
                                                                              const uint8_t *zd) {
  if (!zd) return _mm512_set1_ps((float)W->zero_all);
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)zd)));
}

/* Field of row r as the float 1 + q / 2^bits: moved under the exponent of
 * 1.0 (bits 23 - bits .. 22), masked, 1.0's bits put in (one ternlog). */
__attribute__((target("avx512f"), always_inline)) static inline __m512 field512(__m512i w, int bits,
                                                                                int r) {
  int sh = (23 - bits) - field_pos(bits, r);
  __m512i x = sh >= 0 ? _mm512_slli_epi32(w, (unsigned)sh) : _mm512_srli_epi32(w, (unsigned)-sh);
  const __m512i m = _mm512_set1_epi32((int)(((1u << bits) - 1) << (23 - bits)));
  const __m512i one = _mm512_set1_epi32(0x3F800000);
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(x, m, one, 0xEA)); /* (x & m) | one */
}

__attribute__((target("avx512f"), always_inline)) static inline void bsum512_body(
    const ox_wq_matrix *W, int64_t g, const bsum_row *rw, float *out, const int bits) {
  const int R = 32 / bits;
  const uint32_t *q = grp_units(W, g);
  const float *sd = W->scale + g * W->n_blk * GRP;
  const uint8_t *zd = W->zero ? W->zero + g * W->n_blk * GRP : NULL;
  const __m512 tb = _mm512_set1_ps((float)(1 << bits));
  __m512 y0 = _mm512_setzero_ps(), y1 = y0, y2 = y0, y3 = y0;
  for (int64_t b = 0; b < W->n_blk; b++) {
    int64_t k0 = b * W->kb, k1 = k0 + W->kb < W->Kp ? k0 + W->kb : W->Kp;
    /* two accumulators per 16 columns (even and odd rows): eight
     * independent chains of multiply-adds */
    __m512 d0 = _mm512_setzero_ps(), d1 = d0, d2 = d0, d3 = d0, e0 = d0, e1 = d0, e2 = d0, e3 = d0;
    for (int64_t k = k0; k < k1; k += R) {
      const uint32_t *unit = q + (k / R) * GRP;
      __m512i w0 = _mm512_load_si512(unit), w1 = _mm512_load_si512(unit + 16);
      __m512i w2 = _mm512_load_si512(unit + 32), w3 = _mm512_load_si512(unit + 48);
      for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(unit + 512 + 16 * l), _MM_HINT_T0);
      for (int r = 0; r < R; r++) {
        __m512 ak = _mm512_set1_ps(rw->a[k + r]);
        if (r & 1) {
          e0 = _mm512_fmadd_ps(field512(w0, bits, r), ak, e0);
          e1 = _mm512_fmadd_ps(field512(w1, bits, r), ak, e1);
          e2 = _mm512_fmadd_ps(field512(w2, bits, r), ak, e2);
          e3 = _mm512_fmadd_ps(field512(w3, bits, r), ak, e3);
        } else {
          d0 = _mm512_fmadd_ps(field512(w0, bits, r), ak, d0);
          d1 = _mm512_fmadd_ps(field512(w1, bits, r), ak, d1);
          d2 = _mm512_fmadd_ps(field512(w2, bits, r), ak, d2);
          d3 = _mm512_fmadd_ps(field512(w3, bits, r), ak, d3);
        }
      }
    }
    __m512 as = _mm512_set1_ps(rw->asum[b]);
    const float *s = sd + b * GRP;
    const uint8_t *z = zd ? zd + b * GRP : NULL;
    y0 = _mm512_add_ps(
        y0, BLOCK_TERM512(_mm512_add_ps(d0, e0), _mm512_load_ps(s), zero16(W, z), as, tb));
    y1 = _mm512_add_ps(y1, BLOCK_TERM512(_mm512_add_ps(d1, e1), _mm512_load_ps(s + 16),
                                         zero16(W, z ? z + 16 : NULL), as, tb));
    y2 = _mm512_add_ps(y2, BLOCK_TERM512(_mm512_add_ps(d2, e2), _mm512_load_ps(s + 32),
                                         zero16(W, z ? z + 32 : NULL), as, tb));
    y3 = _mm512_add_ps(y3, BLOCK_TERM512(_mm512_add_ps(d3, e3), _mm512_load_ps(s + 48),
                                         zero16(W, z ? z + 48 : NULL), as, tb));
  }
  _mm512_storeu_ps(out, y0);
  _mm512_storeu_ps(out + 16, y1);
  _mm512_storeu_ps(out + 32, y2);
  _mm512_storeu_ps(out + 48, y3);
}

__attribute__((target("avx512f"))) static void bsum_avx512(const ox_wq_matrix *W, int64_t g,
                                                           const bsum_row *r, float *out) {
  if (W->bits == 4)
    bsum512_body(W, g, r, out, 4);
  else if (W->bits == 8)
    bsum512_body(W, g, r, out, 8);
  else
    bsum512_body(W, g, r, out, 2);
}

/* The int8 form with vpdpbusd: the fields of four consecutive rows are the
 * four bytes of a lane after one shift and mask (unsigned, at most 255),
 * multiplied with four int8 activations and summed into 32 bits exactly
 * (|sum| <= kb * 255 * 127: int8_form_fits keeps the blocks short enough). */
__attribute__((target("avx512f,avx512vnni"), always_inline)) static inline void bsum_vnni_body(
    const ox_wq_matrix *W, int64_t g, const bsum_row *rw, float *out, const int bits) {
  const int R = 32 / bits;
  const uint32_t *q = grp_units(W, g);
  const float *sd = W->scale + g * W->n_blk * GRP;
  const uint8_t *zd = W->zero ? W->zero + g * W->n_blk * GRP : NULL;
  const __m512i mask = _mm512_set1_epi32((int)(((1u << bits) - 1) * 0x01010101u));
  __m512 y0 = _mm512_setzero_ps(), y1 = y0, y2 = y0, y3 = y0;
  for (int64_t b = 0; b < W->n_blk; b++) {
    int64_t k0 = b * W->kb, k1 = k0 + W->kb < W->Kp ? k0 + W->kb : W->Kp;
    /* even and odd row quads in separate accumulators: eight chains */
    __m512i d0 = _mm512_setzero_si512(), d1 = d0, d2 = d0, d3 = d0, e0 = d0, e1 = d0, e2 = d0,
            e3 = d0;
    for (int64_t k = k0; k < k1; k += R) {
      const uint32_t *unit = q + (k / R) * GRP;
      __m512i w0 = _mm512_load_si512(unit), w1 = _mm512_load_si512(unit + 16);
      __m512i w2 = _mm512_load_si512(unit + 32), w3 = _mm512_load_si512(unit + 48);
      /* the matrix streams from DRAM once: prefetched 2 KiB ahead (80% of
       * the machine's read bandwidth without, 91-96% with) */
      for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(unit + 512 + 16 * l), _MM_HINT_T0);
      for (int j = 0; j < R / 4; j++) {
        int32_t quad;
        memcpy(&quad, rw->aq + k + 4 * j, 4);
        __m512i a4 = _mm512_set1_epi32(quad);
        __m512i x0 = w0, x1 = w1, x2 = w2, x3 = w3;
        if (j) {
          x0 = _mm512_srli_epi32(x0, (unsigned)(bits * j));
          x1 = _mm512_srli_epi32(x1, (unsigned)(bits * j));
          x2 = _mm512_srli_epi32(x2, (unsigned)(bits * j));
          x3 = _mm512_srli_epi32(x3, (unsigned)(bits * j));
        }
        if (bits != 8) {
          x0 = _mm512_and_si512(x0, mask);
          x1 = _mm512_and_si512(x1, mask);
          x2 = _mm512_and_si512(x2, mask);
          x3 = _mm512_and_si512(x3, mask);
        }
        if (j & 1) {
          e0 = _mm512_dpbusd_epi32(e0, x0, a4);
          e1 = _mm512_dpbusd_epi32(e1, x1, a4);
          e2 = _mm512_dpbusd_epi32(e2, x2, a4);
          e3 = _mm512_dpbusd_epi32(e3, x3, a4);
        } else {
          d0 = _mm512_dpbusd_epi32(d0, x0, a4);
          d1 = _mm512_dpbusd_epi32(d1, x1, a4);
          d2 = _mm512_dpbusd_epi32(d2, x2, a4);
          d3 = _mm512_dpbusd_epi32(d3, x3, a4);
        }
      }
    }
    __m512 qs = _mm512_set1_ps(rw->qsum[b]), as = _mm512_set1_ps(rw->ascale[b]);
    const float *s = sd + b * GRP;
    const uint8_t *z = zd ? zd + b * GRP : NULL;
#define I8_TERM(y, d, e, off)                                                           \
  y = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_load_ps(s + (off)), as),                     \
                      _mm512_fnmadd_ps(zero16(W, z ? z + (off) : NULL), qs,             \
                                       _mm512_cvtepi32_ps(_mm512_add_epi32((d), (e)))), \
                      y)
    I8_TERM(y0, d0, e0, 0);
    I8_TERM(y1, d1, e1, 16);
    I8_TERM(y2, d2, e2, 32);
    I8_TERM(y3, d3, e3, 48);
#undef I8_TERM
  }
  _mm512_storeu_ps(out, y0);
  _mm512_storeu_ps(out + 16, y1);
  _mm512_storeu_ps(out + 32, y2);
  _mm512_storeu_ps(out + 48, y3);
}

__attribute__((target("avx512f,avx512vnni"))) static void bsum_i8_vnni(const ox_wq_matrix *W,
                                                                       int64_t g, const bsum_row *r,
                                                                       float *out) {
  if (W->bits == 4)
    bsum_vnni_body(W, g, r, out, 4);
  else if (W->bits == 8)
    bsum_vnni_body(W, g, r, out, 8);
  else
    bsum_vnni_body(W, g, r, out, 2);
}

/* The fixed-point form with vpdpbusd: each activation is a 22-23-bit integer
 * in its block's fixed point, written as three signed bytes
 * A = d2 2^16 + d1 2^8 + d0; each byte plane multiplies the weight fields of
 * four consecutive rows (as in the int8 form) into its own exact 32-bit
 * sums, which start at -z sum(d) so that they end as sum d (q - z). Three
 * vpdpbusd per 64 weights against a shift, a mask and a multiply-add per 16
 * weights in the float form: the decode step becomes bound by memory rather
 * than by the vector units. */
__attribute__((target("avx512f,avx512vnni"), always_inline)) static inline void bsum_fx_body(
    const ox_wq_matrix *W, int64_t g, const bsum_row *rw, float *out, const int bits) {
  const int R = 32 / bits;
  const uint32_t *q = grp_units(W, g);
  const float *sd = W->scale + g * W->n_blk * GRP;
  const uint8_t *zd = W->zero ? W->zero + g * W->n_blk * GRP : NULL;
  const int8_t *p0 = rw->fx, *p1 = rw->fx + W->Kp, *p2 = rw->fx + 2 * W->Kp;
  const __m512i mask = _mm512_set1_epi32((int)(((1u << bits) - 1) * 0x01010101u));
  __m512 y[4];
  for (int v = 0; v < 4; v++) y[v] = _mm512_setzero_ps();
  for (int64_t b = 0; b < W->n_blk; b++) {
    int64_t k0 = b * W->kb, k1 = k0 + W->kb < W->Kp ? k0 + W->kb : W->Kp;
    const int32_t *ds = rw->fxsum + 3 * b;
    __m512i a0[4], a1[4], a2[4]; /* per digit plane, per 16 columns */
    for (int v = 0; v < 4; v++) {
      if (zd) {
        __m512i z = _mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)(zd + b * GRP + 16 * v)));
        a0[v] = _mm512_mullo_epi32(z, _mm512_set1_epi32(-ds[0]));
        a1[v] = _mm512_mullo_epi32(z, _mm512_set1_epi32(-ds[1]));
        a2[v] = _mm512_mullo_epi32(z, _mm512_set1_epi32(-ds[2]));
      } else {
        a0[v] = _mm512_set1_epi32(-W->zero_all * ds[0]);
        a1[v] = _mm512_set1_epi32(-W->zero_all * ds[1]);
        a2[v] = _mm512_set1_epi32(-W->zero_all * ds[2]);
      }
    }
    for (int64_t k = k0; k < k1; k += R) {
      const uint32_t *unit = q + (k / R) * GRP;
      __m512i w[4];
      for (int v = 0; v < 4; v++) w[v] = _mm512_load_si512(unit + 16 * v);
      for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(unit + 512 + 16 * l), _MM_HINT_T0);
      for (int j = 0; j < R / 4; j++) {
        int32_t q0, q1, q2;
        memcpy(&q0, p0 + k + 4 * j, 4);
        memcpy(&q1, p1 + k + 4 * j, 4);
        memcpy(&q2, p2 + k + 4 * j, 4);
        __m512i b0 = _mm512_set1_epi32(q0), b1 = _mm512_set1_epi32(q1), b2 = _mm512_set1_epi32(q2);
        for (int v = 0; v < 4; v++) {
          __m512i x = j ? _mm512_srli_epi32(w[v], (unsigned)(bits * j)) : w[v];
          if (bits != 8) x = _mm512_and_si512(x, mask);
          a0[v] = _mm512_dpbusd_epi32(a0[v], x, b0);
          a1[v] = _mm512_dpbusd_epi32(a1[v], x, b1);
          a2[v] = _mm512_dpbusd_epi32(a2[v], x, b2);
        }
      }
    }
    __m512 unit_b = _mm512_set1_ps(rw->fxunit[b]);
    const __m512 s16 = _mm512_set1_ps(65536.0f), s8 = _mm512_set1_ps(256.0f);
    for (int v = 0; v < 4; v++) {
      __m512 f = _mm512_fmadd_ps(
          _mm512_cvtepi32_ps(a2[v]), s16,
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(a1[v]), s8, _mm512_cvtepi32_ps(a0[v])));
      y[v] = _mm512_fmadd_ps(f, _mm512_mul_ps(_mm512_load_ps(sd + b * GRP + 16 * v), unit_b), y[v]);
    }
  }
  for (int v = 0; v < 4; v++) _mm512_storeu_ps(out + 16 * v, y[v]);
}

__attribute__((target("avx512f,avx512vnni"))) static void bsum_fx_vnni(const ox_wq_matrix *W,
                                                                       int64_t g, const bsum_row *r,
                                                                       float *out) {
  if (W->bits == 4)
    bsum_fx_body(W, g, r, out, 4);
  else if (W->bits == 8)
    bsum_fx_body(W, g, r, out, 8);
  else
    bsum_fx_body(W, g, r, out, 2);
}

/* AVX2: eight columns per register, one accumulator per eight columns
 * (eight chains); the block results go through `out`. */
__attribute__((target("avx2"), always_inline)) static inline __m256 field256(__m256i w, int bits,
                                                                             int r) {
  int sh = (23 - bits) - field_pos(bits, r);
  __m256i x = sh >= 0 ? _mm256_slli_epi32(w, sh) : _mm256_srli_epi32(w, -sh);
  const __m256i m = _mm256_set1_epi32((int)(((1u << bits) - 1) << (23 - bits)));
  return _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(x, m), _mm256_set1_epi32(0x3F800000)));
}

__attribute__((target("avx2,fma"), always_inline)) static inline void bsum256_body(
    const ox_wq_matrix *W, int64_t g, const bsum_row *rw, float *out, const int bits) {
  const int R = 32 / bits;
  const uint32_t *q = grp_units(W, g);
  const float *sd = W->scale + g * W->n_blk * GRP;
  const uint8_t *zd = W->zero ? W->zero + g * W->n_blk * GRP : NULL;
  const __m256 tb = _mm256_set1_ps((float)(1 << bits));
  const __m256 zall = _mm256_set1_ps((float)W->zero_all);
  for (int c = 0; c < GRP; c += 8) _mm256_storeu_ps(out + c, _mm256_setzero_ps());
  for (int64_t b = 0; b < W->n_blk; b++) {
    int64_t k0 = b * W->kb, k1 = k0 + W->kb < W->Kp ? k0 + W->kb : W->Kp;
    __m256 d[8];
    for (int c = 0; c < 8; c++) d[c] = _mm256_setzero_ps();
    for (int64_t k = k0; k < k1; k += R) {
      const uint32_t *unit = q + (k / R) * GRP;
      for (int r = 0; r < R; r++) {
        __m256 ak = _mm256_set1_ps(rw->a[k + r]);
        for (int c = 0; c < 8; c++)
          d[c] = _mm256_fmadd_ps(
              field256(_mm256_load_si256((const __m256i *)(unit + 8 * c)), bits, r), ak, d[c]);
      }
    }
    __m256 as = _mm256_set1_ps(rw->asum[b]);
    const float *s = sd + b * GRP;
    for (int c = 0; c < 8; c++) {
      __m256 z = zd ? _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                          _mm_loadl_epi64((const __m128i *)(zd + b * GRP + 8 * c))))
                    : zall;
      __m256 t = _mm256_fmsub_ps(tb, d[c], _mm256_mul_ps(_mm256_add_ps(tb, z), as));
      _mm256_storeu_ps(out + 8 * c, _mm256_add_ps(_mm256_loadu_ps(out + 8 * c),
                                                  _mm256_mul_ps(_mm256_load_ps(s + 8 * c), t)));
    }
  }
}

__attribute__((target("avx2,fma"))) static void bsum_avx2(const ox_wq_matrix *W, int64_t g,
                                                          const bsum_row *r, float *out) {
  if (W->bits == 4)
    bsum256_body(W, g, r, out, 4);
  else if (W->bits == 8)
    bsum256_body(W, g, r, out, 8);
  else
    bsum256_body(W, g, r, out, 2);
}
#endif

#define BSUM_TASKS 64 /* most threads one block-sum product is split over */

typedef struct bsum_job {
  bsum_fn fn;
  const float *a;             /* rows padded to Kp, row stride Kp */
  const float *asum;          /* [M][n_blk] */
  const int8_t *aq;           /* int8 form: rows quantized per block, row stride Kp */
  const float *ascale, *qsum; /* int8 form: [M][n_blk] */
  const int8_t *fx;           /* fixed-point form: [M][3][Kp] digit planes */
  const int32_t *fxsum;       /* [M][n_blk][3] */
  const float *fxunit;        /* [M][n_blk] */
  int64_t M, ldc;
  const ox_wq_matrix *W;
  float *C;
  /* the split over threads (bsum_split): task t's groups start at
   * t n_grp / tasks; span[t] holds its front (low 32 bits) and back */
  int64_t unit, tasks;
  _Atomic uint64_t *span;
} bsum_job;

static void bsum_groups(void *arg, int64_t g0, int64_t g1) {
  const bsum_job *j = arg;
  const ox_wq_matrix *W = j->W;
  float out[GRP];
  for (int64_t g = g0; g < g1; g++) {
    int64_t n0 = g * GRP, nc = W->N - n0 < GRP ? W->N - n0 : GRP;
    /* every row against the group while its units are in the cache */
    for (int64_t m = 0; m < j->M; m++) {
      bsum_row r = {j->a + m * W->Kp, j->asum + m * W->n_blk, NULL, NULL, NULL, NULL, NULL, NULL};
      if (j->aq) {
        r.aq = j->aq + m * W->Kp;
        r.ascale = j->ascale + m * W->n_blk;
        r.qsum = j->qsum + m * W->n_blk;
      }
      if (j->fx) {
        r.fx = j->fx + m * 3 * W->Kp;
        r.fxsum = j->fxsum + m * 3 * W->n_blk;
        r.fxunit = j->fxunit + m * W->n_blk;
      }
      j->fn(W, g, &r, out);
      memcpy(j->C + m * j->ldc + n0, out, (size_t)nc * sizeof(float));
    }
  }
}

/* Takes up to `unit` groups of task t's span, from its front (the task's
 * own thread) or its back (a thread whose own span is done); false when
 * the span is empty. */
static bool span_take(bsum_job *j, int64_t t, bool front, int64_t *g0, int64_t *g1) {
  uint64_t v = atomic_load_explicit(&j->span[t], memory_order_relaxed);
  for (;;) {
    int64_t lo = (int64_t)(v & 0xffffffffu), hi = (int64_t)(v >> 32);
    if (lo >= hi) return false;
    int64_t a = front ? lo : (hi - j->unit > lo ? hi - j->unit : lo);
    int64_t b = front ? (lo + j->unit < hi ? lo + j->unit : hi) : hi;
    uint64_t nv = front ? ((uint64_t)hi << 32) | (uint64_t)b : ((uint64_t)a << 32) | (uint64_t)lo;
    if (atomic_compare_exchange_weak_explicit(&j->span[t], &v, nv, memory_order_relaxed,
                                              memory_order_relaxed)) {
      *g0 = a, *g1 = b;
      return true;
    }
  }
}

/* Task t of the split: its own span of contiguous groups front to back,
 * then the rest of the others' spans from their backs. With the pool's
 * chunks (an eighth of the loop at two threads) a thread that was
 * preempted or came late held up to an eighth of the product, the other
 * waiting for it at the end; here a thread holds at most one claim (~64
 * KiB), and both end within a claim of each other. Each thread still
 * streams one contiguous stretch of the matrix: neighbouring groups handed
 * out in turn from one shared counter measured slower at two threads (a
 * loaded Zen 5, so not precisely). Which thread computes a group does not
 * change its result. */
static void bsum_split(void *arg, int64_t t0, int64_t t1) {
  bsum_job *j = arg;
  int64_t g0, g1;
  for (int64_t t = t0; t < t1; t++) {
    while (span_take(j, t, true, &g0, &g1)) bsum_groups(j, g0, g1);
    for (int64_t o = 1; o < j->tasks; o++)
      while (span_take(j, (t + o) % j->tasks, false, &g0, &g1)) bsum_groups(j, g0, g1);
  }
}

/* the fixed-point form's 32-bit sums cannot overflow: they start at
 * -z sum(d) and add d q, |d| <= 128, for kb rows */
static bool fx_form_fits(const ox_wq_matrix *W) {
  return 2.0 * (double)W->kb * (double)((1 << W->bits) - 1) * 128.0 < 2147483647.0;
}

/* the int8 form's 32-bit sums cannot overflow: kb * (2^bits - 1) * 127 */
static bool int8_form_fits(const ox_wq_matrix *W) {
  return (double)W->kb * (double)((1 << W->bits) - 1) * 127.0 < 2147483647.0;
}

/* a + ... in sixteen running sums (vectorised; an Inf or NaN stays) */
OX_LEVEL_BODY float block_sum_c(const float *a, int64_t n) {
  float part[16] = {0};
  int64_t k = 0;
  for (; k + 16 <= n; k += 16)
    for (int j = 0; j < 16; j++) part[j] += a[k + j];
  for (; k < n; k++) part[0] += a[k];
  float s = 0.0f;
  for (int j = 0; j < 16; j++) s += part[j];
  return s;
}

OX_LEVELS(float, block_sum, (const float *a, int64_t n), a, n)

/* One block of a row quantized to int8, symmetrically: scale max|a| / 127,
 * values rounded to nearest, ties to even (nearbyintf: vroundps in the
 * vector clones; no add that a compiler could fuse with the product into a
 * single rounding); a block of zeros has scale 0. Returns the sum of the values. The row is
 * finite (prepare_rows checked). */
OX_LEVEL_BODY int32_t quantize_block_c(const float *a, int64_t n, int8_t *aq, float *scale) {
  float amax = 0.0f;
  for (int64_t k = 0; k < n; k++) {
    float v = fabsf(a[k]);
    amax = v > amax ? v : amax;
  }
  float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  int32_t sum = 0;
  for (int64_t k = 0; k < n; k++) {
    float v = nearbyintf(a[k] * inv);
    v = v > 127.0f ? 127.0f : v;
    v = v < -127.0f ? -127.0f : v;
    aq[k] = (int8_t)(int32_t)v;
    sum += (int32_t)v;
  }
  *scale = amax / 127.0f;
  return sum;
}

OX_LEVELS(int32_t, quantize_block, (const float *a, int64_t n, int8_t *aq, float *scale), a, n, aq,
          scale)

/* One block of a row in fixed point: A_k = round(a_k 2^sh), ties to even,
 * with sh the power of two that puts max|a| in [2^21, 2^22) (exact
 * scaling; every A_k then has |A_k| <= 2^22), written as balanced digits
 * A = d2 2^16 + d1 2^8 + d0 with d0, d1 in [-128, 127] and |d2| <= 64.
 * unit = 2^-sh. false when the block's largest value is below 2^-104 (2^sh
 * would not be a normal float): the caller takes the float form. A zero
 * block has unit 0. */
OX_LEVEL_BODY bool fx_block_c(const float *a, int64_t n, int8_t *d0, int8_t *d1, int8_t *d2,
                              int32_t sum[3], float *unit) {
  float amax = 0.0f;
  for (int64_t k = 0; k < n; k++) {
    float v = fabsf(a[k]);
    amax = v > amax ? v : amax;
  }
  int ex = 0;
  if (amax > 0.0f) (void)frexpf(amax, &ex); /* amax = m 2^ex, m in [0.5, 1) */
  int sh = 22 - ex;
  if (amax > 0.0f && sh > 126) return false;
  float c = amax > 0.0f ? ldexpf(1.0f, sh) : 0.0f;
  *unit = amax > 0.0f ? ldexpf(1.0f, -sh) : 0.0f;
  int32_t s0 = 0, s1 = 0, s2 = 0;
  for (int64_t k = 0; k < n; k++) {
    int32_t A = (int32_t)nearbyintf(a[k] * c);
    int32_t e0 = ((A + 128) & 255) - 128;
    int32_t A1 = (A - e0) / 256;
    int32_t e1 = ((A1 + 128) & 255) - 128;
    int32_t e2 = (A1 - e1) / 256;
    d0[k] = (int8_t)e0;
    d1[k] = (int8_t)e1;
    d2[k] = (int8_t)e2;
    s0 += e0;
    s1 += e1;
    s2 += e2;
  }
  sum[0] = s0;
  sum[1] = s1;
  sum[2] = s2;
  return true;
}

OX_LEVELS(bool, fx_block,
          (const float *a, int64_t n, int8_t *d0, int8_t *d1, int8_t *d2, int32_t sum[3],
           float *unit),
          a, n, d0, d1, d2, sum, unit)

/* The family's dispatch table, filled once from the CPU probe (ONNXC_ISA
 * included): the block-sum products of each form and level (NULL where
 * the level is missing: a named path then is not available), the plain C
 * loops of the level in use, and the blocking. */
struct wq_table {
  bsum_fn f_avx512, f_avx2; /* float form */
  bsum_fn i8_vnni, fx_vnni; /* int8 and fixed-point forms, VNNI */
  void (*dequant)(const ox_wq_matrix *W, int64_t g, float *slab);
  float (*block_sum)(const float *a, int64_t n);
  int32_t (*quantize_block)(const float *a, int64_t n, int8_t *aq, float *scale);
  bool (*fx_block)(const float *a, int64_t n, int8_t *d0, int8_t *d1, int8_t *d2, int32_t sum[3],
                   float *unit);
  int64_t grain_bytes; /* weights a task streams at least */
};

/* Blocking per microarchitecture (today's values on every row; a core
 * that wants others gets its row here). */
static const int64_t k_wq_grain[] = {
    [OX_UARCH_GENERIC] = 1 << 16, [OX_UARCH_INTEL] = 1 << 16, [OX_UARCH_INTEL_AVX2] = 1 << 16,
    [OX_UARCH_ZEN2_3] = 1 << 16,  [OX_UARCH_ZEN4] = 1 << 16,  [OX_UARCH_ZEN5] = 1 << 16,
};

static wq_table g_wq;
static pthread_once_t g_wq_once = PTHREAD_ONCE_INIT;

static void wq_fill(void) {
  const ox_cpu *c = ox_cpu_get();
  wq_table *t = &g_wq;
#ifdef HAVE_X86
  if (c->avx512f) t->f_avx512 = bsum_avx512;
  if (c->avx2 && c->fma) t->f_avx2 = bsum_avx2;
  if (c->avx512f && c->avx512vnni) {
    t->i8_vnni = bsum_i8_vnni;
    t->fx_vnni = bsum_fx_vnni;
  }
#endif
  t->dequant = OX_LEVEL_PICK(dequant_group);
  t->block_sum = OX_LEVEL_PICK(block_sum);
  t->quantize_block = OX_LEVEL_PICK(quantize_block);
  t->fx_block = OX_LEVEL_PICK(fx_block);
  size_t u = (size_t)c->uarch < sizeof k_wq_grain / sizeof *k_wq_grain ? (size_t)c->uarch : 0;
  t->grain_bytes = k_wq_grain[u];
}

static const wq_table *wq_dispatch(void) {
  pthread_once(&g_wq_once, wq_fill);
  return &g_wq;
}

/* the int8 form's function on `path` (NULL: VNNI when the CPU has it, else
 * none: the float form serves) */
static bsum_fn pick_i8(const char *path) {
  const wq_table *t = wq_dispatch();
  if ((!path || strcmp(path, "avx512vnni") == 0) && t->i8_vnni) return t->i8_vnni;
  if (path && strcmp(path, "portable") == 0) return bsum_i8_portable;
  return NULL;
}

/* the fixed-point form's function on `path` (NULL: VNNI when the CPU has
 * it, else none) */
static bsum_fn pick_fx(const char *path) {
  const wq_table *t = wq_dispatch();
  if ((!path || strcmp(path, "avx512vnni") == 0) && t->fx_vnni) return t->fx_vnni;
  if (path && strcmp(path, "portable") == 0) return bsum_fx_portable;
  return NULL;
}

static bsum_fn pick_bsum(const char *path) {
  const wq_table *t = wq_dispatch();
  bool any = !path;
  if ((any || strcmp(path, "avx512") == 0) && t->f_avx512) return t->f_avx512;
  if ((any || strcmp(path, "avx2") == 0) && t->f_avx2) return t->f_avx2;
  if (!path || strcmp(path, "portable") == 0) return bsum_portable;
  return NULL;
}

typedef struct slab_job {
  const float *A;
  int64_t M, lda, ldc;
  const ox_wq_matrix *W;
  float *C;
  int failed;
} slab_job;

static void slab_groups(void *arg, int64_t g0, int64_t g1) {
  slab_job *j = arg;
  const ox_wq_matrix *W = j->W;
  float *slab = aligned_alloc(64, (size_t)W->K * GRP * sizeof(float));
  if (!slab) {
    j->failed = 1;
    return;
  }
  for (int64_t g = g0; g < g1; g++) {
    wq_dispatch()->dequant(W, g, slab);
    int64_t n0 = g * GRP, nc = W->N - n0 < GRP ? W->N - n0 : GRP;
    ox_gemm(&(ox_gemm_desc){.M = j->M,
                            .N = nc,
                            .K = W->K,
                            .A = j->A,
                            .lda = j->lda,
                            .B = slab,
                            .ldb = GRP,
                            .alpha = 1.0f,
                            .C = j->C + n0,
                            .ldc = j->ldc});
  }
  free(slab);
}

/* A's rows copied to Kp values (zeros past K) with their block sums;
 * false when a sum is not finite (an infinite or NaN activation, or an
 * overflow): then the block-sum form would not give DequantizeLinear ->
 * MatMul's result. */
static bool prepare_rows(const ox_wq_matrix *W, const float *A, int64_t M, int64_t lda, float *ap,
                         float *asum) {
  for (int64_t m = 0; m < M; m++) {
    float *row = ap + m * W->Kp;
    memcpy(row, A + m * lda, (size_t)W->K * sizeof(float));
    for (int64_t k = W->K; k < W->Kp; k++) row[k] = 0.0f;
    for (int64_t b = 0; b < W->n_blk; b++) {
      int64_t k0 = b * W->kb, k1 = k0 + W->kb < W->Kp ? k0 + W->kb : W->Kp;
      float s = wq_dispatch()->block_sum(row + k0, k1 - k0);
      if (!isfinite(s)) return false;
      asum[m * W->n_blk + b] = s;
    }
  }
  return true;
}

/* The rows quantized per block (quantize_block); run after prepare_rows
 * (the rows are padded and finite). */
static void quantize_rows(const ox_wq_matrix *W, const float *ap, int64_t M, int8_t *aq,
                          float *ascale, float *qsum) {
  for (int64_t m = 0; m < M; m++)
    for (int64_t b = 0; b < W->n_blk; b++) {
      int64_t k0 = b * W->kb, k1 = k0 + W->kb < W->Kp ? k0 + W->kb : W->Kp;
      qsum[m * W->n_blk + b] = (float)wq_dispatch()->quantize_block(
          ap + m * W->Kp + k0, k1 - k0, aq + m * W->Kp + k0, &ascale[m * W->n_blk + b]);
    }
}

/* The rows in fixed point per block (fx_block); run after prepare_rows. */
static bool fx_rows(const ox_wq_matrix *W, const float *ap, int64_t M, int8_t *fx, int32_t *fxsum,
                    float *fxunit) {
  for (int64_t m = 0; m < M; m++) {
    int8_t *p = fx + m * 3 * W->Kp;
    for (int64_t b = 0; b < W->n_blk; b++) {
      int64_t k0 = b * W->kb, k1 = k0 + W->kb < W->Kp ? k0 + W->kb : W->Kp;
      if (!wq_dispatch()->fx_block(ap + m * W->Kp + k0, k1 - k0, p + k0, p + W->Kp + k0,
                                   p + 2 * W->Kp + k0, fxsum + (m * W->n_blk + b) * 3,
                                   fxunit + m * W->n_blk + b))
        return false;
    }
  }
  return true;
}

/* groups per task so that a task streams at least ~64 KiB of weights */
static int64_t group_grain(const ox_wq_matrix *W) {
  int64_t per = (W->Kp / W->rows_unit + W->n_blk) * GRP * 4; /* weights and scales */
  int64_t gr = per > 0 ? wq_dispatch()->grain_bytes / per : 1;
  return gr < 1 ? 1 : gr;
}

static int block_sum_form(bsum_fn fn, int form, const float *A, int64_t M, int64_t lda,
                          const ox_wq_matrix *W, float *C, int64_t ldc, ox_thread_pool *pool,
                          bool *done, ox_err *e) {
  *done = false;
  bool int8 = form == FORM_INT8, fixed = form == FORM_FIXED;
  size_t n_a = 0, n_s = 0;
  if (!ox_mul_size((size_t)M, (size_t)W->Kp * sizeof(float), &n_a) ||
      !ox_mul_size((size_t)M, (size_t)W->n_blk * sizeof(float), &n_s))
    return ox_err_set(e, OX_ENOMEM, "activation too large");
  float *ap = malloc(n_a), *asum = malloc(n_s);
  int8_t *aq = int8 ? malloc(n_a / sizeof(float)) : NULL;
  float *ascale = int8 ? malloc(n_s) : NULL, *qsum = int8 ? malloc(n_s) : NULL;
  int8_t *fx = fixed ? malloc(3 * (n_a / sizeof(float))) : NULL;
  int32_t *fxsum = fixed ? malloc(3 * n_s) : NULL;
  float *fxunit = fixed ? malloc(n_s) : NULL;
  int rc = OX_OK;
  if (!ap || !asum || (int8 && (!aq || !ascale || !qsum)) ||
      (fixed && (!fx || !fxsum || !fxunit))) {
    rc = ox_err_set(e, OX_ENOMEM, "out of memory");
  } else if (prepare_rows(W, A, M, lda, ap, asum)) {
    if (int8) quantize_rows(W, ap, M, aq, ascale, qsum);
    if (fixed && !fx_rows(W, ap, M, fx, fxsum, fxunit)) {
      /* a block too small for a normal power-of-two scale: the float form */
      free(fx);
      fx = NULL;
      fn = pick_bsum(fn == bsum_fx_portable ? "portable" : NULL);
    }
    _Atomic uint64_t span[BSUM_TASKS];
    int64_t unit = group_grain(W), tasks = ox_thread_pool_size(pool);
    if (tasks > BSUM_TASKS) tasks = BSUM_TASKS;
    /* a product of under two grains runs on the calling thread: a second
     * thread's hand-over costs about what it would save */
    if (W->n_grp < 2 * unit || W->n_grp > UINT32_MAX) tasks = 1;
    bsum_job j = {fn,     ap, asum, aq, ascale, qsum, fx,    fxsum,
                  fxunit, M,  ldc,  W,  C,      unit, tasks, span};
    for (int64_t t = 0; t < tasks; t++)
      atomic_init(&span[t], ((uint64_t)((t + 1) * W->n_grp / tasks) << 32) |
                                (uint64_t)(t * W->n_grp / tasks));
    if (tasks > 1)
      ox_parallel_for(pool, tasks, 1, bsum_split, &j);
    else
      bsum_groups(&j, 0, W->n_grp);
    *done = true;
  }
  free(ap);
  free(asum);
  free(aq);
  free(ascale);
  free(qsum);
  free(fx);
  free(fxsum);
  free(fxunit);
  return rc;
}

int ox_wq_gemm_on(const char *path, const char *form, const float *A, int64_t M, int64_t lda,
                  const ox_wq_matrix *W, float *C, int64_t ldc, ox_thread_pool *pool, ox_err *e) {
  if (M <= 0) return OX_OK;
  int fm = !form                           ? -1
           : strcmp(form, "int8") == 0     ? FORM_INT8
           : strcmp(form, "fixed") == 0    ? FORM_FIXED
           : strcmp(form, "blocksum") == 0 ? FORM_FLOAT
                                           : -2;
  if (fm == -2) return ox_err_set(e, OX_EINVAL, "no form %s", form);
  bool bsum = fm >= 0 || M <= 2;
  if (fm == -1) fm = path ? FORM_FLOAT : FORM_FIXED; /* a named path is a float form's */
  bsum_fn fn = fm == FORM_INT8 ? pick_i8(path) : fm == FORM_FIXED ? pick_fx(path) : pick_bsum(path);
  if (!fn && fm != FORM_FLOAT && !path) {
    /* no integer dot product here: the float form, which is exact */
    fm = FORM_FLOAT;
    fn = pick_bsum(NULL);
  }
  if (!fn) return ox_err_set(e, OX_EUNSUPPORTED, "path %s is not available here", path);
  if ((fm == FORM_INT8 && !int8_form_fits(W)) || (fm == FORM_FIXED && !fx_form_fits(W))) {
    fm = FORM_FLOAT;
    fn = pick_bsum(path && strcmp(path, "portable") == 0 ? path : NULL);
  }
  if (bsum && W->finite) {
    bool done = false;
    int rc = block_sum_form(fn, fm, A, M, lda, W, C, ldc, pool, &done, e);
    if (rc || done) return rc;
  }
  slab_job j = {A, M, lda, ldc, W, C, 0};
  ox_parallel_for(pool, W->n_grp, 1, slab_groups, &j);
  if (j.failed) return ox_err_set(e, OX_ENOMEM, "out of memory");
  return OX_OK;
}

int ox_wq_gemm(const float *A, int64_t M, int64_t lda, const ox_wq_matrix *W, float *C, int64_t ldc,
               bool int8_decode, ox_thread_pool *pool, ox_err *e) {
  return ox_wq_gemm_on(NULL, int8_decode && M <= 2 ? "int8" : NULL, A, M, lda, W, C, ldc, pool, e);
}
