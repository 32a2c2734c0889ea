/* auth.c - bearer tokens (--auth-token-file). The file holds one token a
 * line; blank lines and lines starting with '#' are skipped, so a Kubernetes
 * secret mounted as a file can carry several tokens while one is rotated out.
 * The server re-reads it on SIGHUP: requests in flight keep the token list
 * they checked against (the list is swapped under a write lock), and a file
 * that cannot be read or holds no token keeps the old list rather than
 * locking every client out.
 *
 * Health probes (kubelet and KServe send no credentials) and, unless
 * --metrics-auth, /metrics stay open: the open paths are classified here the
 * way router.c splits them, so that no spelling of a protected path passes
 * as an open one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve.h"

#define MAX_TOKEN_FILE ((long)1 << 20)

static void free_list(char **t, size_t n) {
  for (size_t i = 0; i < n; i++) free(t[i]);
  free(t);
}

/* the file's tokens: 0, or -1 with a message (and nothing allocated) */
static int read_tokens(const char *path, char ***out, size_t *n_out, char *err, size_t errsz) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errsz, "cannot read the token file %s: %s", path, strerror(errno));
    return -1;
  }
  char **t = NULL;
  size_t n = 0, cap = 0;
  char line[4096];
  long total = 0;
  int rc = 0;
  while (fgets(line, sizeof line, f)) {
    size_t len = strlen(line);
    total += (long)len;
    if (total > MAX_TOKEN_FILE || (len == sizeof line - 1 && line[len - 1] != '\n')) {
      snprintf(err, errsz, "the token file %s has a line over %zu bytes or is over 1M", path,
               sizeof line - 2);
      rc = -1;
      break;
    }
    char *s = line, *e = line + len;
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
    if (s == e || *s == '#') continue;
    *e = 0;
    if (strpbrk(s, " \t")) {
      snprintf(err, errsz, "the token file %s: a token has blanks inside (one token a line)", path);
      rc = -1;
      break;
    }
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 4;
      char **g = realloc(t, nc * sizeof *g);
      if (!g) {
        rc = -1;
        snprintf(err, errsz, "out of memory reading %s", path);
        break;
      }
      t = g, cap = nc;
    }
    if (!(t[n] = strdup(s))) {
      rc = -1;
      snprintf(err, errsz, "out of memory reading %s", path);
      break;
    }
    n++;
  }
  if (!rc && ferror(f)) {
    snprintf(err, errsz, "cannot read the token file %s", path);
    rc = -1;
  }
  fclose(f);
  if (!rc && n == 0) {
    snprintf(err, errsz, "the token file %s holds no token (one a line; '#' starts a comment)",
             path);
    rc = -1;
  }
  if (rc) {
    free_list(t, n);
    return -1;
  }
  *out = t;
  *n_out = n;
  return 0;
}

int ox_serve_auth_init(ox_serve_auth *a, const char *file, bool metrics, char *err, size_t errsz) {
  memset(a, 0, sizeof *a);
  pthread_rwlock_init(&a->lock, NULL);
  a->file = file;
  a->metrics = metrics;
  return file ? ox_serve_auth_reload(a, err, errsz) : 0;
}

int ox_serve_auth_reload(ox_serve_auth *a, char *err, size_t errsz) {
  char **t;
  size_t n;
  if (!a->file || read_tokens(a->file, &t, &n, err, errsz)) return -1;
  pthread_rwlock_wrlock(&a->lock);
  char **old = a->tokens;
  size_t n_old = a->n_tokens;
  a->tokens = t;
  a->n_tokens = n;
  pthread_rwlock_unlock(&a->lock);
  free_list(old, n_old);
  return 0;
}

void ox_serve_auth_free(ox_serve_auth *a) {
  free_list(a->tokens, a->n_tokens);
  a->tokens = NULL;
  a->n_tokens = 0;
  pthread_rwlock_destroy(&a->lock);
}

bool ox_serve_auth_needed(const ox_serve_auth *a, const char *url) {
  if (!a->file) return false;
  /* the path's segments as router.c sees them: empty ones dropped, no query */
  const char *seg[8];
  size_t len[8], n = 0;
  for (const char *p = url; *p && *p != '?';) {
    while (*p == '/') p++;
    if (!*p || *p == '?') break;
    const char *s = p;
    while (*p && *p != '/' && *p != '?') p++;
    if (n == 8) return true; /* no open path is that deep */
    seg[n] = s;
    len[n++] = (size_t)(p - s);
  }
#define SEG(i, lit) (len[i] == sizeof(lit) - 1 && memcmp(seg[i], lit, sizeof(lit) - 1) == 0)
  if (n == 1 && SEG(0, "metrics")) return a->metrics;
  if (n < 3 || !SEG(0, "v2")) return true;
  if (n == 3 && SEG(1, "health")) return !(SEG(2, "live") || SEG(2, "ready"));
  /* v2 models M [versions V] ready */
  if (SEG(1, "models") && SEG(n - 1, "ready") && (n == 4 || (n == 6 && SEG(3, "versions"))))
    return false;
#undef SEG
  return true;
}

/* equal in a time that depends on the presented token's length only, not on
   where the first difference is: an attacker cannot find a token byte by byte */
static bool same_token(const char *given, size_t n_given, const char *token) {
  size_t n_token = strlen(token);
  unsigned diff = n_given != n_token;
  for (size_t i = 0; i < n_given; i++) {
    unsigned char t = (unsigned char)token[i < n_token ? i : 0];
    diff |= (unsigned char)given[i] ^ t;
  }
  return diff == 0;
}

bool ox_serve_auth_check(ox_serve_auth *a, const char *authorization) {
  if (!authorization) return false;
  const char *p = authorization;
  while (*p == ' ') p++;
  if (strncasecmp(p, "Bearer", 6) != 0 || (p[6] != ' ' && p[6] != '\t')) return false;
  p += 6;
  while (*p == ' ' || *p == '\t') p++;
  size_t n = strlen(p);
  while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
  if (!n) return false;
  bool ok = false;
  pthread_rwlock_rdlock(&a->lock);
  /* every token is compared, whichever matches */
  for (size_t i = 0; i < a->n_tokens; i++) ok |= same_token(p, n, a->tokens[i]);
  pthread_rwlock_unlock(&a->lock);
  return ok;
}
