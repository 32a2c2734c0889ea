/* levels.h - one plain C loop compiled once per instruction-set level, the
 * level in use picked by a family's dispatch table (it replaces GCC's
 * target_clones, whose load-time choice ignored ONNXC_ISA).
 *
 * Write the body as an always_inline function NAME_c; OX_LEVELS (or
 * OX_LEVELS_VOID for a void body) makes NAME_ref (baseline), NAME_avx2 and
 * NAME_avx512 of the same parameters, each compiled with the target the
 * clone of that level had ("default", "avx2", "avx512f": the same
 * vectorisation and contractions), and OX_LEVEL_PICK(cpu, NAME) names the
 * one for the probe's level. Off x86 only NAME_ref exists. */
#ifndef OX_KERNELS_LEVELS_H
#define OX_KERNELS_LEVELS_H

#include "../base/cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define OX_LEVELS_X86 1
#define OX_LEVELS(ret, name, params, ...)                                                         \
  static ret name##_ref params { return name##_c(__VA_ARGS__); }                                  \
  __attribute__((target("avx2"))) static ret name##_avx2 params { return name##_c(__VA_ARGS__); } \
  __attribute__((target("avx512f"))) static ret name##_avx512 params {                            \
    return name##_c(__VA_ARGS__);                                                                 \
  }
#define OX_LEVELS_VOID(name, params, ...)                                                   \
  static void name##_ref params { name##_c(__VA_ARGS__); }                                  \
  __attribute__((target("avx2"))) static void name##_avx2 params { name##_c(__VA_ARGS__); } \
  __attribute__((target("avx512f"))) static void name##_avx512 params { name##_c(__VA_ARGS__); }
#define OX_LEVEL_PICK(cpu, name)               \
  ((cpu)->isa >= OX_ISA_AVX512 ? name##_avx512 \
   : (cpu)->isa >= OX_ISA_AVX2 ? name##_avx2   \
                               : name##_ref)
#else
#define OX_LEVELS(ret, name, params, ...) \
  static ret name##_ref params { return name##_c(__VA_ARGS__); }
#define OX_LEVELS_VOID(name, params, ...) \
  static void name##_ref params { name##_c(__VA_ARGS__); }
#define OX_LEVEL_PICK(cpu, name) ((void)(cpu), name##_ref)
#endif

#endif
