/* gemm_impl.h - what the float GEMM's files share inside src/kernels/: the
 * family's dispatch table (functions by instruction-set level, blocking by
 * microarchitecture; filled in gemm.c from the per-level files
 * gemm_avx512.c, gemm_avx2.c, gemm_ref.c), the packed operands' layout,
 * B's panel packing and the threaded blocked product (gemm.c), used by the
 * products on a B packed whole (gemm_pb.c). */
#ifndef OX_GEMM_IMPL_H
#define OX_GEMM_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm.h"

/* The most depth any table's blocking may ask for (stack strips and edge
 * panels are sized by it). */
enum { OX_GEMM_KC_MAX = 384 };
/* rows of B a dotn entry takes at once */
enum { OX_GEMM_DOT_ROWS = 8 };

/* Full tile: C[MR x NR] (ldc) = alpha * sum + beta * C (beta == 0: C ignored). */
typedef void (*ukernel_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                           float alpha, float beta);

typedef struct ukernel {
  int mr, nr;
  ukernel_fn fn;
  const char *name;
} ukernel;

/* Any tile of the 12-row panel layout (any B row stride ldb, m <= 12 rows,
 * n <= 32 columns): C = acc + bias[i] + beta * C, then the epilogue. */
typedef void (*ox_gemm_gtile_fn)(int64_t kc, const float *a, const float *b, int64_t ldb, float *c,
                                 int64_t ldc, float beta, const float *bias, const ox_sgemm_epi *ep,
                                 int m, int n);
/* The full tile with A read in place (row i at a + i * lda): C = acc + beta * C. */
typedef void (*ox_gemm_ua_fn)(int64_t kc, const float *a, int64_t lda, const float *b, float *c,
                              int64_t ldc, float beta);
/* rows (1 to 12) rows of A (row stride lda), kc deep, into one 12-row
 * panel, the rows past them zero. */
typedef void (*ox_gemm_pack12_fn)(const float *s, int64_t lda, int64_t kc, float *d, int rows);
struct ox_sgemm_packed {
  int64_t M, K, Mpad;
  int mr, nr;
  int64_t kc;  /* depth block of the packing (the table's) */
  float *data; /* for depth block pc: data + pc * Mpad, panel r at + r * kc */
};

struct ox_sgemm_bpack {
  int64_t K, N, npad;
  int nr;
  int64_t kc;  /* depth block of the packing (the table's) */
  float *data; /* depth blocks of kc rows at pc * npad, panels of nr columns */
};

/* Row vector times matrix (M == 1, B not transposed): c = alpha * a B + beta c,
 * accumulated over rows of B so the inner loop is contiguous. */
typedef struct gemv_job {
  int64_t K, ldb;
  float alpha, beta;
  const float *a, *B;
  float *c;
  int64_t chunk, N;
} gemv_job;

/* Columns [j0, j1) of a gemv_job. */
typedef void (*ox_gemm_gemv_fn)(const gemv_job *g, int64_t j0, int64_t j1);
/* <a, b> over K values; eight rows of B (stride ldb) at once into out. */
typedef float (*ox_gemm_dot_fn)(const float *a, const float *b, int64_t K);
typedef void (*ox_gemm_dotn_fn)(const float *a, const float *b, int64_t ldb, int64_t K, float *out);
/* The epilogue over an M x N block (ep active). */
typedef void (*ox_gemm_epi_fn)(const ox_sgemm_epi *ep, int64_t M, int64_t N, float *C, int64_t ldc);
/* A few rows against packed B: each task takes whole panels and streams
 * them block after block (one long sequential read per block), the sums of
 * a panel's nr columns for up to 4 rows staying in registers. */
typedef struct pgemv_job {
  const ox_sgemm_bpack *B;
  const float *A;
  int64_t M, lda, ldc, chunk; /* chunk: panels per task */
  float *C;
  ox_sgemm_post_fn post;
  void *post_ctx;
} pgemv_job;

/* Panels [p0, p1) of a pgemv_job. */
typedef void (*ox_gemm_pgemv_fn)(const pgemv_job *j, int64_t p0, int64_t p1);
/* ox_gemm's OX_GEMM_B_INPLACE / OX_GEMM_B_STRIPS on the 12-row tiles (the
 * checks of the public functions done) */
typedef void (*ox_gemm_sb_rows_fn)(const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N,
                                   const float *B, int64_t ldb, const float *bias,
                                   const ox_sgemm_epi *ep, const ox_sgemm_pro *pro, float *C,
                                   int64_t ldc);
typedef void (*ox_gemm_strips_rows_fn)(const ox_sgemm_packed *A, int64_t m0, int64_t m1, int64_t N,
                                       ox_sgemm_strip_fn strip, void *ctx, const float *bias,
                                       const ox_sgemm_epi *ep, float *C, int64_t ldc);

/* The float GEMM family's dispatch table: filled once from the CPU probe
 * (base/cpu.h, ONNXC_ISA included) by ox_gemm_dispatch(); the instruction set
 * picks the functions, the microarchitecture the blocking. NULL entries are
 * what the level lacks (the callers take their portable paths). */
typedef struct ox_gemm_table {
  ukernel uk; /* full-tile micro-kernel: 12 x 32, 6 x 16, 6 x 8 (wasm) or 4 x 16 */
  ox_gemm_gtile_fn gtile;             /* AVX-512 only */
  ox_gemm_ua_fn ua;                   /* AVX-512 only */
  ox_gemm_pack12_fn pack_a12;         /* AVX-512 only */
  ox_gemm_gemv_fn gemv_rows;          /* every level */
  ox_gemm_dot_fn dot;                 /* every level */
  ox_gemm_dotn_fn dotn;               /* AVX-512 only */
  ox_gemm_epi_fn epi;                 /* every level */
  ox_gemm_pgemv_fn pgemv;             /* every level */
  ox_gemm_sb_rows_fn sb_rows;         /* AVX-512, SIMD128 (no prologue) */
  ox_gemm_strips_rows_fn strips_rows; /* AVX-512 only */
  /* blocking: depth (<= OX_GEMM_KC_MAX), rows and columns per block */
  int64_t kc, mc, nc;
  /* OX_GEMM_B_INPLACE: copy each 32-column strip of B when A has more rows
   * than strip_min_rows; walk A once per depth block with B in place when N
   * is at most small_n */
  int64_t strip_min_rows, small_n;
  /* B packed whole: the most rows of A packed at once; C bytes kept in L2
   * and A bytes packed whole by the column-blocked order (gemm_pb.c) */
  int64_t pb_mc_max, pb_c_bytes, pb_a_bytes;
  /* B packed whole over several threads: the most bytes of A packed once
   * for every task (more: each task packs its own rows) */
  int64_t pb_grid_a_bytes;
  /* B packed whole: the most bytes of its panels (one depth block) that
   * every row panel of A sweeps in turn, a quarter of L2 from the CPU
   * probe (a wider product takes its columns in blocks of this,
   * ox_gemm_macro_tile) */
  int64_t pb_b_bytes;
} ox_gemm_table;

const ox_gemm_table *ox_gemm_dispatch(void);

/* The levels' functions into a table: the portable ones (every entry that
 * has one), then AVX2 or AVX-512 over them (false where not compiled in). */
void ox_gemm_fill_ref(ox_gemm_table *t);
bool ox_gemm_fill_avx2(ox_gemm_table *t);
bool ox_gemm_fill_avx512(ox_gemm_table *t);
/* WebAssembly SIMD128 (gemm_wasm.c): false where the build lacks -msimd128 */
bool ox_gemm_fill_wasm(ox_gemm_table *t);

/* The micro-kernel for this CPU (AVX-512 12 x 32, AVX2 6 x 16, SIMD128 6 x 8,
 * portable 4 x 16). */
ukernel ox_gemm_kernel(void);

/* B may lie unaligned (a weight packed straight out of a model file's
 * bytes): read through a float of alignment 1 */
typedef float f32_unaligned __attribute__((aligned(1)));

/* Columns [j0, j0+nc) x depth [k0, k0+kc) of op(B) into nr-column panels. */
void ox_gemm_pack_b_panels(int nr, bool tb, const f32_unaligned *B, int64_t ldb, int64_t k0,
                           int64_t kc, int64_t j0, int64_t nc, float *dst);

/* A blocked product, split over the pool by columns or rows. */
typedef struct gemm_job {
  ukernel uk;
  bool ta, tb;
  int64_t M, N, K, lda, ldb, ldc;
  float alpha, beta;
  const float *A, *B;
  float *C;
  const ox_sgemm_packed *pa; /* when A is pre-packed */
  const float *bpre;         /* when B is pre-packed whole (ox_sgemm_bpack): its data */
  int64_t bpre_npad;         /* and its padded column count */
  /* tasks: a grid of mparts x ntn blocks of C (see ox_gemm_plan): rows
   * in units of mscale (1, or mr where A is packed once) and column panels
   * cut evenly (ox_gemm_part) */
  int64_t mparts, ntn, mscale;
  int64_t ntasks;
  /* with B packed whole: called on each finished block of C (rows [m0,
   * m1), columns [n0, n1) final), NULL: none */
  ox_sgemm_post_fn post;
  void *post_ctx;
  const ox_gemm_table *t; /* the family's table (blocking) */
} gemm_job;

/* The split over threads (gemm.c): a task priced in multiply-adds by the
 * work of its tiles, what it copies (OX_GEMM_MOVE_COST an element) and a
 * fixed OX_GEMM_TASK_COST; tasks of at least OX_GEMM_MIN_TASK (about 3 us
 * on one core) unless no more than threads. */
#define OX_GEMM_MIN_TASK 2.5e5
#define OX_GEMM_MOVE_COST 4.0
#define OX_GEMM_TASK_COST 1.0e4
/* Part i of n units cut into parts as even as can be: its first unit. */
static inline int64_t ox_gemm_part(int64_t n, int64_t parts, int64_t i) {
  return i * (n / parts) + (i < n % parts ? i : n % parts);
}
/* The grid for nt threads (split.c's planner): rparts parts of `units`
 * row units (scale rows each; at most max_per units a part) by cparts
 * parts of the column panels; a_shared: A packed once for every task (else
 * each packs its rows). */
void ox_gemm_grid(const gemm_job *g, int nt, int64_t units, int64_t scale, int64_t max_per,
                  bool a_shared, int64_t *rparts, int64_t *cparts);
/* ox_gemm_run's grid for nt threads: mparts, ntn, mscale, ntasks. */
void ox_gemm_plan(gemm_job *g, int nt);
void ox_gemm_run(gemm_job *g, ox_thread_pool *pool);

/* Rows [i0, i0 + mc) (mc a multiple of mr) x depth [k0, k0 + kc) of op(A)
 * into mr-row panels at dst. */
void ox_gemm_pack_a(int mr, bool ta, const float *A, int64_t lda, int64_t M, int64_t i0, int64_t mc,
                    int64_t k0, int64_t kc, float *dst);
/* The row panels of a block of mc rows of A packed per call: with the
 * any-shape 12-row tile (AVX-512) and alpha 1, the rows spread evenly over
 * ceil(mc / 12) panels, the first rem holding base + 1 rows, the others
 * base, so that no panel is a sliver (50 rows: five panels of 10, not four
 * of 12 and one of 2 computed as 12); otherwise panels of mr rows, the last
 * one partial. Panel p lies at p * mr * kc of the packed block either way
 * (rows past its own zero). */
typedef struct gemm_panels {
  int64_t n, base, rem;
} gemm_panels;
gemm_panels ox_gemm_panels(const gemm_job *g, int64_t mc);
/* first row of panel p, and its row count in a block of mc rows */
static inline int64_t ox_gemm_panel_row(gemm_panels pp, int64_t p) {
  return p * pp.base + (p < pp.rem ? p : pp.rem);
}
static inline int64_t ox_gemm_panel_rows(gemm_panels pp, int64_t p, int64_t mc) {
  int64_t r = ox_gemm_panel_row(pp, p), m = pp.base + (p < pp.rem ? 1 : 0);
  return mc - r < m ? mc - r : m;
}
/* Rows [i0, i0 + mc) x depth [k0, k0 + kc) of op(A) (g's A) into the
 * panels of ox_gemm_panels(g, mc). */
void ox_gemm_pack_a_block(const gemm_job *g, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
                          float *dst);
/* Micro-kernel tiles over mc rows of packed A (as ox_gemm_panels) and nc
 * columns of packed B into C (row stride g->ldc); beta as the micro-kernel
 * takes it. */
void ox_gemm_macro_tile(const gemm_job *g, const float *apan, const float *bblk, int64_t kc,
                        int64_t mc, float *C, int64_t nc, float beta);
/* The blocked product over rows [m0, m1) and columns [n0, n1) (gemm.c),
 * and the same with B packed whole (gemm_pb.c). */
void ox_gemm_block(const gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
void ox_gemm_block_pb(const gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
/* With B packed whole over several threads (gemm_pb.c): A packed once in
 * rg row groups of equal height, tasks of one row group by one of cg
 * column groups (whole 32-column panels in equal counts); the grid that
 * ox_gemm_pb_run takes for nt threads (rg <= PB_MAX_GROUPS). */
enum { PB_MAX_GROUPS = 256 };
void ox_gemm_pb_split(int64_t M, int64_t N, int64_t K, int nt, int64_t *rg, int64_t *cg);
/* ox_gemm's OX_GEMM_B_WHOLE (gemm_pb.c): C (M x N) = A B, post on each
 * finished block. */
void ox_gemm_pb_run(int64_t M, const float *A, int64_t lda, const ox_sgemm_bpack *B, float *C,
                    int64_t ldc, ox_thread_pool *pool, ox_sgemm_post_fn post, void *ctx);

#endif
