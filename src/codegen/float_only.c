/* float_only.c - the check behind `onnxc compile --float-only`: generated C
 * text is scanned for anything that makes a compiler do double-precision
 * arithmetic, so that a target whose FPU is single-precision only (a
 * Cortex-M4F, M33, M7 in SP configuration) gets no soft-float double code:
 * the type `double`, a floating literal without the `f` suffix (`0.5`,
 * `0x1p-3`: double constants that promote the expression they are in),
 * HUGE_VAL, and the double functions of <math.h> (`exp`, `sqrtf` is fine).
 *
 * The scan works on tokens: comments, string and character literals are
 * skipped, so a comment that says "double" is not a finding. It is a check
 * on what the generators wrote, not a promise made by each of them, so a
 * generator that someday writes a double expression is caught by name. */
#include <stdio.h>
#include <string.h>

#include "cg_impl.h"

/* The <math.h> functions of C99 that compute in double (their float forms
 * end in f and are allowed). */
static const char *const double_fns[] = {
    "acos",   "asin",     "atan",   "atan2",     "cos",        "sin",   "tan",       "acosh",
    "asinh",  "atanh",    "cosh",   "sinh",      "tanh",       "exp",   "exp2",      "expm1",
    "frexp",  "ldexp",    "log",    "log10",     "log1p",      "log2",  "logb",      "modf",
    "scalbn", "scalbln",  "ilogb",  "cbrt",      "fabs",       "hypot", "pow",       "sqrt",
    "erf",    "erfc",     "lgamma", "tgamma",    "ceil",       "floor", "nearbyint", "rint",
    "lrint",  "llrint",   "round",  "lround",    "llround",    "trunc", "fmod",      "remainder",
    "remquo", "copysign", "nan",    "nextafter", "nexttoward", "fdim",  "fmax",      "fmin",
    "fma",    NULL};

static bool is_ident(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_';
}

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

bool ox_cg_find_double(const char *s, size_t n, char *what, size_t what_size) {
  size_t i = 0;
  while (i < n) {
    char ch = s[i];
    if (ch == '/' && i + 1 < n && s[i + 1] == '*') { /* block comment */
      i += 2;
      while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) i++;
      i += 2;
    } else if (ch == '/' && i + 1 < n && s[i + 1] == '/') { /* line comment */
      while (i < n && s[i] != '\n') i++;
    } else if (ch == '"' || ch == '\'') { /* string or character literal */
      for (i++; i < n && s[i] != ch; i++)
        if (s[i] == '\\') i++;
      i++;
    } else if (is_digit(ch) || (ch == '.' && i + 1 < n && is_digit(s[i + 1]))) {
      /* a preprocessing number: digits, letters, '.', and a sign after an
       * exponent letter (e/E for decimal, p/P for hexadecimal) */
      size_t b = i;
      bool hex = ch == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X');
      bool flt = false;
      for (; i < n; i++) {
        char d = s[i];
        if ((d == '+' || d == '-') && i > b) {
          char e = s[i - 1];
          if (hex ? (e == 'p' || e == 'P') : (e == 'e' || e == 'E')) continue;
          break;
        }
        if (!is_ident(d) && d != '.') break;
        if (d == '.' || (hex ? (d == 'p' || d == 'P') : (d == 'e' || d == 'E'))) flt = true;
      }
      char last = s[i - 1];
      if (flt && last != 'f' && last != 'F') {
        snprintf(what, what_size, "the double literal '%.*s'", (int)(i - b > 40 ? 40 : i - b),
                 s + b);
        return true;
      }
    } else if (is_ident(ch)) {
      size_t b = i;
      while (i < n && is_ident(s[i])) i++;
      size_t len = i - b;
      if ((len == 6 && memcmp(s + b, "double", 6) == 0) ||
          (len == 8 && memcmp(s + b, "HUGE_VAL", 8) == 0)) {
        snprintf(what, what_size, "the type or constant '%.*s'", (int)len, s + b);
        return true;
      }
      size_t j = i;
      while (j < n && (s[j] == ' ' || s[j] == '\t')) j++;
      if (j < n && s[j] == '(')
        for (const char *const *f = double_fns; *f; f++)
          if (strlen(*f) == len && memcmp(*f, s + b, len) == 0) {
            snprintf(what, what_size, "the double-precision function '%s'", *f);
            return true;
          }
    } else {
      i++;
    }
  }
  return false;
}
