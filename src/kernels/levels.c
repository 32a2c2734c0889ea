/* levels.c - levels.h's pick: the level in use, and the tests' watcher. */
#include "levels.h"

#include <stdatomic.h>
#include <stddef.h>

static _Atomic(ox_level_watch_fn) g_watch;

void ox_level_watch(ox_level_watch_fn fn) { atomic_store(&g_watch, fn); }

/* called once per run, task or table fill, so the watcher's load is free */
ox_isa ox_level_pick(const char *name) {
  ox_isa lv = ox_cpu_get()->isa;
  ox_level_watch_fn w = atomic_load_explicit(&g_watch, memory_order_relaxed);
  if (w) w(name, lv);
  return lv;
}
