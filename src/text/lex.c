/* lex.c - the lexical layer of the text parser: shared word tables, error
 * messages with line:col and a caret, whitespace and comments, identifiers,
 * quoted strings and number literals (parse_int.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_int.h"

#define MAX_DEPTH 200 /* nesting of types, graphs, lists */

/* ---- shared tables ---- */
const char *const ox_text_attr_type_names[15] = {
    NULL,         "float",   "int",     "string", "tensor",        "graph",          "floats",
    "ints",       "strings", "tensors", "graphs", "sparse_tensor", "sparse_tensors", "type_proto",
    "type_protos"};

bool ox_text_is_id(const char *s, size_t n) {
  if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
  return true;
}

bool tp_word_eq(const char *s, size_t n, const char *w) {
  return strlen(w) == n && memcmp(s, w, n) == 0;
}

bool tp_word_ieq(const char *s, size_t n, const char *w) {
  if (strlen(w) != n) return false;
  for (size_t i = 0; i < n; i++)
    if (tolower((unsigned char)s[i]) != w[i]) return false;
  return true;
}

int32_t tp_dtype_of(const char *s, size_t n) {
  char buf[32];
  if (n == 0 || n >= sizeof buf) return 0;
  memcpy(buf, s, n);
  buf[n] = 0;
  return (int32_t)ox_dtype_from_name(buf);
}

bool tp_is_type_keyword(const char *s, size_t n) {
  return tp_word_eq(s, n, "seq") || tp_word_eq(s, n, "map") || tp_word_eq(s, n, "optional") ||
         tp_word_eq(s, n, "sparse_tensor") || tp_word_eq(s, n, "opaque") ||
         tp_word_eq(s, n, "undefined") || tp_dtype_of(s, n) != 0;
}

bool tp_is_special_float(const char *s, size_t n) {
  return tp_word_ieq(s, n, "inf") || tp_word_ieq(s, n, "infinity") || tp_word_ieq(s, n, "nan");
}

bool ox_text_is_reserved(const char *s, size_t n) {
  return tp_is_type_keyword(s, n) || tp_is_special_float(s, n);
}

/* ---- errors ---- */
static void describe(const tp_parser *p, size_t at, char *buf, size_t cap) {
  if (at >= p->n) {
    snprintf(buf, cap, "end of input");
    return;
  }
  unsigned char c = (unsigned char)p->s[at];
  if (isalpha(c) || c == '_') {
    size_t e = at;
    while (e < p->n && e - at < 40 && (isalnum((unsigned char)p->s[e]) || p->s[e] == '_')) e++;
    snprintf(buf, cap, "'%.*s'", (int)(e - at), p->s + at);
  } else if (isdigit(c)) {
    size_t e = at;
    while (e < p->n && e - at < 40 && (isalnum((unsigned char)p->s[e]) || p->s[e] == '.')) e++;
    snprintf(buf, cap, "'%.*s'", (int)(e - at), p->s + at);
  } else if (c == '"') {
    snprintf(buf, cap, "a string");
  } else if (c >= 32 && c < 127) {
    snprintf(buf, cap, "'%c'", c);
  } else {
    snprintf(buf, cap, "byte 0x%02x", c);
  }
}

_Noreturn void tp_fail_at(tp_parser *p, size_t at, const char *fmt, ...) {
  if (at > p->n) at = p->n;
  size_t line = 1, ls = 0;
  for (size_t i = 0; i < at; i++)
    if (p->s[i] == '\n') line++, ls = i + 1;
  size_t le = at;
  while (le < p->n && p->s[le] != '\n' && p->s[le] != '\r') le++;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* a window of the line around the column, so that huge lines stay short */
  size_t ws = ls, we = le;
  if (at - ws > 60) ws = at - 60;
  if (we - at > 60) we = at + 60;
  char src[160], caret[160];
  size_t k = 0, c = 0;
  for (size_t i = ws; i < we && k < sizeof src - 1; i++) {
    unsigned char ch = (unsigned char)p->s[i];
    src[k++] = (char)(ch == '\t' || (ch >= 32 && ch != 127) ? ch : '?');
  }
  src[k] = 0;
  for (size_t i = ws; i < at && c < sizeof caret - 2; i++)
    caret[c++] = p->s[i] == '\t' ? '\t' : ' ';
  caret[c++] = '^';
  caret[c] = 0;
  ox_err_set(p->e, OX_EPARSE, "%s:%zu:%zu: %s\n%s%s\n%s%s", p->name ? p->name : "<text>", line,
             at - ls + 1, msg, ws > ls ? "..." : "", src, ws > ls ? "   " : "", caret);
  longjmp(p->jb, 1);
}

_Noreturn void tp_oom(tp_parser *p) {
  ox_err_set(p->e, OX_ENOMEM, "%s: out of memory while parsing", p->name ? p->name : "<text>");
  longjmp(p->jb, 1);
}

/* ---- lexical layer ---- */
void tp_ws(tp_parser *p) {
  while (p->pos < p->n) {
    char c = p->s[p->pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      p->pos++;
    } else if (c == '#') {
      while (p->pos < p->n && p->s[p->pos] != '\n') p->pos++;
    } else {
      break;
    }
  }
}

int tp_peek(tp_parser *p) {
  tp_ws(p);
  return p->pos < p->n ? (unsigned char)p->s[p->pos] : -1;
}

int tp_peek_at(tp_parser *p, size_t off) {
  return p->pos + off < p->n ? (unsigned char)p->s[p->pos + off] : -1;
}

bool tp_accept(tp_parser *p, char c) {
  if (tp_peek(p) == (unsigned char)c) {
    p->pos++;
    return true;
  }
  return false;
}

_Noreturn void tp_fail_expected(tp_parser *p, const char *what) {
  char f[64];
  tp_ws(p);
  describe(p, p->pos, f, sizeof f);
  tp_fail_at(p, p->pos, "expected %s, found %s", what, f);
}

void tp_expect(tp_parser *p, char c, const char *where) {
  if (!tp_accept(p, c)) {
    char w[128];
    snprintf(w, sizeof w, "'%c' %s", c, where);
    tp_fail_expected(p, w);
  }
}

bool tp_accept_arrow(tp_parser *p) {
  if (tp_peek(p) == '=' && tp_peek_at(p, 1) == '>') {
    p->pos += 2;
    return true;
  }
  return false;
}

/* identifier at the cursor (after whitespace); len 0 if none */
size_t tp_peek_id(tp_parser *p, const char **s) {
  tp_ws(p);
  size_t i = p->pos;
  if (i < p->n && (isalpha((unsigned char)p->s[i]) || p->s[i] == '_')) {
    i++;
    while (i < p->n && (isalnum((unsigned char)p->s[i]) || p->s[i] == '_')) i++;
  }
  *s = p->s + p->pos;
  return i - p->pos;
}

bool tp_accept_word(tp_parser *p, const char *w) {
  const char *s;
  size_t n = tp_peek_id(p, &s);
  if (n && tp_word_eq(s, n, w)) {
    p->pos += n;
    return true;
  }
  return false;
}

char *tp_take_id(tp_parser *p, const char *what) {
  const char *s;
  size_t n = tp_peek_id(p, &s);
  if (!n) tp_fail_expected(p, what);
  p->pos += n;
  char *r = ox_arena_strndup(p->a, s, n);
  CHK(r);
  return r;
}

/* A quoted string: a backslash takes the next byte literally. Returns the
 * bytes NUL-terminated in the arena; *len excludes the terminator. */
char *tp_take_qstr(tp_parser *p, size_t *len) {
  tp_ws(p);
  size_t start = p->pos;
  if (p->pos >= p->n || p->s[p->pos] != '"') tp_fail_expected(p, "a string");
  p->pos++;
  size_t n = 0, i = p->pos;
  bool esc = false;
  for (; i < p->n && p->s[i] != '"'; i++, n++)
    if (p->s[i] == '\\') {
      esc = true;
      if (++i >= p->n) break;
    }
  if (i >= p->n) tp_fail_at(p, start, "unterminated string");
  char *r = ox_arena_alloc(p->a, n + 1);
  CHK(r);
  if (!esc) {
    memcpy(r, p->s + p->pos, n);
  } else {
    size_t k = 0;
    for (size_t j = p->pos; j < i; j++) {
      if (p->s[j] == '\\') j++;
      r[k++] = p->s[j];
    }
  }
  p->pos = i + 1;
  if (len) *len = n;
  return r;
}

/* a string used as a name: no NUL inside */
char *tp_take_name_str(tp_parser *p) {
  size_t at = p->pos, n;
  char *r = tp_take_qstr(p, &n);
  if (strlen(r) != n) tp_fail_at(p, at, "a name may not hold a NUL byte");
  return r;
}

/* quotable-id: identifier or quoted string */
char *tp_take_qid(tp_parser *p, const char *what) {
  if (tp_peek(p) == '"') return tp_take_name_str(p);
  return tp_take_id(p, what);
}

bool tp_at_qid(tp_parser *p) {
  int c = tp_peek(p);
  return c == '"' || c == '_' || (c >= 0 && isalpha(c));
}

/* ---- numbers ---- */
bool tp_at_number(tp_parser *p) {
  int c = tp_peek(p);
  if (c >= '0' && c <= '9') return true;
  if (c != '-') return false;
  size_t i = p->pos + 1;
  while (i < p->n && (p->s[i] == ' ' || p->s[i] == '\t')) i++;
  if (i >= p->n) return false;
  char d = p->s[i];
  return (d >= '0' && d <= '9') || d == 'i' || d == 'I' || d == 'n' || d == 'N';
}

tp_lit tp_take_number(tp_parser *p, const char *what) {
  tp_ws(p);
  tp_lit l = {p->pos, 0, false};
  size_t i = p->pos;
  if (i < p->n && p->s[i] == '-') i++;
  if (i < p->n && TP_DIGIT(p->s[i])) {
    while (i < p->n && TP_DIGIT(p->s[i])) i++;
    if (i < p->n && p->s[i] == '.') {
      l.is_float = true;
      i++;
      while (i < p->n && TP_DIGIT(p->s[i])) i++;
    }
    if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
      size_t j = i + 1;
      if (j < p->n && (p->s[j] == '+' || p->s[j] == '-')) j++;
      if (j < p->n && TP_DIGIT(p->s[j])) {
        while (j < p->n && TP_DIGIT(p->s[j])) j++;
        i = j;
        l.is_float = true;
      }
    }
  } else {
    size_t j = i;
    while (j < p->n && isalpha((unsigned char)p->s[j])) j++;
    if (j == i || !tp_is_special_float(p->s + i, j - i)) tp_fail_expected(p, what);
    if (tp_word_ieq(p->s + i, j - i, "nan") && j < p->n && p->s[j] == '(') {
      /* nan(0x...): a NaN with that payload (significand bits) */
      size_t k = j + 1;
      while (k < p->n && (isxdigit((unsigned char)p->s[k]) || p->s[k] == 'x' || p->s[k] == 'X'))
        k++;
      if (k >= p->n || p->s[k] != ')') tp_fail_at(p, j, "malformed NaN payload");
      j = k + 1;
    }
    i = j;
    l.is_float = true;
  }
  if (i < p->n && (TP_DIGIT(p->s[i]) || p->s[i] == '_' || p->s[i] == '.' ||
                   ((p->s[i] | 32) >= 'a' && (p->s[i] | 32) <= 'z')))
    tp_fail_at(p, i, "malformed number");
  l.len = i - p->pos;
  p->pos = i;
  return l;
}

static void lit_copy(tp_parser *p, tp_lit l, char *buf, size_t cap) {
  if (l.len >= cap) tp_fail_at(p, l.start, "number literal too long");
  memcpy(buf, p->s + l.start, l.len);
  buf[l.len] = 0;
}

int64_t tp_lit_i64(tp_parser *p, tp_lit l) {
  if (l.is_float) tp_fail_at(p, l.start, "expected an integer, found a float literal");
  const char *s = p->s + l.start;
  bool neg = s[0] == '-';
  uint64_t v = 0;
  for (size_t i = neg; i < l.len; i++) {
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) tp_fail_at(p, l.start, "integer out of range");
    v = v * 10 + d;
  }
  if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
    tp_fail_at(p, l.start, "integer out of range of int64");
  return neg ? (int64_t)(0 - v) : (int64_t)v;
}

uint64_t tp_lit_u64(tp_parser *p, tp_lit l) {
  if (l.is_float) tp_fail_at(p, l.start, "expected an integer, found a float literal");
  const char *s = p->s + l.start;
  if (s[0] == '-') {
    if (l.len == 2 && s[1] == '0') return 0;
    tp_fail_at(p, l.start, "negative value for an unsigned type");
  }
  uint64_t v = 0;
  for (size_t i = 0; i < l.len; i++) {
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) tp_fail_at(p, l.start, "integer out of range of uint64");
    v = v * 10 + d;
  }
  return v;
}

static const double exact_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Fast path for decimal literals (Clinger): when the significand fits in 53
 * bits and the power of ten is exact, one correctly rounded multiplication
 * or division gives the correctly rounded double. false: use strtod. */
static bool fast_decimal(const char *s, size_t n, double *out) {
  size_t i = 0;
  bool neg = false;
  if (i < n && s[i] == '-') neg = true, i++;
  uint64_t m = 0;
  int digits = 0, e10 = 0;
  for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
    if (m || s[i] != '0') digits++;
    m = m * 10 + (uint64_t)(s[i] - '0');
    if (digits > 18) return false;
  }
  if (i < n && s[i] == '.') {
    for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
      if (m || s[i] != '0') digits++;
      if (digits > 18) return false;
      m = m * 10 + (uint64_t)(s[i] - '0');
      e10--;
    }
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    bool eneg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i] == '-', i++;
    int x = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
      if (x > 1000) return false;
      x = x * 10 + (s[i] - '0');
    }
    e10 += eneg ? -x : x;
  }
  if (i != n) return false; /* inf, nan */
  if (m > ((uint64_t)1 << 53) || e10 > 22 || e10 < -22) return false;
  double d = (double)m;
  d = e10 >= 0 ? d * exact_pow10[e10] : d / exact_pow10[-e10];
  *out = neg ? -d : d;
  return true;
}

/* `nan(0x...)`: true and the sign and payload; false for other literals */
static bool nan_payload(tp_parser *p, tp_lit l, bool *neg, uint64_t *payload) {
  const char *s = p->s + l.start, *e = s + l.len;
  *neg = *s == '-';
  if (*neg) s++;
  while (*s == ' ' || *s == '\t') s++;
  if (e - s < 5 || s[3] != '(') return false;
  char buf[40];
  size_t n = (size_t)(e - s) - 5;
  if (n == 0 || n >= sizeof buf) tp_fail_at(p, l.start, "malformed NaN payload");
  memcpy(buf, s + 4, n);
  buf[n] = 0;
  char *end;
  errno = 0;
  *payload = strtoull(buf, &end, 0);
  if (*end || errno) tp_fail_at(p, l.start, "malformed NaN payload");
  return true;
}

double tp_lit_f64(tp_parser *p, tp_lit l) {
  double v;
  if (fast_decimal(p->s + l.start, l.len, &v)) return v;
  bool neg;
  uint64_t pl;
  if (nan_payload(p, l, &neg, &pl)) {
    if (pl == 0 || pl >> 52) tp_fail_at(p, l.start, "NaN payload out of range of double");
    uint64_t bits = ((uint64_t)neg << 63) | ((uint64_t)0x7FF << 52) | pl;
    memcpy(&v, &bits, 8);
    return v;
  }
  char buf[512];
  lit_copy(p, l, buf, sizeof buf);
  errno = 0;
  char *end;
  v = strtod(buf, &end);
  if (*end) tp_fail_at(p, l.start, "malformed number");
  if (errno == ERANGE && isinf(v)) tp_fail_at(p, l.start, "number out of range of double");
  return v;
}

float tp_lit_f32(tp_parser *p, tp_lit l) {
  double d;
  if (fast_decimal(p->s + l.start, l.len, &d)) {
    /* d is the correctly rounded double; rounding it to float is correct
     * unless d sits exactly on a midpoint between two floats */
    float f = (float)d;
    uint64_t bits;
    memcpy(&bits, &d, 8);
    if (d == 0 || (!isinf(f) && fabsf(f) >= 1.2e-38f && (bits & 0x1FFFFFFFu) != 0x10000000u))
      return f; /* (subnormal floats have fewer bits: left to strtof) */
  }
  bool neg;
  uint64_t pl;
  if (nan_payload(p, l, &neg, &pl)) {
    if (pl == 0 || pl >> 23) tp_fail_at(p, l.start, "NaN payload out of range of float");
    uint32_t bits = ((uint32_t)neg << 31) | 0x7F800000u | (uint32_t)pl;
    float f;
    memcpy(&f, &bits, 4);
    return f;
  }
  char buf[512];
  lit_copy(p, l, buf, sizeof buf);
  errno = 0;
  char *end;
  float v = strtof(buf, &end);
  if (*end) tp_fail_at(p, l.start, "malformed number");
  if (errno == ERANGE && isinf(v)) tp_fail_at(p, l.start, "number out of range of float");
  return v;
}

/* ---- strings in the arena ---- */
ox_bytes tp_to_bytes(const char *s, size_t n) {
  ox_bytes b = {(const uint8_t *)s, n};
  return b;
}

void tp_push_str(tp_parser *p, char ***arr, size_t *n, char *s) {
  char **slot = OX_VEC_PUSH(p->a, *arr, *n);
  CHK(slot);
  *slot = s;
}

void tp_enter(tp_parser *p) {
  if (++p->depth > MAX_DEPTH) tp_fail_at(p, p->pos, "nesting deeper than %d levels", MAX_DEPTH);
}

/* ---- str-str lists ---- */
void tp_parse_str_pairs(tp_parser *p, ox_str_pair **arr, size_t *n, bool allow_empty) {
  tp_expect(p, '[', "to open the key/value list");
  if (tp_accept(p, ']')) {
    if (!allow_empty) tp_fail_at(p, p->pos - 1, "a key/value list needs at least one entry");
    return;
  }
  do {
    ox_str_pair *kv = OX_VEC_PUSH(p->a, *arr, *n);
    CHK(kv);
    kv->key = tp_take_name_str(p);
    tp_expect(p, ':', "after the key");
    kv->value = tp_take_name_str(p);
  } while (tp_accept(p, ','));
  tp_expect(p, ']', "after the key/value list");
}
