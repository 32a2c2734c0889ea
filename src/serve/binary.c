/* binary.c - the binary tensor data extension: a body is a JSON header of
 * Inference-Header-Content-Length bytes followed by the raw bytes of the
 * tensors that carry a "binary_data_size" parameter, in the order they appear.
 * Raw bytes are little-endian, row major; BOOL one byte per element; BYTES a
 * 4-byte little-endian length before each element. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

long long ox_serve_binary_split(const char *header, size_t body_len, char *err, size_t errsz) {
  if (!header) return (long long)body_len;
  char *end;
  errno = 0;
  long long n = strtoll(header, &end, 10);
  if (errno || end == header || *end || n < 0) {
    snprintf(err, errsz, "bad Inference-Header-Content-Length '%s'", header);
    return -1;
  }
  if ((unsigned long long)n > body_len) {
    snprintf(err, errsz, "Inference-Header-Content-Length %lld is larger than the body (%zu bytes)",
             n, body_len);
    return -1;
  }
  return n;
}

int ox_serve_binary_assign(ox_serve_input *ins, size_t n, const unsigned char *bytes, size_t len,
                           char *err, size_t errsz) {
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    if (ins[i].binary_size < 0) continue;
    if ((unsigned long long)ins[i].binary_size > len - at) {
      snprintf(err, errsz, "input '%s': binary_data_size %lld runs past the end of the body",
               ins[i].name, ins[i].binary_size);
      return -1;
    }
    ins[i].binary = bytes + at;
    at += (size_t)ins[i].binary_size;
  }
  if (at != len) {
    snprintf(err, errsz, "%zu bytes of binary data follow the JSON but the inputs use %zu", len,
             at);
    return -1;
  }
  return 0;
}

static uint32_t read_u32le(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

onnxc_value *ox_serve_binary_value(const ox_serve_input *in, char *err, size_t errsz) {
  onnxc_error e = {0};
  size_t have = (size_t)in->binary_size;
  if (in->dtype == 8) {
    /* each element: its 4-byte length, then its bytes */
    size_t n = (size_t)in->numel, at = 0;
    if (n > have / 4) {
      snprintf(err, errsz, "input '%s': %zu bytes cannot hold %zu BYTES elements", in->name, have,
               n);
      return NULL;
    }
    const char **strs = calloc(n + 1, sizeof *strs);
    size_t *lens = calloc(n + 1, sizeof *lens);
    onnxc_value *v = NULL;
    if (!strs || !lens) {
      snprintf(err, errsz, "out of memory");
      goto done;
    }
    for (size_t i = 0; i < n; i++) {
      if (have - at < 4 || read_u32le(in->binary + at) > have - at - 4) {
        snprintf(err, errsz, "input '%s': BYTES element %zu runs past its binary_data_size",
                 in->name, i);
        goto done;
      }
      lens[i] = read_u32le(in->binary + at);
      strs[i] = (const char *)in->binary + at + 4;
      if (memchr(strs[i], 0, lens[i])) {
        snprintf(err, errsz, "input '%s': element %zu holds a NUL byte", in->name, i);
        goto done;
      }
      at += 4 + lens[i];
    }
    if (at != have) {
      snprintf(err, errsz, "input '%s': binary_data_size is %zu but the elements use %zu", in->name,
               have, at);
      goto done;
    }
    v = onnxc_tensor_create_strings(in->dims, in->rank, strs, lens, &e);
    if (!v) snprintf(err, errsz, "input '%s': %s", in->name, e.msg);
  done:
    free(strs);
    free(lens);
    return v;
  }
  size_t want = (size_t)in->numel * ox_serve_dtype_size(in->dtype);
  if (want != have) {
    snprintf(err, errsz,
             "input '%s': shape and datatype need %zu bytes but binary_data_size is %zu", in->name,
             want, have);
    return NULL;
  }
  /* copied rather than wrapped: the body is not aligned for the element type
     and is freed when the request ends */
  onnxc_value *v = onnxc_tensor_create(in->dtype, in->dims, in->rank, &e);
  if (!v) {
    snprintf(err, errsz, "input '%s': %s", in->name, e.msg);
    return NULL;
  }
  if (want) memcpy(onnxc_tensor_data(v), in->binary, want);
  if (in->dtype == 9) {
    unsigned char *p = onnxc_tensor_data(v);
    for (size_t i = 0; i < want; i++)
      if (p[i] > 1) {
        snprintf(err, errsz, "input '%s': BOOL element %zu is %u, not 0 or 1", in->name, i, p[i]);
        onnxc_value_free(v);
        return NULL;
      }
  }
  return v;
}

size_t ox_serve_binary_put(ox_serve_buf *b, const onnxc_value *v) {
  size_t before = b->len;
  if (onnxc_tensor_dtype(v) == 8) {
    size_t n = (size_t)onnxc_tensor_numel(v);
    for (size_t i = 0; i < n; i++) {
      size_t len = 0;
      const char *s = onnxc_tensor_string(v, i, &len);
      unsigned char hdr[4] = {(unsigned char)len, (unsigned char)(len >> 8),
                              (unsigned char)(len >> 16), (unsigned char)(len >> 24)};
      ox_serve_buf_put(b, hdr, 4);
      ox_serve_buf_put(b, s, len);
    }
  } else {
    ox_serve_buf_put(b, onnxc_tensor_data_const(v), onnxc_tensor_nbytes(v));
  }
  return b->len - before;
}
