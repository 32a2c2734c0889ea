/* qgemm.c - exact 8-bit integer GEMM (see qgemm.h for the algebra).
 *
 * Layouts: A' is copied per call into rows of K4 * 4 unsigned bytes (zero
 * padded, with its row sums); B' is packed once into panels of 16 columns,
 * each depth group of 4 bytes of a panel being 64 contiguous bytes — one
 * 512-bit register that vpdpbusd multiplies with 4 bytes of a row of A'
 * broadcast to every lane. Work is split over (row block, panel pair)
 * tiles on the thread pool. */
#include "qgemm.h"

#include <immintrin.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../base/cpu.h"

/* B's panel width (its packed layout, the same on every path) */
enum { PANEL = 16 };

/* ------------------------------------------------------------ packing */

static int32_t zp_at(const void *z, bool is_signed, int64_t n, int64_t i) {
  if (!z) return 0;
  int64_t j = n == 1 ? 0 : i;
  return is_signed ? ((const int8_t *)z)[j] : ((const uint8_t *)z)[j];
}

int ox_qgemm_pack_b(const void *B, bool b_signed, int64_t K, int64_t N, int64_t ldb, const void *zb,
                    int64_t zb_n, ox_qgemm_b *out, ox_err *e) {
  memset(out, 0, sizeof *out);
  if (K < 0 || N < 0 || K > ((int64_t)1 << 31) || N > ((int64_t)1 << 31))
    return ox_err_set(e, OX_EINVAL, "integer matrix of %lld x %lld is too large", (long long)K,
                      (long long)N);
  out->K = K;
  out->N = N;
  out->K4 = (K + 3) / 4;
  out->Np = (N + PANEL - 1) / PANEL * PANEL;
  size_t bytes = (size_t)out->Np * (size_t)out->K4 * 4;
  out->data = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  out->colsum = calloc((size_t)out->Np + 1, sizeof *out->colsum);
  out->zb = calloc((size_t)out->Np + 1, sizeof *out->zb);
  if (!out->data || !out->colsum || !out->zb) {
    ox_qgemm_free_b(out);
    return ox_err_set(e, OX_ENOMEM, "out of memory packing an integer matrix");
  }
  memset(out->data, 0, bytes);
  const uint8_t *bu = B;
  for (int64_t n = 0; n < N; n++) {
    int64_t panel = n / PANEL, col = n % PANEL;
    int8_t *dst = out->data + panel * out->K4 * PANEL * 4 + col * 4;
    int32_t sum = 0;
    for (int64_t k = 0; k < K; k++) {
      int v = b_signed ? (int)(int8_t)bu[k * ldb + n] : (int)bu[k * ldb + n] - 128;
      dst[(k / 4) * PANEL * 4 + (k % 4)] = (int8_t)v;
      sum += v;
    }
    out->colsum[n] = sum;
    out->zb[n] = zp_at(zb, b_signed, zb_n, n) - (b_signed ? 0 : 128);
  }
  return OX_OK;
}

void ox_qgemm_free_b(ox_qgemm_b *b) {
  free(b->data);
  free(b->colsum);
  free(b->zb);
  memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------ micro-kernels */

typedef struct qjob {
  const uint8_t *a; /* A' rows of K4 * 4 bytes */
  const int32_t *rowsum, *za;
  const ox_qgemm_b *b;
  int64_t M;
  int32_t *C;
  int64_t ldc;
  const ox_qgemm_epi *epi; /* NULL: int32 C; else float C (same storage) */
  /* one zero point for all of A (dynamic quantization): the terms that do
   * not depend on the row, K za zb[n] - za colsum[n], per column, and
   * whether every zb is 0 (then the row term vanishes); NULL: per row */
  const int32_t *cterm;
  bool zb_zero;
} qjob;

/* The zero-point terms, then the store of one row's columns [n0, n1). */
static inline void finish(const qjob *j, int64_t m, int64_t n, int32_t dot) {
  const ox_qgemm_b *b = j->b;
  int32_t za = j->za[m];
  int32_t v = (int32_t)((int64_t)dot - (int64_t)za * b->colsum[n] -
                        (int64_t)b->zb[n] * j->rowsum[m] + (int64_t)b->K * za * b->zb[n]);
  if (!j->epi) {
    j->C[m * j->ldc + n] = v;
    return;
  }
  const ox_qgemm_epi *ep = j->epi;
  float f = (float)v * ep->scale[ep->n_scale == 1 ? 0 : n];
  if (ep->bias) f = f + ep->bias[ep->n_bias == 1 ? 0 : n];
  ((float *)j->C)[m * j->ldc + n] = f;
}

static void tile_portable(const qjob *j, int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
  const ox_qgemm_b *b = j->b;
  for (int64_t m = m0; m < m1; m++) {
    const uint8_t *ar = j->a + m * b->K4 * 4;
    for (int64_t p = p0; p < p1; p++) {
      const int8_t *bp = b->data + p * b->K4 * PANEL * 4;
      int32_t acc[PANEL] = {0};
      for (int64_t k4 = 0; k4 < b->K4; k4++)
        for (int c = 0; c < PANEL; c++)
          for (int q = 0; q < 4; q++)
            acc[c] += (int32_t)ar[k4 * 4 + q] * bp[(k4 * PANEL + c) * 4 + q];
      for (int c = 0; c < PANEL && p * PANEL + c < b->N; c++) finish(j, m, p * PANEL + c, acc[c]);
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)

/* The epilogue for 16 columns of one row: acc - za*colsum - zb*rowsum + K*za*zb. */
__attribute__((target("avx512f"), always_inline)) static inline void store16(const qjob *j,
                                                                             int64_t m, int64_t p,
                                                                             __m512i acc) {
  const ox_qgemm_b *b = j->b;
  int64_t n0 = p * PANEL;
  if (j->cterm) { /* the same sum with the column terms made once per call */
    acc = _mm512_add_epi32(acc, _mm512_loadu_si512(j->cterm + n0));
    if (!j->zb_zero)
      acc = _mm512_sub_epi32(
          acc, _mm512_mullo_epi32(_mm512_loadu_si512(b->zb + n0), _mm512_set1_epi32(j->rowsum[m])));
  } else {
    __m512i cs = _mm512_loadu_si512(b->colsum + n0), zb = _mm512_loadu_si512(b->zb + n0);
    __m512i za = _mm512_set1_epi32(j->za[m]), rs = _mm512_set1_epi32(j->rowsum[m]);
    __m512i kza = _mm512_set1_epi32((int32_t)(b->K * j->za[m]));
    acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(za, cs));
    acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(zb, rs));
    acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(kza, zb));
  }
  int64_t left = b->N - n0;
  __mmask16 mask = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
  if (!j->epi) {
    _mm512_mask_storeu_epi32(j->C + m * j->ldc + n0, mask, acc);
    return;
  }
  /* Cast, Mul, Add as the unfused nodes do them: two roundings, no FMA */
  const ox_qgemm_epi *ep = j->epi;
  __m512 sc =
      ep->n_scale == 1 ? _mm512_set1_ps(ep->scale[0]) : _mm512_maskz_loadu_ps(mask, ep->scale + n0);
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), sc);
  if (ep->bias)
    f = _mm512_add_ps(f, ep->n_bias == 1 ? _mm512_set1_ps(ep->bias[0])
                                         : _mm512_maskz_loadu_ps(mask, ep->bias + n0));
  _mm512_mask_storeu_ps((float *)j->C + m * j->ldc + n0, mask, f);
}

/* 8 rows x 3 panels (48 columns) in 24 named accumulators (GCC keeps
 * them in registers; an array of them it spilled). Missing rows repeat the
 * last valid one and missing panels the first; neither is stored. */
#define QG_ROW(r)                                   \
  do {                                              \
    int32_t v_;                                     \
    memcpy(&v_, a##r + k4 * 4, 4);                  \
    __m512i x_ = _mm512_set1_epi32(v_);             \
    c##r##0 = _mm512_dpbusd_epi32(c##r##0, x_, w0); \
    c##r##1 = _mm512_dpbusd_epi32(c##r##1, x_, w1); \
    c##r##2 = _mm512_dpbusd_epi32(c##r##2, x_, w2); \
  } while (0)
#define QG_DECL(r) __m512i c##r##0 = zero, c##r##1 = zero, c##r##2 = zero
#define QG_STORE(r)                                  \
  do {                                               \
    if (r < mr) {                                    \
      store16(j, m + r, p, c##r##0);                 \
      if (np > 1) store16(j, m + r, p + 1, c##r##1); \
      if (np > 2) store16(j, m + r, p + 2, c##r##2); \
    }                                                \
  } while (0)

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void vnni_tile(const qjob *j,
                                                                             int64_t m, int64_t p,
                                                                             int mr, int np) {
  const ox_qgemm_b *b = j->b;
  int64_t K4 = b->K4, row = K4 * 4, pstride = K4 * PANEL * 4;
  const int8_t *b0 = b->data + p * pstride;
  const int8_t *b1 = np > 1 ? b0 + pstride : b0, *b2 = np > 2 ? b0 + 2 * pstride : b0;
  const uint8_t *a0 = j->a + m * row;
  const uint8_t *a1 = mr > 1 ? a0 + row : a0, *a2 = mr > 2 ? a0 + 2 * row : a0,
                *a3 = mr > 3 ? a0 + 3 * row : a0, *a4 = mr > 4 ? a0 + 4 * row : a0,
                *a5 = mr > 5 ? a0 + 5 * row : a0, *a6 = mr > 6 ? a0 + 6 * row : a0,
                *a7 = mr > 7 ? a0 + 7 * row : a0;
  const __m512i zero = _mm512_setzero_si512();
  QG_DECL(0);
  QG_DECL(1);
  QG_DECL(2);
  QG_DECL(3);
  QG_DECL(4);
  QG_DECL(5);
  QG_DECL(6);
  QG_DECL(7);
  for (int64_t k4 = 0; k4 < K4; k4++) {
    __m512i w0 = _mm512_load_si512(b0 + k4 * 64), w1 = _mm512_load_si512(b1 + k4 * 64),
            w2 = _mm512_load_si512(b2 + k4 * 64);
    QG_ROW(0);
    QG_ROW(1);
    QG_ROW(2);
    QG_ROW(3);
    QG_ROW(4);
    QG_ROW(5);
    QG_ROW(6);
    QG_ROW(7);
  }
  QG_STORE(0);
  QG_STORE(1);
  QG_STORE(2);
  QG_STORE(3);
  QG_STORE(4);
  QG_STORE(5);
  QG_STORE(6);
  QG_STORE(7);
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void tile_vnni(const qjob *j,
                                                                             int64_t m0, int64_t m1,
                                                                             int64_t p0,
                                                                             int64_t p1) {
  for (int64_t p = p0; p < p1; p += 3) {
    int np = (int)(p1 - p < 3 ? p1 - p : 3);
    for (int64_t m = m0; m < m1; m += 8) vnni_tile(j, m, p, (int)(m1 - m < 8 ? m1 - m : 8), np);
  }
}

/* AVX2: 4 columns x 4 depth bytes of B widened to 16 bits, times the row's 4
 * bytes of A widened and repeated, by vpmaddwd: each column gets two partial
 * sums (k0k1, k2k3), added pairwise at the end. Exact (no saturation). */
__attribute__((target("avx2"), always_inline)) static inline void avx2_row_panel(const qjob *j,
                                                                                 int64_t m,
                                                                                 int64_t p,
                                                                                 int32_t *out16) {
  const ox_qgemm_b *b = j->b;
  int64_t K4 = b->K4;
  const int8_t *bp = b->data + p * K4 * PANEL * 4;
  const uint8_t *a = j->a + m * K4 * 4;
  __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                    _mm256_setzero_si256()};
  for (int64_t k4 = 0; k4 < K4; k4++) {
    int64_t four;
    uint32_t v;
    memcpy(&v, a + k4 * 4, 4);
    four = (int64_t)(v & 0xFF) | (int64_t)((v >> 8) & 0xFF) << 16 |
           (int64_t)((v >> 16) & 0xFF) << 32 | (int64_t)((v >> 24) & 0xFF) << 48;
    __m256i x = _mm256_set1_epi64x(four);
    const int8_t *w = bp + k4 * 64;
    for (int g = 0; g < 4; g++) {
      __m256i wv = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 16 * g)));
      acc[g] = _mm256_add_epi32(acc[g], _mm256_madd_epi16(wv, x));
    }
  }
  __m256i c0 = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[0], acc[1]), 0xD8);
  __m256i c1 = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[2], acc[3]), 0xD8);
  _mm256_storeu_si256((__m256i *)out16, c0);
  _mm256_storeu_si256((__m256i *)(out16 + 8), c1);
}

__attribute__((target("avx2"))) static void tile_avx2(const qjob *j, int64_t m0, int64_t m1,
                                                      int64_t p0, int64_t p1) {
  int32_t dot[PANEL];
  for (int64_t m = m0; m < m1; m++)
    for (int64_t p = p0; p < p1; p++) {
      avx2_row_panel(j, m, p, dot);
      for (int c = 0; c < PANEL && p * PANEL + c < j->b->N; c++)
        finish(j, m, p * PANEL + c, dot[c]);
    }
}

#endif

typedef void (*tile_fn)(const qjob *, int64_t, int64_t, int64_t, int64_t);
typedef int32_t (*copy_row_fn)(const uint8_t *a, int64_t K, bool a_signed, uint8_t *dst);

/* The family's dispatch table, filled once from the CPU probe (ONNXC_ISA
 * included): the best tile and its name, the AVX2 tile where it may run
 * (a named path), A's row copy, and the blocking: a task's rows and
 * panels. */
typedef struct qg_table {
  tile_fn best, avx2;
  const char *name;
  copy_row_fn copy_row;
  int64_t row_block, tile_panels;
} qg_table;

/* Blocking per microarchitecture (today's values on every row; a core
 * that wants others gets its row here). */
static const struct {
  int64_t row_block, tile_panels;
} k_qg_blocking[] = {
    [OX_UARCH_GENERIC] = {64, 3}, [OX_UARCH_INTEL] = {64, 3}, [OX_UARCH_INTEL_AVX2] = {64, 3},
    [OX_UARCH_ZEN2_3] = {64, 3},  [OX_UARCH_ZEN4] = {64, 3},  [OX_UARCH_ZEN5] = {64, 3},
};

static int32_t copy_row(const uint8_t *a, int64_t K, bool a_signed, uint8_t *dst);
#if defined(__x86_64__) || defined(__i386__)
static int32_t copy_row_avx512(const uint8_t *a, int64_t K, bool a_signed, uint8_t *dst);
#endif

static qg_table g_qg;
static pthread_once_t g_qg_once = PTHREAD_ONCE_INIT;

static void qg_fill(void) {
  const ox_cpu *c = ox_cpu_get();
  qg_table *t = &g_qg;
  t->best = tile_portable;
  t->name = "portable";
  t->copy_row = copy_row;
#if defined(__x86_64__) || defined(__i386__)
  if (c->avx2) t->avx2 = tile_avx2;
  if (c->avx512vnni && c->avx512bw) {
    t->best = tile_vnni;
    t->name = "avx512vnni";
  } else if (c->avx2) {
    t->best = tile_avx2;
    t->name = "avx2";
  }
  if (c->avx512bw) t->copy_row = copy_row_avx512;
#endif
  size_t u = (size_t)c->uarch < sizeof k_qg_blocking / sizeof *k_qg_blocking ? (size_t)c->uarch : 0;
  t->row_block = k_qg_blocking[u].row_block;
  t->tile_panels = k_qg_blocking[u].tile_panels;
}

static const qg_table *qg_dispatch(void) {
  pthread_once(&g_qg_once, qg_fill);
  return &g_qg;
}

const char *ox_qgemm_path(void) { return qg_dispatch()->name; }

/* ------------------------------------------------------------ driver */

typedef struct qtask {
  const qjob *j;
  tile_fn fn;
  int64_t row_blocks, pair_blocks;
  int64_t row_block, tile_panels; /* the table's blocking */
} qtask;

static void run_tiles(void *arg, int64_t t0, int64_t t1) {
  const qtask *t = arg;
  const qjob *j = t->j;
  int64_t n_panels = j->b->Np / PANEL;
  for (int64_t t_ = t0; t_ < t1; t_++) {
    int64_t rb = t_ / t->pair_blocks, pb = t_ % t->pair_blocks;
    int64_t m0 = rb * t->row_block, m1 = m0 + t->row_block < j->M ? m0 + t->row_block : j->M;
    int64_t p0 = pb * t->tile_panels,
            p1 = p0 + t->tile_panels < n_panels ? p0 + t->tile_panels : n_panels;
    t->fn(j, m0, m1, p0, p1);
    const ox_qgemm_epi *ep = j->epi;
    if (ep && ep->post) {
      int64_t n1 = p1 * PANEL < j->b->N ? p1 * PANEL : j->b->N;
      ep->post(ep->post_ctx, (float *)j->C, j->ldc, m0, m1, p0 * PANEL, n1);
    }
  }
}

static tile_fn by_name(const char *path) {
  const qg_table *t = qg_dispatch();
  if (!path || strcmp(path, t->name) == 0) return t->best;
  if (strcmp(path, "avx2") == 0 && t->avx2) return t->avx2;
  if (strcmp(path, "portable") == 0) return tile_portable;
  return NULL;
}

static int qgemm_impl(const char *path, const void *A, bool a_signed, int64_t M, int64_t lda,
                      const void *za, int64_t za_n, const ox_qgemm_b *B, const ox_qgemm_epi *epi,
                      void *C, int64_t ldc, ox_thread_pool *pool, ox_err *e);

int ox_qgemm(const void *A, bool a_signed, int64_t M, int64_t lda, const void *za, int64_t za_n,
             const ox_qgemm_b *B, int32_t *C, int64_t ldc, ox_thread_pool *pool, ox_err *e) {
  return qgemm_impl(NULL, A, a_signed, M, lda, za, za_n, B, NULL, C, ldc, pool, e);
}

int ox_qgemm_on(const char *path, const void *A, bool a_signed, int64_t M, int64_t lda,
                const void *za, int64_t za_n, const ox_qgemm_b *B, int32_t *C, int64_t ldc,
                ox_thread_pool *pool, ox_err *e) {
  return qgemm_impl(path, A, a_signed, M, lda, za, za_n, B, NULL, C, ldc, pool, e);
}

int ox_qgemm_scaled_on(const char *path, const void *A, bool a_signed, int64_t M, int64_t lda,
                       const void *za, int64_t za_n, const ox_qgemm_b *B, const ox_qgemm_epi *epi,
                       float *C, int64_t ldc, ox_thread_pool *pool, ox_err *e) {
  return qgemm_impl(path, A, a_signed, M, lda, za, za_n, B, epi, C, ldc, pool, e);
}

/* A row into A' (int8 moved to unsigned by + 128, the same as flipping
 * the top bit) and its sum */
static int32_t copy_row(const uint8_t *a, int64_t K, bool a_signed, uint8_t *dst) {
  int32_t s = 0;
  for (int64_t k = 0; k < K; k++) s += dst[k] = a_signed ? (uint8_t)(a[k] ^ 0x80u) : a[k];
  return s;
}

#if defined(__x86_64__) || defined(__i386__)
/* the same 64 bytes at a time, summed by vpsadbw against zero */
__attribute__((target("avx512f,avx512bw"))) static int32_t copy_row_avx512(const uint8_t *a,
                                                                           int64_t K, bool a_signed,
                                                                           uint8_t *dst) {
  const __m512i flip = _mm512_set1_epi8(a_signed ? (char)0x80 : 0), zero = _mm512_setzero_si512();
  __m512i acc = zero;
  for (int64_t k = 0; k < K; k += 64) {
    __mmask64 m = K - k >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (K - k)) - 1);
    __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, a + k), flip);
    v = _mm512_maskz_mov_epi8(m, v);
    _mm512_mask_storeu_epi8(dst + k, m, v);
    acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, zero));
  }
  return (int32_t)_mm512_reduce_add_epi64(acc);
}
#endif

static int qgemm_impl(const char *path, const void *A, bool a_signed, int64_t M, int64_t lda,
                      const void *za, int64_t za_n, const ox_qgemm_b *B, const ox_qgemm_epi *epi,
                      void *C, int64_t ldc, ox_thread_pool *pool, ox_err *e) {
  tile_fn fn = by_name(path);
  if (!fn)
    return ox_err_set(e, OX_EUNSUPPORTED, "integer GEMM path '%s' is not available here", path);
  if (M <= 0 || B->N == 0) return OX_OK;
  int64_t row = B->K4 * 4;
  uint8_t *ap = aligned_alloc(64, ((size_t)M * (size_t)row + 63) / 64 * 64 + 64);
  int32_t *sums = malloc(((size_t)M * 2 + (size_t)B->Np + 1) * sizeof *sums);
  if (!ap || !sums) {
    free(ap);
    free(sums);
    return ox_err_set(e, OX_ENOMEM, "out of memory (integer GEMM)");
  }
  int32_t *rowsum = sums, *zas = sums + M;
  const uint8_t *au = A;
  const qg_table *tab = qg_dispatch();
  for (int64_t m = 0; m < M; m++) {
    uint8_t *dst = ap + m * row;
    rowsum[m] = tab->copy_row(au + m * lda, B->K, a_signed, dst);
    memset(dst + B->K, 0, (size_t)(row - B->K));
    zas[m] = zp_at(za, a_signed, za_n, m) + (a_signed ? 128 : 0);
  }
  qjob j = {ap, rowsum, zas, B, M, C, ldc, epi, NULL, false};
  if (za_n <= 1) { /* every row has the same zero point */
    int32_t *ct = sums + 2 * M, z = zas[0];
    bool zero = true;
    /* wrapping int32 arithmetic, as the per-element form computes it */
    for (int64_t n = 0; n < B->Np; n++) {
      uint32_t kz = (uint32_t)B->K * (uint32_t)z * (uint32_t)B->zb[n];
      ct[n] = (int32_t)(kz - (uint32_t)z * (uint32_t)B->colsum[n]);
      zero &= B->zb[n] == 0;
    }
    j.cterm = ct;
    j.zb_zero = zero;
  }
  qtask t = {&j,
             fn,
             (M + tab->row_block - 1) / tab->row_block,
             (B->Np / PANEL + tab->tile_panels - 1) / tab->tile_panels,
             tab->row_block,
             tab->tile_panels};
  ox_parallel_for(pool, t.row_blocks * t.pair_blocks, 1, run_tiles, &t);
  free(ap);
  free(sums);
  return OX_OK;
}
