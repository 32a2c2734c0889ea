/* http.c - HTTP/1.1 (over TLS with --tls-cert) through libmicrohttpd. One thread per connection: a
 * connection thread reads the body, routes it and, for an inference, sleeps
 * while a worker of the pool runs the model (sched.c). Threads are cheap next
 * to a model run, and blocking threads are what lets many requests wait in
 * the queue together so that dynamic batching can gather them. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"

/* beyond the limit a body is read and dropped (so that the client sees the
   413 rather than a reset) up to this much more, then the connection closes */
#define DISCARD_SLACK ((size_t)16 << 20)

typedef struct conn_ctx {
  ox_serve_buf body;
  size_t received;
  bool too_big;
  uint64_t t0;
  int status;
  size_t sent;
  char method[16];
  char url[256];
} conn_ctx;

static struct ox_serve_conn *guard_conn(struct MHD_Connection *c);

static enum MHD_Result send_reply(struct MHD_Connection *c, ox_serve_server *srv, conn_ctx *x,
                                  ox_serve_reply *rep) {
  if (rep->body.oom) {
    free(rep->body.data);
    rep->body = (ox_serve_buf){0};
    ox_serve_reply_error(rep, 500, "out of memory");
  }
  struct MHD_Response *r;
  if (rep->body.data)
    r = MHD_create_response_from_buffer(rep->body.len, rep->body.data, MHD_RESPMEM_MUST_FREE);
  else
    r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (!r) {
    free(rep->body.data);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, rep->content_type);
  if (rep->header_length >= 0) {
    char n[32];
    snprintf(n, sizeof n, "%lld", rep->header_length);
    MHD_add_response_header(r, "Inference-Header-Content-Length", n);
  }
  if (rep->www_authenticate)
    MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, rep->www_authenticate);
  if (rep->retry_after > 0) {
    char n[16];
    snprintf(n, sizeof n, "%d", rep->retry_after);
    MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, n);
  }
  /* while draining, clients are told to reconnect (to another replica) */
  if (rep->close || atomic_load(&srv->draining))
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
  ox_serve_guard_responding(&srv->guard, guard_conn(c));
  x->status = rep->status;
  x->sent = rep->body.len;
  enum MHD_Result ret = MHD_queue_response(c, (unsigned)rep->status, r);
  MHD_destroy_response(r);
  return ret;
}

/* ---------------------------------------------------------------- limits */

static enum MHD_Result accept_cb(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
  (void)addrlen;
  ox_serve_server *srv = cls;
  return ox_serve_guard_admit(&srv->guard, addr) ? MHD_YES : MHD_NO;
}

static void connection_cb(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
  ox_serve_server *srv = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *a =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const union MHD_ConnectionInfo *f =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const struct sockaddr *sa = a ? a->client_addr : NULL;
    size_t len = !sa                         ? 0
                 : sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                             : sizeof(struct sockaddr_in);
    *socket_context = f ? ox_serve_guard_open(&srv->guard, sa, len, f->connect_fd) : NULL;
  } else {
    ox_serve_guard_close(&srv->guard, *socket_context);
    *socket_context = NULL;
  }
}

static struct ox_serve_conn *guard_conn(struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *i =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return i ? i->socket_context : NULL;
}

static enum MHD_Result add_header_size(void *cls, enum MHD_ValueKind kind, const char *key,
                                       const char *value) {
  (void)kind;
  size_t *n = cls;
  *n += strlen(key) + (value ? strlen(value) : 0) + 4; /* "k: v\r\n" */
  return MHD_YES;
}

/* ---------------------------------------------------------------- requests */

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls) {
  (void)version;
  ox_serve_server *srv = cls;
  conn_ctx *x = *con_cls;
  if (!x) {
    if (!(x = calloc(1, sizeof *x))) return MHD_NO;
    x->t0 = ox_serve_now_ns();
    snprintf(x->method, sizeof x->method, "%s", method);
    snprintf(x->url, sizeof x->url, "%s", url);
    *con_cls = x;
    atomic_fetch_add(&srv->in_flight, 1);
    /* a connection over a limit (guard.c): told so, then closed */
    ox_serve_reject over = ox_serve_guard_refused(&srv->guard, guard_conn(c));
    if (over != OX_SERVE_REJECT_N) {
      ox_serve_reply rep = {0};
      if (over == OX_SERVE_REJECT_CONNECTIONS)
        ox_serve_reply_error(&rep, 503,
                             "the server has %d connections open, its limit "
                             "(--max-connections); retry shortly",
                             srv->guard.max_conns);
      else
        ox_serve_reply_error(&rep, 503,
                             "this client address has %d connections open, the "
                             "limit (--max-connections-per-client); retry on one of them or "
                             "shortly",
                             srv->guard.max_per_client);
      rep.retry_after = 1;
      rep.close = true;
      return send_reply(c, srv, x, &rep);
    }
    /* the request line and headers as sent, give or take the spaces: within
       the limit for libmicrohttpd's memory pool, larger ones are answered by
       libmicrohttpd itself (431, its own body) before they reach us */
    size_t head = strlen(method) + strlen(url) + 12;
    MHD_get_connection_values(c, MHD_HEADER_KIND, add_header_size, &head);
    if (head > srv->max_header) {
      ox_serve_reply rep = {0};
      ox_serve_reply_error(&rep, 431,
                           "the request line and headers take %zu bytes, over the limit (%zu, "
                           "--max-header)",
                           head, srv->max_header);
      ox_serve_metrics_reject(OX_SERVE_REJECT_HEADER_SIZE);
      return send_reply(c, srv, x, &rep);
    }
    /* before any of the body is read: a client without a token gets nothing
       buffered for it */
    if (ox_serve_auth_needed(&srv->auth, url)) {
      const char *h =
          MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
      if (!ox_serve_auth_check(&srv->auth, h)) {
        ox_serve_reply rep = {0};
        ox_serve_reply_error(&rep, 401,
                             h ? "the Authorization header carries no valid bearer token"
                               : "this endpoint needs an Authorization header: 'Bearer <token>'");
        /* RFC 6750: the error code only when a token was presented */
        rep.www_authenticate =
            h ? "Bearer realm=\"onnxc\", error=\"invalid_token\"" : "Bearer realm=\"onnxc\"";
        ox_serve_metrics_reject(OX_SERVE_REJECT_UNAUTHORIZED);
        return send_reply(c, srv, x, &rep);
      }
    }
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long declared = cl ? strtoull(cl, NULL, 10) : 0;
    if (declared > srv->max_body) {
      x->too_big = true;
      if (declared > srv->max_body + DISCARD_SLACK) { /* not worth reading: answer now */
        ox_serve_metrics_reject(OX_SERVE_REJECT_BODY_SIZE);
        ox_serve_reply rep = {0};
        ox_serve_reply_error(&rep, 413, "request body of %llu bytes is over the limit (%zu)",
                             declared, srv->max_body);
        return send_reply(c, srv, x, &rep);
      }
    } else if (declared) {
      /* one allocation for the whole body, up to a bound: a client that
         declares a large body and sends nothing should not pin that much */
      size_t first = declared < ((size_t)4 << 20) ? (size_t)declared : ((size_t)4 << 20);
      char *p = malloc(first + 1);
      if (p) {
        x->body.data = p;
        x->body.cap = first + 1;
        p[0] = 0;
      }
    }
    return MHD_YES;
  }
  if (*upload_size) {
    x->received += *upload_size;
    if (!x->too_big && x->received > srv->max_body) {
      x->too_big = true;
      free(x->body.data);
      x->body = (ox_serve_buf){0};
    }
    if (!x->too_big) ox_serve_buf_put(&x->body, upload, *upload_size);
    *upload_size = 0;
    return x->received > srv->max_body + DISCARD_SLACK ? MHD_NO : MHD_YES;
  }
  if (x->status) return MHD_YES; /* answered early */
  ox_serve_guard_request_whole(&srv->guard, guard_conn(c));
  ox_serve_reply rep = {0};
  if (x->too_big) {
    ox_serve_metrics_reject(OX_SERVE_REJECT_BODY_SIZE);
    ox_serve_reply_error(&rep, 413, "request body of %zu bytes is over the limit (%zu)",
                         x->received, srv->max_body);
  } else if (x->body.oom)
    ox_serve_reply_error(&rep, 500, "out of memory reading the body");
  else
    ox_serve_route(
        srv, method, url,
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Inference-Header-Content-Length"),
        x->body.data ? x->body.data : "", x->body.len, &rep);
  return send_reply(c, srv, x, &rep);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe) {
  ox_serve_server *srv = cls;
  conn_ctx *x = *con_cls;
  if (!x) return;
  *con_cls = NULL;
  ox_serve_guard_request_done(&srv->guard, guard_conn(c));
  if (x->status) ox_serve_metrics_http(x->status);
  if (srv->access_log) {
    char addr[INET6_ADDRSTRLEN] = "-";
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr) {
      const struct sockaddr *sa = ci->client_addr;
      if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, addr,
                  sizeof addr);
      else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, addr,
                  sizeof addr);
    }
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    /* one fprintf per line: stdio locks the stream, so lines never interleave */
    fprintf(stderr, "%s %s \"%s %s\" %d %zu %.3fms%s\n", when, addr, x->method, x->url, x->status,
            x->sent, (double)(ox_serve_now_ns() - x->t0) * 1e-6,
            toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (aborted)");
  }
  free(x->body.data);
  free(x);
  atomic_fetch_sub(&srv->in_flight, 1);
}

struct MHD_Daemon *ox_serve_http_start(ox_serve_server *srv, const char *host, int port,
                                       int *bound_port, char *err, size_t errsz) {
  struct addrinfo hints = {0}, *ai = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  char portstr[16];
  snprintf(portstr, sizeof portstr, "%d", port);
  int rc = getaddrinfo(host, portstr, &hints, &ai);
  if (rc || !ai) {
    snprintf(err, errsz, "cannot resolve host '%s': %s", host, gai_strerror(rc));
    return NULL;
  }
  unsigned flags =
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC;
  if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  /* TLS through libmicrohttpd's GnuTLS: TLS 1.2 and 1.3 only (1.0 and 1.1 are
     deprecated, RFC 8996), GnuTLS's default ("NORMAL") ciphers within them. The
     certificate comes from tls.c at each handshake, so that SIGHUP can renew it */
  struct MHD_OptionItem tls[] = {
      {MHD_OPTION_HTTPS_CERT_CALLBACK, 0, ox_serve_tls_mhd_callback()},
      {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"},
      {MHD_OPTION_END, 0, NULL},
  };
  if (srv->tls) {
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES ||
        MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) != MHD_YES) {
      freeaddrinfo(ai);
      snprintf(err, errsz,
               "--tls-cert: this libmicrohttpd was built without TLS (GnuTLS) or "
               "its certificate callback");
      return NULL;
    }
    flags |= MHD_USE_TLS;
  }
  srv->guard.answer_timeouts = !srv->tls;
  /* the pool holds the headers and the read and write buffers: room for the
     largest headers we answer ourselves (with a JSON 431) and the buffers */
  size_t pool = srv->max_header * 2 + ((size_t)32 << 10);
  /* libmicrohttpd's own limit drops connections without telling us: ours
     (accept_cb) is the one that counts, this one only backs it */
  unsigned limit = (unsigned)srv->guard.max_conns + 32u; /* + guard.c's REFUSE_SLACK, 16 */
  struct MHD_Daemon *d = MHD_start_daemon(
      flags, (uint16_t)port, accept_cb, srv, handler, srv, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
      MHD_OPTION_NOTIFY_COMPLETED, completed, srv, MHD_OPTION_NOTIFY_CONNECTION, connection_cb, srv,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)srv->idle_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      pool, MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u,
      MHD_OPTION_ARRAY, srv->tls ? tls : tls + 2, MHD_OPTION_END);
  freeaddrinfo(ai);
  if (!d) {
    if (srv->tls)
      snprintf(err, errsz,
               "cannot listen on %s:%d with TLS (the address is in use or not this machine's, or "
               "--tls-cert/--tls-key are not a PEM certificate and its private key)",
               host, port);
    else
      snprintf(err, errsz, "cannot listen on %s:%d (in use, or not an address of this machine)",
               host, port);
    return NULL;
  }
  const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  *bound_port = di ? di->port : port;
  return d;
}

void ox_serve_http_quiesce(struct MHD_Daemon *d) {
  MHD_socket s = MHD_quiesce_daemon(d);
  if (s != MHD_INVALID_SOCKET) close(s); /* handed back to us to close */
}

void ox_serve_http_stop(struct MHD_Daemon *d) { MHD_stop_daemon(d); }
