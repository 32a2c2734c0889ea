/* tls.c - the server's certificate and private key, read at start and again on
 * SIGHUP (a renewed certificate, as cert-manager rotates a Kubernetes secret,
 * is taken without a restart).
 *
 * libmicrohttpd loads MHD_OPTION_HTTPS_MEM_CERT/KEY once, into credentials it
 * owns, with no call to swap them. It can instead ask us at every handshake
 * (MHD_OPTION_HTTPS_CERT_CALLBACK, GnuTLS's retrieve function): here that
 * callback hands out the set in force, so a reload is seen by the next
 * handshake while the connections already open keep the set they started
 * with. GnuTLS does not free what the callback returns and a session may use
 * it until it ends, so a replaced set is kept until the server stops (a few
 * KB per reload). The gRPC server (grpc.c) takes the PEM texts and their
 * generation (ox_serve_tls_pem) from its own per-handshake callback.
 *
 * The callback has no user pointer, so the state is this file's, one per
 * process like the server. */
#include <errno.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define MAX_CHAIN 16
#define MAX_PEM ((size_t)1 << 20)

typedef struct tls_set {
  gnutls_pcert_st chain[MAX_CHAIN];
  unsigned n_chain;
  gnutls_privkey_t key;
  char *cert_pem, *key_pem;
  struct tls_set *older; /* replaced sets, freed at the end */
} tls_set;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tls_set *current;
static unsigned generation;
static char *cert_file, *key_file;

/* a whole PEM file as a string; NULL with a message naming the option */
static char *read_pem(const char *path, const char *option, char *err, size_t errsz) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errsz, "%s: cannot read %s: %s", option, path, strerror(errno));
    return NULL;
  }
  char *text = malloc(MAX_PEM + 1);
  size_t n = text ? fread(text, 1, MAX_PEM, f) : 0;
  bool over = n == MAX_PEM && fgetc(f) != EOF;
  fclose(f);
  if (!text || over || n == 0) {
    free(text);
    snprintf(err, errsz, "%s: %s is %s", option, path,
             !text ? "too large to hold"
             : n   ? "over 1M"
                   : "empty");
    return NULL;
  }
  text[n] = 0;
  return text;
}

/* the key is a secret: not left in freed memory (volatile: a memset just
   before free may be dropped by the compiler) */
static void free_secret(char *s) {
  for (volatile char *p = s; p && *p; p++) *p = 0;
  free(s);
}

static void set_free(tls_set *s) {
  for (unsigned i = 0; i < s->n_chain; i++) gnutls_pcert_deinit(&s->chain[i]);
  if (s->key) gnutls_privkey_deinit(s->key);
  free(s->cert_pem);
  free_secret(s->key_pem);
  free(s);
}

/* the public key's id of a private key, to check that it goes with the certificate */
static bool key_id(gnutls_pubkey_t pub, unsigned char *id, size_t *n) {
  return gnutls_pubkey_get_key_id(pub, 0, id, n) == 0;
}

static tls_set *set_parse(char *cert_pem, char *key_pem, const char *cert_path,
                          const char *key_path, char *err, size_t errsz) {
  tls_set *s = calloc(1, sizeof *s);
  if (!s) {
    free(cert_pem);
    free_secret(key_pem);
    snprintf(err, errsz, "out of memory");
    return NULL;
  }
  s->cert_pem = cert_pem;
  s->key_pem = key_pem;
  gnutls_datum_t c = {(unsigned char *)cert_pem, (unsigned)strlen(cert_pem)};
  gnutls_datum_t k = {(unsigned char *)key_pem, (unsigned)strlen(key_pem)};
  s->n_chain = MAX_CHAIN;
  int rc = gnutls_pcert_list_import_x509_raw(s->chain, &s->n_chain, &c, GNUTLS_X509_FMT_PEM, 0);
  if (rc < 0 || s->n_chain == 0) {
    s->n_chain = 0;
    snprintf(err, errsz, "--tls-cert: %s holds no PEM certificate (chain) that GnuTLS reads: %s",
             cert_path, gnutls_strerror(rc));
    set_free(s);
    return NULL;
  }
  if ((rc = gnutls_privkey_init(&s->key)) < 0 ||
      (rc = gnutls_privkey_import_x509_raw(s->key, &k, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
    snprintf(err, errsz, "--tls-key: %s holds no unencrypted PEM private key: %s", key_path,
             gnutls_strerror(rc));
    set_free(s);
    return NULL;
  }
  gnutls_pubkey_t pub = NULL;
  unsigned char a[64], b[64];
  size_t na = sizeof a, nb = sizeof b;
  bool same = gnutls_pubkey_init(&pub) == 0 &&
              gnutls_pubkey_import_privkey(pub, s->key, 0, 0) == 0 && key_id(pub, a, &na) &&
              key_id(s->chain[0].pubkey, b, &nb) && na == nb && memcmp(a, b, na) == 0;
  if (pub) gnutls_pubkey_deinit(pub);
  if (!same) {
    snprintf(err, errsz, "--tls-key: the key of %s does not go with the certificate of %s",
             key_path, cert_path);
    set_free(s);
    return NULL;
  }
  return s;
}

int ox_serve_tls_load(const char *cert_path, const char *key_path, char *err, size_t errsz) {
  char *cert = read_pem(cert_path, "--tls-cert", err, errsz);
  char *key = cert ? read_pem(key_path, "--tls-key", err, errsz) : NULL;
  if (!key) {
    free(cert);
    return -1;
  }
  tls_set *s = set_parse(cert, key, cert_path, key_path, err, errsz);
  if (!s) return -1;
  pthread_mutex_lock(&lock);
  if (!cert_file) {
    cert_file = strdup(cert_path);
    key_file = strdup(key_path);
  }
  s->older = current;
  current = s;
  generation++;
  pthread_mutex_unlock(&lock);
  return 0;
}

int ox_serve_tls_reload(char *err, size_t errsz) {
  pthread_mutex_lock(&lock);
  char *c = cert_file ? strdup(cert_file) : NULL, *k = key_file ? strdup(key_file) : NULL;
  pthread_mutex_unlock(&lock);
  int rc = c && k ? ox_serve_tls_load(c, k, err, errsz) : -1;
  if (!(c && k)) snprintf(err, errsz, "no --tls-cert to re-read");
  free(c);
  free(k);
  return rc;
}

unsigned ox_serve_tls_pem(char **cert, char **key) {
  pthread_mutex_lock(&lock);
  *cert = current ? strdup(current->cert_pem) : NULL;
  *key = current ? strdup(current->key_pem) : NULL;
  unsigned gen = generation;
  pthread_mutex_unlock(&lock);
  return gen;
}

unsigned ox_serve_tls_generation(void) {
  pthread_mutex_lock(&lock);
  unsigned gen = generation;
  pthread_mutex_unlock(&lock);
  return gen;
}

void ox_serve_tls_free(void) {
  pthread_mutex_lock(&lock);
  for (tls_set *s = current, *o; s; s = o) {
    o = s->older;
    set_free(s);
  }
  current = NULL;
  free(cert_file);
  free(key_file);
  cert_file = key_file = NULL;
  pthread_mutex_unlock(&lock);
}

/* GnuTLS asks for the certificate of this handshake */
static int retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                    const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                    gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey) {
  (void)session, (void)req_ca_dn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
  pthread_mutex_lock(&lock);
  tls_set *s = current;
  pthread_mutex_unlock(&lock);
  if (!s) return -1;
  *pcert = s->chain;
  *pcert_length = s->n_chain;
  *pkey = s->key;
  return 0;
}

void *ox_serve_tls_mhd_callback(void) {
  /* POSIX lets a function pointer travel as void *, which MHD_OptionItem holds */
  gnutls_certificate_retrieve_function2 *f = retrieve;
  void *p;
  memcpy(&p, &f, sizeof p);
  return p;
}
