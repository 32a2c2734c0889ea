/* cores.c - the process's cores from the affinity mask, sysfs topology and
 * the cgroup CPU quota (cores.h). Every source is optional: without sysfs
 * each CPU counts as its own core, without a mask the online CPUs count. */
#define _GNU_SOURCE
#include "cores.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

enum { MAX_CPUS = 1024 };

static ox_cores g_cores;
static int g_order[MAX_CPUS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* One integer from a small sysfs file, or -1. */
static long long read_ll(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long long v = -1;
  if (fscanf(f, "%lld", &v) != 1) v = -1;
  fclose(f);
  return v;
}

/* Whole CPUs allowed by the cgroup (v2 cpu.max, else v1 cfs quota), 0 when
 * unlimited or unknown. A fractional quota rounds up: 1.5 CPUs still runs
 * two threads at a time, part of the time. */
static int cgroup_quota(void) {
  long long q = -1, period = -1;
  FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
  if (f) {
    char qs[32] = "";
    if (fscanf(f, "%31s %lld", qs, &period) == 2 && qs[0] != 'm') q = atoll(qs);
    fclose(f);
  } else {
    q = read_ll("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
    period = read_ll("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  }
  if (q <= 0 || period <= 0) return 0;
  long long n = (q + period - 1) / period;
  return n > MAX_CPUS ? MAX_CPUS : (int)n;
}

static void read_cores(void) {
  int cpus[MAX_CPUS], n = 0;
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE && c < MAX_CPUS; c++)
      if (CPU_ISSET(c, &set)) cpus[n++] = c;
#endif
  if (n == 0) {
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    n = nc > 0 ? (int)(nc < MAX_CPUS ? nc : MAX_CPUS) : 1;
    for (int c = 0; c < n; c++) cpus[c] = c;
  }
  /* a core is (package, core id); a CPU whose topology cannot be read is a
   * core of its own */
  long long key[MAX_CPUS];
  int first = 0, rest = n;
  int sib[MAX_CPUS];
  for (int i = 0; i < n; i++) {
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpus[i]);
    long long core = read_ll(path);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id",
             cpus[i]);
    long long pkg = read_ll(path);
    key[i] = core < 0 ? -1 - (long long)cpus[i] : (pkg < 0 ? 0 : pkg) * 1000003LL + core;
    int dup = 0;
    for (int j = 0; j < i && !dup; j++) dup = key[j] == key[i];
    if (dup)
      sib[--rest] = cpus[i];
    else
      g_order[first++] = cpus[i];
  }
  /* the siblings after the cores, in increasing CPU number */
  for (int i = n - 1; i >= rest; i--) g_order[first + (n - 1 - i)] = sib[i];
  g_cores.n_logical = n;
  g_cores.n_physical = first > 0 ? first : 1;
  g_cores.quota = cgroup_quota();
  g_cores.order = g_order;
}

const ox_cores *ox_cores_get(void) {
  pthread_once(&g_once, read_cores);
  return &g_cores;
}

int ox_cores_default_threads(void) {
  const ox_cores *c = ox_cores_get();
  int n = c->n_physical;
  if (c->quota > 0 && c->quota < n) n = c->quota;
  if (n > 256) n = 256;
  return n < 1 ? 1 : n;
}
