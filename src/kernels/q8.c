/* q8.c - q8.h's dispatch: the entries of the level the CPU probe allows
 * (at AVX-512, with the VBMI byte lookup where the CPU has it). */
#include "q8.h"

#include "levels.h"

extern const ox_q8_kernels ox_q8_kernels_ref;
#if OX_LEVELS_X86
extern const ox_q8_kernels ox_q8_kernels_avx2, ox_q8_kernels_avx512, ox_q8_kernels_avx512_vbmi;
#endif

static const ox_q8_kernels *level(ox_isa isa) { return OX_LEVEL_TABLE(isa, ox_q8_kernels); }

const ox_q8_kernels *ox_q8_kernels_at(ox_isa isa) {
  const ox_q8_kernels *k = level(isa);
#if OX_LEVELS_X86
  const ox_cpu *c = ox_cpu_get();
  /* (the probe's features above its level read as absent: ONNXC_ISA=avx2
   * drops VBMI too) */
  if (k == &ox_q8_kernels_avx512 && c->avx512vbmi && c->avx512bw) k = &ox_q8_kernels_avx512_vbmi;
#endif
  return k;
}

const ox_q8_kernels *ox_q8_kernels_get(void) { return ox_q8_kernels_at(ox_cpu_get()->isa); }
