/* cpu.c - the processor probe (cpu.h): features, microarchitecture and
 * cache sizes, read once; ONNXC_ISA caps the level for testing. */
#include "cpu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define OX_X86 1
#endif

static ox_cpu g_cpu;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#ifdef OX_X86
static void regs(unsigned leaf, unsigned sub, unsigned r[4]) {
  r[0] = r[1] = r[2] = r[3] = 0;
  (void)__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]);
}

/* data and unified caches by level from the deterministic cache leaf
 * (Intel 4, AMD 0x8000001D: the same layout) */
static void caches(unsigned leaf, ox_cpu *c) {
  for (unsigned sub = 0; sub < 16; sub++) {
    unsigned r[4];
    regs(leaf, sub, r);
    unsigned type = r[0] & 31, level = (r[0] >> 5) & 7;
    if (!type) break;
    if (type == 2) continue; /* instruction cache */
    size_t ways = ((r[1] >> 22) & 1023) + 1, parts = ((r[1] >> 12) & 1023) + 1,
           line = (r[1] & 4095) + 1, sets = (size_t)r[2] + 1;
    size_t size = ways * parts * line * sets;
    if (level == 1) c->l1d = size;
    if (level == 2) c->l2 = size;
    if (level == 3) c->l3 = size;
  }
}

static void probe_x86(ox_cpu *c) {
  unsigned r[4];
  regs(0, 0, r);
  unsigned max_leaf = r[0];
  memcpy(c->vendor, &r[1], 4);
  memcpy(c->vendor + 4, &r[3], 4);
  memcpy(c->vendor + 8, &r[2], 4);
  c->vendor[12] = 0;
  regs(1, 0, r);
  unsigned fam = (r[0] >> 8) & 15, mod = (r[0] >> 4) & 15;
  if (fam == 15) fam += (r[0] >> 20) & 255;
  if (fam == 6 || fam >= 15) mod |= ((r[0] >> 16) & 15) << 4;
  c->family = (int)fam;
  c->model = (int)mod;
  regs(0x80000000u, 0, r);
  if (r[0] >= 0x80000004u) {
    for (unsigned k = 0; k < 3; k++) {
      regs(0x80000002u + k, 0, r);
      memcpy(c->brand + 16 * k, r, 16);
    }
    c->brand[48] = 0;
  }
  __builtin_cpu_init();
  c->avx2 = __builtin_cpu_supports("avx2");
  c->fma = __builtin_cpu_supports("fma");
  c->f16c = c->avx2; /* every AVX2 processor has F16C */
  c->avx512f = __builtin_cpu_supports("avx512f");
  c->avx512bw = __builtin_cpu_supports("avx512bw");
  c->avx512dq = __builtin_cpu_supports("avx512dq");
  c->avx512vl = __builtin_cpu_supports("avx512vl");
  c->avx512vnni = __builtin_cpu_supports("avx512vnni");
  c->avx512vbmi = __builtin_cpu_supports("avx512vbmi");
  c->avx512bf16 = __builtin_cpu_supports("avx512bf16");
  bool amd = strcmp(c->vendor, "AuthenticAMD") == 0, intel = strcmp(c->vendor, "GenuineIntel") == 0;
  if (intel && max_leaf >= 4) caches(4, c);
  if (amd) {
    regs(0x80000000u, 0, r);
    unsigned top = r[0];
    if (top >= 0x8000001Du) caches(0x8000001Du, c);
    if (!c->l2 && top >= 0x80000006u) { /* the legacy leaves (VMs without TOPOEXT) */
      regs(0x80000005u, 0, r);
      c->l1d = (size_t)(r[2] >> 24) << 10;
      regs(0x80000006u, 0, r);
      c->l2 = (size_t)(r[2] >> 16) << 10;
      c->l3 = (size_t)(r[3] >> 18) << 19;
    }
  }
  if (amd && fam == 0x19) /* Zen 3 below model 0x10 and 0x20-0x5f; Zen 4 the rest with AVX-512 */
    c->uarch = c->avx512f ? OX_UARCH_ZEN4 : OX_UARCH_ZEN2_3;
  else if (amd && fam == 0x17)
    c->uarch = OX_UARCH_ZEN2_3;
  else if (amd && fam >= 0x1A)
    c->uarch = OX_UARCH_ZEN5;
  else if (intel)
    c->uarch = c->avx512f ? OX_UARCH_INTEL : OX_UARCH_INTEL_AVX2;
  if (c->avx512f) {
    /* Two 512-bit FMA pipes: Xeon server cores (Skylake-SP 0x55, Ice Lake-SP
     * 0x6A/0x6C, Sapphire/Emerald/Granite Rapids 0x8F/0xCF/0xAD/0xAE) and
     * Zen 5; one on Intel client parts and on Zen 4 (256-bit halves). */
    int m = c->model;
    bool server = intel && (m == 0x55 || m == 0x6A || m == 0x6C || m == 0x8F || m == 0xCF ||
                            m == 0xAD || m == 0xAE);
    c->fma512_ports = server || c->uarch == OX_UARCH_ZEN5 ? 2 : 1;
  }
}
#endif

static void probe(void) {
  ox_cpu *c = &g_cpu;
#ifdef OX_X86
  probe_x86(c);
#endif
  c->found = c->avx512f && c->avx512bw && c->avx512dq && c->avx512vl && c->avx2 && c->fma
                 ? OX_ISA_AVX512
             : c->avx2 && c->fma ? OX_ISA_AVX2
                                 : OX_ISA_PORTABLE;
  c->isa = c->found;
#ifdef __wasm_simd128__
  c->simd128 = true;
#endif
  const char *cap = getenv("ONNXC_ISA");
  if (cap && *cap) {
    ox_isa want = c->isa;
    if (strcmp(cap, "portable") == 0 || strcmp(cap, "none") == 0) {
      want = OX_ISA_PORTABLE;
      c->simd128 = false; /* the plain C entries, as on an engine without SIMD */
    } else if (strcmp(cap, "avx2") == 0)
      want = OX_ISA_AVX2;
    else if (strcmp(cap, "avx512") == 0)
      want = OX_ISA_AVX512;
    if (want < c->isa) c->isa = want;
  }
  /* features above the level read as absent */
  if (c->isa < OX_ISA_AVX512) {
    c->avx512f = c->avx512bw = c->avx512dq = c->avx512vl = false;
    c->avx512vnni = c->avx512vbmi = c->avx512bf16 = false;
    c->fma512_ports = 0;
  }
  if (c->isa < OX_ISA_AVX2) c->avx2 = c->fma = c->f16c = false;
}

const ox_cpu *ox_cpu_get(void) {
  pthread_once(&g_once, probe);
  return &g_cpu;
}

const char *ox_isa_name(ox_isa isa) {
  return isa == OX_ISA_AVX512 ? "avx512" : isa == OX_ISA_AVX2 ? "avx2" : "portable";
}

const char *ox_uarch_name(ox_uarch u) {
  switch (u) {
  case OX_UARCH_INTEL: return "intel";
  case OX_UARCH_INTEL_AVX2: return "intel-avx2";
  case OX_UARCH_ZEN2_3: return "zen2-3";
  case OX_UARCH_ZEN4: return "zen4";
  case OX_UARCH_ZEN5: return "zen5";
  default: return "generic";
  }
}
