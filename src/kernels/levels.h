/* levels.h - plain C compiled once per instruction-set level, and the
 * level in use picked from the CPU probe (base/cpu.h: ox_cpu_get()->isa,
 * which ONNXC_ISA caps). The one place that names the levels and their
 * compiler targets, for src/kernels and for the operators' loops in
 * src/ops. (It replaced GCC function multi-versioning, whose clones the
 * loader chose by the real CPU, ignoring ONNXC_ISA.)
 *
 *   level             value  suffix    target
 *   OX_ISA_PORTABLE   0      _ref      none: the build's baseline
 *   OX_ISA_AVX2       1      _avx2     "avx2"
 *   OX_ISA_AVX512     2      _avx512   "avx512f"
 *
 * The targets are the clones' ("default", "avx2", "avx512f"), so each
 * level computes the bits its clone did: "avx2" has no fused multiply-add
 * (FMA is a target of its own), so it rounds a * b + c twice like the
 * baseline, while AVX-512F has fused multiply-adds and the compiler may
 * contract there (-ffp-contract=fast, GCC's default), as in the clone.
 * Off x86 (or without GCC/clang attributes) only the _ref level exists and
 * every pick takes it.
 *
 * WebAssembly: a module either uses SIMD128 everywhere or nowhere (an
 * engine without it rejects the whole module), so there the "wasm" level
 * is a build, not a pick: the -msimd128 build compiles _ref (and every
 * per-function body) for SIMD128, where clang vectorises the plain loops,
 * and a family with hand-written SIMD128 entries (<family>_wasm.c, under
 * __wasm_simd128__) puts them over its portable ones when
 * ox_cpu_get()->simd128 is set (ONNXC_ISA=portable clears it: the plain
 * entries, as a build without -msimd128 runs them). The x86 levels are
 * untouched by it.
 *
 * Two forms, both on these definitions:
 *
 * Per function - a loop or a task in one .c file (the operators' loops in
 * src/ops, a few in kernels/nn.c and wqgemm.c):
 *     OX_LEVEL_BODY void scale_c(float *y, int64_t n, float k) { ... }
 *     OX_LEVELS_VOID(scale, (float *y, int64_t n, float k), y, n, k)
 * makes scale_ref, scale_avx2 and scale_avx512 (OX_LEVELS(ret, ...) for a
 * body that returns a value), each the body inlined under its level's
 * target; a body calls other bodies (NAME_c) to stay at its level.
 * OX_LEVEL_PICK(scale) is the one of the level in use: take it once per
 * run, task or table fill, not per element (it reads the probe and tells
 * the watcher below), and hand it on as a pointer (type
 * OX_LEVEL_PTR(scale)).
 *
 * Per file - a kernel family with a dispatch table (vmath, conv_direct,
 * q8): <family>_ref.c, _avx2.c and _avx512.c define OX_LEVEL (0, 1, 2)
 * before including anything, then this header and the family's body
 * (<family>_body.h). There OX_LEVEL_FN gives a function the level's target
 * and OX_LEVEL_NAME(f) the level's suffix (the table is
 * OX_LEVEL_NAME(ox_<family>_kernels)); <family>.c returns
 * OX_LEVEL_TABLE(isa, ox_<family>_kernels). The _avx2 and _avx512 files
 * compile to nothing where OX_LEVELS_X86 is 0. */
#ifndef OX_KERNELS_LEVELS_H
#define OX_KERNELS_LEVELS_H

#include "../base/cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define OX_LEVELS_X86 1
#define OX_TARGET_AVX2 __attribute__((target("avx2")))
#define OX_TARGET_AVX512 __attribute__((target("avx512f")))
#else
#define OX_LEVELS_X86 0
#endif

/* the level a pick takes when `want` is asked for: at most what the CPU
 * has (a test asking for AVX-512 on an AVX2 machine gets AVX2) */
static inline ox_isa ox_level_at(ox_isa want) {
#if OX_LEVELS_X86
  ox_isa top = ox_cpu_get()->found;
  return want < top ? want : top;
#else
  (void)want;
  return OX_ISA_PORTABLE;
#endif
}

/* Tests: a function called at every OX_LEVEL_PICK with the name picked
 * and the level it took, from whichever thread picks (NULL: none, the
 * default). It shows which variant an operator's loop runs, which the
 * results alone need not (the levels agree). */
typedef void (*ox_level_watch_fn)(const char *name, ox_isa level);
void ox_level_watch(ox_level_watch_fn fn);
/* the level in use (the probe's, capped by ONNXC_ISA), told to the watcher */
ox_isa ox_level_pick(const char *name);

/* name_ref, name_avx2 or name_avx512 by the level lv (evaluated once) */
#if OX_LEVELS_X86
#define OX_LEVEL_SELECT(lv, name)                                                                  \
  __extension__({                                                                                  \
    ox_isa ox_lv_ = (lv);                                                                          \
    ox_lv_ == OX_ISA_AVX512 ? &name##_avx512 : ox_lv_ == OX_ISA_AVX2 ? &name##_avx2 : &name##_ref; \
  })
#else
#define OX_LEVEL_SELECT(lv, name) ((void)(lv), &name##_ref)
#endif
#define OX_LEVEL_PICK(name) OX_LEVEL_SELECT(ox_level_pick(#name), name)
/* the type of a pointer to name_ref (and to the other levels': the same) */
#define OX_LEVEL_PTR(name) __typeof__(&name##_ref)
/* a family's table of the level asked for (capped by the CPU) */
#define OX_LEVEL_TABLE(isa, name) OX_LEVEL_SELECT(ox_level_at(isa), name)

/* ---- per function ---- */
#define OX_LEVEL_BODY __attribute__((always_inline)) static inline
#if OX_LEVELS_X86
#define OX_LEVELS(ret, name, params, ...)                                        \
  static ret name##_ref params { return name##_c(__VA_ARGS__); }                 \
  OX_TARGET_AVX2 static ret name##_avx2 params { return name##_c(__VA_ARGS__); } \
  OX_TARGET_AVX512 static ret name##_avx512 params { return name##_c(__VA_ARGS__); }
#define OX_LEVELS_VOID(name, params, ...)                                  \
  static void name##_ref params { name##_c(__VA_ARGS__); }                 \
  OX_TARGET_AVX2 static void name##_avx2 params { name##_c(__VA_ARGS__); } \
  OX_TARGET_AVX512 static void name##_avx512 params { name##_c(__VA_ARGS__); }
#else
#define OX_LEVELS(ret, name, params, ...) \
  static ret name##_ref params { return name##_c(__VA_ARGS__); }
#define OX_LEVELS_VOID(name, params, ...) \
  static void name##_ref params { name##_c(__VA_ARGS__); }
#endif

#endif /* OX_KERNELS_LEVELS_H */

/* ---- per file: whenever OX_LEVEL is defined (outside the include guard:
 * the per-level file's definition is what counts, not the first inclusion) ---- */
#if defined(OX_LEVEL) && !defined(OX_LEVEL_FN)
#if OX_LEVEL == 2 && OX_LEVELS_X86
#define OX_LEVEL_FN OX_TARGET_AVX512
#define OX_LEVEL_NAME(f) f##_avx512
#elif OX_LEVEL == 1 && OX_LEVELS_X86
#define OX_LEVEL_FN OX_TARGET_AVX2
#define OX_LEVEL_NAME(f) f##_avx2
#elif OX_LEVEL == 0
#define OX_LEVEL_FN
#define OX_LEVEL_NAME(f) f##_ref
#elif OX_LEVELS_X86
#error "OX_LEVEL must be 0 (portable), 1 (avx2) or 2 (avx512)"
#endif
#endif
