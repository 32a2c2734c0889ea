/* gemm_h.c - GEMM by a constant 16-bit B packed once (see gemm_h.h).
 *
 * Packed B: panels of nr columns (32 on the AVX-512 paths, 16 otherwise),
 * panel p at p * kp * nr halves. float16 panels hold kp = K rows of nr
 * values. bfloat16 panels hold depth in pairs (kp = K rounded up to even):
 * pair q is nr 32-bit lanes, lane c = B(2q, c) in its low half and B(2q+1, c)
 * in its high half. That is vdpbf16ps's operand layout, and it also widens
 * cheaply on the FMA paths: a lane shifted left by 16 is B(2q, c) as float32,
 * the lane with its low half cleared is B(2q+1, c).
 *
 * Work: up to four rows of A stream the panels once (decode), panels split
 * over the threads. More rows: per task, blocks of mc rows of A are widened
 * to float32 and laid out in panels of mr rows (depth-major), then every
 * B panel of the task meets every A panel in an mr x nr micro-kernel that
 * runs the whole depth in registers and leaves a float32 tile, which the
 * store step scales, adds to beta * C and rounds to C's type. No depth
 * blocking: the tile's float32 sum is never rounded to 16 bits midway, and
 * one depth step costs 12 cycles of FMA against 112 bytes read from L2. */
#include "gemm_h.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../base/cpu.h"
#include "../base/floatconv.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define OX_HG_X86 1
#include <immintrin.h>
#endif

enum { NR_MAX = 32, MR_MAX = 12 };

struct ox_hgemm_b {
  int64_t K, N, kp, npad;
  int nr;
  ox_hg_type bt;
  ox_hg_path path;
  uint16_t *data;
};

/* The family's dispatch table, filled once from the CPU probe (ONNXC_ISA
 * included): which paths this CPU may take, the best one, each path's
 * kernels (NULL: the portable loops), and the blocking. */
typedef void (*tile_fn)(int64_t kp, const void *a, const uint16_t *b, float *t);
typedef void (*rows_fn)(int m, int64_t kp, const void *a, int64_t lda, const uint16_t *b, float *t);
typedef struct hg_kernels {
  tile_fn tile_f16, tile_bf16, tile_dp; /* dp: bf16 x bf16 by vdpbf16ps */
  rows_fn rows_f16, rows_bf16, rows_dp;
} hg_kernels;
typedef struct hg_table {
  bool ok[OX_HG_AVX512BF16 + 1];
  ox_hg_path best;
  hg_kernels k[OX_HG_AVX512BF16 + 1];
  /* the most rows of A per block, and the bytes of float32 A rows a block
   * may take (it stays in L2 while the task's B panels pass) */
  int64_t mc_max, a_block_bytes;
} hg_table;

/* ------------------------------------------------------------ conversions */

static float half_widen(ox_hg_type t, uint16_t h) {
  return t == OX_HG_BF16 ? ox_bf16_to_f32(h) : ox_f16_to_f32(h);
}

/* n values of type t at src (in elements) to float32 */
static void widen_n(ox_hg_type t, const void *src, int64_t n, float *dst) {
  if (t == OX_HG_F32)
    memcpy(dst, src, (size_t)n * sizeof(float));
  else if (t == OX_HG_F16)
    ox_f16_to_f32_n(src, dst, (size_t)n);
  else
    ox_bf16_to_f32_n(src, dst, (size_t)n);
}

static float elem_widen(ox_hg_type t, const void *base, int64_t i) {
  if (t == OX_HG_F32) return ((const float *)base)[i];
  return half_widen(t, ((const uint16_t *)base)[i]);
}

/* ------------------------------------------------------------ paths */

static hg_table *hg_dispatch(void);

bool ox_hgemm_path_ok(ox_hg_path path) {
  return path >= OX_HG_AUTO && path <= OX_HG_AVX512BF16 && hg_dispatch()->ok[path];
}

static ox_hg_path best_path(void) { return hg_dispatch()->best; }

static int path_nr(ox_hg_path p) { return p == OX_HG_AVX512 || p == OX_HG_AVX512BF16 ? 32 : 16; }
static int path_mr(ox_hg_path p) {
  return p == OX_HG_AVX512 || p == OX_HG_AVX512BF16 ? 12 : p == OX_HG_AVX2 ? 6 : 4;
}

const char *ox_hgemm_b_path(const ox_hgemm_b *b) {
  switch (b->path) {
    case OX_HG_AVX512BF16:
      return "avx512bf16";
    case OX_HG_AVX512:
      return "avx512";
    case OX_HG_AVX2:
      return "avx2";
    default:
      return "portable";
  }
}

/* ------------------------------------------------------------ packing B */

/* index of B(k, c) inside a panel */
static int64_t panel_index(ox_hg_type bt, int nr, int64_t k, int64_t c) {
  return bt == OX_HG_BF16 ? (k >> 1) * 2 * nr + 2 * c + (k & 1) : k * nr + c;
}

ox_hgemm_b *ox_hgemm_pack_b(ox_hg_path path, ox_hg_type bt, bool trans_b, int64_t K, int64_t N,
                            const uint16_t *B, int64_t ldb, ox_err *e) {
  if (bt != OX_HG_F16 && bt != OX_HG_BF16) {
    ox_err_set(e, OX_EUNSUPPORTED, "a packed 16-bit B must be float16 or bfloat16");
    return NULL;
  }
  if (path == OX_HG_AUTO) path = best_path();
  if (!ox_hgemm_path_ok(path)) {
    ox_err_set(e, OX_EUNSUPPORTED, "this CPU lacks the instructions of the requested path");
    return NULL;
  }
  if (K < 0 || N < 0 || K > ((int64_t)1 << 40) || N > ((int64_t)1 << 40)) {
    ox_err_set(e, OX_ENOMEM, "a %lld x %lld weight is too large to pack", (long long)K,
               (long long)N);
    return NULL;
  }
  int nr = path_nr(path);
  int64_t kp = bt == OX_HG_BF16 ? (K + 1) / 2 * 2 : K;
  int64_t npad = (N + nr - 1) / nr * nr;
  ox_hgemm_b *p = calloc(1, sizeof *p);
  bool fits = (uint64_t)npad * (uint64_t)kp < ((uint64_t)1 << 40);
  size_t halves = fits ? (size_t)npad * (size_t)kp : 0;
  if (p && fits) p->data = aligned_alloc(64, (halves * 2 + 64) / 64 * 64);
  if (!p || !p->data) {
    free(p);
    ox_err_set(e, OX_ENOMEM, "out of memory packing a %lld x %lld weight", (long long)K,
               (long long)N);
    return NULL;
  }
  *p = (ox_hgemm_b){K, N, kp, npad, nr, bt, path, p->data};
  memset(p->data, 0, halves * 2);
  for (int64_t n0 = 0; n0 < N; n0 += nr) {
    uint16_t *panel = p->data + n0 * kp;
    int64_t ncols = N - n0 < nr ? N - n0 : nr;
    for (int64_t k = 0; k < K; k++)
      for (int64_t c = 0; c < ncols; c++)
        panel[panel_index(bt, nr, k, c)] = trans_b ? B[(n0 + c) * ldb + k] : B[k * ldb + n0 + c];
  }
  return p;
}

void ox_hgemm_b_free(ox_hgemm_b *b) {
  if (!b) return;
  free(b->data);
  free(b);
}

int64_t ox_hgemm_b_k(const ox_hgemm_b *b) { return b->K; }
int64_t ox_hgemm_b_n(const ox_hgemm_b *b) { return b->N; }
size_t ox_hgemm_b_bytes(const ox_hgemm_b *b) { return (size_t)b->npad * (size_t)b->kp * 2; }

/* ------------------------------------------------------------ micro-kernels
 *
 * Tile kernels: mr rows of A packed depth-major (a[k * mr + i], float32; or
 * bfloat16 pairs a[q * mr + i] for vdpbf16ps) times one B panel over the
 * whole depth kp, written to t (mr x nr float32, row stride nr). Row
 * kernels (decode): m <= 4 rows of A row-major (row stride lda, float32 or
 * bfloat16 pairs) times one panel, written to t (m x nr). */

/* the portable tile: 4 rows, panels of 16 or 32 columns */
static void tile_portable(int nr, ox_hg_type bt, int64_t kp, const float *a, const uint16_t *b,
                          float *t) {
  float acc[4][NR_MAX];
  memset(acc, 0, sizeof acc);
  for (int64_t k = 0; k < kp; k++) {
    float bk[NR_MAX];
    for (int c = 0; c < nr; c++) bk[c] = half_widen(bt, b[panel_index(bt, nr, k, c)]);
    for (int i = 0; i < 4; i++)
      for (int c = 0; c < nr; c++) acc[i][c] += a[k * 4 + i] * bk[c];
  }
  for (int i = 0; i < 4; i++) memcpy(t + i * nr, acc[i], (size_t)nr * sizeof(float));
}

/* the portable row kernel */
static void rows_portable(int nr, ox_hg_type bt, int m, int64_t kp, const float *a, int64_t lda,
                          const uint16_t *b, float *t) {
  float acc[4][NR_MAX];
  memset(acc, 0, sizeof acc);
  for (int64_t k = 0; k < kp; k++)
    for (int c = 0; c < nr; c++) {
      float bv = half_widen(bt, b[panel_index(bt, nr, k, c)]);
      for (int i = 0; i < m; i++) acc[i][c] += a[i * lda + k] * bv;
    }
  for (int i = 0; i < m; i++) memcpy(t + i * nr, acc[i], (size_t)nr * sizeof(float));
}

#ifdef OX_HG_X86
/* Row lists for the unrolled kernels: every accumulator index is a
 * constant, so the arrays live in registers. */
#define HG_ROWS12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define HG_ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)

/* ---- AVX-512F: 12 x 32 ---- */

#define HG_ZERO512(i) c0[i] = c1[i] = _mm512_setzero_ps();
#define HG_FMA512(i)                        \
  {                                         \
    __m512 av = _mm512_set1_ps(a[i]);       \
    c0[i] = _mm512_fmadd_ps(av, b0, c0[i]); \
    c1[i] = _mm512_fmadd_ps(av, b1, c1[i]); \
  }
#define HG_STORE512(i)                 \
  _mm512_storeu_ps(t + (i)*32, c0[i]); \
  _mm512_storeu_ps(t + (i)*32 + 16, c1[i]);

__attribute__((target("avx512f"))) static void tile512_f16(int64_t kp, const void *av_,
                                                           const uint16_t *b, float *t) {
  const float *a = av_;
  __m512 c0[12], c1[12];
  HG_ROWS12(HG_ZERO512)
  for (int64_t k = 0; k < kp; k++, a += 12, b += 32) {
    __m512 b0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)b));
    __m512 b1 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + 16)));
    HG_ROWS12(HG_FMA512)
  }
  HG_ROWS12(HG_STORE512)
}

__attribute__((target("avx512f"))) static void tile512_bf16(int64_t kp, const void *av_,
                                                            const uint16_t *b, float *t) {
  const float *a = av_;
  const __m512i high = _mm512_set1_epi32((int)0xFFFF0000u);
  __m512 c0[12], c1[12];
  HG_ROWS12(HG_ZERO512)
  for (int64_t q = 0; q < kp / 2; q++, b += 64) {
    __m512i x0 = _mm512_loadu_si512(b), x1 = _mm512_loadu_si512(b + 32);
    __m512 b0 = _mm512_castsi512_ps(_mm512_slli_epi32(x0, 16));
    __m512 b1 = _mm512_castsi512_ps(_mm512_slli_epi32(x1, 16));
    HG_ROWS12(HG_FMA512)
    a += 12;
    b0 = _mm512_castsi512_ps(_mm512_and_si512(x0, high));
    b1 = _mm512_castsi512_ps(_mm512_and_si512(x1, high));
    HG_ROWS12(HG_FMA512)
    a += 12;
  }
  HG_ROWS12(HG_STORE512)
}

/* bf16 x bf16: one vdpbf16ps per pair of depth steps */
#define HG_DP512(i)                                       \
  {                                                       \
    __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[i]); \
    c0[i] = _mm512_dpbf16_ps(c0[i], av, b0);              \
    c1[i] = _mm512_dpbf16_ps(c1[i], av, b1);              \
  }

__attribute__((target("avx512f,avx512bf16"))) static void tile512_dp(int64_t kp, const void *av_,
                                                                     const uint16_t *b, float *t) {
  const uint32_t *a = av_;
  __m512 c0[12], c1[12];
  HG_ROWS12(HG_ZERO512)
  for (int64_t q = 0; q < kp / 2; q++, a += 12, b += 64) {
    __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 32);
    HG_ROWS12(HG_DP512)
  }
  HG_ROWS12(HG_STORE512)
}

/* Row kernels, m rows (a compile-time constant after inlining): two sets
 * of sums for alternate depth steps, so that a single row is not held up
 * by the FMA latency when B comes from cache. */
__attribute__((target("avx512f"), always_inline)) static inline void rows512_f16_m(
    int m, int64_t kp, const float *a, int64_t lda, const uint16_t *b, float *t) {
  __m512 s[2][4][2];
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < m; i++) s[p][i][0] = s[p][i][1] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 2 <= kp; k += 2, b += 64)
    for (int p = 0; p < 2; p++) {
      __m512 b0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + 32 * p)));
      __m512 b1 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + 32 * p + 16)));
      for (int i = 0; i < m; i++) {
        __m512 av = _mm512_set1_ps(a[i * lda + k + p]);
        s[p][i][0] = _mm512_fmadd_ps(av, b0, s[p][i][0]);
        s[p][i][1] = _mm512_fmadd_ps(av, b1, s[p][i][1]);
      }
    }
  if (k < kp) {
    __m512 b0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)b));
    __m512 b1 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + 16)));
    for (int i = 0; i < m; i++) {
      __m512 av = _mm512_set1_ps(a[i * lda + k]);
      s[0][i][0] = _mm512_fmadd_ps(av, b0, s[0][i][0]);
      s[0][i][1] = _mm512_fmadd_ps(av, b1, s[0][i][1]);
    }
  }
  for (int i = 0; i < m; i++) {
    _mm512_storeu_ps(t + i * 32, _mm512_add_ps(s[0][i][0], s[1][i][0]));
    _mm512_storeu_ps(t + i * 32 + 16, _mm512_add_ps(s[0][i][1], s[1][i][1]));
  }
}

__attribute__((target("avx512f"), always_inline)) static inline void rows512_bf16_m(
    int m, int64_t kp, const float *a, int64_t lda, const uint16_t *b, float *t) {
  const __m512i high = _mm512_set1_epi32((int)0xFFFF0000u);
  __m512 s[2][4][2];
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < m; i++) s[p][i][0] = s[p][i][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kp; k += 2, b += 64) {
    __m512i x0 = _mm512_loadu_si512(b), x1 = _mm512_loadu_si512(b + 32);
    __m512 e0 = _mm512_castsi512_ps(_mm512_slli_epi32(x0, 16));
    __m512 e1 = _mm512_castsi512_ps(_mm512_slli_epi32(x1, 16));
    __m512 o0 = _mm512_castsi512_ps(_mm512_and_si512(x0, high));
    __m512 o1 = _mm512_castsi512_ps(_mm512_and_si512(x1, high));
    for (int i = 0; i < m; i++) {
      __m512 ae = _mm512_set1_ps(a[i * lda + k]), ao = _mm512_set1_ps(a[i * lda + k + 1]);
      s[0][i][0] = _mm512_fmadd_ps(ae, e0, s[0][i][0]);
      s[0][i][1] = _mm512_fmadd_ps(ae, e1, s[0][i][1]);
      s[1][i][0] = _mm512_fmadd_ps(ao, o0, s[1][i][0]);
      s[1][i][1] = _mm512_fmadd_ps(ao, o1, s[1][i][1]);
    }
  }
  for (int i = 0; i < m; i++) {
    _mm512_storeu_ps(t + i * 32, _mm512_add_ps(s[0][i][0], s[1][i][0]));
    _mm512_storeu_ps(t + i * 32 + 16, _mm512_add_ps(s[0][i][1], s[1][i][1]));
  }
}

/* a holds bfloat16 pairs here: row i's pair q at a[i * lda + q] */
__attribute__((target("avx512f,avx512bf16"), always_inline)) static inline void rows512_dp_m(
    int m, int64_t kp, const uint32_t *a, int64_t lda, const uint16_t *b, float *t) {
  __m512 s[2][4][2];
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < m; i++) s[p][i][0] = s[p][i][1] = _mm512_setzero_ps();
  int64_t q = 0, nq = kp / 2;
  for (; q + 2 <= nq; q += 2, b += 128)
    for (int p = 0; p < 2; p++) {
      __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + 64 * p);
      __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 64 * p + 32);
      for (int i = 0; i < m; i++) {
        __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[i * lda + q + p]);
        s[p][i][0] = _mm512_dpbf16_ps(s[p][i][0], av, b0);
        s[p][i][1] = _mm512_dpbf16_ps(s[p][i][1], av, b1);
      }
    }
  if (q < nq) {
    __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 32);
    for (int i = 0; i < m; i++) {
      __m512bh av = (__m512bh)_mm512_set1_epi32((int)a[i * lda + q]);
      s[0][i][0] = _mm512_dpbf16_ps(s[0][i][0], av, b0);
      s[0][i][1] = _mm512_dpbf16_ps(s[0][i][1], av, b1);
    }
  }
  for (int i = 0; i < m; i++) {
    _mm512_storeu_ps(t + i * 32, _mm512_add_ps(s[0][i][0], s[1][i][0]));
    _mm512_storeu_ps(t + i * 32 + 16, _mm512_add_ps(s[0][i][1], s[1][i][1]));
  }
}

/* one specialisation per row count */
#define HG_ROWS_BY_M(name, body, atype, target_s)                                                \
  __attribute__((target(target_s))) static void name(int m, int64_t kp, const void *a,           \
                                                     int64_t lda, const uint16_t *b, float *t) { \
    const atype *ap = a;                                                                         \
    switch (m) {                                                                                 \
      case 1:                                                                                    \
        body(1, kp, ap, lda, b, t);                                                              \
        break;                                                                                   \
      case 2:                                                                                    \
        body(2, kp, ap, lda, b, t);                                                              \
        break;                                                                                   \
      case 3:                                                                                    \
        body(3, kp, ap, lda, b, t);                                                              \
        break;                                                                                   \
      default:                                                                                   \
        body(4, kp, ap, lda, b, t);                                                              \
        break;                                                                                   \
    }                                                                                            \
  }
HG_ROWS_BY_M(rows512_f16, rows512_f16_m, float, "avx512f")
HG_ROWS_BY_M(rows512_bf16, rows512_bf16_m, float, "avx512f")
HG_ROWS_BY_M(rows512_dp, rows512_dp_m, uint32_t, "avx512f,avx512bf16")

/* ---- AVX2 + FMA + F16C: 6 x 16 ---- */

#define HG_ZERO256(i) c0[i] = c1[i] = _mm256_setzero_ps();
#define HG_FMA256(i)                          \
  {                                           \
    __m256 av = _mm256_broadcast_ss(a + (i)); \
    c0[i] = _mm256_fmadd_ps(av, b0, c0[i]);   \
    c1[i] = _mm256_fmadd_ps(av, b1, c1[i]);   \
  }
#define HG_STORE256(i)                 \
  _mm256_storeu_ps(t + (i)*16, c0[i]); \
  _mm256_storeu_ps(t + (i)*16 + 8, c1[i]);

__attribute__((target("avx2,fma,f16c"))) static void tile256_f16(int64_t kp, const void *av_,
                                                                 const uint16_t *b, float *t) {
  const float *a = av_;
  __m256 c0[6], c1[6];
  HG_ROWS6(HG_ZERO256)
  for (int64_t k = 0; k < kp; k++, a += 6, b += 16) {
    __m256 b0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)b));
    __m256 b1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + 8)));
    HG_ROWS6(HG_FMA256)
  }
  HG_ROWS6(HG_STORE256)
}

__attribute__((target("avx2,fma"))) static void tile256_bf16(int64_t kp, const void *av_,
                                                             const uint16_t *b, float *t) {
  const float *a = av_;
  const __m256i high = _mm256_set1_epi32((int)0xFFFF0000u);
  __m256 c0[6], c1[6];
  HG_ROWS6(HG_ZERO256)
  for (int64_t q = 0; q < kp / 2; q++, b += 32) {
    __m256i x0 = _mm256_loadu_si256((const __m256i *)b);
    __m256i x1 = _mm256_loadu_si256((const __m256i *)(b + 16));
    __m256 b0 = _mm256_castsi256_ps(_mm256_slli_epi32(x0, 16));
    __m256 b1 = _mm256_castsi256_ps(_mm256_slli_epi32(x1, 16));
    HG_ROWS6(HG_FMA256)
    a += 6;
    b0 = _mm256_castsi256_ps(_mm256_and_si256(x0, high));
    b1 = _mm256_castsi256_ps(_mm256_and_si256(x1, high));
    HG_ROWS6(HG_FMA256)
    a += 6;
  }
  HG_ROWS6(HG_STORE256)
}

/* Row kernels: one set of sums (sixteen ymm registers do not hold two sets
 * of four rows); bfloat16 pairs give two independent chains anyway. */
__attribute__((target("avx2,fma,f16c"), always_inline)) static inline void rows256_f16_m(
    int m, int64_t kp, const float *a, int64_t lda, const uint16_t *b, float *t) {
  __m256 s[4][2];
  for (int i = 0; i < m; i++) s[i][0] = s[i][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kp; k++, b += 16) {
    __m256 b0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)b));
    __m256 b1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + 8)));
    for (int i = 0; i < m; i++) {
      __m256 av = _mm256_broadcast_ss(a + i * lda + k);
      s[i][0] = _mm256_fmadd_ps(av, b0, s[i][0]);
      s[i][1] = _mm256_fmadd_ps(av, b1, s[i][1]);
    }
  }
  for (int i = 0; i < m; i++) {
    _mm256_storeu_ps(t + i * 16, s[i][0]);
    _mm256_storeu_ps(t + i * 16 + 8, s[i][1]);
  }
}

__attribute__((target("avx2,fma"), always_inline)) static inline void rows256_bf16_m(
    int m, int64_t kp, const float *a, int64_t lda, const uint16_t *b, float *t) {
  const __m256i high = _mm256_set1_epi32((int)0xFFFF0000u);
  __m256 s[4][2];
  for (int i = 0; i < m; i++) s[i][0] = s[i][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kp; k += 2, b += 32) {
    __m256i x0 = _mm256_loadu_si256((const __m256i *)b);
    __m256i x1 = _mm256_loadu_si256((const __m256i *)(b + 16));
    __m256 e0 = _mm256_castsi256_ps(_mm256_slli_epi32(x0, 16));
    __m256 e1 = _mm256_castsi256_ps(_mm256_slli_epi32(x1, 16));
    __m256 o0 = _mm256_castsi256_ps(_mm256_and_si256(x0, high));
    __m256 o1 = _mm256_castsi256_ps(_mm256_and_si256(x1, high));
    for (int i = 0; i < m; i++) {
      __m256 ae = _mm256_broadcast_ss(a + i * lda + k);
      __m256 ao = _mm256_broadcast_ss(a + i * lda + k + 1);
      s[i][0] = _mm256_fmadd_ps(ao, o0, _mm256_fmadd_ps(ae, e0, s[i][0]));
      s[i][1] = _mm256_fmadd_ps(ao, o1, _mm256_fmadd_ps(ae, e1, s[i][1]));
    }
  }
  for (int i = 0; i < m; i++) {
    _mm256_storeu_ps(t + i * 16, s[i][0]);
    _mm256_storeu_ps(t + i * 16 + 8, s[i][1]);
  }
}

HG_ROWS_BY_M(rows256_f16, rows256_f16_m, float, "avx2,fma,f16c")
HG_ROWS_BY_M(rows256_bf16, rows256_bf16_m, float, "avx2,fma")
#endif

/* ------------------------------------------------------------ the product */

typedef struct hg_job {
  const ox_hgemm_b *B;
  int64_t M, lda, ldc;
  ox_hg_type at, ct;
  bool ta;
  bool dp; /* A in bfloat16 pairs for vdpbf16ps */
  const void *A;
  float alpha, beta;
  void *C;
  int mr;
  tile_fn tile; /* NULL: the portable tile */
  rows_fn rows; /* NULL: the portable rows */
  /* row kernels: A widened once for all tasks; blocked: scratch per task */
  const void *arows;
  int64_t arows_ld;
  char *scratch;
  size_t scratch_per_task;
  int64_t mc, split, chunk; /* split 0: tasks take panels; 1: rows */
  bool shared_a;            /* split 0: A packed once, row block b in task b's scratch */
} hg_job;

/* Blocking per microarchitecture (today's values on every row; a core
 * that wants others gets its row here). */
static const struct {
  int64_t mc_max, a_block_bytes;
} k_hg_blocking[] = {
    [OX_UARCH_GENERIC] = {96, 256 * 1024},    [OX_UARCH_INTEL] = {96, 256 * 1024},
    [OX_UARCH_INTEL_AVX2] = {96, 256 * 1024}, [OX_UARCH_ZEN2_3] = {96, 256 * 1024},
    [OX_UARCH_ZEN4] = {96, 256 * 1024},       [OX_UARCH_ZEN5] = {96, 256 * 1024},
};

static hg_table g_hg;
static pthread_once_t g_hg_once = PTHREAD_ONCE_INIT;

static void hg_fill(void) {
  const ox_cpu *c = ox_cpu_get();
  hg_table *t = &g_hg;
  t->ok[OX_HG_AUTO] = t->ok[OX_HG_PORTABLE] = true;
  /* every AVX2 CPU has F16C (as in src/base/floatconv.c) */
  t->ok[OX_HG_AVX2] = c->avx2 && c->fma;
  t->ok[OX_HG_AVX512] = c->avx512f;
  t->ok[OX_HG_AVX512BF16] = c->avx512f && c->avx512bf16;
  t->best = t->ok[OX_HG_AVX512BF16] ? OX_HG_AVX512BF16
            : t->ok[OX_HG_AVX512]   ? OX_HG_AVX512
            : t->ok[OX_HG_AVX2]     ? OX_HG_AVX2
                                    : OX_HG_PORTABLE;
#ifdef OX_HG_X86
  /* AVX512BF16: vdpbf16ps for bf16 x bf16, else the FMA kernels */
  t->k[OX_HG_AVX512] = (hg_kernels){tile512_f16, tile512_bf16, tile512_bf16,
                                    rows512_f16, rows512_bf16, rows512_bf16};
  t->k[OX_HG_AVX512BF16] =
      (hg_kernels){tile512_f16, tile512_bf16, tile512_dp, rows512_f16, rows512_bf16, rows512_dp};
  t->k[OX_HG_AVX2] = (hg_kernels){tile256_f16, tile256_bf16, tile256_bf16,
                                  rows256_f16, rows256_bf16, rows256_bf16};
#endif
  size_t u = (size_t)c->uarch < sizeof k_hg_blocking / sizeof *k_hg_blocking ? (size_t)c->uarch : 0;
  t->mc_max = k_hg_blocking[u].mc_max;
  t->a_block_bytes = k_hg_blocking[u].a_block_bytes;
}

static hg_table *hg_dispatch(void) {
  pthread_once(&g_hg_once, hg_fill);
  return &g_hg;
}

/* the kernels of B's path (NULL: portable); a dp job (bf16 x bf16 on the
 * AVX512BF16 path) takes the pair kernels */
static void pick_kernels(hg_job *j) {
  const hg_kernels *k = &hg_dispatch()->k[j->B->path];
  bool bf = j->B->bt == OX_HG_BF16;
  j->mr = path_mr(j->B->path);
  j->tile = j->dp ? k->tile_dp : bf ? k->tile_bf16 : k->tile_f16;
  j->rows = j->dp ? k->rows_dp : bf ? k->rows_bf16 : k->rows_f16;
}

/* alpha * tile + beta * C, rounded to C's type, for m rows and n columns
 * starting at row i0, column n0 */
static void store_tile(const hg_job *j, const float *t, int tld, int64_t i0, int64_t n0, int m,
                       int n) {
  float row[NR_MAX];
  for (int i = 0; i < m; i++) {
    const float *ti = t + (int64_t)i * tld;
    int64_t off = (i0 + i) * j->ldc + n0;
    if (j->ct == OX_HG_F32) {
      float *c = (float *)j->C + off;
      if (j->beta == 0.0f)
        for (int x = 0; x < n; x++) c[x] = j->alpha * ti[x];
      else
        for (int x = 0; x < n; x++) c[x] = j->alpha * ti[x] + j->beta * c[x];
      continue;
    }
    uint16_t *c = (uint16_t *)j->C + off;
    if (j->beta == 0.0f)
      for (int x = 0; x < n; x++) row[x] = j->alpha * ti[x];
    else {
      widen_n(j->ct, c, n, row);
      for (int x = 0; x < n; x++) row[x] = j->alpha * ti[x] + j->beta * row[x];
    }
    if (j->ct == OX_HG_F16)
      ox_f32_to_f16_n(row, c, (size_t)n);
    else
      ox_f32_to_bf16_n(row, c, (size_t)n);
  }
}

static uint16_t a_half(const hg_job *j, int64_t i, int64_t k) {
  const uint16_t *a = j->A;
  return j->ta ? a[k * j->lda + i] : a[i * j->lda + k];
}

/* rows [i0, i0 + m) of A as float32, row stride kp, zeros past K */
static void widen_rows(const hg_job *j, int64_t i0, int64_t m, float *dst) {
  int64_t K = j->B->K, kp = j->B->kp;
  if (K == 0) return; /* kp is 0 too, and A may be NULL */
  for (int64_t i = 0; i < m; i++) {
    float *d = dst + i * kp;
    if (!j->ta)
      widen_n(j->at,
              j->at == OX_HG_F32 ? (const void *)((const float *)j->A + (i0 + i) * j->lda)
                                 : (const void *)((const uint16_t *)j->A + (i0 + i) * j->lda),
              K, d);
    else
      for (int64_t k = 0; k < K; k++) d[k] = elem_widen(j->at, j->A, k * j->lda + i0 + i);
    for (int64_t k = K; k < kp; k++) d[k] = 0.0f;
  }
}

/* rows [i0, i0 + m) of bfloat16 A as pairs (depth 2q low, 2q + 1 high),
 * row stride kp / 2 */
static void pair_rows(const hg_job *j, int64_t i0, int64_t m, uint32_t *dst) {
  int64_t K = j->B->K, nq = j->B->kp / 2;
  for (int64_t i = 0; i < m; i++)
    for (int64_t q = 0; q < nq; q++) {
      uint32_t lo = a_half(j, i0 + i, 2 * q);
      uint32_t hi = 2 * q + 1 < K ? a_half(j, i0 + i, 2 * q + 1) : 0;
      dst[i * nq + q] = lo | hi << 16;
    }
}

/* A block of m rows from i0 into panels of mr rows, depth-major, padded
 * with zero rows; tmp holds m x kp floats (m x kp/2 pairs). */
static void pack_a_block(const hg_job *j, int64_t i0, int64_t m, void *tmp, void *panels) {
  int64_t kp = j->B->kp;
  int mr = j->mr;
  if (j->dp) {
    int64_t nq = kp / 2;
    uint32_t *src = tmp, *dst = panels;
    pair_rows(j, i0, m, src);
    for (int64_t r = 0; r < m; r += mr, dst += nq * mr)
      for (int64_t q = 0; q < nq; q++)
        for (int i = 0; i < mr; i++) dst[q * mr + i] = r + i < m ? src[(r + i) * nq + q] : 0;
    return;
  }
  float *src = tmp, *dst = panels;
  widen_rows(j, i0, m, src);
  for (int64_t r = 0; r < m; r += mr, dst += kp * mr)
    for (int64_t k = 0; k < kp; k++)
      for (int i = 0; i < mr; i++) dst[k * mr + i] = r + i < m ? src[(r + i) * kp + k] : 0.0f;
}

static void run_tile(const hg_job *j, const void *a, const uint16_t *b, float *t) {
  if (j->tile)
    j->tile(j->B->kp, a, b, t);
  else
    tile_portable(j->B->nr, j->B->bt, j->B->kp, a, b, t);
}

static void blocked_task(void *arg, int64_t t0, int64_t t1) {
  const hg_job *j = arg;
  const ox_hgemm_b *B = j->B;
  int64_t panels = B->npad / B->nr, elem = j->dp ? 2 : 1;
  float tile[MR_MAX * NR_MAX];
  for (int64_t t = t0; t < t1; t++) {
    int64_t m0 = 0, m1 = j->M, p0 = 0, p1 = panels;
    if (j->split == 0) {
      p0 = t * j->chunk;
      p1 = p0 + j->chunk < panels ? p0 + j->chunk : panels;
    } else {
      m0 = t * j->chunk;
      m1 = m0 + j->chunk < j->M ? m0 + j->chunk : j->M;
    }
    for (int64_t ic = m0; ic < m1; ic += j->mc) {
      int64_t mc = m1 - ic < j->mc ? m1 - ic : j->mc;
      /* the task's slot, or row block's slot packed already by pack_task */
      char *tmp = j->scratch + (size_t)(j->shared_a ? ic / j->mc : t) * j->scratch_per_task;
      char *apan = tmp + j->scratch_per_task / 2;
      if (!j->shared_a) pack_a_block(j, ic, mc, tmp, apan);
      for (int64_t p = p0; p < p1; p++) {
        const uint16_t *bp = B->data + p * B->kp * B->nr;
        int64_t n0 = p * B->nr;
        int n = (int)(B->N - n0 < B->nr ? B->N - n0 : B->nr);
        for (int64_t ir = 0; ir < mc; ir += j->mr) {
          const char *a = apan + (size_t)(ir * B->kp / elem) * 4;
          run_tile(j, a, bp, tile);
          store_tile(j, tile, B->nr, ic + ir, n0, (int)(mc - ir < j->mr ? mc - ir : j->mr), n);
        }
      }
    }
  }
}

/* Row block b of A into slot b of the scratch (split 0 with A shared). */
static void pack_task(void *arg, int64_t t0, int64_t t1) {
  const hg_job *j = arg;
  for (int64_t b = t0; b < t1; b++) {
    char *tmp = j->scratch + (size_t)b * j->scratch_per_task;
    int64_t ic = b * j->mc, mc = j->M - ic < j->mc ? j->M - ic : j->mc;
    pack_a_block(j, ic, mc, tmp, tmp + j->scratch_per_task / 2);
  }
}

static void rows_task(void *arg, int64_t t0, int64_t t1) {
  const hg_job *j = arg;
  const ox_hgemm_b *B = j->B;
  int64_t panels = B->npad / B->nr;
  int64_t p0 = t0 * j->chunk, p1 = t1 * j->chunk < panels ? t1 * j->chunk : panels;
  float tile[4 * NR_MAX];
  for (int64_t p = p0; p < p1; p++) {
    const uint16_t *bp = B->data + p * B->kp * B->nr;
    if (j->rows)
      j->rows((int)j->M, B->kp, j->arows, j->arows_ld, bp, tile);
    else
      rows_portable(B->nr, B->bt, (int)j->M, B->kp, j->arows, j->arows_ld, bp, tile);
    int64_t n0 = p * B->nr;
    store_tile(j, tile, B->nr, 0, n0, (int)j->M, (int)(B->N - n0 < B->nr ? B->N - n0 : B->nr));
  }
}

/* the pool's threads, or 1 when the product is too small to split */
/* the least multiply-adds of a task when the product could be cut finer
 * (about 3 us on one core) */
#define HG_MIN_TASK 2.5e5

static int pool_threads(ox_thread_pool *pool, double work, double min_work) {
  int nt = pool ? ox_thread_pool_size(pool) : 1;
  return nt < 1 || work < min_work ? 1 : nt;
}

/* up to four rows: A widened once, each task streams a run of panels */
static int run_rows(hg_job *j, ox_thread_pool *pool, ox_err *e) {
  const ox_hgemm_b *B = j->B;
  size_t bytes = (size_t)j->M * (size_t)B->kp * 4 + 64;
  void *a = malloc(bytes);
  if (!a) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if (j->dp) {
    pair_rows(j, 0, j->M, a);
    j->arows_ld = B->kp / 2;
  } else {
    widen_rows(j, 0, j->M, a);
    j->arows_ld = B->kp;
  }
  j->arows = a;
  int64_t panels = B->npad / B->nr;
  int nt = pool_threads(pool, (double)j->M * (double)B->N * (double)B->K, 1.0e5);
  j->chunk = (panels + nt - 1) / nt;
  int64_t ntasks = j->chunk ? (panels + j->chunk - 1) / j->chunk : 0;
  if (ntasks <= 1)
    rows_task(j, 0, ntasks);
  else
    ox_parallel_for(pool, ntasks, 1, rows_task, j);
  free(a);
  return OX_OK;
}

/* more rows: tasks split the panels (or the rows when the panels are few);
 * each packs its blocks of A into its own scratch */
static int run_blocked(hg_job *j, ox_thread_pool *pool, ox_err *e) {
  const ox_hgemm_b *B = j->B;
  int64_t kp = B->kp, mr = j->mr, panels = B->npad / B->nr;
  const hg_table *t = hg_dispatch();
  int64_t mc = kp > 0 ? t->a_block_bytes / (kp * 4) / mr * mr : t->mc_max;
  j->mc = mc < mr ? mr : mc > t->mc_max ? t->mc_max : mc;
  int nt = pool_threads(pool, 2.0 * (double)j->M * (double)B->N * (double)B->K, 2.0e6);
  int64_t ntasks, nslots;
  if (panels >= 2 * nt || j->M < 2 * mr) {
    j->split = 0;
    j->chunk = (panels + nt - 1) / nt;
    if (nt > 1) {
      /* runs of panels whose rounds over the threads cost least (24
       * panels on 16 threads were 12 tasks of 2: 4 threads idle), the
       * shorter runs where equal (a thread slowed by others hands its
       * share on), none below the least work unless one per thread */
      double per_panel = (double)j->M * (double)B->nr * (double)B->K, best = -1.0;
      for (int64_t c = (panels + nt - 1) / nt; c >= 1; c--) {
        int64_t tasks = (panels + c - 1) / c;
        if (tasks > nt && per_panel * (double)c < HG_MIN_TASK) break;
        double cost = (double)((tasks + nt - 1) / nt) * (double)c;
        if (best < 0.0 || cost <= best) best = cost, j->chunk = c;
      }
    }
    ntasks = (panels + j->chunk - 1) / j->chunk;
    /* with several tasks, A is packed once for all of them (each packed
     * all of A before) */
    j->shared_a = ntasks > 1;
  } else {
    j->split = 1;
    j->chunk = ((j->M + nt - 1) / nt + mr - 1) / mr * mr;
    ntasks = (j->M + j->chunk - 1) / j->chunk;
  }
  /* half for the widened rows, half for the panels (rounded up to mr rows) */
  size_t half = (size_t)((j->mc + mr - 1) / mr * mr) * (size_t)kp * 4 + 64;
  j->scratch_per_task = 2 * half;
  nslots = j->shared_a ? (j->M + j->mc - 1) / j->mc : ntasks;
  j->scratch = malloc(j->scratch_per_task * (size_t)nslots);
  if (!j->scratch) return ox_err_set(e, OX_ENOMEM, "out of memory");
  if (j->shared_a) ox_parallel_for(pool, nslots, 1, pack_task, j);
  if (ntasks <= 1)
    blocked_task(j, 0, ntasks);
  else
    ox_parallel_for(pool, ntasks, 1, blocked_task, j);
  free(j->scratch);
  return OX_OK;
}

int ox_hgemm(int64_t M, ox_hg_type at, bool trans_a, const void *A, int64_t lda,
             const ox_hgemm_b *B, float alpha, float beta, ox_hg_type ct, void *C, int64_t ldc,
             ox_thread_pool *pool, ox_err *e) {
  if (M <= 0 || B->N <= 0) return OX_OK;
  hg_job j = {B, M, lda, ldc, at, ct, trans_a, false, A, alpha, beta, C};
  j.dp = B->path == OX_HG_AVX512BF16 && at == OX_HG_BF16 && B->bt == OX_HG_BF16;
  pick_kernels(&j);
  return M <= 4 ? run_rows(&j, pool, e) : run_blocked(&j, pool, e);
}
