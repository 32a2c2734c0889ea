/* generate_impl.h - what the generation loop's files share (not public):
 * genai_config.json read into flat key paths (generate_config.c) and the
 * choice of the next token from logits (generate_sample.c). */
#ifndef OX_GENERATE_IMPL_H
#define OX_GENERATE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "../base/base.h"

struct onnxc_session;
struct onnxc_generator;

/* A JSON document flattened to its leaves: "model.decoder.head_size",
 * "model.eos_token_id.1" (array items by index). Strings are unescaped
 * (\uXXXX of ASCII only; other escapes of the config's names are rare). */
typedef struct ox_gen_leaf {
  char *path;
  char *str; /* string leaves; NULL for numbers and literals */
  double num;
  int is_bool, is_num;
} ox_gen_leaf;

typedef struct ox_gen_config {
  ox_gen_leaf *leaves;
  size_t n, cap;
} ox_gen_config;

/* Reads dir/genai_config.json into c (left empty, OX_OK, when there is no
 * such file); a malformed file is OX_EPARSE naming the byte offset. */
int ox_gen_config_read(ox_gen_config *c, const char *dir, ox_err *e);
void ox_gen_config_free(ox_gen_config *c);
/* The leaf at path, or NULL. */
const ox_gen_leaf *ox_gen_config_get(const ox_gen_config *c, const char *path);
/* The string at path, or dflt. */
const char *ox_gen_config_str(const ox_gen_config *c, const char *path, const char *dflt);
/* The integer at path (numbers and booleans), or dflt. */
int64_t ox_gen_config_int(const ox_gen_config *c, const char *path, int64_t dflt);

/* How the next token is picked (the public options, checked). */
typedef struct ox_gen_sampling {
  int do_sample;
  int top_k;
  float top_p, temperature;
} ox_gen_sampling;

/* A sampling candidate: a token and its (scaled) logit, later probability. */
typedef struct ox_gen_cand {
  float v;
  int32_t id;
} ox_gen_cand;

/* splitmix64: the next uniform double in [0, 1) from *state. */
double ox_gen_uniform(uint64_t *state);
/* The next token from one row of vocab logits; scratch holds vocab
 * candidates. Greedy: the first index of the largest logit (NaN never
 * wins). */
int64_t ox_gen_pick(const float *logits, size_t vocab, const ox_gen_sampling *s, uint64_t *rng,
                    ox_gen_cand *scratch);

/* The in-place KV cache of Optimum's layout (generate_kv.c): 1 when the
 * graph of session s appends each of the n_cache past inputs in place (the
 * kv_cache pass gave it the optional input "<past>.onnxc_cache"), else 0
 * with why saying why not (the session's options, or what in the graph
 * did not match). */
int ox_gen_kv_check(struct onnxc_session *s, const char *const *past, size_t n_cache, char *why,
                    size_t why_size);
/* Whether generator g keeps its cache in place (1) or copies it each step
 * (0), and why not (onnxc_generate_cache_path's reason); for tests. */
int ox_gen_cache_in_place(const struct onnxc_generator *g, const char **why);
/* The buffer of cache input k (2 * layer + 0 key, 1 value) the next step
 * reads its past from. */
const void *ox_gen_cache_buffer(const struct onnxc_generator *g, size_t k);

#endif
