/* generate_kv.c - whether the generation loop can keep Optimum's
 * decoder-with-past cache in place on the caller's own session, and why
 * not.
 *
 * The session's graph passes do the work (src/opt/kv_cache.c): each
 * Concat(past, new, axis 2) that only fused attentions and Shape nodes read
 * becomes KVCacheAppend(past, new, cache?), with an optional graph input
 * "<past>.onnxc_cache" that the session does not list. A run that leaves it
 * out computes what the model says; the loop feeds a buffer of fixed length
 * there and as present's output buffer, and the kernel appends the new rows
 * in place (no copy of the cache per token, no second session, the weights
 * packed once). Here the loop only asks whether every cache input of the
 * layout got its buffer input; when one did not, the reason is the
 * session's options or what in the graph did not match. */
#include <onnxc.h>
#include <stdio.h>
#include <string.h>

#include "../opt/opt.h"
#include "api_impl.h"
#include "generate_impl.h"

int ox_gen_kv_check(onnxc_session *s, const char *const *past, size_t n_cache, char *why,
                    size_t why_size) {
  const ox_session *rs = ox_api_session(s);
  const ox_session_opts *so = ox_session_options(rs);
  if (so->optimization_level < 1) {
    snprintf(why, why_size, "the session's optimization_level is 0 (no fused attention)");
    return 0;
  }
  for (size_t i = 0; i < so->n_disabled_passes; i++) {
    const char *p = so->disabled_passes[i];
    if (p && (strcmp(p, "kv_cache") == 0 || strcmp(p, "attention_bhsd") == 0)) {
      snprintf(why, why_size, "the session's %s pass is disabled", p);
      return 0;
    }
  }
  const ox_graph *g = ox_session_graph(rs);
  for (size_t k = 0; k < n_cache; k++)
    if (!ox_opt_kv_cache_of(g, past[k], why, why_size)) return 0;
  why[0] = 0;
  return 1;
}
