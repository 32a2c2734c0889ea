/* serve.h - `onnxc serve`: the Open Inference Protocol (KServe v2 REST) over
 * HTTP, built on the public API (include/onnxc.h) only.
 *
 * Files, one job each:
 *   cmd_serve.c  the tool's `serve` subcommand: options (built without the server too)
 *   server.c     start, signals (SIGHUP: token and certificate reload), graceful shutdown
 *   tls.c        the certificate and key (GnuTLS), handed out per handshake, reloadable
 *   http.c       libmicrohttpd glue: bodies, limits, responses, access log, TLS
 *   auth.c       bearer tokens: the token file, open paths, the check
 *   guard.c      connection limits (overall, per client) and the request deadline
 *   router.c     paths and methods -> handlers (health, metadata, repository, infer)
 *   codec.c      JSON tensors <-> onnxc values, protocol datatypes, the response writer
 *   binary.c     the binary tensor data extension
 *   repo.c       the model repository: scan, load, unload, versions, per-model config
 *   sched.c      the worker pool and dynamic batching
 *   batch.c      concatenating requests along the batch dim and splitting results back
 *   metrics.c    counters and histograms, Prometheus text
 *   grpc.c       the KServe v2 gRPC endpoint on gRPC's C core (--grpc-port)
 *   grpc_call.c  its methods on the repository and the workers
 *   grpc_msg.c   its messages (grpc_service.proto) in the protobuf wire format */
#ifndef OX_SERVE_H
#define OX_SERVE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnxc.h"

/* ---------------------------------------------------------------- growable text/bytes */

typedef struct ox_serve_buf {
  char *data;
  size_t len, cap;
  bool oom; /* a failed growth: later appends do nothing, the caller checks once */
} ox_serve_buf;

void ox_serve_buf_put(ox_serve_buf *b, const void *p, size_t n);
void ox_serve_buf_puts(ox_serve_buf *b, const char *s);
void ox_serve_buf_printf(ox_serve_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* s as a JSON string literal, quotes included */
void ox_serve_buf_json_str(ox_serve_buf *b, const char *s, size_t n);

/* ---------------------------------------------------------------- metrics */

#define OX_SERVE_LAT_BUCKETS 14
#define OX_SERVE_BATCH_BUCKETS 9

typedef struct ox_serve_hist {
  _Atomic uint64_t bucket[OX_SERVE_LAT_BUCKETS]; /* cumulative counts are made when printing */
  _Atomic uint64_t count;
  _Atomic uint64_t sum_ns;
} ox_serve_hist;

typedef struct ox_serve_metrics {
  _Atomic uint64_t requests, failures;
  ox_serve_hist latency, queue;                   /* seconds */
  _Atomic uint64_t batch[OX_SERVE_BATCH_BUCKETS]; /* runs by number of requests batched */
  _Atomic uint64_t batch_count, batch_sum;
} ox_serve_metrics;

void ox_serve_hist_add(ox_serve_hist *h, uint64_t ns);
void ox_serve_metrics_batch(ox_serve_metrics *m, size_t requests);
/* counts a finished HTTP response by status code (process-wide table) */
void ox_serve_metrics_http(int status);

/* why a request or a connection was turned away (onnxc_http_rejections_total) */
typedef enum ox_serve_reject {
  OX_SERVE_REJECT_CONNECTIONS,        /* --max-connections reached */
  OX_SERVE_REJECT_CLIENT_CONNECTIONS, /* --max-connections-per-client reached */
  OX_SERVE_REJECT_HEADER_SIZE,        /* 431 */
  OX_SERVE_REJECT_BODY_SIZE,          /* 413 */
  OX_SERVE_REJECT_REQUEST_TIMEOUT,    /* --request-timeout: closed before the request was whole */
  OX_SERVE_REJECT_QUEUE_FULL,         /* 503 */
  OX_SERVE_REJECT_UNAUTHORIZED,       /* 401 */
  OX_SERVE_REJECT_FORBIDDEN,          /* 403 */
  OX_SERVE_REJECT_N
} ox_serve_reject;
void ox_serve_metrics_reject(ox_serve_reject why);
struct ox_serve_repo;
/* the whole /metrics page */
void ox_serve_metrics_write(struct ox_serve_repo *r, int in_flight, ox_serve_buf *out);

uint64_t ox_serve_now_ns(void);

/* ---------------------------------------------------------------- repository */

/* One loaded version of a model. Requests hold a reference while they use it,
 * so that an unload or a reload never frees a session that is running. */
typedef struct ox_serve_version {
  _Atomic int refs;
  int64_t version;
  char *model_name;
  onnxc_model *model;
  onnxc_session *session;
  ox_serve_metrics *metrics; /* the model's, which outlive versions */
  /* dynamic batching: on when the config asks and every input and output has a
     dynamic leading dim */
  int max_batch;         /* rows per run; 0: off */
  uint64_t max_delay_ns; /* how long the first request of a batch may wait for others */
} ox_serve_version;

typedef struct ox_serve_model {
  char *name;
  ox_serve_version *loaded; /* NULL: not loaded */
  int64_t versions[64];     /* versions found on disk, ascending */
  size_t n_versions;
  char reason[512]; /* why it is not loaded */
  ox_serve_metrics metrics;
} ox_serve_model;

typedef struct ox_serve_repo {
  char *dir;
  onnxc_env *env;
  int default_max_batch;
  uint64_t default_delay_ns;
  pthread_mutex_t lock;      /* the model list and each model's `loaded` */
  pthread_mutex_t load_lock; /* one load/unload at a time (loads take long: not under `lock`) */
  ox_serve_model **models;
  size_t n_models, cap_models;
} ox_serve_repo;

int ox_serve_repo_open(ox_serve_repo *r, const char *dir, int threads, int max_batch,
                       uint64_t delay_ns, char *err, size_t errsz);
void ox_serve_repo_close(ox_serve_repo *r);
/* scans the folder and loads every model; failures are kept as reasons */
void ox_serve_repo_load_all(ox_serve_repo *r);
/* (re)loads one model from disk: 0, or -1 with a message (404 when *notfound) */
int ox_serve_repo_load(ox_serve_repo *r, const char *name, bool *notfound, char *err, size_t errsz);
int ox_serve_repo_unload(ox_serve_repo *r, const char *name, char *err, size_t errsz);
/* takes a reference to a loaded version (version < 0: the loaded one, whatever
   it is); NULL with a message otherwise */
ox_serve_version *ox_serve_repo_acquire(ox_serve_repo *r, const char *name, int64_t version,
                                        char *err, size_t errsz);
void ox_serve_version_release(ox_serve_version *v);
/* rescans the folder so that new models appear in the index */
void ox_serve_repo_rescan(ox_serve_repo *r);

/* ---------------------------------------------------------------- worker pool and batching */

/* One inference request: its inputs in the session's input order, all
 * outputs computed (the codec picks the requested ones). */
typedef struct ox_serve_job {
  ox_serve_version *ver;
  onnxc_value **inputs;  /* session_input_count of them */
  onnxc_value **outputs; /* session_output_count, filled by the run */
  onnxc_status status;
  char err[1024];
  uint64_t t_enqueue, t_start;
  size_t batched; /* how many requests shared the run */
  bool done;
  pthread_cond_t cv;
  /* set: the job was submitted (ox_serve_sched_submit) and the worker calls
     this once it ran, outside the queue's lock, instead of waking a waiter */
  void (*on_done)(struct ox_serve_job *job);
  struct ox_serve_job *next;
} ox_serve_job;

typedef struct ox_serve_sched {
  pthread_mutex_t lock;
  pthread_cond_t work; /* a job arrived, or stop */
  ox_serve_job *head, *tail;
  bool stop;
  /* inference requests received and being parsed, not yet queued: a worker
     gathering a batch waits (up to the delay) only while some are on the way,
     so that a lone request is not held back for nothing */
  _Atomic int arriving;
  int waiting;   /* queued or gathered into a batch, not yet running */
  int max_queue; /* more waiting ones are refused (503); 0: no bound */
  pthread_t *threads;
  int n_threads;
} ox_serve_sched;

int ox_serve_sched_start(ox_serve_sched *s, int threads, int max_queue);
/* finishes the queued jobs, then joins the workers */
void ox_serve_sched_stop(ox_serve_sched *s);
/* queues the job and waits until a worker ran it (job->status, job->err);
   the caller counted it in `arriving` first. false (and nothing run) when
   max_queue requests are already waiting. */
bool ox_serve_sched_run(ox_serve_sched *s, ox_serve_job *job);
/* the same without waiting: job->on_done is called on a worker once it ran;
   false (and no call) when the queue is full */
bool ox_serve_sched_submit(ox_serve_sched *s, ox_serve_job *job);

/* batch.c: true when every input has the same dtype, rank and dims after the
   first in a and b */
bool ox_serve_batch_compatible(const ox_serve_job *a, const ox_serve_job *b, size_t n_inputs);
/* runs jobs[0..n) as one batch; when the outputs cannot be split back by rows,
   runs them one by one. Fills every job's outputs/status. */
void ox_serve_batch_run(ox_serve_job **jobs, size_t n);
/* runs one job alone */
void ox_serve_job_run_single(ox_serve_job *job);
/* leading dim of the job's first input (1 for scalars) */
int64_t ox_serve_job_rows(const ox_serve_job *job);

/* ---------------------------------------------------------------- protocol datatypes and codec */

/* "FP32" -> 1 (TensorProto.DataType); 0 when unknown */
int32_t ox_serve_dtype_from_name(const char *name);
/* 1 -> "FP32"; NULL when the protocol has no name for it */
const char *ox_serve_dtype_name(int32_t dtype);
/* bytes per element (0 for strings) */
size_t ox_serve_dtype_size(int32_t dtype);

/* An HTTP answer built by a handler. */
typedef struct ox_serve_reply {
  int status;
  ox_serve_buf body;
  const char *content_type;
  long long header_length;      /* >= 0: Inference-Header-Content-Length */
  const char *www_authenticate; /* a 401's WWW-Authenticate value */
  int retry_after;              /* > 0: a 503's Retry-After seconds */
  bool close;                   /* Connection: close */
} ox_serve_reply;

/* sets a JSON {"error": msg} reply */
void ox_serve_reply_error(ox_serve_reply *rep, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

struct json_t;
/* One parsed request input, before it is matched against the model. */
typedef struct ox_serve_input {
  const char *name; /* borrowed from the JSON document */
  int32_t dtype;
  int64_t dims[16];
  size_t rank;
  int64_t numel;
  struct json_t *data;         /* JSON data or NULL */
  long long binary_size;       /* >= 0: binary data of that many bytes */
  const unsigned char *binary; /* set by the binary extension */
} ox_serve_input;

/* Fills in (name, datatype, shape, data/binary size) from one element of
   "inputs": 0, or -1 with a message. */
int ox_serve_input_parse(struct json_t *j, ox_serve_input *in, char *err, size_t errsz);
/* Makes the tensor of a parsed input (from JSON data or binary bytes). */
onnxc_value *ox_serve_input_value(const ox_serve_input *in, char *err, size_t errsz);
/* Writes the data of tensor v as a flat JSON array; false on a value the
   protocol cannot hold (non-tensor) */
bool ox_serve_json_data(ox_serve_buf *b, const onnxc_value *v);

/* binary.c: the bytes of v in the extension's layout (BYTES: 4-byte length +
   bytes per element) appended to b; returns the number appended */
size_t ox_serve_binary_put(ox_serve_buf *b, const onnxc_value *v);
/* tensor from binary bytes */
onnxc_value *ox_serve_binary_value(const ox_serve_input *in, char *err, size_t errsz);
/* splits a body: the JSON header length from the Inference-Header-Content-Length
   value (NULL: the whole body is JSON); -1 with a message when it is bad */
long long ox_serve_binary_split(const char *header, size_t body_len, char *err, size_t errsz);
/* gives each input with binary_size its slice of the bytes after the JSON */
int ox_serve_binary_assign(ox_serve_input *ins, size_t n, const unsigned char *bytes, size_t len,
                           char *err, size_t errsz);

/* ---------------------------------------------------------------- authentication */

typedef struct ox_serve_auth {
  const char *file; /* NULL: no authentication */
  bool metrics;     /* --metrics-auth: /metrics needs a token too */
  pthread_rwlock_t lock;
  char **tokens;
  size_t n_tokens;
} ox_serve_auth;

/* reads the token file when there is one: 0, or -1 with a message */
int ox_serve_auth_init(ox_serve_auth *a, const char *file, bool metrics, char *err, size_t errsz);
/* re-reads the file; on failure the old tokens stay: -1 with a message */
int ox_serve_auth_reload(ox_serve_auth *a, char *err, size_t errsz);
void ox_serve_auth_free(ox_serve_auth *a);
/* false for the paths that stay open (health, model ready, /metrics unless
   --metrics-auth) or when there are no tokens */
bool ox_serve_auth_needed(const ox_serve_auth *a, const char *url);
/* the Authorization header value (or NULL) carries one of the tokens */
bool ox_serve_auth_check(ox_serve_auth *a, const char *authorization);

/* ---------------------------------------------------------------- connection limits */

typedef struct ox_serve_conn ox_serve_conn;
typedef struct ox_serve_guard {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  ox_serve_conn *head;           /* open connections */
  int n_conns;                   /* admitted ones */
  int n_refused;                 /* over a limit, being answered 503 */
  bool answer_timeouts;          /* plain HTTP: the reaper writes a 408 before closing */
  int max_conns, max_per_client; /* 0: no limit */
  uint64_t request_ns;           /* deadline for a whole request; 0: none */
  bool stop, reaping;
  pthread_t reaper;
} ox_serve_guard;

int ox_serve_guard_start(ox_serve_guard *g, int max_conns, int max_per_client, int request_s);
/* after the daemon stopped */
void ox_serve_guard_stop(ox_serve_guard *g);
struct sockaddr;
/* a new connection from addr may be accepted: within the limits, or over
   one but with room to answer it 503 (else counted as rejected) */
bool ox_serve_guard_admit(ox_serve_guard *g, const struct sockaddr *addr);
/* an accepted connection: counted, and its first request's deadline starts */
ox_serve_conn *ox_serve_guard_open(ox_serve_guard *g, const struct sockaddr *addr, size_t addr_len,
                                   int fd);
/* the limit the connection went over (answer 503, counted already), or
   OX_SERVE_REJECT_N when it was admitted */
ox_serve_reject ox_serve_guard_refused(ox_serve_guard *g, ox_serve_conn *c);
/* an answer is queued on the connection: the reaper does not write a 408 */
void ox_serve_guard_responding(ox_serve_guard *g, ox_serve_conn *c);
/* before the socket is closed */
void ox_serve_guard_close(ox_serve_guard *g, ox_serve_conn *c);
/* the request is whole: no deadline while it is served */
void ox_serve_guard_request_whole(ox_serve_guard *g, ox_serve_conn *c);
/* the answer is sent: the next request on the connection has its deadline */
void ox_serve_guard_request_done(ox_serve_guard *g, ox_serve_conn *c);

/* ---------------------------------------------------------------- server and routing */

typedef struct ox_serve_server {
  ox_serve_repo repo;
  ox_serve_sched sched;
  size_t max_body;
  bool access_log;
  bool model_control; /* --model-control explicit: load/unload allowed */
  ox_serve_auth auth;
  ox_serve_guard guard;
  size_t max_header; /* request line + headers, bytes: larger get 431 */
  int idle_s;        /* --idle-timeout */
  bool tls;          /* --tls-cert: tls.c holds the certificate and key */
  atomic_bool draining;
  _Atomic int in_flight; /* requests received and not yet answered */
} ox_serve_server;

/* Handles one request. header_len: the Inference-Header-Content-Length header
   value or NULL. Never fails: errors become JSON error replies. */
void ox_serve_route(ox_serve_server *srv, const char *method, const char *url,
                    const char *header_len, const char *body, size_t body_len, ox_serve_reply *rep);
/* router.c: the session's input or output of that name, or -1 */
long ox_serve_session_input(onnxc_session *s, const char *name);
long ox_serve_session_output(onnxc_session *s, const char *name);
/* a request input against the declared type (datatype, rank, fixed dims):
   0, or -1 with a message */
int ox_serve_input_check(const ox_serve_input *in, const onnxc_type *t, char *err, size_t errsz);
/* POST .../infer on a version (router.c hands it over) */
void ox_serve_infer(ox_serve_server *srv, ox_serve_version *ver, const char *body, size_t body_len,
                    const char *header_len, ox_serve_reply *rep);

/* server.c: runs the server until SIGTERM or SIGINT; the exit status */
typedef struct ox_serve_options {
  const char *repository, *host;
  int port;    /* 0: any free port (printed) */
  int threads; /* workers and the shared intra-op pool; 0: the number of cores */
  size_t max_body;
  int max_batch;     /* default for models without a config.json; 0: no batching */
  uint64_t delay_us; /* default max queue delay */
  bool access_log;
  int drain_seconds;           /* how long shutdown waits for requests in flight */
  bool model_control;          /* --model-control explicit */
  const char *auth_token_file; /* NULL: no authentication */
  bool metrics_auth;
  int max_conns, max_per_client;  /* --max-connections, --max-connections-per-client */
  size_t max_header;              /* --max-header */
  int request_s, idle_s;          /* --request-timeout, --idle-timeout */
  int max_queue;                  /* --max-queue: waiting inference requests, then 503 */
  const char *tls_cert, *tls_key; /* PEM files; both or neither */
  int grpc_port;                  /* --grpc-port: -1 off, 0 any free port (printed) */
} ox_serve_options;
int ox_serve_main(const ox_serve_options *o);

/* ---------------------------------------------------------------- gRPC (KServe v2) */

/* grpc_msg.c: the messages of grpc_service.proto in the protobuf wire format */
#define OX_SERVE_GRPC_MAX_RANK 16
#define OX_SERVE_GRPC_MAX_TENSORS 1024

typedef struct ox_serve_grpc_tensor { /* ModelInferRequest.InferInputTensor */
  char *name, *datatype;
  int64_t dims[OX_SERVE_GRPC_MAX_RANK];
  size_t rank;
  const uint8_t *contents; /* the InferTensorContents message, in the request */
  size_t contents_len;
  bool has_contents;
} ox_serve_grpc_tensor;

typedef struct ox_serve_grpc_bytes {
  const uint8_t *p;
  size_t n;
} ox_serve_grpc_bytes;

typedef struct ox_serve_grpc_infer { /* ModelInferRequest */
  char *model_name, *model_version, *id;
  ox_serve_grpc_tensor *inputs;
  size_t n_inputs;
  char **outputs; /* requested output names */
  size_t n_outputs;
  ox_serve_grpc_bytes *raw; /* raw_input_contents, pointing into the request */
  size_t n_raw;
} ox_serve_grpc_infer;

/* 0, or -1 with a message naming the field; free the result either way */
int ox_serve_grpc_infer_decode(const uint8_t *p, size_t n, ox_serve_grpc_infer *q, char *err,
                               size_t errsz);
void ox_serve_grpc_infer_free(ox_serve_grpc_infer *q);
/* the two string fields of ModelReady/ModelMetadata (1, 2) or of the
   repository load/unload requests (model_name 2, no version: 0); the caller
   frees both */
int ox_serve_grpc_names_decode(const uint8_t *p, size_t n, uint32_t name_field,
                               uint32_t version_field, char **name, char **version, char *err,
                               size_t errsz);
/* a bool field (RepositoryIndexRequest.ready) */
int ox_serve_grpc_bool_decode(const uint8_t *p, size_t n, uint32_t num, bool *out, char *err,
                              size_t errsz);
/* input i's typed contents in the raw layout of binary.c (BYTES with
   4-byte lengths), checked against its datatype; *count: the values found */
int ox_serve_grpc_contents_raw(const ox_serve_grpc_tensor *t, int32_t dtype, size_t i,
                               ox_serve_buf *out, size_t *count, char *err, size_t errsz);
/* "fp32_contents" for FP32; "" for the datatypes without a field */
const char *ox_serve_grpc_contents_name(int32_t dtype);
/* writers */
void ox_serve_pb_varint(ox_serve_buf *b, uint64_t v);
void ox_serve_pb_tag(ox_serve_buf *b, uint32_t num, int wt);
void ox_serve_pb_bytes(ox_serve_buf *b, uint32_t num, const void *p, size_t n);
void ox_serve_pb_str(ox_serve_buf *b, uint32_t num, const char *s);
void ox_serve_pb_bool(ox_serve_buf *b, uint32_t num, bool v);
/* appends sub as a length-delimited field and frees it */
void ox_serve_pb_sub(ox_serve_buf *b, uint32_t num, ox_serve_buf *sub);
/* packed int64s (nothing for rank 0) */
void ox_serve_pb_dims(ox_serve_buf *b, uint32_t num, const int64_t *dims, size_t rank);
/* field 5 (contents) of an output tensor with v's elements; -1 when the
   datatype has no typed field (FP16, BF16) */
int ox_serve_grpc_typed_contents(ox_serve_buf *b, const onnxc_value *v);

/* grpc_call.c: one call, transport aside. gRPC status codes */
enum {
  OX_GRPC_OK = 0,
  OX_GRPC_INVALID_ARGUMENT = 3,
  OX_GRPC_DEADLINE_EXCEEDED = 4,
  OX_GRPC_NOT_FOUND = 5,
  OX_GRPC_PERMISSION_DENIED = 7,
  OX_GRPC_RESOURCE_EXHAUSTED = 8,
  OX_GRPC_UNIMPLEMENTED = 12,
  OX_GRPC_INTERNAL = 13,
  OX_GRPC_UNAVAILABLE = 14,
  OX_GRPC_UNAUTHENTICATED = 16,
};
typedef struct ox_serve_grpc_answer {
  int code;          /* gRPC status */
  char msg[1536];    /* the status message when code != 0 */
  ox_serve_buf body; /* the response message when code == 0 */
} ox_serve_grpc_answer;
/* method: "/inference.GRPCInferenceService/ModelInfer" and the like */
void ox_serve_grpc_handle(ox_serve_server *srv, const char *method, const uint8_t *req, size_t len,
                          ox_serve_grpc_answer *a);
/* the methods that stay open without a token (the health probes) */
bool ox_serve_grpc_open_method(const char *method);
/* ModelInfer without waiting for the model: true when the request was
   queued, and then done(arg) is called on a worker once *a holds the answer
   (req must stay readable until then); false when *a holds the answer
   already (a bad request, or the queue was full) */
bool ox_serve_grpc_infer_submit(ox_serve_server *srv, const uint8_t *req, size_t len,
                                ox_serve_grpc_answer *a, void (*done)(void *arg), void *arg);

/* grpc.c: the gRPC server on gRPC's C core (built with libgrpc-dev) */
typedef struct ox_serve_grpc ox_serve_grpc;
ox_serve_grpc *ox_serve_grpc_start(ox_serve_server *srv, const char *host, int port,
                                   int *bound_port, char *err, size_t errsz);
/* stops taking new calls (those in flight go on, counted in in_flight) */
void ox_serve_grpc_quiesce(ox_serve_grpc *g);
/* cancels the calls still in flight, then frees everything */
void ox_serve_grpc_stop(ox_serve_grpc *g);

/* tls.c: reads and checks the PEM certificate (chain) and its key, which
   then serve the next handshakes: 0, or -1 with a message naming the option */
int ox_serve_tls_load(const char *cert_file, const char *key_file, char *err, size_t errsz);
/* the same files again (SIGHUP); on failure the set in force stays */
int ox_serve_tls_reload(char *err, size_t errsz);
/* copies (malloc) of the PEM texts in force; returns their generation, which
   each load increments */
unsigned ox_serve_tls_pem(char **cert, char **key);
unsigned ox_serve_tls_generation(void);
void ox_serve_tls_free(void);
/* the MHD_OPTION_HTTPS_CERT_CALLBACK function */
void *ox_serve_tls_mhd_callback(void);

/* http.c */
struct MHD_Daemon;
struct MHD_Daemon *ox_serve_http_start(ox_serve_server *srv, const char *host, int port,
                                       int *bound_port, char *err, size_t errsz);
void ox_serve_http_stop(struct MHD_Daemon *d);
/* stops accepting new connections (idle keep-alive ones stay until stop) */
void ox_serve_http_quiesce(struct MHD_Daemon *d);

#endif
