/* isa_level_tables.h - picking a family's per-level table (isa_level.h):
 * OX_ISA_TABLE_PICK(isa, name) returns &name_avx512, &name_avx2 or &name_ref,
 * the highest the CPU has at or below isa (so a caller asking for a level
 * above the CPU's gets the CPU's). */
#ifndef OX_KERNELS_ISA_LEVEL_TABLES_H
#define OX_KERNELS_ISA_LEVEL_TABLES_H

#include "../base/cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define OX_KERNELS_X86 1
#define OX_ISA_TABLE_PICK(isa, name)                         \
  do {                                                       \
    ox_isa ox_lp_top = ox_cpu_get()->found;                  \
    ox_isa ox_lp_at = (isa) < ox_lp_top ? (isa) : ox_lp_top; \
    if (ox_lp_at == OX_ISA_AVX512) return &name##_avx512;    \
    if (ox_lp_at == OX_ISA_AVX2) return &name##_avx2;        \
    return &name##_ref;                                      \
  } while (0)
#else
#define OX_KERNELS_X86 0
#define OX_ISA_TABLE_PICK(isa, name) \
  do {                               \
    (void)(isa);                     \
    return &name##_ref;              \
  } while (0)
#endif

#endif
