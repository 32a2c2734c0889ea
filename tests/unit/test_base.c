/* test_base.c - arena, arrays, map, buffers, checked arithmetic, dtypes. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

static int fails;
#define CHECK(c)                                                   \
  do {                                                             \
    if (!(c)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                     \
    }                                                              \
  } while (0)

int main(void) {
  ox_arena *a = ox_arena_new();
  int64_t *v = NULL;
  size_t n = 0;
  for (int64_t i = 0; i < 1000; i++) {
    int64_t *slot = OX_VEC_PUSH(a, v, n);
    CHECK(slot != NULL);
    *slot = i * 3;
  }
  CHECK(n == 1000);
  int64_t sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  CHECK(sum == 3 * 999 * 1000 / 2);
  char *big = ox_arena_alloc(a, 1 << 20);
  CHECK(big && big[12345] == 0);
  CHECK(strcmp(ox_arena_printf(a, "%s-%d", "x", 7), "x-7") == 0);

  ox_map m;
  ox_map_init(&m);
  char keys[500][16];
  for (int i = 0; i < 500; i++) {
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    CHECK(ox_map_put(&m, keys[i], (uintptr_t)i) == OX_OK);
  }
  uintptr_t got = 0;
  CHECK(ox_map_get(&m, "k321", &got) && got == 321);
  CHECK(!ox_map_get(&m, "k500", NULL));
  CHECK(m.count == 500);
  ox_map_free(&m);

  size_t r;
  CHECK(!ox_mul_size(SIZE_MAX / 2 + 1, 2, &r));
  int64_t d[3] = {2, 3, 4}, ne;
  CHECK(ox_numel(d, 3, &ne) && ne == 24);
  int64_t huge[2] = {INT64_MAX, 2};
  CHECK(!ox_numel(huge, 2, &ne));
  size_t nb;
  CHECK(ox_dtype_nbytes(OX_INT4, 3, &nb) && nb == 2);
  CHECK(ox_dtype_nbytes(OX_UINT2, 5, &nb) && nb == 2);
  CHECK(ox_dtype_nbytes(OX_COMPLEX128, 2, &nb) && nb == 32);
  CHECK(!ox_dtype_nbytes(OX_STRING, 2, &nb));
  CHECK(ox_dtype_from_name("float8e5m2fnuz") == OX_FLOAT8E5M2FNUZ);

  ox_buf b = {0};
  ox_buf_printf(&b, "%d-%s", 42, "z");
  CHECK(b.size == 4 && memcmp(b.data, "42-z", 4) == 0);
  ox_buf_free(&b);

  ox_err e;
  ox_err_set(&e, OX_EPARSE, "truncated varint at byte %d", 4711);
  ox_err_prefix(&e, "graph.node[%d]", 12);
  CHECK(strcmp(e.msg, "graph.node[12]: truncated varint at byte 4711") == 0);
  ox_arena_free(a);
  if (fails) return 1;
  printf("test_base: ok\n");
  return 0;
}
