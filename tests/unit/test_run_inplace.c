/* test_run_inplace.c - onnxc_session_run_into writes outputs straight into
 * the caller's tensors: a GroupQueryAttention decode whose present_key /
 * present_value are its past's own buffers appends the new rows in place
 * (the rows beyond the sequence keep what the caller left there, which a
 * copied result would have overwritten with the kernel's zeros), and gives
 * what a run with separate present buffers gives, step after step; an
 * output buffer that is also the input of a kernel that cannot write in
 * place (Add) still gets the right values. Public API only. */
#include <math.h>
#include <onnxc.h>
#include <stdio.h>
#include <string.h>

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

enum { T_FLOAT = 1, T_INT32 = 6 }; /* TensorProto data types */
enum { NH = 4, NKV = 2, HS = 16, MAXLEN = 12, STEPS = 4 };

static const char *gqa_model =
    "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\n"
    "G (float[1, 1, 64] q, float[1, 1, 32] k, float[1, 1, 32] v, float[1, 2, 12, 16] pk,\n"
    "   float[1, 2, 12, 16] pv, int32[1] seqlens, int32 total)\n"
    "  => (float[1, 1, 64] out, float[1, 2, 12, 16] prk, float[1, 2, 12, 16] prv) {\n"
    "  out, prk, prv = com.microsoft.GroupQueryAttention <num_heads = 4, kv_num_heads = 2>\n"
    "      (q, k, v, pk, pv, seqlens, total)\n"
    "}\n";

static onnxc_model *parse(const char *text) {
  onnxc_error err = {0};
  onnxc_model *m = NULL;
  if (onnxc_model_parse_text(text, strlen(text), "test", &m, &err) != ONNXC_OK)
    fprintf(stderr, "parse: %s\n", err.msg);
  CHECK(m != NULL);
  return m;
}

static float val(int step, int i) { return sinf(0.37f * (float)(i + 1) + 1.3f * (float)step); }

static void test_gqa_shared_buffer(void) {
  onnxc_model *m = parse(gqa_model);
  onnxc_error err = {0};
  onnxc_session *s = NULL;
  if (m) onnxc_session_create(m, NULL, &s, &err);
  if (!s) {
    fprintf(stderr, "session: %s\n", err.msg);
    fails++;
    onnxc_model_free(m);
    return;
  }
  /* the shared cache (written in place) and a reference cache run the plain way */
  static float kbuf[NKV * MAXLEN * HS], vbuf[NKV * MAXLEN * HS];
  static float rk[NKV * MAXLEN * HS], rv[NKV * MAXLEN * HS];
  for (int i = 0; i < NKV * MAXLEN * HS; i++) kbuf[i] = vbuf[i] = 7.0f, rk[i] = rv[i] = 0.0f;
  int64_t dq[3] = {1, 1, NH * HS}, dk[3] = {1, 1, NKV * HS}, dp[4] = {1, NKV, MAXLEN, HS};
  int64_t ds[1] = {1};
  for (int step = 0; step < STEPS; step++) {
    float q[NH * HS], k[NKV * HS], v[NKV * HS], y[NH * HS];
    for (int i = 0; i < NH * HS; i++) q[i] = val(step, i);
    for (int i = 0; i < NKV * HS; i++) k[i] = val(step + 10, i), v[i] = val(step + 20, i);
    int32_t seqlens = step, total = step + 1;
    onnxc_value *in[7] = {
        onnxc_tensor_wrap(T_FLOAT, dq, 3, q, &err),
        onnxc_tensor_wrap(T_FLOAT, dk, 3, k, &err),
        onnxc_tensor_wrap(T_FLOAT, dk, 3, v, &err),
        onnxc_tensor_wrap(T_FLOAT, dp, 4, kbuf, &err),
        onnxc_tensor_wrap(T_FLOAT, dp, 4, vbuf, &err),
        onnxc_tensor_wrap(T_INT32, ds, 1, &seqlens, &err),
        onnxc_tensor_wrap(T_INT32, NULL, 0, &total, &err),
    };
    onnxc_value *outs[3] = {onnxc_tensor_wrap(T_FLOAT, dq, 3, y, &err), in[3], in[4]};
    CHECK(onnxc_session_run_into(s, NULL, NULL, in, 7, NULL, outs, 3, &err) == ONNXC_OK);
    /* the reference: the same step over its own cache, present returned */
    onnxc_value *rin[7];
    memcpy(rin, in, sizeof rin);
    rin[3] = onnxc_tensor_wrap(T_FLOAT, dp, 4, rk, &err);
    rin[4] = onnxc_tensor_wrap(T_FLOAT, dp, 4, rv, &err);
    onnxc_value *ref[3] = {NULL, NULL, NULL};
    CHECK(onnxc_session_run(s, NULL, rin, 7, NULL, ref, 3, &err) == ONNXC_OK);
    if (ref[0] && ref[1] && ref[2]) {
      const float *ry = onnxc_tensor_data(ref[0]);
      for (int i = 0; i < NH * HS; i++) CHECK(fabsf(ry[i] - y[i]) <= 1e-6f * (1 + fabsf(ry[i])));
      /* the valid rows agree; the rows beyond are the caller's 7s in place,
       * the kernel's zeros in the returned present */
      const float *pk = onnxc_tensor_data(ref[1]), *pv = onnxc_tensor_data(ref[2]);
      for (int g = 0; g < NKV; g++)
        for (int r = 0; r < MAXLEN; r++)
          for (int d = 0; d < HS; d++) {
            int i = (g * MAXLEN + r) * HS + d;
            if (r <= step) {
              CHECK(kbuf[i] == pk[i] && vbuf[i] == pv[i]);
            } else {
              CHECK(kbuf[i] == 7.0f && vbuf[i] == 7.0f);
              CHECK(pk[i] == 0.0f && pv[i] == 0.0f);
            }
          }
      memcpy(rk, pk, sizeof rk);
      memcpy(rv, pv, sizeof rv);
    }
    for (int i = 0; i < 3; i++) onnxc_value_free(ref[i]);
    onnxc_value_free(rin[3]);
    onnxc_value_free(rin[4]);
    onnxc_value_free(outs[0]);
    for (int i = 0; i < 7; i++) onnxc_value_free(in[i]);
  }
  onnxc_session_free(s);
  onnxc_model_free(m);
}

/* Y = Add(X, X) into X's own buffer: Add does not write in place, so the
 * result is made apart and copied; X is read whole before. */
static void test_alias_refused(void) {
  onnxc_model *m = parse(
      "<ir_version: 8, opset_import: [\"\" : 17]>\n"
      "G (float[2, 40] X) => (float[2, 40] Y) { Y = Add(X, X) }\n");
  onnxc_error err = {0};
  onnxc_session *s = NULL;
  if (m) onnxc_session_create(m, NULL, &s, &err);
  if (!s) {
    fails++;
    onnxc_model_free(m);
    return;
  }
  float x[80];
  for (int i = 0; i < 80; i++) x[i] = (float)i - 20.5f;
  int64_t d[2] = {2, 40};
  onnxc_value *in = onnxc_tensor_wrap(T_FLOAT, d, 2, x, &err);
  CHECK(onnxc_session_run_into(s, NULL, NULL, &in, 1, NULL, &in, 1, &err) == ONNXC_OK);
  for (int i = 0; i < 80; i++) CHECK(x[i] == 2.0f * ((float)i - 20.5f));
  onnxc_value_free(in);
  onnxc_session_free(s);
  onnxc_model_free(m);
}

int main(void) {
  test_gqa_shared_buffer();
  test_alias_refused();
  if (fails) fprintf(stderr, "%d checks failed\n", fails);
  return fails ? 1 : 0;
}
