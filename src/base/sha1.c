/* sha1.c - SHA-1 as specified in FIPS 180-4 section 6.1. */
#include "sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, int n) { return x << n | x >> (32 - n); }

static void compress(uint32_t h[5], const uint8_t *p) {
  uint32_t w[80];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           (uint32_t)p[4 * i + 3];
  for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; i++) {
    uint32_t f, k;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999u;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1u;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdcu;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6u;
    }
    uint32_t t = rol(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rol(b, 30);
    b = a;
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

void ox_sha1_init(ox_sha1 *s) {
  static const uint32_t init[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u};
  memcpy(s->h, init, sizeof init);
  s->len = 0;
  s->fill = 0;
}

void ox_sha1_update(ox_sha1 *s, const void *data, size_t n) {
  const uint8_t *p = data;
  s->len += n;
  if (s->fill) {
    size_t k = 64 - s->fill < n ? 64 - s->fill : n;
    memcpy(s->block + s->fill, p, k);
    s->fill += k;
    p += k;
    n -= k;
    if (s->fill < 64) return;
    compress(s->h, s->block);
    s->fill = 0;
  }
  for (; n >= 64; p += 64, n -= 64) compress(s->h, p);
  memcpy(s->block, p, n);
  s->fill = n;
}

void ox_sha1_final(ox_sha1 *s, uint8_t digest[20]) {
  uint64_t bits = s->len * 8;
  uint8_t pad[72] = {0x80};
  size_t padn = (s->fill < 56 ? 56 : 120) - s->fill;
  for (int i = 0; i < 8; i++) pad[padn + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
  ox_sha1_update(s, pad, padn + 8);
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 4; j++) digest[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

void ox_sha1_hex(const void *data, size_t n, char hex[41]) {
  ox_sha1 s;
  uint8_t d[20];
  ox_sha1_init(&s);
  ox_sha1_update(&s, data, n);
  ox_sha1_final(&s, d);
  ox_sha1_to_hex(d, hex);
}

void ox_sha1_to_hex(const uint8_t digest[20], char hex[41]) {
  for (int i = 0; i < 20; i++) {
    hex[2 * i] = "0123456789abcdef"[digest[i] >> 4];
    hex[2 * i + 1] = "0123456789abcdef"[digest[i] & 15];
  }
  hex[40] = 0;
}
