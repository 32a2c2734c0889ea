/* parse.c - parser of the ONNX textual syntax (Syntax.md, as implemented by
 * the reference, plus the extensions listed in docs/text-format.md).
 *
 * A recursive-descent parser straight over the bytes (no token array).
 * Errors longjmp back to the entry point: every allocation is in the model's
 * arena or in the parser's scratch buffer, which the entry point frees, so
 * nothing leaks on the error path. */
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/floatconv.h"
#include "text.h"
#include "text_int.h"

#define MAX_DEPTH 200 /* nesting of types, graphs, lists */

typedef struct P {
  const char *s;
  size_t n, pos;
  const char *name;
  ox_arena *a;
  ox_err *e;
  jmp_buf jb;
  int depth;
  ox_buf scratch;
} P;

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

static bool word_eq(const char *s, size_t n, const char *w) {
  return strlen(w) == n && memcmp(s, w, n) == 0;
}

static bool word_ieq(const char *s, size_t n, const char *w) {
  if (strlen(w) != n) return false;
  for (size_t i = 0; i < n; i++)
    if (tolower((unsigned char)s[i]) != w[i]) return false;
  return true;
}

static int32_t dtype_of(const char *s, size_t n) {
  char buf[32];
  if (n == 0 || n >= sizeof buf) return 0;
  memcpy(buf, s, n);
  buf[n] = 0;
  return (int32_t)ox_dtype_from_name(buf);
}

static bool is_type_keyword(const char *s, size_t n) {
  return word_eq(s, n, "seq") || word_eq(s, n, "map") || word_eq(s, n, "optional") ||
         word_eq(s, n, "sparse_tensor") || word_eq(s, n, "opaque") || word_eq(s, n, "undefined") ||
         dtype_of(s, n) != 0;
}

static bool is_special_float(const char *s, size_t n) {
  return word_ieq(s, n, "inf") || word_ieq(s, n, "infinity") || word_ieq(s, n, "nan");
}

bool ox_text_is_reserved(const char *s, size_t n) {
  return is_type_keyword(s, n) || is_special_float(s, n);
}

/* ---- errors ---- */
static void describe(const P *p, size_t at, char *buf, size_t cap) {
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

/* Formats "name:line:col: msg" + the source line + a caret, then jumps out. */
static _Noreturn void fail_at(P *p, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static _Noreturn void fail_at(P *p, size_t at, const char *fmt, ...) {
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

static _Noreturn void oom(P *p) {
  ox_err_set(p->e, OX_ENOMEM, "%s: out of memory while parsing", p->name ? p->name : "<text>");
  longjmp(p->jb, 1);
}

#define CHK(x)        \
  do {                \
    if (!(x)) oom(p); \
  } while (0)

/* ---- lexical layer ---- */
static void ws(P *p) {
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

static int peek(P *p) {
  ws(p);
  return p->pos < p->n ? (unsigned char)p->s[p->pos] : -1;
}

static int peek_at(P *p, size_t off) {
  return p->pos + off < p->n ? (unsigned char)p->s[p->pos + off] : -1;
}

static bool accept(P *p, char c) {
  if (peek(p) == (unsigned char)c) {
    p->pos++;
    return true;
  }
  return false;
}

static _Noreturn void fail_expected(P *p, const char *what) {
  char f[64];
  ws(p);
  describe(p, p->pos, f, sizeof f);
  fail_at(p, p->pos, "expected %s, found %s", what, f);
}

static void expect(P *p, char c, const char *where) {
  if (!accept(p, c)) {
    char w[128];
    snprintf(w, sizeof w, "'%c' %s", c, where);
    fail_expected(p, w);
  }
}

static bool accept_arrow(P *p) {
  if (peek(p) == '=' && peek_at(p, 1) == '>') {
    p->pos += 2;
    return true;
  }
  return false;
}

/* identifier at the cursor (after whitespace); len 0 if none */
static size_t peek_id(P *p, const char **s) {
  ws(p);
  size_t i = p->pos;
  if (i < p->n && (isalpha((unsigned char)p->s[i]) || p->s[i] == '_')) {
    i++;
    while (i < p->n && (isalnum((unsigned char)p->s[i]) || p->s[i] == '_')) i++;
  }
  *s = p->s + p->pos;
  return i - p->pos;
}

static bool accept_word(P *p, const char *w) {
  const char *s;
  size_t n = peek_id(p, &s);
  if (n && word_eq(s, n, w)) {
    p->pos += n;
    return true;
  }
  return false;
}

static char *take_id(P *p, const char *what) {
  const char *s;
  size_t n = peek_id(p, &s);
  if (!n) fail_expected(p, what);
  p->pos += n;
  char *r = ox_arena_strndup(p->a, s, n);
  CHK(r);
  return r;
}

/* A quoted string: a backslash takes the next byte literally. Returns the
 * bytes NUL-terminated in the arena; *len excludes the terminator. */
static char *take_qstr(P *p, size_t *len) {
  ws(p);
  size_t start = p->pos;
  if (p->pos >= p->n || p->s[p->pos] != '"') fail_expected(p, "a string");
  p->pos++;
  size_t n = 0, i = p->pos;
  bool esc = false;
  for (; i < p->n && p->s[i] != '"'; i++, n++)
    if (p->s[i] == '\\') {
      esc = true;
      if (++i >= p->n) break;
    }
  if (i >= p->n) fail_at(p, start, "unterminated string");
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
static char *take_name_str(P *p) {
  size_t at = p->pos, n;
  char *r = take_qstr(p, &n);
  if (strlen(r) != n) fail_at(p, at, "a name may not hold a NUL byte");
  return r;
}

/* quotable-id: identifier or quoted string */
static char *take_qid(P *p, const char *what) {
  if (peek(p) == '"') return take_name_str(p);
  return take_id(p, what);
}

static bool at_qid(P *p) {
  int c = peek(p);
  return c == '"' || c == '_' || (c >= 0 && isalpha(c));
}

/* ---- numbers ---- */
typedef struct lit {
  size_t start, len;
  bool is_float; /* has '.', an exponent, or is inf/nan */
} lit;

static bool at_number(P *p) {
  int c = peek(p);
  if (c >= '0' && c <= '9') return true;
  if (c != '-') return false;
  size_t i = p->pos + 1;
  while (i < p->n && (p->s[i] == ' ' || p->s[i] == '\t')) i++;
  if (i >= p->n) return false;
  char d = p->s[i];
  return (d >= '0' && d <= '9') || d == 'i' || d == 'I' || d == 'n' || d == 'N';
}

#define DIGIT(c) ((c) >= '0' && (c) <= '9')

static lit take_number(P *p, const char *what) {
  ws(p);
  lit l = {p->pos, 0, false};
  size_t i = p->pos;
  if (i < p->n && p->s[i] == '-') i++;
  if (i < p->n && DIGIT(p->s[i])) {
    while (i < p->n && DIGIT(p->s[i])) i++;
    if (i < p->n && p->s[i] == '.') {
      l.is_float = true;
      i++;
      while (i < p->n && DIGIT(p->s[i])) i++;
    }
    if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
      size_t j = i + 1;
      if (j < p->n && (p->s[j] == '+' || p->s[j] == '-')) j++;
      if (j < p->n && DIGIT(p->s[j])) {
        while (j < p->n && DIGIT(p->s[j])) j++;
        i = j;
        l.is_float = true;
      }
    }
  } else {
    size_t j = i;
    while (j < p->n && isalpha((unsigned char)p->s[j])) j++;
    if (j == i || !is_special_float(p->s + i, j - i)) fail_expected(p, what);
    if (word_ieq(p->s + i, j - i, "nan") && j < p->n && p->s[j] == '(') {
      /* nan(0x...): a NaN with that payload (significand bits) */
      size_t k = j + 1;
      while (k < p->n && (isxdigit((unsigned char)p->s[k]) || p->s[k] == 'x' || p->s[k] == 'X'))
        k++;
      if (k >= p->n || p->s[k] != ')') fail_at(p, j, "malformed NaN payload");
      j = k + 1;
    }
    i = j;
    l.is_float = true;
  }
  if (i < p->n && (DIGIT(p->s[i]) || p->s[i] == '_' || p->s[i] == '.' ||
                   ((p->s[i] | 32) >= 'a' && (p->s[i] | 32) <= 'z')))
    fail_at(p, i, "malformed number");
  l.len = i - p->pos;
  p->pos = i;
  return l;
}

static void lit_copy(P *p, lit l, char *buf, size_t cap) {
  if (l.len >= cap) fail_at(p, l.start, "number literal too long");
  memcpy(buf, p->s + l.start, l.len);
  buf[l.len] = 0;
}

static int64_t lit_i64(P *p, lit l) {
  if (l.is_float) fail_at(p, l.start, "expected an integer, found a float literal");
  const char *s = p->s + l.start;
  bool neg = s[0] == '-';
  uint64_t v = 0;
  for (size_t i = neg; i < l.len; i++) {
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) fail_at(p, l.start, "integer out of range");
    v = v * 10 + d;
  }
  if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
    fail_at(p, l.start, "integer out of range of int64");
  return neg ? (int64_t)(0 - v) : (int64_t)v;
}

static uint64_t lit_u64(P *p, lit l) {
  if (l.is_float) fail_at(p, l.start, "expected an integer, found a float literal");
  const char *s = p->s + l.start;
  if (s[0] == '-') {
    if (l.len == 2 && s[1] == '0') return 0;
    fail_at(p, l.start, "negative value for an unsigned type");
  }
  uint64_t v = 0;
  for (size_t i = 0; i < l.len; i++) {
    uint64_t d = (uint64_t)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) fail_at(p, l.start, "integer out of range of uint64");
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
static bool nan_payload(P *p, lit l, bool *neg, uint64_t *payload) {
  const char *s = p->s + l.start, *e = s + l.len;
  *neg = *s == '-';
  if (*neg) s++;
  while (*s == ' ' || *s == '\t') s++;
  if (e - s < 5 || s[3] != '(') return false;
  char buf[40];
  size_t n = (size_t)(e - s) - 5;
  if (n == 0 || n >= sizeof buf) fail_at(p, l.start, "malformed NaN payload");
  memcpy(buf, s + 4, n);
  buf[n] = 0;
  char *end;
  errno = 0;
  *payload = strtoull(buf, &end, 0);
  if (*end || errno) fail_at(p, l.start, "malformed NaN payload");
  return true;
}

static double lit_f64(P *p, lit l) {
  double v;
  if (fast_decimal(p->s + l.start, l.len, &v)) return v;
  bool neg;
  uint64_t pl;
  if (nan_payload(p, l, &neg, &pl)) {
    if (pl == 0 || pl >> 52) fail_at(p, l.start, "NaN payload out of range of double");
    uint64_t bits = ((uint64_t)neg << 63) | ((uint64_t)0x7FF << 52) | pl;
    memcpy(&v, &bits, 8);
    return v;
  }
  char buf[512];
  lit_copy(p, l, buf, sizeof buf);
  errno = 0;
  char *end;
  v = strtod(buf, &end);
  if (*end) fail_at(p, l.start, "malformed number");
  if (errno == ERANGE && isinf(v)) fail_at(p, l.start, "number out of range of double");
  return v;
}

static float lit_f32(P *p, lit l) {
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
    if (pl == 0 || pl >> 23) fail_at(p, l.start, "NaN payload out of range of float");
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
  if (*end) fail_at(p, l.start, "malformed number");
  if (errno == ERANGE && isinf(v)) fail_at(p, l.start, "number out of range of float");
  return v;
}

/* ---- strings in the arena ---- */
static ox_bytes to_bytes(const char *s, size_t n) {
  ox_bytes b = {(const uint8_t *)s, n};
  return b;
}

static void push_str(P *p, char ***arr, size_t *n, char *s) {
  char **slot = OX_VEC_PUSH(p->a, *arr, *n);
  CHK(slot);
  *slot = s;
}

static void enter(P *p) {
  if (++p->depth > MAX_DEPTH) fail_at(p, p->pos, "nesting deeper than %d levels", MAX_DEPTH);
}

/* ---- str-str lists ---- */
static void parse_str_pairs(P *p, ox_str_pair **arr, size_t *n, bool allow_empty) {
  expect(p, '[', "to open the key/value list");
  if (accept(p, ']')) {
    if (!allow_empty) fail_at(p, p->pos - 1, "a key/value list needs at least one entry");
    return;
  }
  do {
    ox_str_pair *kv = OX_VEC_PUSH(p->a, *arr, *n);
    CHK(kv);
    kv->key = take_name_str(p);
    expect(p, ':', "after the key");
    kv->value = take_name_str(p);
  } while (accept(p, ','));
  expect(p, ']', "after the key/value list");
}

/* ---- types ---- */
static ox_type *parse_type(P *p);

static ox_shape *parse_shape_suffix(P *p, bool *has) {
  *has = false;
  if (!accept(p, '[')) {
    ox_shape *sh = ox_arena_alloc(p->a, sizeof *sh);
    CHK(sh);
    return sh; /* scalar: shape with no dims */
  }
  if (accept(p, ']')) return NULL; /* unknown rank */
  *has = true;
  ox_shape *sh = ox_arena_alloc(p->a, sizeof *sh);
  CHK(sh);
  do {
    ox_dim *d = OX_VEC_PUSH(p->a, sh->dim, sh->n_dim);
    CHK(d);
    int c = peek(p);
    if (c == '?') {
      p->pos++;
    } else if (c == '"' || c == '_' || (c >= 0 && isalpha(c))) {
      d->param = take_qid(p, "a dimension");
    } else if (at_number(p)) {
      d->value = lit_i64(p, take_number(p, "a dimension"));
      d->has_value = true;
    } else {
      fail_expected(p, "a dimension (a number, a name or '?')");
    }
  } while (accept(p, ','));
  expect(p, ']', "after the dimensions");
  return sh;
}

static ox_type *parse_type_after(P *p, const char *w, size_t wn, size_t at) {
  ox_type *t = ox_arena_alloc(p->a, sizeof *t);
  CHK(t);
  int32_t dt = dtype_of(w, wn);
  bool has;
  if (dt) {
    t->kind = OX_TYPE_TENSOR;
    t->elem_type = dt;
    t->has_elem_type = true;
    t->shape = parse_shape_suffix(p, &has);
    return t;
  }
  if (word_eq(w, wn, "undefined")) return t; /* an empty TypeProto */
  enter(p);
  if (word_eq(w, wn, "seq") || word_eq(w, wn, "optional")) {
    t->kind = w[0] == 's' ? OX_TYPE_SEQUENCE : OX_TYPE_OPTIONAL;
    expect(p, '(', "after seq/optional");
    t->elem = parse_type(p);
    expect(p, ')', "after the element type");
  } else if (word_eq(w, wn, "map")) {
    t->kind = OX_TYPE_MAP;
    expect(p, '(', "after map");
    const char *k;
    size_t kn = peek_id(p, &k);
    int32_t kt = dtype_of(k, kn);
    if (!kt) fail_expected(p, "a key type name");
    p->pos += kn;
    t->elem_type = kt;
    t->has_elem_type = true;
    expect(p, ',', "after the map key type");
    t->elem = parse_type(p);
    expect(p, ')', "after the map value type");
  } else if (word_eq(w, wn, "sparse_tensor")) {
    t->kind = OX_TYPE_SPARSE_TENSOR;
    expect(p, '(', "after sparse_tensor");
    const char *k;
    size_t kn = peek_id(p, &k);
    int32_t et = dtype_of(k, kn);
    if (!et) fail_expected(p, "an element type name");
    p->pos += kn;
    t->elem_type = et;
    t->has_elem_type = true;
    t->shape = parse_shape_suffix(p, &has);
    expect(p, ')', "after the sparse tensor type");
  } else if (word_eq(w, wn, "opaque")) {
    t->kind = OX_TYPE_OPAQUE;
    expect(p, '(', "after opaque");
    if (!accept(p, ')')) {
      /* qualified-id or quoted strings; opaque(name) or opaque(domain, name) */
      char *first;
      if (peek(p) == '"') {
        first = take_name_str(p);
      } else {
        size_t st = p->pos;
        take_id(p, "an opaque type name");
        while (peek(p) == '.') {
          p->pos++;
          take_id(p, "a name after '.'");
        }
        first = ox_arena_strndup(p->a, p->s + st, p->pos - st);
        CHK(first);
        /* whitespace may sit around the dots: drop it */
        char *o = first;
        for (char *q = first; *q; q++)
          if (!isspace((unsigned char)*q)) *o++ = *q;
        *o = 0;
      }
      if (accept(p, ',')) {
        t->opaque_domain = first;
        t->opaque_name = take_qid(p, "an opaque type name");
      } else {
        t->opaque_name = first;
      }
      expect(p, ')', "after the opaque type");
    }
  } else {
    fail_at(p, at, "unknown type '%.*s'", (int)wn, w);
  }
  p->depth--;
  return t;
}

static ox_type *parse_type(P *p) {
  const char *w;
  size_t wn = peek_id(p, &w);
  size_t at = p->pos;
  if (!wn || !is_type_keyword(w, wn)) fail_expected(p, "a type");
  p->pos += wn;
  return parse_type_after(p, w, wn, at);
}

static bool at_type(P *p) {
  const char *w;
  size_t wn = peek_id(p, &w);
  return wn && is_type_keyword(w, wn);
}

/* ---- headers: <key: value, ...> before a graph, node, value, tensor or
 * attribute, for the fields the reference syntax has no place for. ---- */
enum {
  H_DOC = 1,
  H_META = 2,
  H_RAW = 4,
  H_LOC = 8,
  H_SPARSE = 16,
  H_QA = 32,
  H_SEG = 64,
  H_DEN = 128
};
typedef struct hdr {
  unsigned has;
  size_t at;
  char *doc;
  ox_str_pair *meta;
  size_t n_meta;
  bool raw;
  int32_t location;
  ox_sparse_tensor *sparse;
  size_t n_sparse;
  ox_tensor_annotation *qa;
  size_t n_qa;
  int64_t seg[2];
  char *denotation;
} hdr;

/* `[{tensor_name: "t", quant_parameter_tensor_names: ["k": "v"]}, ...]` */
static void parse_quant_annotations(P *p, ox_tensor_annotation **arr, size_t *n) {
  expect(p, '[', "to open the quantization annotations");
  if (accept(p, ']')) return;
  do {
    ox_tensor_annotation *q = OX_VEC_PUSH(p->a, *arr, *n);
    CHK(q);
    expect(p, '{', "to open a quantization annotation");
    if (!accept(p, '}')) {
      do {
        if (accept_word(p, "tensor_name")) {
          expect(p, ':', "after tensor_name");
          q->tensor_name = take_name_str(p);
        } else if (accept_word(p, "quant_parameter_tensor_names")) {
          expect(p, ':', "after quant_parameter_tensor_names");
          parse_str_pairs(p, &q->quant_parameter_tensor_names, &q->n_quant_parameter_tensor_names,
                          true);
        } else {
          fail_expected(p, "tensor_name or quant_parameter_tensor_names");
        }
      } while (accept(p, ','));
      expect(p, '}', "after the quantization annotation");
    }
  } while (accept(p, ','));
  expect(p, ']', "after the quantization annotations");
}

static ox_sparse_tensor *parse_sparse_body(P *p, ox_sparse_tensor *st);

/* true when '<' at the cursor opens a header rather than an attribute list:
 * `<key: value` where value does not look like `type =`. */
static bool at_header(P *p) {
  if (peek(p) != '<') return false;
  size_t save = p->pos;
  p->pos++;
  bool r = false;
  const char *w;
  size_t wn = peek_id(p, &w);
  if (wn) {
    p->pos += wn;
    if (accept(p, ':')) {
      const char *v;
      size_t vn = peek_id(p, &v);
      if (!vn) {
        r = true;
      } else {
        p->pos += vn;
        r = peek(p) != '=';
      }
    }
  }
  p->pos = save;
  return r;
}

static void parse_header(P *p, hdr *h) {
  memset(h, 0, sizeof *h);
  ws(p);
  h->at = p->pos;
  expect(p, '<', "to open a header");
  if (accept(p, '>')) return;
  do {
    size_t kat = (ws(p), p->pos);
    const char *k;
    size_t kn = peek_id(p, &k);
    if (!kn) fail_expected(p, "a header key");
    p->pos += kn;
    expect(p, ':', "after the header key");
    if (word_eq(k, kn, "doc_string")) {
      h->doc = take_name_str(p);
      h->has |= H_DOC;
    } else if (word_eq(k, kn, "metadata_props")) {
      parse_str_pairs(p, &h->meta, &h->n_meta, true);
      h->has |= H_META;
    } else if (word_eq(k, kn, "raw_data")) {
      if (accept_word(p, "true")) {
        h->raw = true;
      } else if (accept_word(p, "false")) {
        h->raw = false;
      } else {
        fail_expected(p, "true or false");
      }
      h->has |= H_RAW;
    } else if (word_eq(k, kn, "data_location")) {
      int64_t v = lit_i64(p, take_number(p, "a data location number"));
      if (v < INT32_MIN || v > INT32_MAX) fail_at(p, kat, "data_location out of range");
      h->location = (int32_t)v;
      h->has |= H_LOC;
    } else if (word_eq(k, kn, "sparse_initializer")) {
      expect(p, '[', "to open the sparse initializer list");
      if (!accept(p, ']')) {
        do {
          if (!accept_word(p, "sparse_tensor")) fail_expected(p, "sparse_tensor");
          ox_sparse_tensor *st = OX_VEC_PUSH(p->a, h->sparse, h->n_sparse);
          CHK(st);
          parse_sparse_body(p, st);
        } while (accept(p, ','));
        expect(p, ']', "after the sparse initializer list");
      }
      h->has |= H_SPARSE;
    } else if (word_eq(k, kn, "quantization_annotation")) {
      parse_quant_annotations(p, &h->qa, &h->n_qa);
      h->has |= H_QA;
    } else if (word_eq(k, kn, "segment")) {
      expect(p, '[', "to open the segment");
      h->seg[0] = lit_i64(p, take_number(p, "the segment begin"));
      expect(p, ',', "after the segment begin");
      h->seg[1] = lit_i64(p, take_number(p, "the segment end"));
      expect(p, ']', "after the segment");
      h->has |= H_SEG;
    } else if (word_eq(k, kn, "denotation")) {
      h->denotation = take_name_str(p);
      h->has |= H_DEN;
    } else {
      fail_at(p, kat, "unknown header key '%.*s'", (int)kn, k);
    }
  } while (accept(p, ','));
  expect(p, '>', "after the header");
}

static void header_allow(P *p, const hdr *h, unsigned allowed, const char *what) {
  if (h->has & ~allowed) fail_at(p, h->at, "this header has a key that does not apply to %s", what);
}

/* ---- tensors ---- */
typedef struct tbuild {
  ox_buf *b; /* element values as int64, uint64, float or double */
} tbuild;

static void scratch_put(P *p, const void *v, size_t n) {
  ox_buf_append(&p->scratch, v, n);
  if (p->scratch.failed) oom(p);
}

static void *arena_copy(P *p, const void *src, size_t n) {
  if (n == 0) {
    void *r = ox_arena_alloc(p->a, 1);
    CHK(r);
    return r;
  }
  void *r = ox_arena_memdup(p->a, src, n);
  CHK(r);
  return r;
}

/* range of an integer element type, or false if not integral */
static bool int_range(int32_t dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
    case OX_INT8:
      *lo = INT8_MIN, *hi = INT8_MAX;
      return true;
    case OX_UINT8:
      *lo = 0, *hi = UINT8_MAX;
      return true;
    case OX_INT16:
      *lo = INT16_MIN, *hi = INT16_MAX;
      return true;
    case OX_UINT16:
      *lo = 0, *hi = UINT16_MAX;
      return true;
    case OX_INT32:
      *lo = INT32_MIN, *hi = INT32_MAX;
      return true;
    case OX_INT4:
      *lo = -8, *hi = 7;
      return true;
    case OX_UINT4:
      *lo = 0, *hi = 15;
      return true;
    case OX_INT2:
      *lo = -2, *hi = 1;
      return true;
    case OX_UINT2:
      *lo = 0, *hi = 3;
      return true;
    case OX_BOOL:
      *lo = 0, *hi = 1;
      return true;
    default:
      return false;
  }
}

bool ox_text_is_small_float(int32_t dt) {
  return dt == OX_FLOAT16 || dt == OX_BFLOAT16 || dt == OX_FLOAT8E4M3FN ||
         dt == OX_FLOAT8E4M3FNUZ || dt == OX_FLOAT8E5M2 || dt == OX_FLOAT8E5M2FNUZ ||
         dt == OX_FLOAT8E8M0 || dt == OX_FLOAT4E2M1;
}

uint32_t ox_text_small_float_bits(int32_t dt, float f) {
  switch (dt) {
    case OX_FLOAT16:
      return ox_f32_to_f16(f);
    case OX_BFLOAT16:
      return ox_f32_to_bf16(f);
    case OX_FLOAT8E8M0:
      return ox_f32_to_e8m0(f, false, 2);
    case OX_FLOAT4E2M1:
      return ox_f32_to_f4(f);
    default:
      return ox_f32_to_f8(f, dt, true);
  }
}

/* Parses `{ v, v, ... }` for a tensor of type dt into t (typed fields, or
 * raw_data when raw). */
static void parse_tensor_data(P *p, ox_tensor *t, int32_t dt, bool raw) {
  size_t open = (ws(p), p->pos);
  expect(p, '{', "to open the tensor data");
  p->scratch.size = 0;
  size_t count = 0;
  const ox_dtype_info *di = ox_dtype_get(dt);
  if (!di || dt == OX_UNDEFINED) fail_at(p, open, "a tensor literal needs a known element type");
  if (dt == OX_STRING && raw) fail_at(p, open, "string tensors cannot use raw_data");
  if (peek(p) != '}') {
    do {
      ws(p);
      size_t at = p->pos;
      if (dt == OX_STRING) {
        size_t len;
        char *s = take_qstr(p, &len);
        ox_bytes b = to_bytes(s, len);
        scratch_put(p, &b, sizeof b);
      } else if (dt == OX_FLOAT || dt == OX_COMPLEX64) {
        float f = lit_f32(p, take_number(p, "a number"));
        scratch_put(p, &f, sizeof f);
      } else if (dt == OX_DOUBLE || dt == OX_COMPLEX128) {
        double d = lit_f64(p, take_number(p, "a number"));
        scratch_put(p, &d, sizeof d);
      } else if (dt == OX_INT64) {
        int64_t v = lit_i64(p, take_number(p, "an integer"));
        scratch_put(p, &v, sizeof v);
      } else if (dt == OX_UINT32 || dt == OX_UINT64) {
        uint64_t v = lit_u64(p, take_number(p, "an integer"));
        if (dt == OX_UINT32 && v > UINT32_MAX) fail_at(p, at, "value out of range of uint32");
        scratch_put(p, &v, sizeof v);
      } else if (ox_text_is_small_float(dt)) {
        lit l = take_number(p, "a number");
        int64_t bits;
        if (l.is_float) {
          bits = ox_text_small_float_bits(dt, lit_f32(p, l));
        } else {
          bits = lit_i64(p, l); /* a bit pattern, as the reference reads it */
          if (bits < 0 || bits >= (int64_t)1 << di->bits)
            fail_at(p, at, "bit pattern out of range of %s", di->name);
        }
        scratch_put(p, &bits, sizeof bits);
      } else {
        int64_t lo, hi, v;
        if (!int_range(dt, &lo, &hi)) fail_at(p, open, "no literal syntax for %s", di->name);
        if (dt == OX_BOOL && accept_word(p, "true")) {
          v = 1;
        } else if (dt == OX_BOOL && accept_word(p, "false")) {
          v = 0;
        } else {
          v = lit_i64(p, take_number(p, "an integer"));
        }
        if (v < lo || v > hi) fail_at(p, at, "value out of range of %s", di->name);
        scratch_put(p, &v, sizeof v);
      }
      count++;
    } while (accept(p, ','));
  }
  expect(p, '}', "after the tensor data");
  const uint8_t *sc = p->scratch.data;
  if (count == 0 && !raw) return; /* `{}`: no data */
  if (dt == OX_STRING) {
    t->string_data = arena_copy(p, sc, count * sizeof(ox_bytes));
    t->n_string_data = count;
    return;
  }
  if (raw) {
    size_t nb = 0; /* for complex types, count is twice the element count */
    if (di->is_complex)
      nb = count * (dt == OX_COMPLEX64 ? 4 : 8);
    else if (!ox_dtype_nbytes(dt, (int64_t)count, &nb))
      oom(p);
    uint8_t *r = ox_arena_alloc(p->a, nb ? nb : 1);
    CHK(r);
    if (di->bits < 8) {
      unsigned per = 8u / di->bits, mask = (1u << di->bits) - 1;
      for (size_t i = 0; i < count; i++) {
        int64_t v;
        memcpy(&v, sc + i * 8, 8);
        r[i / per] |= (uint8_t)(((unsigned)v & mask) << (di->bits * (i % per)));
      }
    } else if (dt == OX_FLOAT || dt == OX_COMPLEX64 || dt == OX_DOUBLE || dt == OX_COMPLEX128) {
      if (nb) memcpy(r, sc, nb); /* little-endian hosts; sc is NULL for {} (fuzz_text) */
    } else {
      size_t w = di->bits / 8u;
      for (size_t i = 0; i < count; i++) {
        uint64_t v;
        memcpy(&v, sc + i * 8, 8);
        for (size_t k = 0; k < w; k++) r[i * w + k] = (uint8_t)(v >> (8 * k));
      }
    }
    t->raw_data.data = r;
    t->raw_data.size = nb;
    return;
  }
  if (dt == OX_FLOAT || dt == OX_COMPLEX64) {
    t->float_data = arena_copy(p, sc, count * 4);
    t->n_float_data = count;
  } else if (dt == OX_DOUBLE || dt == OX_COMPLEX128) {
    t->double_data = arena_copy(p, sc, count * 8);
    t->n_double_data = count;
  } else if (dt == OX_INT64) {
    t->int64_data = arena_copy(p, sc, count * 8);
    t->n_int64_data = count;
  } else if (dt == OX_UINT32 || dt == OX_UINT64) {
    t->uint64_data = arena_copy(p, sc, count * 8);
    t->n_uint64_data = count;
  } else {
    /* int32_data; 4-bit types two per entry, 2-bit types four per entry */
    unsigned per = di->bits < 8 ? 8u / di->bits : 1, mask = di->bits < 8 ? (1u << di->bits) - 1 : 0;
    size_t ne = (count + per - 1) / per;
    int32_t *d = ox_arena_calloc(p->a, ne ? ne : 1, sizeof *d);
    CHK(d);
    for (size_t i = 0; i < count; i++) {
      int64_t v;
      memcpy(&v, sc + i * 8, 8);
      if (per == 1)
        d[i] = (int32_t)v;
      else
        d[i / per] |= (int32_t)(((unsigned)v & mask) << (di->bits * (i % per)));
    }
    t->int32_data = d;
    t->n_int32_data = ne;
  }
}

static void apply_tensor_header(P *p, const hdr *h, ox_tensor *t) {
  header_allow(p, h, H_DOC | H_META | H_RAW | H_LOC | H_SEG, "a tensor");
  if (h->has & H_DOC) t->doc_string = h->doc;
  if (h->has & H_SEG) {
    t->segment = ox_arena_alloc(p->a, sizeof *t->segment);
    CHK(t->segment);
    t->segment->begin = h->seg[0], t->segment->end = h->seg[1];
    t->segment->has_begin = t->segment->has_end = true;
  }
  if (h->has & H_META) t->metadata_props = h->meta, t->n_metadata_props = h->n_meta;
  if (h->has & H_LOC) t->data_location = h->location, t->has_data_location = true;
}

/* tensor-body after the type and name: `{...}`, `[...]` (external) or none.
 * Returns false when there is no body. */
static bool parse_tensor_body(P *p, ox_tensor *t, const hdr *h) {
  int c = peek(p);
  if (c == '{') {
    parse_tensor_data(p, t, t->data_type, (h->has & H_RAW) && h->raw);
    return true;
  }
  if (c == '[') {
    parse_str_pairs(p, &t->external_data, &t->n_external_data, false);
    if (!(h->has & H_LOC)) t->data_location = 1, t->has_data_location = true;
    return true;
  }
  return false;
}

/* sets data_type and dims of t from a tensor type; the type must be concrete */
static void tensor_from_type(P *p, ox_tensor *t, const ox_type *ty, size_t at) {
  if (ty->kind != OX_TYPE_TENSOR) fail_at(p, at, "a tensor literal needs a tensor type");
  t->data_type = ty->elem_type;
  t->has_data_type = true;
  if (!ty->shape) fail_at(p, at, "a tensor literal needs a shape (not [])");
  if (ty->shape->n_dim) {
    t->dims = ox_arena_calloc(p->a, ty->shape->n_dim, sizeof *t->dims);
    CHK(t->dims);
    for (size_t i = 0; i < ty->shape->n_dim; i++) {
      if (!ty->shape->dim[i].has_value) fail_at(p, at, "a tensor literal needs numeric dimensions");
      t->dims[i] = ty->shape->dim[i].value;
    }
    t->n_dims = ty->shape->n_dim;
  }
}

/* tensor-constant: [header] type name? '='? body */
static void parse_tensor_const(P *p, ox_tensor *t) {
  hdr h = {0};
  if (peek(p) == '<') parse_header(p, &h);
  ws(p);
  size_t at = p->pos;
  ox_type *ty = parse_type(p);
  tensor_from_type(p, t, ty, at);
  apply_tensor_header(p, &h, t);
  if (at_qid(p)) t->name = take_qid(p, "a tensor name");
  accept(p, '=');
  parse_tensor_body(p, t, &h);
}

/* `{ dims: [..], values: T, indices: T }` after `sparse_tensor` */
static ox_sparse_tensor *parse_sparse_body(P *p, ox_sparse_tensor *st) {
  enter(p);
  expect(p, '{', "to open the sparse tensor");
  if (!accept(p, '}')) {
    do {
      size_t kat = (ws(p), p->pos);
      const char *k;
      size_t kn = peek_id(p, &k);
      if (!kn) fail_expected(p, "dims, values or indices");
      p->pos += kn;
      expect(p, ':', "after the key");
      if (word_eq(k, kn, "dims")) {
        expect(p, '[', "to open the dims");
        if (!accept(p, ']')) {
          do {
            int64_t *d = OX_VEC_PUSH(p->a, st->dims, st->n_dims);
            CHK(d);
            *d = lit_i64(p, take_number(p, "a dimension"));
          } while (accept(p, ','));
          expect(p, ']', "after the dims");
        }
      } else if (word_eq(k, kn, "values") || word_eq(k, kn, "indices")) {
        ox_tensor *t = ox_arena_alloc(p->a, sizeof *t);
        CHK(t);
        parse_tensor_const(p, t);
        if (k[0] == 'v')
          st->values = t;
        else
          st->indices = t;
      } else {
        fail_at(p, kat, "unknown sparse tensor key '%.*s'", (int)kn, k);
      }
    } while (accept(p, ','));
    expect(p, '}', "after the sparse tensor");
  }
  p->depth--;
  return st;
}

/* ---- value infos ---- */
static void apply_vi_header(P *p, const hdr *h, ox_value_info *v) {
  header_allow(p, h, H_DOC | H_META | H_DEN, "a value");
  if (h->has & H_DOC) v->doc_string = h->doc;
  if (h->has & H_DEN) {
    if (!v->type) fail_at(p, h->at, "a denotation needs a type");
    v->type->denotation = h->denotation;
  }
  if (h->has & H_META) v->metadata_props = h->meta, v->n_metadata_props = h->n_meta;
}

/* [header] type? name */
static void parse_value_info(P *p, ox_value_info *v, hdr *h) {
  memset(h, 0, sizeof *h);
  if (peek(p) == '<') parse_header(p, h);
  if (at_type(p)) v->type = parse_type(p);
  v->name = take_qid(p, "a value name");
}

/* ---- graphs and nodes ---- */
static ox_graph *parse_graph(P *p, ox_graph *g);
static void parse_attr(P *p, ox_attr *at, bool fun_attr, bool *has_value);

/* id-list with the reference's rules for empty operands */
static void parse_operands(P *p, char ***arr, size_t *n, char end) {
  for (;;) {
    int c = peek(p);
    if (c == ',') {
      char *e = ox_arena_strdup(p->a, "");
      CHK(e);
      push_str(p, arr, n, e);
      p->pos++;
      continue;
    }
    if (c == (unsigned char)end) break;
    if (!at_qid(p)) {
      char w[64];
      snprintf(w, sizeof w, "a value name or '%c'", end);
      fail_expected(p, w);
    }
    push_str(p, arr, n, take_qid(p, "a value name"));
    if (!accept(p, ',')) break;
  }
}

static void parse_attr_list(P *p, ox_attr **arr, size_t *n) {
  expect(p, '<', "to open the attribute list");
  if (accept(p, '>')) return;
  do {
    ox_attr *at = OX_VEC_PUSH(p->a, *arr, *n);
    CHK(at);
    bool hv;
    parse_attr(p, at, false, &hv);
  } while (accept(p, ','));
  expect(p, '>', "after the attribute list");
}

static void parse_node(P *p, ox_node *nd) {
  if (at_header(p)) {
    hdr h;
    parse_header(p, &h);
    header_allow(p, &h, H_DOC | H_META, "a node");
    if (h.has & H_DOC) nd->doc_string = h.doc;
    if (h.has & H_META) nd->metadata_props = h.meta, nd->n_metadata_props = h.n_meta;
  }
  if (accept(p, '[')) {
    if (accept(p, ']')) {
      nd->name = ox_arena_strdup(p->a, "");
      CHK(nd->name);
    } else {
      nd->name = take_qid(p, "a node name");
      expect(p, ']', "after the node name");
    }
  }
  parse_operands(p, &nd->output, &nd->n_output, '=');
  expect(p, '=', "after the node outputs");
  /* [domain '.'] op: segments separated by dots, each an identifier or a
   * quoted string; a leading '.' means the empty domain */
  size_t start = (ws(p), p->pos);
  char *dom = NULL, *last = NULL;
  size_t ns = 0;
  bool lead_dot = accept(p, '.');
  do {
    if (++ns > 64) fail_at(p, start, "operator name with too many dots");
    char *seg = take_qid(p, "an operator name");
    if (last) {
      dom = dom ? ox_arena_printf(p->a, "%s.%s", dom, last) : last;
      CHK(dom);
    }
    last = seg;
  } while (accept(p, '.'));
  nd->op_type = last;
  if (!dom && lead_dot) CHK(dom = ox_arena_strdup(p->a, ""));
  nd->domain = dom;
  if (accept(p, ':')) nd->overload = take_qid(p, "an overload name");
  bool attrs = false;
  if (peek(p) == '<') {
    parse_attr_list(p, &nd->attribute, &nd->n_attribute);
    attrs = true;
  }
  expect(p, '(', attrs ? "after the attribute list" : "to open the input list");
  parse_operands(p, &nd->input, &nd->n_input, ')');
  expect(p, ')', "after the input list");
  if (!attrs && peek(p) == '<' && !at_header(p))
    parse_attr_list(p, &nd->attribute, &nd->n_attribute);
}

static void parse_node_list(P *p, ox_node **arr, size_t *n) {
  expect(p, '{', "to open the node list");
  while (peek(p) != '}') {
    if (peek(p) < 0) fail_expected(p, "'}' to close the node list");
    ox_node *nd = OX_VEC_PUSH(p->a, *arr, *n);
    CHK(nd);
    parse_node(p, nd);
  }
  p->pos++;
}

/* an entry of an input list or of the `<...>` list after the outputs */
static void parse_graph_entry(P *p, ox_graph *g, bool is_input) {
  ox_value_info v = {0};
  hdr h;
  ws(p);
  size_t at = p->pos;
  parse_value_info(p, &v, &h);
  if (accept(p, '=')) {
    ox_tensor *t = OX_VEC_PUSH(p->a, g->initializer, g->n_initializer);
    CHK(t);
    if (!v.type) fail_at(p, at, "an initializer needs a type");
    tensor_from_type(p, t, v.type, at);
    t->name = v.name;
    hdr th = h;
    th.has &= ~(unsigned)H_DEN; /* a denotation belongs to the value's type */
    apply_tensor_header(p, &th, t);
    if (!parse_tensor_body(p, t, &h)) fail_expected(p, "'{' or '[' for the initializer data");
    if (!is_input) return;
    h.has &= H_DOC | H_META | H_DEN; /* the rest was for the tensor */
  }
  if (is_input) {
    apply_vi_header(p, &h, &v);
    ox_value_info *d = OX_VEC_PUSH(p->a, g->input, g->n_input);
    CHK(d);
    *d = v;
  } else {
    apply_vi_header(p, &h, &v);
    ox_value_info *d = OX_VEC_PUSH(p->a, g->value_info, g->n_value_info);
    CHK(d);
    *d = v;
  }
}

static ox_graph *parse_graph(P *p, ox_graph *g) {
  enter(p);
  if (peek(p) == '<') {
    hdr h;
    parse_header(p, &h);
    header_allow(p, &h, H_DOC | H_META | H_SPARSE | H_QA, "a graph");
    if (h.has & H_QA) g->quantization_annotation = h.qa, g->n_quantization_annotation = h.n_qa;
    if (h.has & H_DOC) g->doc_string = h.doc;
    if (h.has & H_META) g->metadata_props = h.meta, g->n_metadata_props = h.n_meta;
    if (h.has & H_SPARSE) g->sparse_initializer = h.sparse, g->n_sparse_initializer = h.n_sparse;
  }
  g->name = take_qid(p, "a graph name");
  if (accept(p, '(')) {
    if (!accept(p, ')')) {
      do parse_graph_entry(p, g, true);
      while (accept(p, ','));
      expect(p, ')', "after the input list");
    }
  }
  if (!accept_arrow(p)) fail_expected(p, "'=>' after the graph inputs");
  expect(p, '(', "to open the output list");
  if (!accept(p, ')')) {
    do {
      ox_value_info *v = OX_VEC_PUSH(p->a, g->output, g->n_output);
      CHK(v);
      hdr h;
      parse_value_info(p, v, &h);
      apply_vi_header(p, &h, v);
    } while (accept(p, ','));
    expect(p, ')', "after the output list");
  }
  if (accept(p, '<')) {
    if (!accept(p, '>')) {
      do parse_graph_entry(p, g, false);
      while (accept(p, ','));
      expect(p, '>', "after the initializers and value infos");
    }
  }
  parse_node_list(p, &g->node, &g->n_node);
  p->depth--;
  return g;
}

/* ---- attributes ---- */
typedef struct sval {
  int kind; /* ox_attr_type of a single value */
  lit l;
  ox_bytes s;
  ox_tensor *t;
  ox_graph *g;
  ox_type *tp;
  ox_sparse_tensor *sp;
} sval;

static int singleton_of(int t) {
  switch (t) {
    case OX_ATTR_FLOATS:
      return OX_ATTR_FLOAT;
    case OX_ATTR_INTS:
      return OX_ATTR_INT;
    case OX_ATTR_STRINGS:
      return OX_ATTR_STRING;
    case OX_ATTR_TENSORS:
      return OX_ATTR_TENSOR;
    case OX_ATTR_GRAPHS:
      return OX_ATTR_GRAPH;
    case OX_ATTR_SPARSE_TENSORS:
      return OX_ATTR_SPARSE_TENSOR;
    case OX_ATTR_TYPE_PROTOS:
      return OX_ATTR_TYPE_PROTO;
    default:
      return 0;
  }
}

static int list_of(int t) {
  switch (t) {
    case OX_ATTR_FLOAT:
      return OX_ATTR_FLOATS;
    case OX_ATTR_INT:
      return OX_ATTR_INTS;
    case OX_ATTR_STRING:
      return OX_ATTR_STRINGS;
    case OX_ATTR_TENSOR:
      return OX_ATTR_TENSORS;
    case OX_ATTR_GRAPH:
      return OX_ATTR_GRAPHS;
    case OX_ATTR_SPARSE_TENSOR:
      return OX_ATTR_SPARSE_TENSORS;
    case OX_ATTR_TYPE_PROTO:
      return OX_ATTR_TYPE_PROTOS;
    default:
      return 0;
  }
}

/* true when a graph starts at the cursor: name followed by '(' or '=>' */
static bool at_graph_after_name(P *p) {
  int c = peek(p);
  return c == '(' || (c == '=' && peek_at(p, 1) == '>');
}

/* the same, after skipping the n bytes of a name at the cursor */
static bool at_graph_after_name_skip(P *p, size_t n) {
  size_t save = p->pos;
  p->pos += n;
  bool r = at_graph_after_name(p);
  p->pos = save;
  return r;
}

/* expected: singleton type annotation (0 if none) */
static void parse_single_value(P *p, sval *v, int expected) {
  memset(v, 0, sizeof *v);
  int c = peek(p);
  size_t at = p->pos;
  if (c == '<') {
    /* a header for the value that follows: a graph or a tensor */
    size_t save = p->pos;
    hdr h;
    parse_header(p, &h);
    if (at_type(p)) {
      p->pos = save;
      v->kind = OX_ATTR_TENSOR;
      v->t = ox_arena_alloc(p->a, sizeof *v->t);
      CHK(v->t);
      parse_tensor_const(p, v->t);
    } else {
      p->pos = save;
      v->kind = OX_ATTR_GRAPH;
      v->g = ox_arena_alloc(p->a, sizeof *v->g);
      CHK(v->g);
      parse_graph(p, v->g);
    }
  } else if (c == '"') {
    size_t len;
    char *s = take_qstr(p, &len);
    if (expected != OX_ATTR_STRING && at_graph_after_name(p)) {
      p->pos = at;
      v->kind = OX_ATTR_GRAPH;
      v->g = ox_arena_alloc(p->a, sizeof *v->g);
      CHK(v->g);
      parse_graph(p, v->g);
    } else {
      v->kind = OX_ATTR_STRING;
      v->s = to_bytes(s, len);
    }
  } else if (at_number(p)) {
    v->l = take_number(p, "a number");
    v->kind = v->l.is_float ? OX_ATTR_FLOAT : OX_ATTR_INT;
  } else if (c >= 0 && (isalpha(c) || c == '_')) {
    const char *w;
    size_t wn = peek_id(p, &w);
    bool payload = word_ieq(w, wn, "nan") && peek_at(p, wn) == '(' && DIGIT(peek_at(p, wn + 1));
    if (is_special_float(w, wn) && (payload || !at_graph_after_name_skip(p, wn))) {
      v->l = take_number(p, "a number");
      v->kind = OX_ATTR_FLOAT;
    } else if (word_eq(w, wn, "sparse_tensor") && (p->pos += wn, peek(p) == '{')) {
      v->kind = OX_ATTR_SPARSE_TENSOR;
      v->sp = ox_arena_alloc(p->a, sizeof *v->sp);
      CHK(v->sp);
      parse_sparse_body(p, v->sp);
    } else if (p->pos = at, is_type_keyword(w, wn)) {
      ox_type *ty = parse_type(p);
      int nc = peek(p);
      bool tensor =
          expected == OX_ATTR_TENSOR ||
          (expected != OX_ATTR_TYPE_PROTO && (nc == '{' || nc == '=' || nc == '"' || nc == '[' ||
                                              nc == '_' || (nc >= 0 && isalpha(nc))));
      if (tensor) {
        p->pos = at;
        v->kind = OX_ATTR_TENSOR;
        v->t = ox_arena_alloc(p->a, sizeof *v->t);
        CHK(v->t);
        parse_tensor_const(p, v->t);
      } else {
        v->kind = OX_ATTR_TYPE_PROTO;
        v->tp = ty;
      }
    } else {
      v->kind = OX_ATTR_GRAPH;
      v->g = ox_arena_alloc(p->a, sizeof *v->g);
      CHK(v->g);
      parse_graph(p, v->g);
    }
  } else {
    fail_expected(p, "an attribute value");
  }
  (void)at;
}

/* store a single value into the attribute (singleton) or append (list) */
static void store_value(P *p, ox_attr *a, const sval *v, int want, bool list, size_t at) {
  int k = v->kind;
  if (k == OX_ATTR_INT && want == OX_ATTR_FLOAT) k = OX_ATTR_FLOAT;
  if (want && k != want) {
    fail_at(p, at, "expected a %s value, found a %s value", ox_text_attr_type_names[want],
            ox_text_attr_type_names[k]);
  }
  switch (k) {
    case OX_ATTR_FLOAT: {
      float f = lit_f32(p, v->l);
      if (!list) {
        a->f = f, a->has_f = true;
      } else {
        float *d = OX_VEC_PUSH(p->a, a->floats, a->n_floats);
        CHK(d);
        *d = f;
      }
      break;
    }
    case OX_ATTR_INT: {
      int64_t i = lit_i64(p, v->l);
      if (!list) {
        a->i = i, a->has_i = true;
      } else {
        int64_t *d = OX_VEC_PUSH(p->a, a->ints, a->n_ints);
        CHK(d);
        *d = i;
      }
      break;
    }
    case OX_ATTR_STRING:
      if (!list) {
        a->s = v->s;
      } else {
        ox_bytes *d = OX_VEC_PUSH(p->a, a->strings, a->n_strings);
        CHK(d);
        *d = v->s;
      }
      break;
    case OX_ATTR_TENSOR:
      if (!list) {
        a->t = v->t;
      } else {
        ox_tensor *d = OX_VEC_PUSH(p->a, a->tensors, a->n_tensors);
        CHK(d);
        *d = *v->t;
      }
      break;
    case OX_ATTR_GRAPH:
      if (!list) {
        a->g = v->g;
      } else {
        ox_graph *d = OX_VEC_PUSH(p->a, a->graphs, a->n_graphs);
        CHK(d);
        *d = *v->g;
      }
      break;
    case OX_ATTR_SPARSE_TENSOR:
      if (!list) {
        a->sparse_tensor = v->sp;
      } else {
        ox_sparse_tensor *d = OX_VEC_PUSH(p->a, a->sparse_tensors, a->n_sparse_tensors);
        CHK(d);
        *d = *v->sp;
      }
      break;
    case OX_ATTR_TYPE_PROTO:
      if (!list) {
        a->tp = v->tp;
      } else {
        ox_type *d = OX_VEC_PUSH(p->a, a->type_protos, a->n_type_protos);
        CHK(d);
        *d = *v->tp;
      }
      break;
    default:
      fail_at(p, at, "bad attribute value");
  }
}

static void parse_attr_value(P *p, ox_attr *a, int annotated) {
  if (accept(p, '@')) {
    a->ref_attr_name = take_qid(p, "the name of the referenced attribute");
    return;
  }
  if (peek(p) == '[') {
    size_t at = p->pos;
    p->pos++;
    enter(p);
    int want = annotated ? singleton_of(annotated) : 0;
    if (annotated && !want)
      fail_at(p, at, "a %s attribute cannot take a list", ox_text_attr_type_names[annotated]);
    if (accept(p, ']')) {
      if (!annotated) fail_at(p, at, "an empty list needs a type annotation (e.g. ': ints')");
      p->depth--;
      return;
    }
    /* the first element fixes the kind; ints become floats if a float follows */
    size_t first_ints = a->n_ints;
    do {
      ws(p);
      size_t eat = p->pos;
      sval v;
      parse_single_value(p, &v, want);
      if (!want) {
        want = v.kind;
        if (!annotated) a->type = list_of(want), a->has_type = true;
      } else if (want == OX_ATTR_INT && v.kind == OX_ATTR_FLOAT && !annotated) {
        /* promote: [1, 2.5] is a list of floats */
        for (size_t i = first_ints; i < a->n_ints; i++) {
          float *d = OX_VEC_PUSH(p->a, a->floats, a->n_floats);
          CHK(d);
          *d = (float)a->ints[i];
        }
        a->ints = NULL, a->n_ints = 0;
        want = OX_ATTR_FLOAT;
        a->type = OX_ATTR_FLOATS;
      }
      store_value(p, a, &v, want, true, eat);
    } while (accept(p, ','));
    expect(p, ']', "after the list");
    p->depth--;
    return;
  }
  ws(p);
  size_t at = p->pos;
  if (annotated && singleton_of(annotated))
    fail_at(p, at, "a %s attribute needs a list '[...]'", ox_text_attr_type_names[annotated]);
  sval v;
  parse_single_value(p, &v, annotated);
  int k = v.kind == OX_ATTR_INT && annotated == OX_ATTR_FLOAT ? OX_ATTR_FLOAT : v.kind;
  if (!annotated) a->type = k, a->has_type = true;
  store_value(p, a, &v, annotated ? annotated : k, false, at);
}

/* [header] name (':' type)? '=' value. For function attributes the value
 * may be missing (bare name): *has_value tells. */
static void parse_attr(P *p, ox_attr *a, bool fun_attr, bool *has_value) {
  *has_value = true;
  if (peek(p) == '<') {
    hdr h;
    parse_header(p, &h);
    header_allow(p, &h, H_DOC, "an attribute");
    if (h.has & H_DOC) a->doc_string = h.doc;
  }
  a->name = take_qid(p, "an attribute name");
  int annotated = 0;
  if (accept(p, ':')) {
    const char *w;
    size_t wn = peek_id(p, &w);
    for (int i = 1; i < 15 && wn; i++)
      if (word_eq(w, wn, ox_text_attr_type_names[i])) annotated = i;
    if (!annotated) fail_expected(p, "an attribute type (int, float, string, tensor, ...)");
    p->pos += wn;
    a->type = annotated;
    a->has_type = true;
  }
  if (fun_attr && !annotated && !a->doc_string && peek(p) != '=') {
    *has_value = false;
    return;
  }
  expect(p, '=', "after the attribute name");
  parse_attr_value(p, a, annotated);
}

/* ---- functions and models ---- */
static void parse_opsets(P *p, ox_opset **arr, size_t *n) {
  expect(p, '[', "to open the opset list");
  if (accept(p, ']')) return;
  do {
    ox_opset *o = OX_VEC_PUSH(p->a, *arr, *n);
    CHK(o);
    if (at_number(p)) { /* a version alone: the domain field is absent */
      o->version = lit_i64(p, take_number(p, "an opset version"));
      o->has_version = true;
      continue;
    }
    o->domain = take_name_str(p);
    expect(p, ':', "after the opset domain");
    o->version = lit_i64(p, take_number(p, "an opset version"));
    o->has_version = true;
  } while (accept(p, ','));
  expect(p, ']', "after the opset list");
}

static void parse_function(P *p, ox_function *f) {
  if (accept(p, '<')) {
    do {
      size_t kat = (ws(p), p->pos);
      const char *k;
      size_t kn = peek_id(p, &k);
      if (!kn) fail_expected(p, "a function header key");
      p->pos += kn;
      expect(p, ':', "after the key");
      if (word_eq(k, kn, "domain"))
        f->domain = take_name_str(p);
      else if (word_eq(k, kn, "overload"))
        f->overload = take_name_str(p);
      else if (word_eq(k, kn, "doc_string"))
        f->doc_string = take_name_str(p);
      else if (word_eq(k, kn, "opset_import"))
        parse_opsets(p, &f->opset_import, &f->n_opset_import);
      else if (word_eq(k, kn, "metadata_props"))
        parse_str_pairs(p, &f->metadata_props, &f->n_metadata_props, true);
      else
        fail_at(p, kat, "unknown function header key '%.*s'", (int)kn, k);
    } while (accept(p, ','));
    expect(p, '>', "after the function header");
  }
  f->name = take_qid(p, "a function name");
  if (accept(p, '<')) {
    do {
      ox_attr a = {0};
      bool hv;
      parse_attr(p, &a, true, &hv);
      if (hv) {
        ox_attr *d = OX_VEC_PUSH(p->a, f->attribute_proto, f->n_attribute_proto);
        CHK(d);
        *d = a;
      } else {
        push_str(p, &f->attribute, &f->n_attribute, a.name);
      }
    } while (accept(p, ','));
    expect(p, '>', "after the function attributes");
  }
  for (int io = 0; io < 2; io++) {
    expect(p, '(', io ? "to open the function outputs" : "to open the function inputs");
    if (!accept(p, ')')) {
      do {
        ox_value_info v = {0};
        hdr h;
        parse_value_info(p, &v, &h);
        apply_vi_header(p, &h, &v);
        push_str(p, io ? &f->output : &f->input, io ? &f->n_output : &f->n_input, v.name);
        if (v.type) {
          ox_value_info *d = OX_VEC_PUSH(p->a, f->value_info, f->n_value_info);
          CHK(d);
          *d = v;
        }
      } while (accept(p, ','));
      expect(p, ')', io ? "after the function outputs" : "after the function inputs");
    }
    if (!io && !accept_arrow(p)) fail_expected(p, "'=>' after the function inputs");
  }
  if (accept(p, '<')) {
    if (!accept(p, '>')) {
      do {
        ox_value_info *v = OX_VEC_PUSH(p->a, f->value_info, f->n_value_info);
        CHK(v);
        hdr h;
        parse_value_info(p, v, &h);
        apply_vi_header(p, &h, v);
      } while (accept(p, ','));
      expect(p, '>', "after the function value infos");
    }
  }
  parse_node_list(p, &f->node, &f->n_node);
}

/* `[{name: "n", num_devices: 2, device: ["a", "b"]}, ...]` */
static void parse_configurations(P *p, ox_model_proto *m) {
  expect(p, '[', "to open the configurations");
  if (accept(p, ']')) return;
  do {
    ox_device_config *c = OX_VEC_PUSH(p->a, m->configuration, m->n_configuration);
    CHK(c);
    expect(p, '{', "to open a configuration");
    if (!accept(p, '}')) {
      do {
        if (accept_word(p, "name")) {
          expect(p, ':', "after name");
          c->name = take_name_str(p);
        } else if (accept_word(p, "num_devices")) {
          expect(p, ':', "after num_devices");
          size_t at = (ws(p), p->pos);
          int64_t v = lit_i64(p, take_number(p, "a number of devices"));
          if (v < INT32_MIN || v > INT32_MAX) fail_at(p, at, "num_devices out of range");
          c->num_devices = (int32_t)v, c->has_num_devices = true;
        } else if (accept_word(p, "device")) {
          expect(p, ':', "after device");
          expect(p, '[', "to open the device list");
          if (!accept(p, ']')) {
            do push_str(p, &c->device, &c->n_device, take_name_str(p));
            while (accept(p, ','));
            expect(p, ']', "after the device list");
          }
        } else {
          fail_expected(p, "name, num_devices or device");
        }
      } while (accept(p, ','));
      expect(p, '}', "after the configuration");
    }
  } while (accept(p, ','));
  expect(p, ']', "after the configurations");
}

/* `training { initialization: GRAPH, algorithm: GRAPH,
 *             initialization_binding: [...], update_binding: [...] }` */
static void parse_training(P *p, ox_training_info *t) {
  expect(p, '{', "to open the training info");
  if (accept(p, '}')) return;
  do {
    size_t kat = (ws(p), p->pos);
    const char *k;
    size_t kn = peek_id(p, &k);
    if (!kn) fail_expected(p, "a training info key");
    p->pos += kn;
    expect(p, ':', "after the key");
    if (word_eq(k, kn, "initialization") || word_eq(k, kn, "algorithm")) {
      ox_graph *g = ox_arena_alloc(p->a, sizeof *g);
      CHK(g);
      parse_graph(p, g);
      if (k[0] == 'i')
        t->initialization = g;
      else
        t->algorithm = g;
    } else if (word_eq(k, kn, "initialization_binding")) {
      parse_str_pairs(p, &t->initialization_binding, &t->n_initialization_binding, true);
    } else if (word_eq(k, kn, "update_binding")) {
      parse_str_pairs(p, &t->update_binding, &t->n_update_binding, true);
    } else {
      fail_at(p, kat, "unknown training info key '%.*s'", (int)kn, k);
    }
  } while (accept(p, ','));
  expect(p, '}', "after the training info");
}

static bool at_training(P *p) {
  const char *w;
  size_t wn = peek_id(p, &w);
  if (!word_eq(w, wn, "training")) return false;
  size_t save = p->pos;
  p->pos += wn;
  bool r = peek(p) == '{';
  p->pos = save;
  return r;
}

static void parse_model_header(P *p, ox_model_proto *m) {
  expect(p, '<', "to open the model header");
  if (accept(p, '>')) return;
  do {
    size_t kat = (ws(p), p->pos);
    const char *k;
    size_t kn = peek_id(p, &k);
    if (!kn) fail_expected(p, "a model header key");
    p->pos += kn;
    expect(p, ':', "after the key");
    if (word_eq(k, kn, "ir_version")) {
      m->ir_version = lit_i64(p, take_number(p, "an IR version"));
      m->has_ir_version = true;
    } else if (word_eq(k, kn, "model_version")) {
      m->model_version = lit_i64(p, take_number(p, "a model version"));
      m->has_model_version = true;
    } else if (word_eq(k, kn, "opset_import")) {
      parse_opsets(p, &m->opset_import, &m->n_opset_import);
    } else if (word_eq(k, kn, "producer_name")) {
      m->producer_name = take_name_str(p);
    } else if (word_eq(k, kn, "producer_version")) {
      m->producer_version = take_name_str(p);
    } else if (word_eq(k, kn, "domain")) {
      m->domain = take_name_str(p);
    } else if (word_eq(k, kn, "doc_string")) {
      m->doc_string = take_name_str(p);
    } else if (word_eq(k, kn, "metadata_props")) {
      parse_str_pairs(p, &m->metadata_props, &m->n_metadata_props, true);
    } else if (word_eq(k, kn, "configuration")) {
      parse_configurations(p, m);
    } else {
      fail_at(p, kat, "unknown model header key '%.*s'", (int)kn, k);
    }
  } while (accept(p, ','));
  expect(p, '>', "after the model header");
}

/* ---- entry points ---- */
typedef enum { WHAT_MODEL, WHAT_GRAPH, WHAT_FUNCTION } what_t;

static int run(const char *text, size_t size, const char *name, ox_arena *a, what_t what,
               void **out, ox_err *e) {
  if (!text && size) return ox_err_set(e, OX_EINVAL, "%s: no text", name ? name : "<text>");
  P *p = calloc(1, sizeof *p);
  if (!p) return ox_err_set(e, OX_ENOMEM, "out of memory");
  p->s = text ? text : "";
  p->n = size;
  if (size >= 3 && memcmp(p->s, "\xEF\xBB\xBF", 3) == 0) p->pos = 3; /* a UTF-8 byte order mark */
  p->name = name;
  p->a = a;
  p->e = e;
  locale_t cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  locale_t old = cloc ? uselocale(cloc) : (locale_t)0;
  int rc = OX_OK;
  if (setjmp(p->jb)) {
    rc = e ? e->code : OX_EPARSE;
    if (rc == OX_OK) rc = OX_EPARSE;
  } else {
    void *r = NULL;
    if (what == WHAT_MODEL) {
      ox_model_proto *m = ox_arena_alloc(a, sizeof *m);
      CHK(m);
      if (peek(p) == '<') parse_model_header(p, m);
      m->graph = ox_arena_alloc(a, sizeof *m->graph);
      CHK(m->graph);
      parse_graph(p, m->graph);
      while (peek(p) >= 0) {
        if (at_training(p)) {
          p->pos += strlen("training");
          ox_training_info *t = OX_VEC_PUSH(a, m->training_info, m->n_training_info);
          CHK(t);
          parse_training(p, t);
          continue;
        }
        ox_function *f = OX_VEC_PUSH(a, m->functions, m->n_functions);
        CHK(f);
        parse_function(p, f);
      }
      r = m;
    } else if (what == WHAT_GRAPH) {
      ox_graph *g = ox_arena_alloc(a, sizeof *g);
      CHK(g);
      parse_graph(p, g);
      r = g;
    } else {
      ox_function *f = ox_arena_alloc(a, sizeof *f);
      CHK(f);
      parse_function(p, f);
      r = f;
    }
    if (peek(p) >= 0) fail_expected(p, "end of input");
    *out = r;
  }
  if (cloc) {
    uselocale(old);
    freelocale(cloc);
  }
  ox_buf_free(&p->scratch);
  free(p);
  return rc;
}

int ox_text_parse_model(const char *text, size_t size, const char *name, ox_arena *a,
                        ox_model_proto **out, ox_err *e) {
  void *r = NULL;
  int rc = run(text, size, name, a, WHAT_MODEL, &r, e);
  if (rc == OX_OK) *out = r;
  return rc;
}

int ox_text_parse_graph(const char *text, size_t size, const char *name, ox_arena *a,
                        ox_graph **out, ox_err *e) {
  void *r = NULL;
  int rc = run(text, size, name, a, WHAT_GRAPH, &r, e);
  if (rc == OX_OK) *out = r;
  return rc;
}

int ox_text_parse_function(const char *text, size_t size, const char *name, ox_arena *a,
                           ox_function **out, ox_err *e) {
  void *r = NULL;
  int rc = run(text, size, name, a, WHAT_FUNCTION, &r, e);
  if (rc == OX_OK) *out = r;
  return rc;
}
