/* sha1.h - SHA-1 (FIPS 180-4), for the checksums of external data files. */
#ifndef OX_SHA1_H
#define OX_SHA1_H

#include <stddef.h>
#include <stdint.h>

typedef struct ox_sha1 {
  uint32_t h[5];
  uint64_t len; /* bytes so far */
  uint8_t block[64];
  size_t fill;
} ox_sha1;

void ox_sha1_init(ox_sha1 *s);
void ox_sha1_update(ox_sha1 *s, const void *data, size_t n);
void ox_sha1_final(ox_sha1 *s, uint8_t digest[20]);
/* a digest as 40 lowercase hex digits + NUL */
void ox_sha1_to_hex(const uint8_t digest[20], char hex[41]);
/* SHA-1 of a buffer, in hex */
void ox_sha1_hex(const void *data, size_t n, char hex[41]);

#endif
