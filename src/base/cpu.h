/* cpu.h - what the processor can do, probed once.
 *
 * This is the one place that asks the CPU (cpuid, __builtin_cpu_supports).
 * Kernel families (src/kernels/) read the probe when they fill their
 * dispatch tables; nothing else asks which CPU it runs on.
 *
 * ONNXC_ISA=portable|avx2|avx512 caps the level (read once, at the first
 * call): features above it read as absent, so every path can be tested on a
 * machine that has the higher ones. A value above what the CPU has changes
 * nothing; an unknown value is ignored.
 *
 * WebAssembly has no run-time feature test (a module that uses SIMD128
 * fails to load on an engine without it), so there SIMD128 is a property
 * of the build: `simd128` is true when compiled with -msimd128
 * (__wasm_simd128__), false under ONNXC_ISA=portable (as the build
 * without it computes; node passes no environment to a module unless the
 * page or runner fills emscripten's ENV). The
 * level stays OX_ISA_PORTABLE; the kernel families put their SIMD128
 * entries over the portable ones when simd128 is set (the "wasm" level). */
#ifndef OX_BASE_CPU_H
#define OX_BASE_CPU_H

#include <stdbool.h>
#include <stddef.h>

typedef enum ox_isa {
  OX_ISA_PORTABLE = 0, /* plain C */
  OX_ISA_AVX2 = 1,     /* AVX2 + FMA + F16C */
  OX_ISA_AVX512 = 2,   /* AVX-512 F/BW/DQ/VL */
} ox_isa;

typedef enum ox_uarch {
  OX_UARCH_GENERIC = 0,
  OX_UARCH_INTEL,      /* Intel core with AVX-512: Skylake-SP .. Sapphire Rapids / Emerald Rapids */
  OX_UARCH_INTEL_AVX2, /* Intel core without AVX-512 (client parts) */
  OX_UARCH_ZEN2_3,     /* AMD Zen 2 / 3: AVX2, no AVX-512 */
  OX_UARCH_ZEN4,       /* AMD Zen 4: AVX-512 over 256-bit datapaths */
  OX_UARCH_ZEN5,       /* AMD Zen 5 */
} ox_uarch;

typedef struct ox_cpu {
  ox_isa isa;       /* the level kernels may use (probe, capped by ONNXC_ISA) */
  ox_isa found;     /* the level the CPU has */
  ox_uarch uarch;
  bool avx2, fma, f16c;
  bool simd128; /* WebAssembly SIMD128 kernels in use (compiled in, not capped) */
  bool avx512f, avx512bw, avx512dq, avx512vl, avx512vnni, avx512vbmi, avx512bf16;
  int fma512_ports; /* 512-bit FMA issue per cycle: 2 on most Xeons, 1 otherwise (0: no AVX-512) */
  int family, model; /* cpuid display family and model */
  size_t l1d, l2, l3; /* data cache sizes in bytes, 0 when unknown */
  char vendor[13];
  char brand[49];
} ox_cpu;

/* The probe (filled on the first call, thread-safe; never NULL). */
const ox_cpu *ox_cpu_get(void);
/* "portable", "avx2", "avx512" */
const char *ox_isa_name(ox_isa isa);
/* "intel", "zen4", ... */
const char *ox_uarch_name(ox_uarch u);

#endif
