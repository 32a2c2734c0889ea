/* isa_level.h - one portable C body compiled once per instruction-set
 * level, chosen at run time through a family's dispatch table.
 *
 * A family's per-level files (x_avx512.c, x_avx2.c, x_ref.c) define
 * OX_LEVEL (2, 1, 0: the values of ox_isa), include this header, then the
 * family's body file (x_body.h). In the body, OX_LEVEL_FN marks the hot
 * loops with the level's target, so that the compiler vectorises them for
 * it (what target_clones did, but chosen by the CPU probe of base/cpu.h,
 * which ONNXC_ISA caps, instead of by the loader), and OX_LEVEL_NAME(f)
 * names the per-level entries (f_avx512, f_avx2, f_ref). The avx2 and
 * avx512 files compile to nothing where OX_KERNELS_X86 is 0. */
#ifndef OX_KERNELS_ISA_LEVEL_H
#define OX_KERNELS_ISA_LEVEL_H

#include "isa_level_tables.h" /* OX_KERNELS_X86 */

#ifndef OX_LEVEL
#error "define OX_LEVEL (0 portable, 1 avx2, 2 avx512) before including isa_level.h"
#endif

/* the target strings are those of the clones they replace, so that each
 * level computes the same bits as before */
#if OX_LEVEL == 2
#define OX_LEVEL_FN __attribute__((target("avx512f")))
#define OX_LEVEL_NAME(f) f##_avx512
#elif OX_LEVEL == 1
#define OX_LEVEL_FN __attribute__((target("avx2")))
#define OX_LEVEL_NAME(f) f##_avx2
#else
#define OX_LEVEL_FN
#define OX_LEVEL_NAME(f) f##_ref
#endif

#endif
