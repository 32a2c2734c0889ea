/* batch.c - one model run for several requests: their inputs stacked on the
 * leading dim, the outputs cut back into each request's rows. A model whose
 * outputs do not keep the batch on their leading dim (or a batched run that
 * fails, e.g. because one request's values are bad) falls back to one run per
 * request, so batching never changes what a request gets back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

int64_t ox_serve_job_rows(const ox_serve_job *job) {
  const onnxc_value *v = job->inputs[0];
  return onnxc_tensor_rank(v) ? onnxc_tensor_dims(v)[0] : 1;
}

bool ox_serve_batch_compatible(const ox_serve_job *a, const ox_serve_job *b, size_t n_inputs) {
  for (size_t i = 0; i < n_inputs; i++) {
    const onnxc_value *x = a->inputs[i], *y = b->inputs[i];
    size_t rank = onnxc_tensor_rank(x);
    if (onnxc_tensor_dtype(x) != onnxc_tensor_dtype(y) || rank != onnxc_tensor_rank(y) || !rank)
      return false;
    /* every input of one request shares its batch size */
    if (onnxc_tensor_dims(y)[0] != onnxc_tensor_dims(b->inputs[0])[0]) return false;
    if (memcmp(onnxc_tensor_dims(x) + 1, onnxc_tensor_dims(y) + 1, (rank - 1) * sizeof(int64_t)))
      return false;
  }
  return true;
}

void ox_serve_job_run_single(ox_serve_job *job) {
  onnxc_session *s = job->ver->session;
  onnxc_error e = {0};
  job->status = onnxc_session_run(s, NULL, job->inputs, onnxc_session_input_count(s), NULL,
                                  job->outputs, onnxc_session_output_count(s), &e);
  if (job->status) snprintf(job->err, sizeof job->err, "%s", e.msg);
}

/* rows [row0, row0 + rows) of tensor v as a new tensor */
static onnxc_value *slice_rows(const onnxc_value *v, int64_t row0, int64_t rows) {
  size_t rank = onnxc_tensor_rank(v);
  int64_t dims[16];
  if (rank > 16) return NULL;
  memcpy(dims, onnxc_tensor_dims(v), rank * sizeof *dims);
  int64_t per_row = dims[0] ? onnxc_tensor_numel(v) / dims[0] : 0;
  dims[0] = rows;
  if (onnxc_tensor_dtype(v) == 8) {
    size_t n = (size_t)(per_row * rows);
    const char **strs = calloc(n + 1, sizeof *strs);
    size_t *lens = calloc(n + 1, sizeof *lens);
    onnxc_value *out = NULL;
    if (strs && lens) {
      for (size_t i = 0; i < n; i++)
        strs[i] = onnxc_tensor_string(v, (size_t)(row0 * per_row) + i, &lens[i]);
      out = onnxc_tensor_create_strings(dims, rank, strs, lens, NULL);
    }
    free(strs);
    free(lens);
    return out;
  }
  onnxc_value *out = onnxc_tensor_create(onnxc_tensor_dtype(v), dims, rank, NULL);
  if (!out) return NULL;
  size_t row_bytes = (size_t)per_row * ox_serve_dtype_size(onnxc_tensor_dtype(v));
  if (row_bytes && rows)
    memcpy(onnxc_tensor_data(out),
           (const char *)onnxc_tensor_data_const(v) + (size_t)row0 * row_bytes,
           row_bytes * (size_t)rows);
  return out;
}

/* input i of every job stacked on dim 0 */
static onnxc_value *stack(ox_serve_job **jobs, size_t n, size_t i, int64_t total) {
  const onnxc_value *x = jobs[0]->inputs[i];
  size_t rank = onnxc_tensor_rank(x);
  int64_t dims[16];
  if (rank > 16) return NULL;
  memcpy(dims, onnxc_tensor_dims(x), rank * sizeof *dims);
  dims[0] = total;
  int32_t dt = onnxc_tensor_dtype(x);
  if (dt == 8) {
    size_t count = 0;
    for (size_t k = 0; k < n; k++) count += (size_t)onnxc_tensor_numel(jobs[k]->inputs[i]);
    const char **strs = calloc(count + 1, sizeof *strs);
    size_t *lens = calloc(count + 1, sizeof *lens);
    onnxc_value *out = NULL;
    if (strs && lens) {
      size_t at = 0;
      for (size_t k = 0; k < n; k++) {
        size_t m = (size_t)onnxc_tensor_numel(jobs[k]->inputs[i]);
        for (size_t e = 0; e < m; e++, at++)
          strs[at] = onnxc_tensor_string(jobs[k]->inputs[i], e, &lens[at]);
      }
      out = onnxc_tensor_create_strings(dims, rank, strs, lens, NULL);
    }
    free(strs);
    free(lens);
    return out;
  }
  onnxc_value *out = onnxc_tensor_create(dt, dims, rank, NULL);
  if (!out) return NULL;
  char *p = onnxc_tensor_data(out);
  for (size_t k = 0; k < n; k++) {
    size_t nb = onnxc_tensor_nbytes(jobs[k]->inputs[i]);
    if (nb) memcpy(p, onnxc_tensor_data_const(jobs[k]->inputs[i]), nb);
    p += nb;
  }
  return out;
}

void ox_serve_batch_run(ox_serve_job **jobs, size_t n) {
  onnxc_session *s = jobs[0]->ver->session;
  size_t n_in = onnxc_session_input_count(s), n_out = onnxc_session_output_count(s);
  int64_t total = 0;
  for (size_t k = 0; k < n; k++) total += ox_serve_job_rows(jobs[k]);
  onnxc_value **ins = calloc(n_in + 1, sizeof *ins), **outs = calloc(n_out + 1, sizeof *outs);
  bool ok = ins && outs;
  for (size_t i = 0; ok && i < n_in; i++) ok = (ins[i] = stack(jobs, n, i, total)) != NULL;
  if (ok) ok = onnxc_session_run(s, NULL, ins, n_in, NULL, outs, n_out, NULL) == ONNXC_OK;
  for (size_t o = 0; ok && o < n_out; o++)
    ok = outs[o] && onnxc_value_kind(outs[o]) == ONNXC_TYPE_TENSOR &&
         onnxc_tensor_rank(outs[o]) >= 1 && onnxc_tensor_dims(outs[o])[0] == total;
  /* cut the rows back; any failure on the way sends every job to a run of its own */
  int64_t row = 0;
  size_t done = 0;
  for (; ok && done < n; done++) {
    int64_t rows = ox_serve_job_rows(jobs[done]);
    for (size_t o = 0; ok && o < n_out; o++)
      ok = (jobs[done]->outputs[o] = slice_rows(outs[o], row, rows)) != NULL;
    jobs[done]->status = ONNXC_OK;
    row += rows;
  }
  if (!ok) {
    for (size_t k = 0; k < n; k++) {
      for (size_t o = 0; o < n_out; o++) {
        onnxc_value_free(jobs[k]->outputs[o]);
        jobs[k]->outputs[o] = NULL;
      }
      ox_serve_job_run_single(jobs[k]);
    }
  }
  for (size_t i = 0; ins && i < n_in; i++) onnxc_value_free(ins[i]);
  for (size_t o = 0; outs && o < n_out; o++) onnxc_value_free(outs[o]);
  free(ins);
  free(outs);
}
