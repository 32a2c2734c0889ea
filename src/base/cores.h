/* cores.h - the cores this process may run on, read once: the CPUs of its
 * affinity mask, grouped into physical cores (SMT siblings share one), and
 * the CPU quota of its cgroup. The thread pool sizes itself from it
 * (`--threads 0`: one thread per physical core, not per hardware thread:
 * two threads on one core share its FMA units, so GEMM-bound work gains
 * nothing and every parallel loop waits for the slower sibling) and pins
 * workers with it when asked. */
#ifndef OX_BASE_CORES_H
#define OX_BASE_CORES_H

typedef struct ox_cores {
  int n_logical;  /* CPUs in the affinity mask (at least 1) */
  int n_physical; /* distinct physical cores among them (at least 1) */
  int quota;      /* whole CPUs the cgroup allows (cpu.max), 0 when unlimited */
  /* the CPU numbers to pin to, one per physical core first (the lowest
   * sibling), then the remaining siblings: n_logical entries */
  const int *order;
} ox_cores;

/* Read on the first call (thread-safe); never NULL. */
const ox_cores *ox_cores_get(void);

/* The thread count for "as many as make sense": physical cores, capped by
 * the cgroup quota, at least 1, at most 256. */
int ox_cores_default_threads(void);

#endif
