/* text.c - a growable text buffer for subcommands that build their output
 * before writing it (info, dot): the library's buffers are internal, and a
 * failed allocation only marks the buffer, so that callers check once. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static bool reserve(ox_cli_text *t, size_t more) {
  if (t->failed) return false;
  if (t->size + more + 1 <= t->cap) return true;
  size_t cap = t->cap ? t->cap : 256;
  while (cap < t->size + more + 1) {
    if (cap > SIZE_MAX / 2) {
      t->failed = true;
      return false;
    }
    cap *= 2;
  }
  char *p = realloc(t->data, cap);
  if (!p) {
    t->failed = true;
    return false;
  }
  t->data = p;
  t->cap = cap;
  return true;
}

void ox_cli_text_put(ox_cli_text *t, const char *s, size_t n) {
  if (!n || !reserve(t, n)) return;
  memcpy(t->data + t->size, s, n);
  t->size += n;
  t->data[t->size] = 0;
}

void ox_cli_text_puts(ox_cli_text *t, const char *s) { ox_cli_text_put(t, s, strlen(s)); }

void ox_cli_text_putc(ox_cli_text *t, char c) { ox_cli_text_put(t, &c, 1); }

void ox_cli_text_printf(ox_cli_text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    t->failed = true;
    return;
  }
  if ((size_t)n < sizeof small) {
    ox_cli_text_put(t, small, (size_t)n);
    return;
  }
  if (!reserve(t, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(t->data + t->size, (size_t)n + 1, fmt, ap);
  va_end(ap);
  t->size += (size_t)n;
}

void ox_cli_text_free(ox_cli_text *t) {
  free(t->data);
  *t = (ox_cli_text){0};
}
