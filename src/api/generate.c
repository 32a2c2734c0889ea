/* generate.c - the generation loop of include/onnxc.h (onnxc_generate*):
 * the decoder's layout read from a session's inputs and outputs (and
 * genai_config.json), the KV cache carried from step to step, and one token
 * picked per step (generate_sample.c). Built on the public session API: the
 * loop is a client of the runtime like any caller. Optimum's layout
 * appends to the cache in place where the session's graph allows (its
 * kv_cache pass gave each past an optional buffer input; generate_kv.c);
 * ONNXC_GENERATE_KV=copy in the environment keeps the copying path (for
 * comparisons). */
#include <onnxc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/floatconv.h"
#include "generate_impl.h"

enum { LAYOUT_NOCACHE, LAYOUT_WITH_PAST, LAYOUT_SHARED };

/* one decoder input or output the loop feeds or reads: its name (owned)
 * and, for inputs, its element type */
typedef struct io {
  char *name;
  int32_t dtype;
  int present; /* the model has it */
} io;

struct onnxc_generator {
  onnxc_session *s;
  int layout;
  io ids, mask, pos, logits;
  io use_cache; /* Optimum's merged decoder: bool [1], true once the cache holds tokens */
  size_t layers;
  io *past;     /* 2 * layers: key, value of layer 0, then layer 1, ... */
  io *presents; /* the outputs matching past */
  /* Optimum's layout in place (generate_kv.c): the buffers' input names
     (the session's optional "<past>.onnxc_cache"), and why not when it is
     not */
  char **cache_in;
  int in_place;
  char why[256];
  char path[300]; /* "copied each step (why)" */
  int32_t kv_dtype;
  int64_t kv_heads, head_size, buffer_len; /* buffer_len: the shared layout's */
  /* The cache's memory, allocated once: with past, two buffers per input of
     n_prompt + max_new positions (the step's past is read from one and its
     present made in the other, then they swap), or one when in place;
     shared, one per input of buffer_len positions, zeroed, past and present
     alike. */
  void **bufs;
  void **raw; /* what to free for each of bufs (zeroed ones are aligned inside) */
  size_t n_bufs, buf_bytes;
  int flip;        /* with past: past k is bufs[2k + flip] */
  uint64_t copied; /* cache bytes the loop copied (a present made elsewhere) */
  int64_t *seq;    /* prompt + new tokens */
  size_t n_seq, cap_seq, n_prompt, in_cache; /* in_cache: tokens the cache holds */
  int64_t vocab;                             /* -1 until known */
  int64_t context;                           /* 0: unknown */
  int64_t max_new;
  int64_t *eos;
  size_t n_eos;
  ox_gen_sampling sampling;
  uint64_t rng;
  int threads;
  ox_gen_cand *cand;
  float *row;
  int done;
  double t0, t_first, t_last;
};

static ox_err *E(onnxc_error *err) { return (ox_err *)err; }

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ layout */

static long find_input(onnxc_session *s, const char *name) {
  for (size_t i = 0; i < onnxc_session_input_count(s); i++)
    if (strcmp(onnxc_session_input_name(s, i), name) == 0) return (long)i;
  return -1;
}

static long find_output(onnxc_session *s, const char *name) {
  for (size_t i = 0; i < onnxc_session_output_count(s); i++)
    if (strcmp(onnxc_session_output_name(s, i), name) == 0) return (long)i;
  return -1;
}

/* Binds io to the input (or output) called name; required ones that are
 * missing fail with a message naming them. */
static int bind(onnxc_session *s, io *x, const char *name, int output, int required, ox_err *e) {
  x->name = strdup(name);
  if (!x->name) return ox_err_set(e, OX_ENOMEM, "out of memory");
  long i = output ? find_output(s, name) : find_input(s, name);
  x->present = i >= 0;
  if (i >= 0) {
    const onnxc_type *t =
        output ? onnxc_session_output_type(s, (size_t)i) : onnxc_session_input_type(s, (size_t)i);
    x->dtype = onnxc_type_elem_type(t);
  } else if (required) {
    return ox_err_set(e, OX_EINVAL, "%s '%s' not found%s", output ? "output" : "input", name,
                      output ? "" : " (is the model a decoder?)");
  }
  return OX_OK;
}

static const onnxc_type *input_type(onnxc_session *s, const char *name) {
  long i = find_input(s, name);
  return i < 0 ? NULL : onnxc_session_input_type(s, (size_t)i);
}

/* A "%d" pattern of the config with the layer number put in. */
static void layer_name(char *buf, size_t size, const char *pattern, size_t layer) {
  const char *d = strstr(pattern, "%d");
  if (!d) {
    snprintf(buf, size, "%s", pattern);
    return;
  }
  snprintf(buf, size, "%.*s%zu%s", (int)(d - pattern), pattern, layer, d + 2);
}

static int has_gqa(onnxc_session *s) {
  const onnxc_graph *g = onnxc_model_graph(onnxc_session_model(s));
  for (size_t i = 0; g && i < onnxc_graph_node_count(g); i++)
    if (strcmp(onnxc_node_op_type(onnxc_graph_node(g, i)), "GroupQueryAttention") == 0) return 1;
  return 0;
}

/* The key/value cache's inputs and outputs, layer by layer, while the
 * pattern names an input. */
static int bind_cache(onnxc_generator *g, const ox_gen_config *c, ox_err *e) {
  const char *pk =
      ox_gen_config_str(c, "model.decoder.inputs.past_key_names", "past_key_values.%d.key");
  const char *pv =
      ox_gen_config_str(c, "model.decoder.inputs.past_value_names", "past_key_values.%d.value");
  const char *ok =
      ox_gen_config_str(c, "model.decoder.outputs.present_key_names", "present.%d.key");
  const char *ov =
      ox_gen_config_str(c, "model.decoder.outputs.present_value_names", "present.%d.value");
  char name[512];
  for (;; g->layers++) {
    layer_name(name, sizeof name, pk, g->layers);
    if (find_input(g->s, name) < 0) break;
  }
  if (!g->layers) return OX_OK;
  g->past = calloc(2 * g->layers, sizeof *g->past);
  g->presents = calloc(2 * g->layers, sizeof *g->presents);
  if (!g->past || !g->presents) return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t l = 0; l < g->layers; l++)
    for (int kv = 0; kv < 2; kv++) {
      size_t k = 2 * l + (size_t)kv;
      layer_name(name, sizeof name, kv ? pv : pk, l);
      int rc = bind(g->s, &g->past[k], name, 0, 1, e);
      if (!rc) {
        layer_name(name, sizeof name, kv ? ov : ok, l);
        rc = bind(g->s, &g->presents[k], name, 1, 1, e);
      }
      if (rc) return rc;
      if (g->past[k].dtype != g->past[0].dtype)
        return ox_err_set(e, OX_EINVAL, "input '%s' is %s, '%s' is %s: one cache type expected",
                          g->past[k].name, onnxc_dtype_name(g->past[k].dtype), g->past[0].name,
                          onnxc_dtype_name(g->past[0].dtype));
    }
  g->kv_dtype = g->past[0].dtype;
  if (g->kv_dtype != 1 && g->kv_dtype != 10 && g->kv_dtype != 16)
    return ox_err_set(e, OX_EINVAL,
                      "input '%s' is %s: a cache of float, float16 or bfloat16 "
                      "expected",
                      g->past[0].name, onnxc_dtype_name(g->kv_dtype));
  /* heads and head size: the model's fixed dims, else the config's */
  const onnxc_type *t = input_type(g->s, g->past[0].name);
  if (onnxc_type_rank(t) != 4)
    return ox_err_set(e, OX_EINVAL,
                      "input '%s' has rank %lld: [batch, heads, sequence, "
                      "head_size] expected",
                      g->past[0].name, (long long)onnxc_type_rank(t));
  g->kv_heads = onnxc_type_dim(t, 1);
  g->head_size = onnxc_type_dim(t, 3);
  if (g->kv_heads < 0) g->kv_heads = ox_gen_config_int(c, "model.decoder.num_key_value_heads", -1);
  if (g->head_size < 0) g->head_size = ox_gen_config_int(c, "model.decoder.head_size", -1);
  if (g->kv_heads <= 0 || g->head_size <= 0)
    return ox_err_set(e, OX_EINVAL,
                      "input '%s': the number of heads or the head size is "
                      "symbolic and no genai_config.json gives it",
                      g->past[0].name);
  return OX_OK;
}

static int detect(onnxc_generator *g, const ox_gen_config *c, ox_err *e) {
  onnxc_session *s = g->s;
  int rc = bind(s, &g->ids, ox_gen_config_str(c, "model.decoder.inputs.input_ids", "input_ids"), 0,
                1, e);
  if (!rc)
    rc = bind(s, &g->logits, ox_gen_config_str(c, "model.decoder.outputs.logits", "logits"), 1, 1,
              e);
  if (!rc)
    rc = bind(s, &g->mask,
              ox_gen_config_str(c, "model.decoder.inputs.attention_mask", "attention_mask"), 0, 0,
              e);
  if (!rc)
    rc = bind(s, &g->pos, ox_gen_config_str(c, "model.decoder.inputs.position_ids", "position_ids"),
              0, 0, e);
  if (!rc) rc = bind(s, &g->use_cache, "use_cache_branch", 0, 0, e);
  if (!rc) rc = bind_cache(g, c, e);
  if (rc) return rc;
  if (g->use_cache.present && g->use_cache.dtype != 9)
    return ox_err_set(e, OX_EINVAL, "input '%s' is %s: bool expected", g->use_cache.name,
                      onnxc_dtype_name(g->use_cache.dtype));
  const io *ints[] = {&g->ids, &g->mask, &g->pos};
  for (size_t i = 0; i < 3; i++)
    if (ints[i]->present && ints[i]->dtype != 7 && ints[i]->dtype != 6)
      return ox_err_set(e, OX_EINVAL, "input '%s' is %s: int64 or int32 expected", ints[i]->name,
                        onnxc_dtype_name(ints[i]->dtype));
  if (g->logits.dtype != 1 && g->logits.dtype != 10 && g->logits.dtype != 16 &&
      g->logits.dtype != 11)
    return ox_err_set(e, OX_EINVAL, "output '%s' is %s: float logits expected", g->logits.name,
                      onnxc_dtype_name(g->logits.dtype));
  if (!g->layers) {
    g->layout = LAYOUT_NOCACHE;
    return OX_OK;
  }
  const ox_gen_leaf *share = ox_gen_config_get(c, "search.past_present_share_buffer");
  g->layout = (share ? share->num != 0 : has_gqa(s)) ? LAYOUT_SHARED : LAYOUT_WITH_PAST;
  if (g->layout == LAYOUT_SHARED && !g->mask.present)
    return ox_err_set(e, OX_EINVAL,
                      "input '%s' not found: a shared past/present buffer needs "
                      "it to tell the model how many positions are valid",
                      g->mask.name);
  return OX_OK;
}

/* ------------------------------------------------------------ options */

static int read_options(onnxc_generator *g, const onnxc_generate_options *o, const ox_gen_config *c,
                        ox_err *e) {
  onnxc_generate_options none = {0};
  if (!o) o = &none;
  if (o->max_new_tokens < 0)
    return ox_err_set(e, OX_EINVAL, "max_new_tokens is %lld", (long long)o->max_new_tokens);
  if (o->top_k < 0) return ox_err_set(e, OX_EINVAL, "top_k is %d", o->top_k);
  if (!(o->top_p >= 0 && o->top_p <= 1))
    return ox_err_set(e, OX_EINVAL, "top_p is %g: 0 to 1 expected", (double)o->top_p);
  if (!(o->temperature >= 0))
    return ox_err_set(e, OX_EINVAL, "temperature is %g", (double)o->temperature);
  g->sampling = (ox_gen_sampling){o->do_sample, o->top_k, o->top_p, o->temperature};
  g->rng = o->seed;
  g->threads = o->threads;
  g->max_new = o->max_new_tokens;
  /* EOS: the caller's, else the config's (one id or a list) */
  size_t n = o->eos_ids ? o->n_eos : 0;
  char path[64];
  const ox_gen_leaf *one = ox_gen_config_get(c, "model.eos_token_id");
  if (!o->eos_ids && one) n = 1;
  for (; !o->eos_ids && !one; n++) {
    snprintf(path, sizeof path, "model.eos_token_id.%zu", n);
    if (!ox_gen_config_get(c, path)) break;
  }
  g->eos = calloc(n + 1, sizeof *g->eos);
  if (!g->eos) return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    snprintf(path, sizeof path, "model.eos_token_id.%zu", i);
    g->eos[i] = o->eos_ids ? o->eos_ids[i]
                : one      ? (int64_t)one->num
                           : ox_gen_config_int(c, path, -1);
  }
  g->n_eos = n;
  /* the context: the caller's, else the smaller of the config's lengths */
  int64_t ctx = ox_gen_config_int(c, "model.context_length", 0);
  int64_t max_len = ox_gen_config_int(c, "search.max_length", 0);
  if (max_len > 0 && (ctx <= 0 || max_len < ctx)) ctx = max_len;
  g->context = o->context_length > 0 ? o->context_length : ctx;
  return OX_OK;
}

/* The context, the buffer of the shared layout and max_new_tokens, once
 * the prompt's length is known. */
static int plan_lengths(onnxc_generator *g, ox_err *e) {
  if (g->layout == LAYOUT_SHARED) {
    int64_t dim = onnxc_type_dim(input_type(g->s, g->past[0].name), 2);
    if (g->context <= 0 && dim > 0) g->context = dim;
    if (dim > 0 && g->context > dim)
      return ox_err_set(e, OX_EINVAL,
                        "input '%s' holds %lld positions, less than the context "
                        "length %lld",
                        g->past[0].name, (long long)dim, (long long)g->context);
  }
  int64_t prompt = (int64_t)g->n_prompt;
  if (g->context > 0 && prompt >= g->context)
    return ox_err_set(e, OX_EINVAL, "the prompt's %lld tokens fill the context length %lld",
                      (long long)prompt, (long long)g->context);
  if (g->max_new == 0) {
    if (g->context <= 0)
      return ox_err_set(e, OX_EINVAL,
                        "max_new_tokens is 0 and the context length is unknown: "
                        "give one of them");
    g->max_new = g->context - prompt;
  }
  if (g->max_new > ((int64_t)1 << 40))
    return ox_err_set(e, OX_EINVAL, "max_new_tokens %lld is too large", (long long)g->max_new);
  if (g->context > 0 && g->max_new > g->context - prompt)
    return ox_err_set(e, OX_EINVAL,
                      "the prompt's %lld tokens and max_new_tokens %lld exceed "
                      "the context length %lld",
                      (long long)prompt, (long long)g->max_new, (long long)g->context);
  if (g->layout == LAYOUT_SHARED) {
    /* the model's fixed length, else the context, else what this call needs */
    int64_t dim = onnxc_type_dim(input_type(g->s, g->past[0].name), 2);
    g->buffer_len = dim > 0 ? dim : g->context > 0 ? g->context : prompt + g->max_new;
  }
  return OX_OK;
}

/* ------------------------------------------------------------ steps */

static onnxc_value *int_tensor(int32_t dtype, size_t n, int64_t first, int64_t step,
                               const int64_t *from, ox_err *e) {
  int64_t dims[2] = {1, (int64_t)n};
  onnxc_value *v = onnxc_tensor_create(dtype, dims, 2, (onnxc_error *)e);
  if (!v) return NULL;
  void *d = onnxc_tensor_data(v);
  for (size_t i = 0; i < n; i++) {
    int64_t x = from ? from[i] : first + step * (int64_t)i;
    if (dtype == 7)
      ((int64_t *)d)[i] = x;
    else
      ((int32_t *)d)[i] = (int32_t)x;
  }
  return v;
}

static size_t kv_elem_size(int32_t dtype) { return dtype == 1 ? 4 : 2; }

/* The cache's buffers (see the struct), 64-byte aligned as the runtime's. */
static int alloc_cache(onnxc_generator *g, ox_err *e) {
  int shared = g->layout == LAYOUT_SHARED;
  int64_t len = shared ? g->buffer_len : (int64_t)g->n_prompt + g->max_new;
  if (g->in_place) g->buffer_len = len;
  size_t bytes = kv_elem_size(g->kv_dtype);
  const int64_t f[3] = {g->kv_heads, len, g->head_size};
  for (size_t i = 0; i < 3; i++) {
    if ((uint64_t)f[i] > SIZE_MAX / bytes)
      return ox_err_set(e, OX_ENOMEM, "a KV cache of %lld x %lld x %lld is too large",
                        (long long)f[0], (long long)f[1], (long long)f[2]);
    bytes *= (size_t)f[i];
  }
  g->buf_bytes = (bytes + 63) & ~(size_t)63;
  g->n_bufs = (shared || g->in_place ? 1 : 2) * 2 * g->layers;
  g->bufs = calloc(g->n_bufs, sizeof *g->bufs);
  g->raw = calloc(g->n_bufs, sizeof *g->raw);
  if (!g->bufs || !g->raw) return ox_err_set(e, OX_ENOMEM, "out of memory");
  for (size_t k = 0; k < g->n_bufs; k++) {
    /* the buffers that start zeroed (whole context length) come from
     * calloc, whose large blocks are fresh pages the system gives zeroed:
     * touched as the cache grows, not all of them before the first token
     * (a memset of the full length cost tens of ms on a 1k context) */
    if (shared || g->in_place) {
      g->raw[k] = calloc(1, g->buf_bytes + 64);
      g->bufs[k] = g->raw[k] ? (void *)(((uintptr_t)g->raw[k] + 63) & ~(uintptr_t)63) : NULL;
    } else {
      g->bufs[k] = g->raw[k] = aligned_alloc(64, g->buf_bytes ? g->buf_bytes : 64);
    }
    if (!g->bufs[k])
      return ox_err_set(e, OX_ENOMEM, "out of memory for a KV cache of %zu bytes", g->buf_bytes);
  }
  return OX_OK;
}

/* The past fed for cache input k and the buffer its present goes in. */
static void cache_views(const onnxc_generator *g, size_t k, void **past, void **present) {
  if (g->layout == LAYOUT_SHARED || g->in_place) {
    *past = *present = g->bufs[k];
  } else {
    *past = g->bufs[2 * k + (size_t)g->flip];
    *present = g->bufs[2 * k + (size_t)!g->flip];
  }
}

static int check_ids(const onnxc_generator *g, ox_err *e) {
  for (size_t i = 0; i < g->n_prompt; i++)
    if (g->seq[i] < 0 || (g->vocab > 0 && g->seq[i] >= g->vocab))
      return ox_err_set(e, OX_EINVAL,
                        "token id %lld at position %zu is outside the vocabulary "
                        "of %lld",
                        (long long)g->seq[i], i, (long long)g->vocab);
  return OX_OK;
}

/* The last position's logits as float into g->row. */
static int read_logits(onnxc_generator *g, const onnxc_value *v, ox_err *e) {
  size_t rank = onnxc_tensor_rank(v);
  const int64_t *d = onnxc_tensor_dims(v);
  if ((rank != 3 && rank != 2) || d[0] != 1 || d[rank - 1] <= 0)
    return ox_err_set(e, OX_ERUNTIME, "output '%s' has rank %zu: [1, sequence, vocab] expected",
                      g->logits.name, rank);
  int64_t vocab = d[rank - 1];
  if (g->vocab < 0) {
    g->vocab = vocab;
    int rc = check_ids(g, e);
    if (rc) return rc;
  }
  if (vocab != g->vocab)
    return ox_err_set(e, OX_ERUNTIME, "output '%s': the vocabulary changed from %lld to %lld",
                      g->logits.name, (long long)g->vocab, (long long)vocab);
  if (!g->row) {
    g->row = malloc((size_t)vocab * sizeof *g->row);
    g->cand = malloc((size_t)vocab * sizeof *g->cand);
    if (!g->row || !g->cand) return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  size_t off = rank == 3 ? (size_t)(d[1] - 1) * (size_t)vocab : 0;
  const void *p = onnxc_tensor_data_const(v);
  int32_t t = onnxc_tensor_dtype(v);
  if (t == 1) memcpy(g->row, (const float *)p + off, (size_t)vocab * sizeof(float));
  if (t == 10) ox_f16_to_f32_n((const uint16_t *)p + off, g->row, (size_t)vocab);
  if (t == 16) ox_bf16_to_f32_n((const uint16_t *)p + off, g->row, (size_t)vocab);
  if (t == 11)
    for (size_t i = 0; i < (size_t)vocab; i++) g->row[i] = (float)((const double *)p)[off + i];
  return OX_OK;
}

/* Runs the model on the tokens the cache lacks (all of them without a
 * cache) and leaves the last position's logits in g->row. */
static int run_step(onnxc_generator *g, ox_err *e) {
  size_t n_in = 0, n_out = 1, nc = 2 * g->layers, n_own = 0;
  size_t from = g->layout == LAYOUT_NOCACHE ? 0 : g->in_cache, fresh = g->n_seq - from;
  const char **in_names = calloc(5 + 2 * nc, sizeof *in_names);
  const char **out_names = calloc(1 + nc, sizeof *out_names);
  onnxc_value **ins = calloc(5 + 2 * nc, sizeof *ins), **outs = calloc(1 + nc, sizeof *outs);
  onnxc_value **bufs = calloc(1 + nc, sizeof *bufs); /* [0]: the logits, made by the run */
  int rc = OX_OK;
  if (!in_names || !out_names || !ins || !outs || !bufs) {
    rc = ox_err_set(e, OX_ENOMEM, "out of memory");
    goto done;
  }
  in_names[n_in] = g->ids.name;
  ins[n_in++] = int_tensor(g->ids.dtype, fresh, 0, 0, g->seq + from, e);
  if (g->mask.present) {
    in_names[n_in] = g->mask.name;
    ins[n_in++] = int_tensor(g->mask.dtype, g->n_seq, 1, 0, NULL, e);
  }
  if (g->pos.present) {
    in_names[n_in] = g->pos.name;
    ins[n_in++] = int_tensor(g->pos.dtype, fresh, (int64_t)from, 1, NULL, e);
  }
  if (g->use_cache.present) {
    int64_t one = 1;
    in_names[n_in] = g->use_cache.name;
    onnxc_value *v = ins[n_in++] = onnxc_tensor_create(9, &one, 1, (onnxc_error *)e);
    if (v) *(uint8_t *)onnxc_tensor_data(v) = g->in_cache > 0;
  }
  /* the caches: views of the loop's buffers; each present is asked to be
     made in its buffer (output_buffers), which the kernel that makes it
     (the graph's Concat, GroupQueryAttention) then writes in place */
  int shared = g->layout == LAYOUT_SHARED, fixed = shared || g->in_place;
  int64_t past_len = shared ? g->buffer_len : (int64_t)g->in_cache;
  int64_t want = fixed ? g->buffer_len : (int64_t)g->n_seq;
  int64_t pd[4] = {1, g->kv_heads, past_len, g->head_size};
  int64_t od[4] = {1, g->kv_heads, want, g->head_size};
  out_names[0] = g->logits.name;
  for (size_t k = 0; k < nc; k++) {
    void *past, *present;
    cache_views(g, k, &past, &present);
    /* in place: the past input gives only its length (KVCacheAppend's
       rows to write at, Shape nodes) and the buffer is read as
       "<past>.onnxc_cache" */
    in_names[n_in] = g->past[k].name;
    ins[n_in++] = onnxc_tensor_wrap(g->kv_dtype, pd, 4, past, (onnxc_error *)e);
    if (g->in_place) {
      in_names[n_in] = g->cache_in[k];
      ins[n_in++] = onnxc_tensor_wrap(g->kv_dtype, od, 4, past, (onnxc_error *)e);
    }
    out_names[n_out] = g->presents[k].name;
    bufs[n_out++] = onnxc_tensor_wrap(g->kv_dtype, od, 4, present, (onnxc_error *)e);
  }
  n_own = n_in;
  for (size_t i = 0; i < n_in || i < n_out; i++)
    if ((i < n_in && !ins[i]) || (i > 0 && i < n_out && !bufs[i])) {
      rc = e->code ? e->code : OX_ENOMEM;
      goto done;
    }
  onnxc_run_options ro = {0};
  ro.threads = g->threads;
  ro.output_buffers = bufs;
  rc = (int)onnxc_session_run_with(g->s, &ro, in_names, ins, n_in, out_names, outs, n_out,
                                   (onnxc_error *)e);
  if (!rc) rc = read_logits(g, outs[0], e);
  for (size_t k = 0; !rc && k < nc; k++) {
    const onnxc_value *o = outs[1 + k];
    const int64_t *d = onnxc_tensor_dims(o);
    if (onnxc_tensor_dtype(o) != g->kv_dtype || onnxc_tensor_rank(o) != 4 || d[0] != 1 ||
        d[1] != g->kv_heads || d[2] != want || d[3] != g->head_size) {
      rc = ox_err_set(
          e, OX_ERUNTIME, "output '%s' is not [1, %lld, %lld, %lld] of the cache's type (%s)",
          g->presents[k].name, (long long)g->kv_heads, (long long)want, (long long)g->head_size,
          fixed ? "the cache buffer's length" : "the past and the new tokens");
    } else if (onnxc_tensor_data_const(o) != onnxc_tensor_data(bufs[1 + k])) {
      /* a kernel that made the present elsewhere: into the buffer */
      memcpy(onnxc_tensor_data(bufs[1 + k]), onnxc_tensor_data_const(o), onnxc_tensor_nbytes(o));
      g->copied += onnxc_tensor_nbytes(o);
    }
  }
  if (!rc) {
    g->flip ^= !fixed;
    g->in_cache = g->n_seq;
  }
done:
  if (ins)
    for (size_t i = 0; i < n_own; i++) onnxc_value_free(ins[i]);
  if (outs)
    for (size_t k = 0; k < n_out; k++) onnxc_value_free(outs[k]);
  if (bufs)
    for (size_t k = 0; k < n_out; k++) onnxc_value_free(bufs[k]);
  free(bufs);
  free(in_names);
  free(out_names);
  free(ins);
  free(outs);
  return rc;
}

/* Optimum's layout appended in place where the session's graph allows
 * (generate_kv.c); else g->why says why the copying path stays. */
static int try_in_place(onnxc_generator *g, ox_err *e) {
  if (g->layout != LAYOUT_WITH_PAST) return OX_OK;
  const char *env = getenv("ONNXC_GENERATE_KV");
  const char *no = env && strcmp(env, "copy") == 0 ? "ONNXC_GENERATE_KV=copy"
                   : g->use_cache.present          ? "a merged decoder (use_cache_branch)"
                   : g->kv_dtype != 1              ? "the cache is not float32"
                                                   : NULL;
  if (no) {
    snprintf(g->why, sizeof g->why, "%s", no);
    snprintf(g->path, sizeof g->path, "copied each step (%s)", no);
    return OX_OK;
  }
  size_t nc = 2 * g->layers;
  const char **past = calloc(nc, sizeof *past);
  g->cache_in = calloc(nc, sizeof *g->cache_in);
  int rc = past && g->cache_in ? OX_OK : OX_ENOMEM;
  for (size_t k = 0; !rc && k < nc; k++) {
    past[k] = g->past[k].name;
    size_t n = strlen(past[k]) + sizeof ".onnxc_cache";
    if (!(g->cache_in[k] = malloc(n))) rc = OX_ENOMEM;
    if (!rc) snprintf(g->cache_in[k], n, "%s.onnxc_cache", past[k]);
  }
  if (!rc) g->in_place = ox_gen_kv_check(g->s, past, nc, g->why, sizeof g->why);
  free(past);
  if (rc) return ox_err_set(e, OX_ENOMEM, "out of memory preparing the in-place KV cache");
  snprintf(g->path, sizeof g->path, "copied each step (%s)", g->why);
  return OX_OK;
}

int ox_gen_cache_in_place(const onnxc_generator *g, const char **why) {
  if (why) *why = g && !g->in_place ? g->why : "";
  return g ? g->in_place : 0;
}

const void *ox_gen_cache_buffer(const onnxc_generator *g, size_t k) {
  if (!g || k >= 2 * g->layers || !g->bufs) return NULL;
  void *past, *present;
  cache_views(g, k, &past, &present);
  return past;
}

/* ------------------------------------------------------------ public */

onnxc_status onnxc_generate_start(onnxc_session *s, const int64_t *ids, size_t n_ids,
                                  const onnxc_generate_options *opts, onnxc_generator **out,
                                  onnxc_error *err) {
  if (!out) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "out is NULL");
  *out = NULL;
  if (!s) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "NULL session");
  if (!n_ids || !ids) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "the prompt is empty");
  onnxc_generator *g = calloc(1, sizeof *g);
  if (!g) return (onnxc_status)ox_err_set(E(err), OX_ENOMEM, "out of memory");
  g->s = s;
  g->vocab = -1;
  g->t0 = now_ms();
  ox_gen_config c;
  int rc = ox_gen_config_read(&c, opts ? opts->config_dir : NULL, E(err));
  if (rc) {
    free(g);
    return (onnxc_status)rc;
  }
  rc = detect(g, &c, E(err));
  if (!rc) rc = read_options(g, opts, &c, E(err));
  ox_gen_config_free(&c);
  g->n_prompt = n_ids;
  if (!rc) rc = plan_lengths(g, E(err));
  if (!rc) {
    g->cap_seq = n_ids + (size_t)g->max_new;
    g->seq = malloc(g->cap_seq * sizeof *g->seq);
    if (!g->seq)
      rc = ox_err_set(E(err), OX_ENOMEM, "out of memory for %zu token ids (max_new_tokens %lld)",
                      g->cap_seq, (long long)g->max_new);
  }
  if (!rc) {
    memcpy(g->seq, ids, n_ids * sizeof *ids);
    g->n_seq = n_ids;
    const onnxc_type *lt = onnxc_session_output_type(s, (size_t)find_output(s, g->logits.name));
    int64_t r = onnxc_type_rank(lt);
    if (r >= 2 && onnxc_type_dim(lt, (size_t)r - 1) > 0)
      g->vocab = onnxc_type_dim(lt, (size_t)r - 1);
    rc = check_ids(g, E(err));
  }
  if (!rc && g->layers) rc = try_in_place(g, E(err));
  if (!rc && g->layers) rc = alloc_cache(g, E(err));
  if (rc) {
    onnxc_generate_free(g);
    return (onnxc_status)rc;
  }
  *out = g;
  return ONNXC_OK;
}

onnxc_status onnxc_generate_next(onnxc_generator *g, int64_t *token, int *done, onnxc_error *err) {
  if (!g || !token || !done)
    return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "NULL generator, token or done");
  *done = g->done;
  *token = -1;
  if (g->done) return ONNXC_OK;
  if ((int64_t)(g->n_seq - g->n_prompt) >= g->max_new ||
      (g->context > 0 && (int64_t)g->n_seq >= g->context)) {
    *done = g->done = 1;
    return ONNXC_OK;
  }
  int rc = run_step(g, E(err));
  if (rc) {
    *done = g->done = 1; /* the cache may be half-updated: no step after a failure */
    return (onnxc_status)rc;
  }
  int64_t t = ox_gen_pick(g->row, (size_t)g->vocab, &g->sampling, &g->rng, g->cand);
  g->seq[g->n_seq++] = t;
  g->t_last = now_ms();
  if (g->n_seq == g->n_prompt + 1) g->t_first = g->t_last;
  for (size_t i = 0; i < g->n_eos; i++)
    if (t == g->eos[i]) g->done = 1; /* this call still returns the EOS */
  *token = t;
  return ONNXC_OK;
}

const char *onnxc_generate_layout(const onnxc_generator *g) {
  static const char *const names[] = {"no-cache", "decoder-with-past", "genai-shared-buffer"};
  return g ? names[g->layout] : "";
}

const char *onnxc_generate_cache_path(const onnxc_generator *g) {
  if (!g) return "";
  if (!g->layers) return "none";
  if (g->layout == LAYOUT_SHARED || g->in_place) return "in place";
  return g->path;
}

void onnxc_generate_get_stats(const onnxc_generator *g, onnxc_generate_stats *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!g) return;
  out->prompt_tokens = g->n_prompt;
  out->new_tokens = g->n_seq - g->n_prompt;
  if (out->new_tokens) {
    out->first_token_ms = g->t_first - g->t0;
    out->decode_ms = g->t_last - g->t_first;
  }
  out->cache_copied_bytes = g->copied;
}

static void free_io(io *x) { free(x->name); }

void onnxc_generate_free(onnxc_generator *g) {
  if (!g) return;
  free_io(&g->ids);
  free_io(&g->mask);
  free_io(&g->pos);
  free_io(&g->use_cache);
  free_io(&g->logits);
  for (size_t k = 0; k < 2 * g->layers; k++) {
    if (g->past) free_io(&g->past[k]);
    if (g->presents) free_io(&g->presents[k]);
  }
  free(g->past);
  free(g->presents);
  for (size_t k = 0; g->cache_in && k < 2 * g->layers; k++) free(g->cache_in[k]);
  free(g->cache_in);
  for (size_t k = 0; g->raw && k < g->n_bufs; k++) free(g->raw[k]);
  free(g->raw);
  free(g->bufs);
  free(g->seq);
  free(g->eos);
  free(g->cand);
  free(g->row);
  free(g);
}

onnxc_status onnxc_generate(onnxc_session *s, const int64_t *ids, size_t n_ids,
                            const onnxc_generate_options *opts, int64_t **out, size_t *n_out,
                            onnxc_generate_stats *stats, onnxc_error *err) {
  if (!out || !n_out) return (onnxc_status)ox_err_set(E(err), OX_EINVAL, "out is NULL");
  *out = NULL;
  *n_out = 0;
  onnxc_generator *g;
  onnxc_status rc = onnxc_generate_start(s, ids, n_ids, opts, &g, err);
  if (rc) return rc;
  int64_t *toks = malloc(((size_t)g->max_new + 1) * sizeof *toks);
  size_t n = 0;
  if (!toks) rc = (onnxc_status)ox_err_set(E(err), OX_ENOMEM, "out of memory");
  for (int done = 0; !rc;) {
    int64_t t;
    rc = onnxc_generate_next(g, &t, &done, err);
    if (rc || done) {
      if (!rc && t >= 0) toks[n++] = t;
      break;
    }
    toks[n++] = t;
  }
  if (stats) onnxc_generate_get_stats(g, stats);
  onnxc_generate_free(g);
  if (rc) {
    free(toks);
    return rc;
  }
  *out = toks;
  *n_out = n;
  return ONNXC_OK;
}
