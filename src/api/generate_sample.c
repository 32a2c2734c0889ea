/* generate_sample.c - the next token from a row of logits: greedy argmax,
 * or a draw after temperature, top-k and top-p (nucleus) cuts, from a
 * seeded splitmix64 stream so that a seed replays the same tokens. */
#include <math.h>
#include <stdlib.h>

#include "generate_impl.h"

double ox_gen_uniform(uint64_t *state) {
  /* splitmix64 (Steele, Lea, Flood 2014): one add and a 64-bit mix per
     draw; the top 53 bits make the double */
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* larger first; among equals the lower id, so that the order (and the
 * draw) does not depend on qsort's algorithm */
static int by_value_desc(const void *a, const void *b) {
  const ox_gen_cand *x = a, *y = b;
  if (x->v != y->v) return x->v > y->v ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

int64_t ox_gen_pick(const float *logits, size_t vocab, const ox_gen_sampling *s, uint64_t *rng,
                    ox_gen_cand *c) {
  if (!s->do_sample) {
    size_t best = 0;
    while (best + 1 < vocab && isnan(logits[best])) best++;
    for (size_t v = best + 1; v < vocab; v++)
      if (logits[v] > logits[best]) best = v;
    return (int64_t)best;
  }
  float t = s->temperature > 0 ? s->temperature : 1.0f;
  size_t n = 0;
  for (size_t v = 0; v < vocab; v++)
    if (!isnan(logits[v])) c[n++] = (ox_gen_cand){logits[v] / t, (int32_t)v};
  if (n == 0) return 0;
  qsort(c, n, sizeof *c, by_value_desc);
  if (s->top_k > 0 && (size_t)s->top_k < n) n = (size_t)s->top_k;
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += c[i].v = expf(c[i].v - c[0].v);
  if (s->top_p > 0 && s->top_p < 1) {
    /* the smallest head of the sorted list whose probability reaches top_p */
    double acc = 0, want = s->top_p * sum;
    size_t keep = 0;
    while (keep < n && acc < want) acc += c[keep++].v;
    n = keep ? keep : 1;
    sum = acc > 0 ? acc : c[0].v;
  }
  double u = ox_gen_uniform(rng) * sum, acc = 0;
  for (size_t i = 0; i < n; i++) {
    acc += c[i].v;
    if (u < acc) return c[i].id;
  }
  return c[n - 1].id; /* rounding left u at the very top */
}
