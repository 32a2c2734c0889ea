/* test_split_plan.c - kernels/split.h's plans for many threads, judged
 * against the work itself (no 16-core machine needed): for product-like
 * blocks of the sizes real CNN and transformer layers have, at 4 to 64
 * threads, every plan respects its bounds (parts cover the units, a task
 * within the buffer bound, no more A parts than allowed), and where the
 * block holds enough work the busiest thread's estimate is within 35% of
 * an even share (total work / threads) plus one task's overhead. (The
 * two-thread rules, used at every count before, cut ResNet-18's 14 x 14
 * stride-2 layer into 2 tasks at 16 threads: half the work on one.) */
#include <stdio.h>

#include "kernels/split.h"

static int failures;
#define CHECK(c, ...)                  \
  do {                                 \
    if (!(c)) {                        \
      printf("FAIL line %d: ", __LINE__); \
      printf(__VA_ARGS__);             \
      printf("\n");                    \
      failures++;                      \
    }                                  \
  } while (0)

typedef struct blk {
  const char *name;
  int64_t outer, M, K, rows, cols_per_row, max_rows;
} blk;

enum { OVERHEAD = 50000 };

/* multiply-adds of a task of `panels` 12-row panels by `rows` rows, plus a hand-off */
static double cost(const void *ctx, int64_t panels, int64_t rows) {
  const blk *b = ctx;
  int64_t m = panels * 12 < b->M ? panels * 12 : b->M;
  return (double)m * (double)b->K * (double)(rows * b->cols_per_row) + OVERHEAD;
}

int main(void) {
  const blk blocks[] = {
      {"resnet18 layer3.0 conv1 3x3 s2", 1, 256, 1152, 14, 14, 14},
      {"resnet18 layer1 conv 56x56", 1, 64, 576, 56, 56, 8},
      {"resnet50 layer4 1x1 7x7", 1, 2048, 512, 7, 7, 7},
      {"densenet 1x1 28x28", 1, 128, 480, 28, 28, 10},
      {"vit patchify 14x14", 1, 768, 768, 14, 14, 14},
      {"batch 8 mobilenet 1x1 14x14", 8, 384, 64, 14, 14, 14},
      {"bert 128 tokens as rows", 1, 768, 768, 128, 1, 128},
  };
  const int threads[] = {1, 2, 4, 16, 32, 64};
  for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; bi++) {
    const blk *b = &blocks[bi];
    int64_t panels = (b->M + 11) / 12;
    double total = (double)b->outer * (double)b->M * (double)b->K * (double)(b->rows * b->cols_per_row);
    for (size_t ti = 0; ti < sizeof threads / sizeof *threads; ti++) {
      int nt = threads[ti];
      for (int msplit = 0; msplit <= 1; msplit++) {
        ox_split s = ox_split_plan(nt, b->outer, panels, msplit ? panels : 1, b->rows, b->max_rows,
                                   cost, b);
        CHECK(s.a_parts >= 1 && s.a_per * s.a_parts >= panels && s.a_per * (s.a_parts - 1) < panels,
              "%s nt %d: A parts %lld x %lld do not cover %lld panels", b->name, nt,
              (long long)s.a_parts, (long long)s.a_per, (long long)panels);
        CHECK(s.b_per >= 1 && s.b_per <= b->max_rows && s.b_per * s.b_parts >= b->rows &&
                  s.b_per * (s.b_parts - 1) < b->rows,
              "%s nt %d: B parts %lld x %lld (bound %lld) do not cover %lld rows", b->name, nt,
              (long long)s.b_parts, (long long)s.b_per, (long long)b->max_rows,
              (long long)b->rows);
        CHECK(msplit || s.a_parts == 1, "%s nt %d: A split when not allowed", b->name, nt);
        /* the estimate is the busiest thread's: never under an even share */
        CHECK(s.busiest >= total / nt, "%s nt %d: busiest %.0f under the share %.0f", b->name, nt,
              s.busiest, total / nt);
        if (msplit && nt > 1) {
          /* enough work for the threads (at least 8 panels by rows per thread) */
          double bound = 1.35 * total / nt + 2.0 * OVERHEAD;
          if (panels * b->rows * b->outer >= 8 * nt)
            CHECK(s.busiest <= bound,
                  "%s nt %d: busiest %.3g > %.3g (parts %lld x %lld, rows %lld x %lld)", b->name,
                  nt, s.busiest, bound, (long long)s.a_parts, (long long)s.a_per,
                  (long long)s.b_parts, (long long)s.b_per);
        }
      }
    }
  }
  /* one thread: one task per copy, as large as the bound allows */
  ox_split one = ox_split_plan(1, 1, 22, 22, 14, 14, cost, &blocks[0]);
  CHECK(one.a_parts == 1 && one.b_parts == 1, "one thread: %lld x %lld tasks",
        (long long)one.a_parts, (long long)one.b_parts);
  printf("split_plan: %d failures\n", failures);
  return failures ? 1 : 0;
}
