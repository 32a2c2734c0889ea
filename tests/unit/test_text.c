/* test_text.c - the textual syntax: seed examples, constructs, errors. */
#include <stdio.h>
#include <string.h>

#include "text/text.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

int main(void) {
  printf("%d failures\n", fails);
  return fails != 0;
}
