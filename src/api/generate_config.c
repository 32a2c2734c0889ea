/* generate_config.c - genai_config.json for the generation loop: the file
 * flattened into leaves keyed by their dotted path, which is all the loop
 * asks of it (a handful of names and numbers). A small recursive-descent
 * reader: the library takes no JSON dependency for one optional file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate_impl.h"

typedef struct reader {
  const char *p, *start, *end;
  ox_gen_config *c;
  ox_err *e;
  int depth;
} reader;

static int bad(reader *r, const char *what) {
  return ox_err_set(r->e, OX_EPARSE, "genai_config.json: %s at byte %zu", what,
                    (size_t)(r->p - r->start));
}

static void skip_ws(reader *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static int add_leaf(reader *r, const char *path, char *str, double num, int is_num, int is_bool) {
  ox_gen_config *c = r->c;
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 32;
    ox_gen_leaf *l = realloc(c->leaves, cap * sizeof *l);
    if (!l) return ox_err_set(r->e, OX_ENOMEM, "out of memory");
    c->leaves = l;
    c->cap = cap;
  }
  char *p = strdup(path);
  if (!p) return ox_err_set(r->e, OX_ENOMEM, "out of memory");
  c->leaves[c->n++] = (ox_gen_leaf){p, str, num, is_bool, is_num};
  return OX_OK;
}

/* A string's contents into a malloc'd copy; r->p past the closing quote. */
static int read_string(reader *r, char **out) {
  r->p++; /* the opening quote */
  size_t cap = 16, n = 0;
  char *s = malloc(cap);
  if (!s) return ox_err_set(r->e, OX_ENOMEM, "out of memory");
  while (r->p < r->end && *r->p != '"') {
    char ch = *r->p++;
    if (ch == '\\') {
      if (r->p >= r->end) break;
      char esc = *r->p++;
      const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
      const char *hit = strchr(from, esc);
      if (esc == 'u' && r->end - r->p >= 4) {
        ch = (char)strtol((char[]){r->p[0], r->p[1], r->p[2], r->p[3], 0}, NULL, 16);
        r->p += 4;
      } else if (hit && esc) {
        ch = to[hit - from];
      } else {
        free(s);
        return bad(r, "bad escape in a string");
      }
    }
    if (n + 2 > cap) {
      char *t = realloc(s, cap *= 2);
      if (!t) {
        free(s);
        return ox_err_set(r->e, OX_ENOMEM, "out of memory");
      }
      s = t;
    }
    s[n++] = ch;
  }
  if (r->p >= r->end) {
    free(s);
    return bad(r, "unterminated string");
  }
  r->p++;
  s[n] = 0;
  *out = s;
  return OX_OK;
}

static int read_value(reader *r, char *path, size_t plen, size_t cap);

/* One member or item: its path is path + "." + key (the root's members
 * without the dot). */
static int read_child(reader *r, char *path, size_t plen, size_t cap, const char *key) {
  size_t klen = strlen(key), add = (plen ? 1 : 0) + klen;
  if (plen + add + 1 > cap) return bad(r, "a key path too long");
  if (plen) path[plen] = '.';
  memcpy(path + plen + (plen ? 1 : 0), key, klen + 1);
  int rc = read_value(r, path, plen + add, cap);
  path[plen] = 0;
  return rc;
}

static int read_container(reader *r, char *path, size_t plen, size_t cap) {
  char close = *r->p == '{' ? '}' : ']';
  if (++r->depth > 64) return bad(r, "nesting too deep");
  r->p++;
  skip_ws(r);
  for (size_t i = 0; r->p < r->end && *r->p != close; i++) {
    char idx[24], *key = idx;
    if (close == '}') {
      if (*r->p != '"') return bad(r, "expected a key");
      int rc = read_string(r, &key);
      if (rc) return rc;
      skip_ws(r);
      if (r->p >= r->end || *r->p != ':') {
        free(key);
        return bad(r, "expected ':'");
      }
      r->p++;
    } else {
      snprintf(idx, sizeof idx, "%zu", i);
    }
    int rc = read_child(r, path, plen, cap, key);
    if (key != idx) free(key);
    if (rc) return rc;
    skip_ws(r);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      skip_ws(r);
    } else if (r->p < r->end && *r->p != close) {
      return bad(r, "expected ',' or the end of a list");
    }
  }
  if (r->p >= r->end) return bad(r, "unterminated object or array");
  r->p++;
  r->depth--;
  return OX_OK;
}

static int read_value(reader *r, char *path, size_t plen, size_t cap) {
  skip_ws(r);
  if (r->p >= r->end) return bad(r, "unexpected end");
  char ch = *r->p;
  if (ch == '{' || ch == '[') return read_container(r, path, plen, cap);
  if (ch == '"') {
    char *s;
    int rc = read_string(r, &s);
    if (rc) return rc;
    rc = add_leaf(r, path, s, 0, 0, 0);
    if (rc) free(s);
    return rc;
  }
  static const struct {
    const char *word;
    double v;
    int is_bool;
  } words[] = {{"true", 1, 1}, {"false", 0, 1}, {"null", 0, 0}};
  for (size_t i = 0; i < 3; i++) {
    size_t n = strlen(words[i].word);
    if ((size_t)(r->end - r->p) >= n && memcmp(r->p, words[i].word, n) == 0) {
      r->p += n;
      return add_leaf(r, path, NULL, words[i].v, 0, words[i].is_bool);
    }
  }
  char num[64];
  size_t n = 0;
  while (r->p + n < r->end && n < sizeof num - 1 && strchr("+-0123456789.eE", r->p[n])) {
    num[n] = r->p[n];
    n++;
  }
  num[n] = 0;
  char *stop;
  double v = strtod(num, &stop);
  if (n == 0 || *stop) return bad(r, "expected a value");
  r->p += n;
  return add_leaf(r, path, NULL, v, 1, 0);
}

int ox_gen_config_read(ox_gen_config *c, const char *dir, ox_err *e) {
  memset(c, 0, sizeof *c);
  if (!dir) return OX_OK;
  char file[4096];
  if (snprintf(file, sizeof file, "%s/genai_config.json", dir) >= (int)sizeof file)
    return ox_err_set(e, OX_EINVAL, "config folder path too long");
  if (!ox_path_is_file(file)) return OX_OK;
  uint8_t *data;
  size_t size;
  int rc = ox_file_read_all(file, &data, &size, e);
  if (rc) return rc;
  char path[512] = "";
  reader r = {(const char *)data, (const char *)data, (const char *)data + size, c, e, 0};
  rc = read_value(&r, path, 0, sizeof path);
  skip_ws(&r);
  if (!rc && r.p != r.end) rc = bad(&r, "text after the document");
  free(data);
  if (rc) ox_gen_config_free(c);
  return rc;
}

void ox_gen_config_free(ox_gen_config *c) {
  for (size_t i = 0; i < c->n; i++) {
    free(c->leaves[i].path);
    free(c->leaves[i].str);
  }
  free(c->leaves);
  memset(c, 0, sizeof *c);
}

const ox_gen_leaf *ox_gen_config_get(const ox_gen_config *c, const char *path) {
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->leaves[i].path, path) == 0) return &c->leaves[i];
  return NULL;
}

const char *ox_gen_config_str(const ox_gen_config *c, const char *path, const char *dflt) {
  const ox_gen_leaf *l = ox_gen_config_get(c, path);
  return l && l->str ? l->str : dflt;
}

int64_t ox_gen_config_int(const ox_gen_config *c, const char *path, int64_t dflt) {
  const ox_gen_leaf *l = ox_gen_config_get(c, path);
  return l && (l->is_num || l->is_bool) ? (int64_t)l->num : dflt;
}
