/* fuzz_serve.c - libFuzzer target for the request side of `onnxc serve`:
 * the router, the JSON tensor codec and the binary data extension, on a
 * model repository made at start (an identity model over float, int64,
 * bool, uint8 and string tensors, and the perceptron of examples/).
 *
 * The first byte chooses the method and route (infer by name or version,
 * metadata, ready, repository load/unload/index, or a URL taken from the
 * input), the second whether an Inference-Header-Content-Length follows
 * (as the decimal text of the next two bytes); the rest is the body. Every
 * request must come back with a reply and free what it took (LeakSanitizer);
 * the HTTP layer itself is libmicrohttpd's.
 *
 * With bit 6 of the first byte set, the rest is a gRPC request message
 * instead (grpc_call.c and grpc_msg.c; the transport is gRPC's): bits 0-2
 * choose the method of inference.GRPCInferenceService. Every call must come
 * back with a gRPC status, and a message only with OK. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *identity_text =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "id (float[N,3] F, int64[N] I, bool[N] B, uint8[N,2] U, string[N] S)\n"
    "  => (float[N,3] F2, int64[N] I2, bool[N] B2, uint8[N,2] U2, string[N] S2) {\n"
    "  F2 = Identity (F)\n  I2 = Identity (I)\n  B2 = Identity (B)\n  U2 = Identity (U)\n"
    "  S2 = Identity (S)\n}\n";

static const char *perceptron_text =
    "<ir_version: 8, opset_import: [\"\" : 13]>\n"
    "mlp (float[N,3] X) => (float[N,2] Y) <float[3,2] W = {0.5, -1, 2, 0.25, -0.5, 1},\n"
    "  float[2] B = {0.1, -0.2}> {\n  H = MatMul (X, W)\n  A = Add (H, B)\n  Y = Relu (A)\n}\n";

static ox_serve_server srv;
static bool ready;

static bool write_model(const char *dir, const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (mkdir(path, 0700) != 0) return false;
  snprintf(path, sizeof path, "%s/%s/1", dir, name);
  if (mkdir(path, 0700) != 0) return false;
  snprintf(path, sizeof path, "%s/%s/1/model.onnx", dir, name);
  onnxc_model *m = NULL;
  onnxc_error e;
  bool ok = onnxc_model_parse_text(text, strlen(text), name, &m, &e) == ONNXC_OK &&
            onnxc_model_save(m, path, NULL, &e) == ONNXC_OK;
  onnxc_model_free(m);
  return ok;
}

static bool setup(void) {
  static char dir[64];
  snprintf(dir, sizeof dir, "/tmp/onnxc_fuzz_serve_XXXXXX");
  if (!mkdtemp(dir) || !write_model(dir, "id", identity_text) ||
      !write_model(dir, "mlp", perceptron_text))
    return false;
  char err[256];
  srv.max_body = 1 << 20;
  if (ox_serve_repo_open(&srv.repo, dir, 1, 0, 0, err, sizeof err) ||
      ox_serve_sched_start(&srv.sched, 1, 0))
    return false;
  ox_serve_repo_load_all(&srv.repo);
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ready) {
    if (!setup()) abort(); /* the harness itself is broken */
    ready = true;
  }
  if (size < 2) return 0;
  static const char *const routes[][2] = {{"POST", "/v2/models/id/infer"},
                                          {"POST", "/v2/models/id/versions/1/infer"},
                                          {"POST", "/v2/models/mlp/infer"},
                                          {"GET", "/v2/models/id"},
                                          {"GET", "/v2/models/mlp/ready"},
                                          {"POST", "/v2/repository/index"},
                                          {"POST", "/v2/repository/models/mlp/load"},
                                          {"GET", "/v2/health/ready"}};
  uint8_t sel = data[0], hdr = data[1];
  data += 2;
  size -= 2;
  char header[16], url[256];
  const char *header_len = NULL;
  if ((hdr & 1) && size >= 2) {
    snprintf(header, sizeof header, "%u", (unsigned)(data[0] | data[1] << 8));
    header_len = header;
    data += 2;
    size -= 2;
  }
  if (sel & 64) {
    static const char *const methods[] = {
        "ModelInfer",      "ModelMetadata",       "ModelReady",           "ServerMetadata",
        "RepositoryIndex", "RepositoryModelLoad", "RepositoryModelUnload", "ServerReady"};
    char m[128];
    snprintf(m, sizeof m, "/inference.GRPCInferenceService/%s", methods[sel & 7]);
    ox_serve_grpc_answer a;
    ox_serve_grpc_handle(&srv, m, data, size, &a);
    if (a.code < 0 || a.code > 16 || (a.code && a.body.data)) abort();
    if (getenv("FUZZ_SERVE_PRINT"))
      fprintf(stderr, "%s -> %d %s (%zu bytes)\n", m, a.code, a.msg, a.body.len);
    free(a.body.data);
    return 0;
  }
  const char *method, *path;
  if ((sel & 15) < 8) {
    method = routes[sel & 7][0];
    path = routes[sel & 7][1];
  } else {
    /* a URL from the input: up to the first newline */
    size_t n = 0;
    while (n < size && n + 1 < sizeof url && data[n] != '\n' && data[n] != 0) n++;
    memcpy(url, data, n);
    url[n] = 0;
    data += n < size ? n + 1 : n;
    size -= n < size ? n + 1 : n;
    method = sel & 16 ? "POST" : "GET";
    path = url;
  }
  ox_serve_reply rep = {0};
  ox_serve_route(&srv, method, path, header_len, (const char *)data, size, &rep);
  if (rep.status < 100 || rep.status > 599) abort(); /* every request gets an answer */
  if (getenv("FUZZ_SERVE_PRINT")) /* to see what a seed does: FUZZ_SERVE_PRINT=1 fuzz_serve FILE */
    fprintf(stderr, "%s %s -> %d %.*s\n", method, path, rep.status,
            (int)(rep.body.len < 300 ? rep.body.len : 300), rep.body.data ? rep.body.data : "");
  free(rep.body.data);
  if (strstr(path, "unload")) { /* keep both models there for the next inputs */
    char err[256];
    bool nf;
    ox_serve_repo_load(&srv.repo, "id", &nf, err, sizeof err);
    ox_serve_repo_load(&srv.repo, "mlp", &nf, err, sizeof err);
  }
  return 0;
}
