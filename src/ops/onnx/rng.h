/* rng.h - the counter-based random generator of the random family.
 *
 * Philox4x32-10 (J. Salmon, M. Moraes, R. Dror, D. Shaw, "Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011): a 128-bit counter and a 64-bit key
 * go through ten rounds of
 *   (hi0, lo0) = M0 * c0, (hi1, lo1) = M1 * c2
 *   c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
 * with the key bumped by the Weyl constants (W0, W1) between rounds, giving
 * four 32-bit words per counter value. Being a pure function of (key,
 * counter), the numbers for element i do not depend on threads, chunking or
 * platform: a given seed gives the same tensor everywhere.
 *
 * Layout used by the kernels: key = the seed (64 bits); counter =
 * (block index low, block index high, stream low, stream high), where the
 * stream is 0 for a seeded node and a per-run number otherwise. Block b
 * yields two 64-bit words, so element i uses block i / 2, word i % 2. */
#ifndef OX_RNG_H
#define OX_RNG_H

#include <math.h>
#include <stdint.h>

#define OX_PHILOX_M0 0xD2511F53u
#define OX_PHILOX_M1 0xCD9E8D57u
#define OX_PHILOX_W0 0x9E3779B9u
#define OX_PHILOX_W1 0xBB67AE85u

/* One Philox4x32-10 evaluation: ctr[4] is replaced by the output words. */
static inline void ox_philox4x32_10(uint32_t ctr[4], uint32_t k0, uint32_t k1) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)OX_PHILOX_M0 * c0, p1 = (uint64_t)OX_PHILOX_M1 * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += OX_PHILOX_W0;
    k1 += OX_PHILOX_W1;
  }
  ctr[0] = c0;
  ctr[1] = c1;
  ctr[2] = c2;
  ctr[3] = c3;
}

/* Two 64-bit words of block `block` in stream `stream` under key `key`. */
static inline void ox_rng_block(uint64_t key, uint64_t stream, uint64_t block, uint64_t out[2]) {
  uint32_t c[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)stream,
                   (uint32_t)(stream >> 32)};
  ox_philox4x32_10(c, (uint32_t)key, (uint32_t)(key >> 32));
  out[0] = (uint64_t)c[0] | (uint64_t)c[1] << 32;
  out[1] = (uint64_t)c[2] | (uint64_t)c[3] << 32;
}

/* A 64-bit word to a double in [0, 1) (53 random bits). */
static inline double ox_rng_unit(uint64_t w) { return (double)(w >> 11) * 0x1.0p-53; }

/* Element i of the uniform [0, 1) sequence. */
static inline double ox_rng_uniform(uint64_t key, uint64_t stream, uint64_t i) {
  uint64_t w[2];
  ox_rng_block(key, stream, i >> 1, w);
  return ox_rng_unit(w[i & 1]);
}

/* Element i of the standard normal sequence: Box-Muller on block i / 2,
 * cosine branch for even i, sine branch for odd i. */
static inline double ox_rng_normal(uint64_t key, uint64_t stream, uint64_t i) {
  uint64_t w[2];
  ox_rng_block(key, stream, i >> 1, w);
  double u1 = ((double)(w[0] >> 11) + 1.0) * 0x1.0p-53; /* (0, 1] */
  double u2 = ox_rng_unit(w[1]);
  double r = sqrt(-2.0 * log(u1));
  double t = 6.283185307179586476925 * u2;
  return (i & 1) ? r * sin(t) : r * cos(t);
}

/* SplitMix64 finaliser: spreads entropy of an auto-generated seed. */
static inline uint64_t ox_rng_mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

#endif
