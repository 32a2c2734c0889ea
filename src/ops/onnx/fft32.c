/* fft32.c - single-precision complex FFT that rounds the way numpy >= 2
 * does for complex64 data (see fft32.h).
 *
 * Plan: the length is split into factors 8 (as often as it divides), then
 * 4, then one 2 (moved to the front of the list), then odd factors in
 * increasing order. Each factor p is one Stockham pass over the data with
 * l1 = product of the earlier factors and ido = n / (l1 * p): a length-p
 * butterfly on elements i + ido * (j + p * k), followed (for i > 0) by a
 * twiddle multiplication, written to i + ido * (k + l1 * j). Factors 2, 3,
 * 4, 5, 7, 8 and 11 have unrolled butterflies; larger primes use a
 * generic O(p^2) butterfly. When the largest prime factor q has q*q > n
 * (and n >= 50) and the estimated cost favours it, Bluestein's algorithm
 * with a convolution of "good" length (2^a 3^b 5^c 7^d 11^e >= 2n - 1)
 * is used instead.
 *
 * Every expression below keeps the evaluation order of that reference
 * design; float arithmetic is not associative, and matching the reference
 * data bit for bit depends on it. This file is compiled with
 * -ffp-contract=off (CMakeLists.txt). */
#include "fft32.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

typedef struct {
  float r, i;
} cf;

typedef struct {
  double r, i;
} cd;

/* ------------------------------------------------------------------ */
/* Twiddles e^{2 pi i k / n}: double values from two small tables        */
/* (k = hi * (mask + 1) + lo), multiplied and rounded to float once.     */

typedef struct {
  size_t n, mask, shift;
  cd *v1, *v2;
} twtab;

/* e^{2 pi i x / n} from the octant of x, with ang = pi / (4 n). */
static cd tw_calc(size_t x, size_t n, double ang) {
  x <<= 3;
  if (x < 4 * n) {
    if (x < 2 * n) {
      if (x < n) return (cd){cos((double)x * ang), sin((double)x * ang)};
      return (cd){sin((double)(2 * n - x) * ang), cos((double)(2 * n - x) * ang)};
    }
    x -= 2 * n;
    if (x < n) return (cd){-sin((double)x * ang), cos((double)x * ang)};
    return (cd){-cos((double)(2 * n - x) * ang), sin((double)(2 * n - x) * ang)};
  }
  x = 8 * n - x;
  if (x < 2 * n) {
    if (x < n) return (cd){cos((double)x * ang), -sin((double)x * ang)};
    return (cd){sin((double)(2 * n - x) * ang), -cos((double)(2 * n - x) * ang)};
  }
  x -= 2 * n;
  if (x < n) return (cd){-sin((double)x * ang), -cos((double)x * ang)};
  return (cd){-cos((double)(2 * n - x) * ang), -sin((double)(2 * n - x) * ang)};
}

static bool twtab_init(twtab *t, size_t n) {
  const long double pi = 3.141592653589793238462643383279502884197L;
  double ang = (double)(0.25L * pi / (long double)n);
  size_t nval = (n + 2) / 2;
  size_t shift = 1;
  while (((size_t)1 << shift) * ((size_t)1 << shift) < nval) shift++;
  t->n = n;
  t->shift = shift;
  t->mask = ((size_t)1 << shift) - 1;
  size_t n1 = t->mask + 1, n2 = (nval + t->mask) / (t->mask + 1);
  t->v1 = malloc(n1 * sizeof(cd));
  t->v2 = malloc((n2 ? n2 : 1) * sizeof(cd));
  if (!t->v1 || !t->v2) {
    free(t->v1);
    free(t->v2);
    return false;
  }
  t->v1[0] = (cd){1.0, 0.0};
  for (size_t i = 1; i < n1; i++) t->v1[i] = tw_calc(i, n, ang);
  t->v2[0] = (cd){1.0, 0.0};
  for (size_t i = 1; i < n2; i++) t->v2[i] = tw_calc(i * (t->mask + 1), n, ang);
  return true;
}

static void twtab_free(twtab *t) {
  free(t->v1);
  free(t->v2);
}

static cf twtab_get(const twtab *t, size_t idx) {
  bool upper = 2 * idx > t->n;
  if (upper) idx = t->n - idx;
  cd a = t->v1[idx & t->mask], b = t->v2[idx >> t->shift];
  float re = (float)(a.r * b.r - a.i * b.i);
  float im = (float)(a.r * b.i + a.i * b.r);
  return (cf){re, upper ? -im : im};
}

/* ------------------------------------------------------------------ */
/* Complex helpers                                                      */

static inline cf c_add(cf a, cf b) { return (cf){a.r + b.r, a.i + b.i}; }
static inline cf c_sub(cf a, cf b) { return (cf){a.r - b.r, a.i - b.i}; }
static inline cf c_scale(cf a, float s) { return (cf){a.r * s, a.i * s}; }
/* v * w (backward) or v * conj(w) (forward) */
static inline cf c_tw(cf v, cf w, bool fwd) {
  if (fwd) return (cf){v.r * w.r + v.i * w.i, v.i * w.r - v.r * w.i};
  return (cf){v.r * w.r - v.i * w.i, v.r * w.i + v.i * w.r};
}
/* multiply by -i (forward) or +i (backward) */
static inline cf c_rot90(cf a, bool fwd) { return fwd ? (cf){a.i, -a.r} : (cf){-a.i, a.r}; }

#define HSQT2 ((float)0.707106781186547524400844362104849L)

/* multiply by e^{-i pi/4} (forward) or e^{+i pi/4} */
static inline cf c_rot45(cf a, bool fwd) {
  if (fwd) return (cf){HSQT2 * (a.r + a.i), HSQT2 * (a.i - a.r)};
  return (cf){HSQT2 * (a.r - a.i), HSQT2 * (a.i + a.r)};
}
/* multiply by e^{-3 i pi/4} (forward) or e^{+3 i pi/4} */
static inline cf c_rot135(cf a, bool fwd) {
  if (fwd) return (cf){HSQT2 * (a.i - a.r), HSQT2 * (-a.r - a.i)};
  return (cf){HSQT2 * (-a.r - a.i), HSQT2 * (a.r - a.i)};
}

/* ------------------------------------------------------------------ */
/* Mixed-radix plan                                                     */

#define MAXFACT 72

typedef struct {
  size_t ip;
  cf *tw;  /* (ip - 1) * (ido - 1) twiddles */
  cf *tws; /* generic factors: ip roots of unity of order ip */
} factor;

typedef struct {
  size_t n, nfact;
  factor fact[MAXFACT];
  cf *mem;
} cplan;

/* Indexing of a pass: input element (a, b, c) of a cdim-point pass, output
 * element (a, b, c) and twiddle x of column i. */
#define CC(a, b, c) cc[(a) + ido * ((b) + cdim * (c))]
#define CH(a, b, c) ch[(a) + ido * ((b) + l1 * (c))]
#define WA(x, i) wa[(i)-1 + (x) * (ido - 1)]

/* Stores (da, db) at columns u1, u2 of output column i, twiddled if i > 0. */
static inline void put2(cf *ch, size_t ido, size_t l1, size_t i, size_t k, size_t u1, size_t u2,
                        cf da, cf db, const cf *wa, bool fwd) {
  if (i == 0) {
    CH(0, k, u1) = da;
    CH(0, k, u2) = db;
  } else {
    CH(i, k, u1) = c_tw(da, WA(u1 - 1, i), fwd);
    CH(i, k, u2) = c_tw(db, WA(u2 - 1, i), fwd);
  }
}

static void pass2(size_t ido, size_t l1, const cf *cc, cf *ch, const cf *wa, bool fwd) {
  const size_t cdim = 2;
  for (size_t k = 0; k < l1; k++) {
    CH(0, k, 0) = c_add(CC(0, 0, k), CC(0, 1, k));
    CH(0, k, 1) = c_sub(CC(0, 0, k), CC(0, 1, k));
    for (size_t i = 1; i < ido; i++) {
      CH(i, k, 0) = c_add(CC(i, 0, k), CC(i, 1, k));
      CH(i, k, 1) = c_tw(c_sub(CC(i, 0, k), CC(i, 1, k)), WA(0, i), fwd);
    }
  }
}

static void pass3(size_t ido, size_t l1, const cf *cc, cf *ch, const cf *wa, bool fwd) {
  const size_t cdim = 3;
  const float twr = -0.5f, twi = (fwd ? -1 : 1) * (float)0.8660254037844386467637231707529362L;
  for (size_t k = 0; k < l1; k++)
    for (size_t i = 0; i < ido; i++) {
      cf t0 = CC(i, 0, k), t1 = c_add(CC(i, 1, k), CC(i, 2, k)),
         t2 = c_sub(CC(i, 1, k), CC(i, 2, k));
      CH(i, k, 0) = c_add(t0, t1);
      cf ca = {t0.r + t1.r * twr, t0.i + t1.i * twr};
      cf cb = {-t2.i * twi, t2.r * twi};
      put2(ch, ido, l1, i, k, 1, 2, c_add(ca, cb), c_sub(ca, cb), wa, fwd);
    }
}

static void pass4(size_t ido, size_t l1, const cf *cc, cf *ch, const cf *wa, bool fwd) {
  const size_t cdim = 4;
  for (size_t k = 0; k < l1; k++)
    for (size_t i = 0; i < ido; i++) {
      cf c0 = CC(i, 0, k), c1 = CC(i, 1, k), c2 = CC(i, 2, k), c3 = CC(i, 3, k);
      cf t2 = c_add(c0, c2), t1 = c_sub(c0, c2);
      cf t3 = c_add(c1, c3), t4 = c_rot90(c_sub(c1, c3), fwd);
      CH(i, k, 0) = c_add(t2, t3);
      if (i == 0) {
        CH(0, k, 2) = c_sub(t2, t3);
        CH(0, k, 1) = c_add(t1, t4);
        CH(0, k, 3) = c_sub(t1, t4);
      } else {
        CH(i, k, 1) = c_tw(c_add(t1, t4), WA(0, i), fwd);
        CH(i, k, 2) = c_tw(c_sub(t2, t3), WA(1, i), fwd);
        CH(i, k, 3) = c_tw(c_sub(t1, t4), WA(2, i), fwd);
      }
    }
}

static void pass8(size_t ido, size_t l1, const cf *cc, cf *ch, const cf *wa, bool fwd) {
  const size_t cdim = 8;
  for (size_t k = 0; k < l1; k++)
    for (size_t i = 0; i < ido; i++) {
      cf a1 = c_add(CC(i, 1, k), CC(i, 5, k)), a5 = c_sub(CC(i, 1, k), CC(i, 5, k));
      cf a3 = c_add(CC(i, 3, k), CC(i, 7, k)), a7 = c_sub(CC(i, 3, k), CC(i, 7, k));
      cf s13 = c_add(a1, a3), d13 = c_sub(a1, a3);
      a1 = s13;
      a3 = c_rot90(d13, fwd);
      a7 = c_rot90(a7, fwd);
      cf s57 = c_add(a5, a7), d57 = c_sub(a5, a7);
      a5 = c_rot45(s57, fwd);
      a7 = c_rot135(d57, fwd);
      cf a0 = c_add(CC(i, 0, k), CC(i, 4, k)), a4 = c_sub(CC(i, 0, k), CC(i, 4, k));
      cf a2 = c_add(CC(i, 2, k), CC(i, 6, k)), a6 = c_sub(CC(i, 2, k), CC(i, 6, k));
      cf e0 = c_add(a0, a2), e2 = c_sub(a0, a2);
      a6 = c_rot90(a6, fwd);
      cf e4 = c_add(a4, a6), e6 = c_sub(a4, a6);
      if (i == 0) {
        CH(0, k, 0) = c_add(e0, a1);
        CH(0, k, 4) = c_sub(e0, a1);
        CH(0, k, 2) = c_add(e2, a3);
        CH(0, k, 6) = c_sub(e2, a3);
        CH(0, k, 1) = c_add(e4, a5);
        CH(0, k, 5) = c_sub(e4, a5);
        CH(0, k, 3) = c_add(e6, a7);
        CH(0, k, 7) = c_sub(e6, a7);
      } else {
        CH(i, k, 0) = c_add(e0, a1);
        CH(i, k, 4) = c_tw(c_sub(e0, a1), WA(3, i), fwd);
        CH(i, k, 2) = c_tw(c_add(e2, a3), WA(1, i), fwd);
        CH(i, k, 6) = c_tw(c_sub(e2, a3), WA(5, i), fwd);
        CH(i, k, 1) = c_tw(c_add(e4, a5), WA(0, i), fwd);
        CH(i, k, 5) = c_tw(c_sub(e4, a5), WA(4, i), fwd);
        CH(i, k, 3) = c_tw(c_add(e6, a7), WA(2, i), fwd);
        CH(i, k, 7) = c_tw(c_sub(e6, a7), WA(6, i), fwd);
      }
    }
}

/* Odd prime p in {5, 7, 11}: the p-point butterfly written as
 *   X_u  = t_0 + sum_j cos(2 pi j u / p) s_j  +/- i sum_j sin(2 pi j u / p) d_j
 * with s_j = x_j + x_{p-j}, d_j = x_j - x_{p-j}; the sums run left to right
 * over j = 1 .. (p-1)/2 with the cosine and (signed) sine of the reduced
 * angle j*u mod p, which is how the unrolled reference passes evaluate. */
static void pass_odd(size_t p, size_t ido, size_t l1, const cf *cc, cf *ch, const cf *wa,
                     bool fwd) {
  const size_t cdim = p;
  const size_t h = (p - 1) / 2;
  /* cos and sin of 2 pi j / p for j = 1 .. h, as the float constants of
   * the reference butterflies */
  static const long double c5[2] = {0.3090169943749474241022934171828191L,
                                    -0.8090169943749474241022934171828191L};
  static const long double s5[2] = {0.9510565162951535721164393333793821L,
                                    0.5877852522924731291687059546390728L};
  static const long double c7[3] = {0.6234898018587335305250048840042398L,
                                    -0.2225209339563144042889025644967948L,
                                    -0.9009688679024191262361023195074451L};
  static const long double s7[3] = {0.7818314824680298087084445266740578L,
                                    0.9749279121818236070181316829939312L,
                                    0.433883739117558120475768332848359L};
  static const long double c11[5] = {
      0.8412535328311811688618116489193677L, 0.4154150130018864255292741492296232L,
      -0.1423148382732851404437926686163697L, -0.6548607339452850640569250724662936L,
      -0.9594929736144973898903680570663277L};
  static const long double s11[5] = {
      0.5406408174555975821076359543186917L, 0.9096319953545183714117153830790285L,
      0.9898214418809327323760920377767188L, 0.7557495743542582837740358439723444L,
      0.2817325568414296977114179153466169L};
  const long double *cl = p == 5 ? c5 : p == 7 ? c7 : c11;
  const long double *sl = p == 5 ? s5 : p == 7 ? s7 : s11;
  float twr[5], twi[5];
  for (size_t j = 0; j < h; j++) {
    twr[j] = (float)cl[j];
    twi[j] = (fwd ? -1 : 1) * (float)sl[j];
  }
  for (size_t k = 0; k < l1; k++)
    for (size_t i = 0; i < ido; i++) {
      cf t0 = CC(i, 0, k), s[5], d[5];
      for (size_t j = 1; j <= h; j++) {
        s[j - 1] = c_add(CC(i, j, k), CC(i, p - j, k));
        d[j - 1] = c_sub(CC(i, j, k), CC(i, p - j, k));
      }
      cf c0 = t0;
      for (size_t j = 0; j < h; j++) {
        c0.r = c0.r + s[j].r;
        c0.i = c0.i + s[j].i;
      }
      CH(i, k, 0) = c0;
      for (size_t u = 1; u <= h; u++) {
        cf ca = t0, cb;
        float bi = 0, br = 0;
        for (size_t j = 1; j <= h; j++) {
          size_t m = (j * u) % p; /* angle index, folded to 1 .. h */
          float cr = twr[(m <= h ? m : p - m) - 1];
          float si = m <= h ? twi[m - 1] : -twi[p - m - 1];
          ca.r = ca.r + cr * s[j - 1].r;
          ca.i = ca.i + cr * s[j - 1].i;
          if (j == 1) {
            bi = si * d[0].r;
            br = si * d[0].i;
          } else {
            bi = bi + si * d[j - 1].r;
            br = br + si * d[j - 1].i;
          }
        }
        cb.i = bi;
        cb.r = -br;
        put2(ch, ido, l1, i, k, u, p - u, c_add(ca, cb), c_sub(ca, cb), wa, fwd);
      }
    }
}

/* Generic odd prime ip > 11. Works in place on cc (the result stays
 * there), with ch as the intermediate. */
#define CX(a, b, c) cc[(a) + ido * ((b) + l1 * (c))]
#define CX2(a, b) cc[(a) + idl1 * (b)]
#define CH2(a, b) ch[(a) + idl1 * (b)]

static void passg(size_t ido, size_t ip, size_t l1, cf *cc, cf *ch, const cf *wa, const cf *csarr,
                  cf *wal, bool fwd) {
  const size_t cdim = ip;
  size_t ipph = (ip + 1) / 2, idl1 = ido * l1;
  wal[0] = (cf){1.0f, 0.0f};
  for (size_t i = 1; i < ip; i++) wal[i] = (cf){csarr[i].r, fwd ? -csarr[i].i : csarr[i].i};

  for (size_t k = 0; k < l1; k++)
    for (size_t i = 0; i < ido; i++) CH(i, k, 0) = CC(i, 0, k);
  for (size_t j = 1, jc = ip - 1; j < ipph; j++, jc--)
    for (size_t k = 0; k < l1; k++)
      for (size_t i = 0; i < ido; i++) {
        cf a = CC(i, j, k), b = CC(i, jc, k);
        CH(i, k, j) = c_add(a, b);
        CH(i, k, jc) = c_sub(a, b);
      }
  for (size_t k = 0; k < l1; k++)
    for (size_t i = 0; i < ido; i++) {
      cf tmp = CH(i, k, 0);
      for (size_t j = 1; j < ipph; j++) tmp = c_add(tmp, CH(i, k, j));
      CX(i, k, 0) = tmp;
    }
  for (size_t l = 1, lc = ip - 1; l < ipph; l++, lc--) {
    for (size_t ik = 0; ik < idl1; ik++) {
      CX2(ik, l).r = CH2(ik, 0).r + wal[l].r * CH2(ik, 1).r + wal[2 * l].r * CH2(ik, 2).r;
      CX2(ik, l).i = CH2(ik, 0).i + wal[l].r * CH2(ik, 1).i + wal[2 * l].r * CH2(ik, 2).i;
      CX2(ik, lc).r = -wal[l].i * CH2(ik, ip - 1).i - wal[2 * l].i * CH2(ik, ip - 2).i;
      CX2(ik, lc).i = wal[l].i * CH2(ik, ip - 1).r + wal[2 * l].i * CH2(ik, ip - 2).r;
    }
    size_t iwal = 2 * l, j = 3, jc = ip - 3;
    for (; j < ipph - 1; j += 2, jc -= 2) {
      iwal += l;
      if (iwal > ip) iwal -= ip;
      cf xw = wal[iwal];
      iwal += l;
      if (iwal > ip) iwal -= ip;
      cf xw2 = wal[iwal];
      for (size_t ik = 0; ik < idl1; ik++) {
        CX2(ik, l).r += CH2(ik, j).r * xw.r + CH2(ik, j + 1).r * xw2.r;
        CX2(ik, l).i += CH2(ik, j).i * xw.r + CH2(ik, j + 1).i * xw2.r;
        CX2(ik, lc).r -= CH2(ik, jc).i * xw.i + CH2(ik, jc - 1).i * xw2.i;
        CX2(ik, lc).i += CH2(ik, jc).r * xw.i + CH2(ik, jc - 1).r * xw2.i;
      }
    }
    for (; j < ipph; j++, jc--) {
      iwal += l;
      if (iwal > ip) iwal -= ip;
      cf xw = wal[iwal];
      for (size_t ik = 0; ik < idl1; ik++) {
        CX2(ik, l).r += CH2(ik, j).r * xw.r;
        CX2(ik, l).i += CH2(ik, j).i * xw.r;
        CX2(ik, lc).r -= CH2(ik, jc).i * xw.i;
        CX2(ik, lc).i += CH2(ik, jc).r * xw.i;
      }
    }
  }
  if (ido == 1) {
    for (size_t j = 1, jc = ip - 1; j < ipph; j++, jc--)
      for (size_t ik = 0; ik < idl1; ik++) {
        cf t1 = CX2(ik, j), t2 = CX2(ik, jc);
        CX2(ik, j) = c_add(t1, t2);
        CX2(ik, jc) = c_sub(t1, t2);
      }
  } else {
    for (size_t j = 1, jc = ip - 1; j < ipph; j++, jc--)
      for (size_t k = 0; k < l1; k++) {
        cf t1 = CX(0, k, j), t2 = CX(0, k, jc);
        CX(0, k, j) = c_add(t1, t2);
        CX(0, k, jc) = c_sub(t1, t2);
        for (size_t i = 1; i < ido; i++) {
          cf x1 = c_add(CX(i, k, j), CX(i, k, jc)), x2 = c_sub(CX(i, k, j), CX(i, k, jc));
          CX(i, k, j) = c_tw(x1, wa[(j - 1) * (ido - 1) + i - 1], fwd);
          CX(i, k, jc) = c_tw(x2, wa[(jc - 1) * (ido - 1) + i - 1], fwd);
        }
      }
  }
}

#undef CX
#undef CX2
#undef CH2
#undef CC
#undef CH
#undef WA

static void cplan_add(cplan *p, size_t f) { p->fact[p->nfact++].ip = f; }

static bool cplan_init(cplan *p, size_t n) {
  memset(p, 0, sizeof *p);
  p->n = n;
  if (n == 1) return true;
  size_t len = n;
  while ((len & 7) == 0) {
    cplan_add(p, 8);
    len >>= 3;
  }
  while ((len & 3) == 0) {
    cplan_add(p, 4);
    len >>= 2;
  }
  if ((len & 1) == 0) {
    len >>= 1;
    cplan_add(p, 2);
    size_t t = p->fact[0].ip;
    p->fact[0].ip = p->fact[p->nfact - 1].ip;
    p->fact[p->nfact - 1].ip = t;
  }
  for (size_t d = 3; d * d <= len; d += 2)
    while (len % d == 0) {
      cplan_add(p, d);
      len /= d;
    }
  if (len > 1) cplan_add(p, len);

  size_t total = 0, l1 = 1;
  for (size_t k = 0; k < p->nfact; k++) {
    size_t ip = p->fact[k].ip, ido = n / (l1 * ip);
    total += (ip - 1) * (ido - 1) + (ip > 11 ? ip : 0);
    l1 *= ip;
  }
  p->mem = malloc((total ? total : 1) * sizeof(cf));
  twtab tt;
  if (!p->mem || !twtab_init(&tt, n)) {
    free(p->mem);
    p->mem = NULL;
    return false;
  }
  size_t ofs = 0;
  l1 = 1;
  for (size_t k = 0; k < p->nfact; k++) {
    size_t ip = p->fact[k].ip, ido = n / (l1 * ip);
    p->fact[k].tw = p->mem + ofs;
    ofs += (ip - 1) * (ido - 1);
    for (size_t j = 1; j < ip; j++)
      for (size_t i = 1; i < ido; i++)
        p->fact[k].tw[(j - 1) * (ido - 1) + i - 1] = twtab_get(&tt, j * l1 * i);
    if (ip > 11) {
      p->fact[k].tws = p->mem + ofs;
      ofs += ip;
      for (size_t j = 0; j < ip; j++) p->fact[k].tws[j] = twtab_get(&tt, j * l1 * ido);
    }
    l1 *= ip;
  }
  twtab_free(&tt);
  return true;
}

/* Largest generic factor of the plan (0 if none): passg needs that many
 * complex values of scratch for its root table. */
static size_t cplan_maxgen(const cplan *p) {
  size_t m = 0;
  for (size_t k = 0; k < p->nfact; k++)
    if (p->fact[k].ip > 11 && p->fact[k].ip > m) m = p->fact[k].ip;
  return m;
}

/* c: n values; ch: n values of scratch; wal: cplan_maxgen values. */
static void cplan_exec(const cplan *p, cf *c, float fct, bool fwd, cf *ch, cf *wal) {
  size_t n = p->n;
  if (n == 1) {
    c[0] = c_scale(c[0], fct);
    return;
  }
  size_t l1 = 1;
  cf *p1 = c, *p2 = ch;
  for (size_t k = 0; k < p->nfact; k++) {
    size_t ip = p->fact[k].ip, l2 = ip * l1, ido = n / l2;
    const cf *tw = p->fact[k].tw;
    switch (ip) {
    case 2: pass2(ido, l1, p1, p2, tw, fwd); break;
    case 3: pass3(ido, l1, p1, p2, tw, fwd); break;
    case 4: pass4(ido, l1, p1, p2, tw, fwd); break;
    case 8: pass8(ido, l1, p1, p2, tw, fwd); break;
    case 5:
    case 7:
    case 11: pass_odd(ip, ido, l1, p1, p2, tw, fwd); break;
    default: {
      passg(ido, ip, l1, p1, p2, tw, p->fact[k].tws, wal, fwd);
      cf *t = p1;
      p1 = p2;
      p2 = t;
    }
    }
    cf *t = p1;
    p1 = p2;
    p2 = t;
    l1 = l2;
  }
  if (p1 != c) {
    if (fct != 1.0f)
      for (size_t i = 0; i < n; i++) c[i] = c_scale(p1[i], fct);
    else
      memcpy(c, p1, n * sizeof(cf));
  } else if (fct != 1.0f) {
    for (size_t i = 0; i < n; i++) c[i] = c_scale(c[i], fct);
  }
}

/* ------------------------------------------------------------------ */
/* Plan choice and Bluestein                                            */

static size_t largest_prime_factor(size_t n) {
  size_t res = 1;
  while ((n & 1) == 0) {
    res = 2;
    n >>= 1;
  }
  for (size_t x = 3; x * x <= n; x += 2)
    while (n % x == 0) {
      res = x;
      n /= x;
    }
  return n > 1 ? n : res;
}

static double cost_guess(size_t n) {
  const double lfp = 1.1; /* penalty of the generic pass */
  size_t ni = n;
  double result = 0.0;
  while ((n & 1) == 0) {
    result += 2;
    n >>= 1;
  }
  for (size_t x = 3; x * x <= n; x += 2)
    while (n % x == 0) {
      result += x <= 5 ? (double)x : lfp * (double)x;
      n /= x;
    }
  if (n > 1) result += n <= 5 ? (double)n : lfp * (double)n;
  return result * (double)ni;
}

/* Smallest 2^a 3^b 5^c 7^d 11^e >= n (n itself when n <= 12); 0 if that
 * would overflow. */
static size_t good_size(size_t n) {
  if (n <= 12) return n;
  if (n > SIZE_MAX / 22) return 0;
  size_t best = 2 * n;
  for (size_t f11 = 1; f11 < best; f11 *= 11)
    for (size_t f7 = f11; f7 < best; f7 *= 7)
      for (size_t f5 = f7; f5 < best; f5 *= 5)
        for (size_t f3 = f5; f3 < best; f3 *= 3) {
          size_t x = f3;
          while (x < n) x *= 2;
          if (x < best) best = x;
        }
  return best;
}

struct ox_fft32 {
  size_t n;
  bool blue;
  cplan plan; /* length n, or n2 for Bluestein */
  size_t n2;
  cf *bk;  /* n chirp values e^{i pi m^2 / n} */
  cf *bkf; /* n2/2 + 1 values of the transformed, normalised chirp */
  size_t maxgen;
};

void ox_fft32_free(ox_fft32 *p) {
  if (!p) return;
  free(p->plan.mem);
  free(p->bk);
  free(p->bkf);
  free(p);
}

static bool blue_init(ox_fft32 *p) {
  size_t n = p->n, n2 = p->n2;
  p->bk = malloc(n * sizeof(cf));
  p->bkf = malloc((n2 / 2 + 1) * sizeof(cf));
  cf *tb = malloc(n2 * sizeof(cf));
  cf *ch = malloc(n2 * sizeof(cf));
  cf *wal = malloc((p->maxgen + 1) * sizeof(cf));
  twtab tt;
  bool ok = p->bk && p->bkf && tb && ch && wal && twtab_init(&tt, 2 * n);
  if (ok) {
    p->bk[0] = (cf){1.0f, 0.0f};
    size_t coeff = 0;
    for (size_t m = 1; m < n; m++) {
      coeff += 2 * m - 1;
      if (coeff >= 2 * n) coeff -= 2 * n;
      p->bk[m] = twtab_get(&tt, coeff);
    }
    twtab_free(&tt);
    float xn2 = 1.0f / (float)n2;
    tb[0] = c_scale(p->bk[0], xn2);
    for (size_t m = 1; m < n; m++) tb[m] = tb[n2 - m] = c_scale(p->bk[m], xn2);
    for (size_t m = n; m <= n2 - n; m++) tb[m] = (cf){0.0f, 0.0f};
    cplan_exec(&p->plan, tb, 1.0f, true, ch, wal);
    memcpy(p->bkf, tb, (n2 / 2 + 1) * sizeof(cf));
  }
  free(tb);
  free(ch);
  free(wal);
  return ok;
}

ox_fft32 *ox_fft32_new(size_t n) {
  if (n == 0) return NULL;
  ox_fft32 *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->n = n;
  size_t lpf = n < 50 ? 0 : largest_prime_factor(n);
  if (lpf > 0 && lpf > n / lpf) {
    size_t n2 = good_size(2 * n - 1);
    if (n2 && 1.5 * 2 * cost_guess(n2) < cost_guess(n)) {
      p->blue = true;
      p->n2 = n2;
    }
  }
  if (!cplan_init(&p->plan, p->blue ? p->n2 : n)) {
    free(p);
    return NULL;
  }
  p->maxgen = cplan_maxgen(&p->plan);
  if (p->blue && !blue_init(p)) {
    ox_fft32_free(p);
    return NULL;
  }
  return p;
}

size_t ox_fft32_scratch(const ox_fft32 *p) {
  size_t m = p->blue ? p->n2 : p->n;
  /* ch (m) + wal (maxgen + 1), plus akf (n2) for Bluestein; in floats */
  return 2 * (m + p->maxgen + 1 + (p->blue ? p->n2 : 0));
}

void ox_fft32_exec(const ox_fft32 *p, float *data, float fct, bool fwd, float *scratch) {
  cf *c = (cf *)data;
  if (!p->blue) {
    cf *ch = (cf *)scratch, *wal = ch + p->n;
    cplan_exec(&p->plan, c, fct, fwd, ch, wal);
    return;
  }
  size_t n = p->n, n2 = p->n2;
  cf *akf = (cf *)scratch, *ch = akf + n2, *wal = ch + n2;
  for (size_t m = 0; m < n; m++) akf[m] = c_tw(c[m], p->bk[m], fwd);
  cf zero = c_scale(akf[0], 0.0f);
  for (size_t m = n; m < n2; m++) akf[m] = zero;
  cplan_exec(&p->plan, akf, 1.0f, true, ch, wal);
  akf[0] = c_tw(akf[0], p->bkf[0], !fwd);
  for (size_t m = 1; m < (n2 + 1) / 2; m++) {
    akf[m] = c_tw(akf[m], p->bkf[m], !fwd);
    akf[n2 - m] = c_tw(akf[n2 - m], p->bkf[m], !fwd);
  }
  if ((n2 & 1) == 0) akf[n2 / 2] = c_tw(akf[n2 / 2], p->bkf[n2 / 2], !fwd);
  cplan_exec(&p->plan, akf, 1.0f, false, ch, wal);
  for (size_t m = 0; m < n; m++) c[m] = c_scale(c_tw(akf[m], p->bk[m], fwd), fct);
}
