/* guard.c - the connection limits that libmicrohttpd does not count for us:
 * how many connections overall and per client address (checked when a
 * connection is accepted, so that the rejection is counted in /metrics), and
 * a deadline for receiving a whole request, headers and body.
 *
 * The deadline is what stops a slow-loris client: the idle timeout
 * (--idle-timeout) is reset by every byte, so one byte a second keeps a
 * connection, and its thread, forever. Here each connection carries the time
 * by which its current request must be whole; a reaper thread shuts down the
 * socket of any connection past it, which makes libmicrohttpd's recv() see the
 * end of the stream and close the connection. A request that is whole has no
 * deadline while it is served; the next one on a keep-alive connection gets
 * its own from when the previous answer was sent.
 *
 * Shutting down a socket from another thread is safe because libmicrohttpd
 * tells us a connection is closed (ox_serve_guard_close) before it closes the
 * descriptor, and both happen under the guard's lock: the reaper never
 * touches a descriptor number that was reused. Nothing here knows
 * libmicrohttpd; http.c is the glue.
 *
 * Answers rather than silent closes, where the protocol allows one:
 * - past the deadline, a plain-HTTP connection that is not being answered gets
 *   "408 Request Timeout" written straight to its socket before the shutdown
 *   (nothing else writes to it then: libmicrohttpd only writes an answer,
 *   and `responding` says when one was queued). Over TLS the reaper cannot
 *   write into GnuTLS's record stream from outside, so those are only closed.
 * - a connection over a limit is accepted still, while fewer than REFUSE_SLACK
 *   such ones are open, and marked refused: its first request is answered 503
 *   with Retry-After and "Connection: close" (http.c), within REFUSE_NS. Past
 *   the slack they are closed as they are accepted (libmicrohttpd's accept
 *   callback has no socket to write to), so a flood costs at most REFUSE_SLACK
 *   extra threads, each for at most REFUSE_NS. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "serve.h"

#define REAP_EVERY_NS 100000000u /* 0.1 s: how late past its deadline a connection may be cut */
#define REFUSE_SLACK 16          /* connections over a limit being answered 503 at once */
#define REFUSE_NS 2000000000u    /* how long such a one may take to send its request */

struct ox_serve_conn {
  struct ox_serve_conn *prev, *next;
  struct sockaddr_storage addr;
  int fd;
  uint64_t deadline_ns;    /* 0: no request being received */
  bool cut;                /* shut down by the reaper */
  bool responding;         /* an answer was queued: the reaper must not write */
  ox_serve_reject refused; /* over that limit: answered 503; OX_SERVE_REJECT_N: admitted */
};

/* the 408 the reaper writes itself (the whole response, Connection: close) */
static void answer_timeout(int fd, uint64_t request_ns) {
  char body[160], msg[320];
  int nb = snprintf(body, sizeof body,
                    "{\"error\":\"the request was not received whole within %llu s "
                    "(--request-timeout)\"}",
                    (unsigned long long)(request_ns / 1000000000u));
  int n = snprintf(msg, sizeof msg,
                   "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: "
                   "application/json\r\nContent-Length: %d\r\n\r\n%s",
                   nb, body);
  /* never blocks the reaper: a client that reads nothing loses the answer */
  if (n > 0 && n < (int)sizeof msg) (void)!send(fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* same client: the address without the port */
static bool same_host(const struct sockaddr *a, const struct sockaddr_storage *b) {
  if (a->sa_family != b->ss_family) return false;
  if (a->sa_family == AF_INET)
    return ((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr ==
           ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr;
  if (a->sa_family == AF_INET6)
    return memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
                  &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr,
                  sizeof(struct in6_addr)) == 0;
  return true; /* other families (none today) share one count */
}

static void *reaper(void *arg) {
  ox_serve_guard *g = arg;
  pthread_mutex_lock(&g->lock);
  while (!g->stop) {
    uint64_t now = ox_serve_now_ns();
    for (ox_serve_conn *c = g->head; c; c = c->next) {
      if (c->cut || !c->deadline_ns || now < c->deadline_ns) continue;
      bool refused = c->refused != OX_SERVE_REJECT_N; /* counted already */
      if (g->answer_timeouts && !c->responding && !refused) answer_timeout(c->fd, g->request_ns);
      shutdown(c->fd, SHUT_RDWR);
      c->cut = true;
      if (!refused) ox_serve_metrics_reject(OX_SERVE_REJECT_REQUEST_TIMEOUT);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += REAP_EVERY_NS;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_cond_timedwait(&g->wake, &g->lock, &ts);
  }
  pthread_mutex_unlock(&g->lock);
  return NULL;
}

int ox_serve_guard_start(ox_serve_guard *g, int max_conns, int max_per_client, int request_s) {
  memset(g, 0, sizeof *g);
  pthread_mutex_init(&g->lock, NULL);
  pthread_cond_init(&g->wake, NULL);
  g->max_conns = max_conns;
  g->max_per_client = max_per_client;
  g->request_ns = (uint64_t)request_s * 1000000000u;
  /* refused connections have a deadline even without --request-timeout */
  if (pthread_create(&g->reaper, NULL, reaper, g)) return -1;
  g->reaping = true;
  return 0;
}

void ox_serve_guard_stop(ox_serve_guard *g) {
  pthread_mutex_lock(&g->lock);
  g->stop = true;
  pthread_cond_signal(&g->wake);
  pthread_mutex_unlock(&g->lock);
  if (g->reaping) pthread_join(g->reaper, NULL);
  /* the daemon is stopped: every connection was closed and freed */
  pthread_cond_destroy(&g->wake);
  pthread_mutex_destroy(&g->lock);
}

/* the limit a connection from addr would go over (OX_SERVE_REJECT_N: none);
   counts the admitted connections only, under the lock */
static ox_serve_reject over_limit(const ox_serve_guard *g, const struct sockaddr *addr) {
  if (g->max_conns && g->n_conns >= g->max_conns) return OX_SERVE_REJECT_CONNECTIONS;
  if (g->max_per_client && addr) {
    int same = 0;
    for (ox_serve_conn *c = g->head; c; c = c->next)
      same += c->refused == OX_SERVE_REJECT_N && same_host(addr, &c->addr);
    if (same >= g->max_per_client) return OX_SERVE_REJECT_CLIENT_CONNECTIONS;
  }
  return OX_SERVE_REJECT_N;
}

bool ox_serve_guard_admit(ox_serve_guard *g, const struct sockaddr *addr) {
  pthread_mutex_lock(&g->lock);
  ox_serve_reject why = over_limit(g, addr);
  /* over a limit: still accepted (to be answered 503) while there is room */
  bool drop = why != OX_SERVE_REJECT_N && g->n_refused >= REFUSE_SLACK;
  pthread_mutex_unlock(&g->lock);
  if (drop) ox_serve_metrics_reject(why);
  return !drop;
}

ox_serve_conn *ox_serve_guard_open(ox_serve_guard *g, const struct sockaddr *addr, size_t addr_len,
                                   int fd) {
  ox_serve_conn *c = calloc(1, sizeof *c);
  if (!c) return NULL; /* then this connection is neither counted nor timed */
  if (addr && addr_len <= sizeof c->addr) memcpy(&c->addr, addr, addr_len);
  c->fd = fd;
  pthread_mutex_lock(&g->lock);
  /* checked again here (admit and open run one after the other on the
     listening thread): this is where the connection is counted */
  c->refused = over_limit(g, addr && addr_len <= sizeof c->addr ? addr : NULL);
  uint64_t now = ox_serve_now_ns();
  if (c->refused != OX_SERVE_REJECT_N) {
    c->deadline_ns = now + (g->request_ns && g->request_ns < REFUSE_NS ? g->request_ns : REFUSE_NS);
    g->n_refused++;
  } else {
    c->deadline_ns = g->request_ns ? now + g->request_ns : 0;
    g->n_conns++;
  }
  c->next = g->head;
  if (g->head) g->head->prev = c;
  g->head = c;
  pthread_mutex_unlock(&g->lock);
  if (c->refused != OX_SERVE_REJECT_N) ox_serve_metrics_reject(c->refused);
  return c;
}

ox_serve_reject ox_serve_guard_refused(ox_serve_guard *g, ox_serve_conn *c) {
  if (!c) return OX_SERVE_REJECT_N;
  pthread_mutex_lock(&g->lock);
  ox_serve_reject why = c->refused;
  pthread_mutex_unlock(&g->lock);
  return why;
}

void ox_serve_guard_responding(ox_serve_guard *g, ox_serve_conn *c) {
  if (!c) return;
  pthread_mutex_lock(&g->lock);
  c->responding = true;
  pthread_mutex_unlock(&g->lock);
}

void ox_serve_guard_close(ox_serve_guard *g, ox_serve_conn *c) {
  if (!c) return;
  pthread_mutex_lock(&g->lock);
  if (c->prev)
    c->prev->next = c->next;
  else
    g->head = c->next;
  if (c->next) c->next->prev = c->prev;
  if (c->refused != OX_SERVE_REJECT_N)
    g->n_refused--;
  else
    g->n_conns--;
  pthread_mutex_unlock(&g->lock);
  free(c);
}

void ox_serve_guard_request_whole(ox_serve_guard *g, ox_serve_conn *c) {
  if (!c) return;
  pthread_mutex_lock(&g->lock);
  /* a refused connection keeps its deadline: it is closed after its 503 */
  if (c->refused == OX_SERVE_REJECT_N) c->deadline_ns = 0;
  pthread_mutex_unlock(&g->lock);
}

void ox_serve_guard_request_done(ox_serve_guard *g, ox_serve_conn *c) {
  if (!c) return;
  pthread_mutex_lock(&g->lock);
  c->responding = false;
  if (c->refused == OX_SERVE_REJECT_N)
    c->deadline_ns = g->request_ns ? ox_serve_now_ns() + g->request_ns : 0;
  pthread_mutex_unlock(&g->lock);
}
