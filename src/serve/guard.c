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
 * libmicrohttpd; http.c is the glue. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "serve.h"

#define REAP_EVERY_NS 100000000u /* 0.1 s: how late past its deadline a connection may be cut */

struct ox_serve_conn {
  struct ox_serve_conn *prev, *next;
  struct sockaddr_storage addr;
  int fd;
  uint64_t deadline_ns; /* 0: no request being received */
  bool cut;             /* shut down by the reaper */
};

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
      shutdown(c->fd, SHUT_RDWR);
      c->cut = true;
      ox_serve_metrics_reject(OX_SERVE_REJECT_REQUEST_TIMEOUT);
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
  if (g->request_ns && pthread_create(&g->reaper, NULL, reaper, g)) return -1;
  g->reaping = g->request_ns != 0;
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

bool ox_serve_guard_admit(ox_serve_guard *g, const struct sockaddr *addr) {
  pthread_mutex_lock(&g->lock);
  ox_serve_reject why = OX_SERVE_REJECT_N;
  if (g->max_conns && g->n_conns >= g->max_conns) {
    why = OX_SERVE_REJECT_CONNECTIONS;
  } else if (g->max_per_client) {
    int same = 0;
    for (ox_serve_conn *c = g->head; c; c = c->next) same += same_host(addr, &c->addr);
    if (same >= g->max_per_client) why = OX_SERVE_REJECT_CLIENT_CONNECTIONS;
  }
  pthread_mutex_unlock(&g->lock);
  if (why == OX_SERVE_REJECT_N) return true;
  ox_serve_metrics_reject(why);
  return false;
}

ox_serve_conn *ox_serve_guard_open(ox_serve_guard *g, const struct sockaddr *addr, size_t addr_len,
                                   int fd) {
  ox_serve_conn *c = calloc(1, sizeof *c);
  if (!c) return NULL; /* then this connection is neither counted nor timed */
  if (addr && addr_len <= sizeof c->addr) memcpy(&c->addr, addr, addr_len);
  c->fd = fd;
  pthread_mutex_lock(&g->lock);
  c->deadline_ns = g->request_ns ? ox_serve_now_ns() + g->request_ns : 0;
  c->next = g->head;
  if (g->head) g->head->prev = c;
  g->head = c;
  g->n_conns++;
  pthread_mutex_unlock(&g->lock);
  return c;
}

void ox_serve_guard_close(ox_serve_guard *g, ox_serve_conn *c) {
  if (!c) return;
  pthread_mutex_lock(&g->lock);
  if (c->prev)
    c->prev->next = c->next;
  else
    g->head = c->next;
  if (c->next) c->next->prev = c->prev;
  g->n_conns--;
  pthread_mutex_unlock(&g->lock);
  free(c);
}

void ox_serve_guard_request_whole(ox_serve_guard *g, ox_serve_conn *c) {
  if (!c) return;
  pthread_mutex_lock(&g->lock);
  c->deadline_ns = 0;
  pthread_mutex_unlock(&g->lock);
}

void ox_serve_guard_request_done(ox_serve_guard *g, ox_serve_conn *c) {
  if (!c) return;
  pthread_mutex_lock(&g->lock);
  c->deadline_ns = g->request_ns ? ox_serve_now_ns() + g->request_ns : 0;
  pthread_mutex_unlock(&g->lock);
}
