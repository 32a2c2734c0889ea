/* test_tied_gather.c - a tied embedding: one constant float W [V, D] read by
 * Gather(W, ids) and by MatMul(h, Transpose(W)) (src/opt/tied_gather.c,
 * src/ops/matmul.c). At level 1 the Gather becomes GatherTiedFused and
 * reads its rows out of the head's packed W^T; W itself is never copied
 * (packed from the model's bytes, which lie unaligned in three of the four
 * buffer offsets tried). The rows must be W's values bit for bit, and the
 * logits the product computed here in double; indices int64 and int32,
 * negative, the last row, a vocabulary that is no multiple of a panel; an
 * index out of range is an error naming the node. Level 0 runs the nodes
 * as written and gives the same outputs; a Gather with no head reading W
 * is left alone. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnxc.h"
#include "session_check.h"

enum { V = 301, D = 96, S = 5 }; /* W: 115,584 bytes, made lazily */

static float wval(int64_t i) { return (float)((i * 7919 % 2003) - 1001) / 1024.0f; }
static float hval(int64_t i) { return (float)((i * 31 % 17) - 8) / 16.0f; }

/* the model as text: with_head 0 leaves the Gather the only reader */
static char *model_text(const char *idx_type, int with_head) {
  size_t cap = (size_t)V * D * 16 + 4096, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n,
                        "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                        "tied (%s[%d] ids, float[%d,%d] h) => (float[%d,%d] emb%s) \n"
                        "<\n   <raw_data: true> float[%d,%d] W = {",
                        idx_type, S, S, D, S, D, with_head ? ", float logits" : "", V, D);
  for (int64_t i = 0; i < (int64_t)V * D; i++)
    n += (size_t)snprintf(t + n, cap - n, "%s%.10g", i ? ", " : "", (double)wval(i));
  n += (size_t)snprintf(t + n, cap - n, "}\n>\n{\n  [embed] emb = Gather (W, ids)\n");
  if (with_head)
    snprintf(t + n, cap - n, "  wt = Transpose <perm = [1, 0]> (W)\n  logits = MatMul (h, wt)\n");
  strcat(t, "}\n");
  return t;
}

/* the binary model's bytes, loaded from `shift` bytes into a buffer */
static onnxc_model *load_shifted(const uint8_t *bytes, size_t size, int shift, uint8_t **buf) {
  *buf = malloc(size + 8);
  memcpy(*buf + shift, bytes, size);
  onnxc_model *m = NULL;
  onnxc_error e;
  if (onnxc_model_load_buffer(*buf + shift, size, NULL, NULL, &m, &e) != ONNXC_OK) {
    fprintf(stderr, "load: %s\n", e.msg);
    return NULL;
  }
  return m;
}

static void run_case(onnxc_model *m, int level, int64_t idx_dt, int with_head, const char *what) {
  onnxc_session_options o = {0};
  o.optimization_level = level;
  o.profile = 1;
  o.threads = 2;
  onnxc_session *s = NULL;
  onnxc_error e;
  if (onnxc_session_create(m, &o, &s, &e) != ONNXC_OK) {
    fprintf(stderr, "%s: session: %s\n", what, e.msg);
    fails++;
    return;
  }
  const int64_t ids64[S] = {0, V - 1, -1, 17, -V};
  int32_t ids32[S];
  for (int i = 0; i < S; i++) ids32[i] = (int32_t)ids64[i];
  float h[S * D];
  for (int64_t i = 0; i < S * D; i++) h[i] = hval(i);
  int64_t idim[1] = {S}, hdim[2] = {S, D};
  onnxc_value *in[2] = {
      onnxc_tensor_wrap(idx_dt == 7 ? 7 : 6, idim, 1, idx_dt == 7 ? (void *)ids64 : ids32, &e),
      onnxc_tensor_wrap(1, hdim, 2, h, &e)};
  const char *names[2] = {"ids", "h"}, *outs[2] = {"emb", "logits"};
  onnxc_value *out[2] = {NULL, NULL};
  if (onnxc_session_run(s, names, in, 2, outs, out, with_head ? 2 : 1, &e) != ONNXC_OK) {
    fprintf(stderr, "%s: run: %s\n", what, e.msg);
    fails++;
  } else {
    const float *emb = onnxc_tensor_data(out[0]);
    int bad_rows = 0, bad_logits = 0;
    for (int r = 0; r < S; r++) {
      int64_t row = ids64[r] < 0 ? ids64[r] + V : ids64[r];
      for (int64_t k = 0; k < D; k++) {
        float want = wval(row * D + k);
        if (memcmp(&emb[r * D + k], &want, 4) != 0) bad_rows++;
      }
    }
    if (with_head) {
      const float *lg = onnxc_tensor_data(out[1]);
      for (int r = 0; r < S; r++)
        for (int64_t v = 0; v < V; v++) {
          double want = 0, mag = 0;
          for (int64_t k = 0; k < D; k++) {
            double p = (double)hval(r * D + k) * wval(v * D + k);
            want += p;
            mag += fabs(p);
          }
          if (fabs(lg[r * V + v] - want) > 1e-6 * mag + 1e-9) bad_logits++;
        }
    }
    if (bad_rows || bad_logits)
      fprintf(stderr, "%s: %d row values, %d logits off\n", what, bad_rows, bad_logits);
    CHECK(bad_rows == 0 && bad_logits == 0);
    char *prof = onnxc_session_profile(s);
    bool tied = prof && strstr(prof, "GatherTiedFused");
    CHECK(tied == (level == 1 && with_head));
    if (tied != (level == 1 && with_head)) fprintf(stderr, "%s: profile\n%s", what, prof);
    free(prof);
  }
  onnxc_value_free(out[0]);
  onnxc_value_free(out[1]);
  /* an index beyond the vocabulary: an error naming the node */
  if (idx_dt == 7) {
    int64_t badids[S] = {0, 1, V, 2, 3};
    onnxc_value *bin = onnxc_tensor_wrap(7, idim, 1, badids, &e);
    onnxc_value *in2[2] = {bin, in[1]}, *o2[2] = {NULL, NULL};
    onnxc_status st = onnxc_session_run(s, names, in2, 2, outs, o2, with_head ? 2 : 1, &e);
    CHECK(st != ONNXC_OK && strstr(e.msg, "embed") && strstr(e.msg, "out of range"));
    if (st == ONNXC_OK) fprintf(stderr, "%s: index %d accepted\n", what, V);
    onnxc_value_free(o2[0]);
    onnxc_value_free(o2[1]);
    onnxc_value_free(bin);
  }
  onnxc_value_free(in[0]);
  onnxc_value_free(in[1]);
  onnxc_session_free(s);
}

int main(void) {
  char path[] = "/tmp/onnxc_tied_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  int cases = 0;
  for (int with_head = 1; with_head >= 0; with_head--)
    for (int idx = 0; idx < 2; idx++) {
      const char *type = idx ? "int32" : "int64";
      char *text = model_text(type, with_head);
      onnxc_model *tm = NULL;
      onnxc_error e;
      if (onnxc_model_parse_text(text, strlen(text), "tied", &tm, &e) != ONNXC_OK ||
          onnxc_model_save(tm, path, NULL, &e) != ONNXC_OK) {
        fprintf(stderr, "model: %s\n", e.msg);
        fails++;
        free(text);
        onnxc_model_free(tm);
        continue;
      }
      onnxc_model_free(tm);
      free(text);
      FILE *f = fopen(path, "rb");
      fseek(f, 0, SEEK_END);
      size_t size = (size_t)ftell(f);
      fseek(f, 0, SEEK_SET);
      uint8_t *bytes = malloc(size);
      if (fread(bytes, 1, size, f) != size) fails++;
      fclose(f);
      for (int shift = 0; shift < 4; shift++) {
        uint8_t *buf = NULL;
        onnxc_model *m = load_shifted(bytes, size, shift, &buf);
        CHECK(m != NULL);
        for (int level = 0; level <= 1 && m; level++) {
          char what[96];
          snprintf(what, sizeof what, "%s head=%d shift=%d level=%d", type, with_head, shift,
                   level);
          run_case(m, level, idx ? 6 : 7, with_head, what);
          cases++;
        }
        onnxc_model_free(m);
        free(buf);
      }
      free(bytes);
    }
  unlink(path);
  if (fails)
    fprintf(stderr, "%d checks failed\n", fails);
  else
    printf("%d tied-embedding sessions: rows bit for bit, logits within 1e-6\n", cases);
  return fails != 0;
}
