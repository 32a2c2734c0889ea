/* names.c - a map from value names to numbers (open addressing, FNV-1a),
 * for subcommands that look names up in large graphs (info, dot). Keys are
 * borrowed: they must outlive the map. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static size_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (size_t)h;
}

/* the slot of key, or the empty slot where it would go (cap is a power of 2) */
static size_t slot(const ox_cli_names *m, const char *key) {
  size_t i = hash(key) & (m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
  return i;
}

bool ox_cli_names_put(ox_cli_names *m, const char *key, size_t val) {
  if ((m->n + 1) * 4 >= m->cap * 3) { /* keep a quarter free: probes stay short */
    ox_cli_names grown = {calloc(m->cap ? m->cap * 2 : 64, sizeof *grown.keys),
                          calloc(m->cap ? m->cap * 2 : 64, sizeof *grown.vals),
                          m->cap ? m->cap * 2 : 64, 0};
    if (!grown.keys || !grown.vals) {
      ox_cli_names_free(&grown);
      return false;
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) {
        size_t j = slot(&grown, m->keys[i]);
        grown.keys[j] = m->keys[i];
        grown.vals[j] = m->vals[i];
        grown.n++;
      }
    ox_cli_names_free(m);
    *m = grown;
  }
  size_t i = slot(m, key);
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->n++;
  }
  m->vals[i] = val;
  return true;
}

bool ox_cli_names_get(const ox_cli_names *m, const char *key, size_t *val) {
  if (!m->cap) return false;
  size_t i = slot(m, key);
  if (!m->keys[i]) return false;
  if (val) *val = m->vals[i];
  return true;
}

void ox_cli_names_free(ox_cli_names *m) {
  free(m->keys);
  free(m->vals);
  *m = (ox_cli_names){0};
}
