/* env.c - an environment: one thread pool shared by the sessions created
 * with it (onnxc_env). */
#include <stdlib.h>

#include "../base/cores.h"
#include "session.h"


struct ox_env {
  ox_thread_pool *pool; /* NULL for one thread */
  int threads;
};

int ox_env_create(int threads, ox_env **out, ox_err *e) {
  *out = NULL;
  if (threads <= 0) threads = ox_cores_default_threads(); /* physical cores */
  ox_env *env = calloc(1, sizeof *env);
  if (!env) return ox_err_set(e, OX_ENOMEM, "out of memory (environment)");
  env->threads = threads;
  if (threads > 1 && !(env->pool = ox_thread_pool_new(threads, e))) {
    free(env);
    return e ? e->code : OX_ENOMEM;
  }
  *out = env;
  return OX_OK;
}

void ox_env_free(ox_env *env) {
  if (!env) return;
  ox_thread_pool_free(env->pool);
  free(env);
}

int ox_env_threads(const ox_env *env) { return env ? env->threads : 1; }
ox_thread_pool *ox_env_pool(const ox_env *env) { return env ? env->pool : NULL; }
