/* fuzz_decode.c - libFuzzer target for the binary decoder. Any input must
 * decode or fail cleanly; whatever decodes must encode, and encoding is a
 * fixed point: decode(encode(m)) encodes to the same bytes. The first byte
 * picks the message type (model, tensor, sequence, map, optional). */
#include <stdlib.h>
#include <string.h>

#include "proto/pb.h"

static const pb_msg *pick(uint8_t b) {
  switch (b % 8) {
    case 1:
      return &ox_pb_tensor_msg;
    case 2:
      return &ox_pb_sequence_msg;
    case 3:
      return &ox_pb_map_msg;
    case 4:
      return &ox_pb_optional_msg;
    default:
      return &ox_pb_model_msg; /* most of the corpus */
  }
}

static int encode(const pb_msg *d, const void *obj, ox_buf *out) {
  pb_sink s = {.buf = out, .fd = -1};
  ox_err e;
  return ox_pb_encode_msg(d, obj, &s, &e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const pb_msg *d = &ox_pb_model_msg;
  /* seeds are whole files; mutated inputs may start with a selector byte */
  if (size && data[0] >= 0xf8) {
    d = pick(data[0]);
    data++;
    size--;
  }
  ox_arena *a = ox_arena_new();
  if (!a) return 0;
  ox_err e;
  void *obj = ox_arena_alloc(a, d->size);
  if (obj && ox_pb_decode_msg(d, data, size, a, obj, &e) == OX_OK) {
    ox_buf b1 = {0}, b2 = {0};
    if (encode(d, obj, &b1) != OX_OK) abort();
    void *obj2 = ox_arena_alloc(a, d->size);
    if (!obj2 || ox_pb_decode_msg(d, b1.data, b1.size, a, obj2, &e) != OX_OK) abort();
    if (encode(d, obj2, &b2) != OX_OK) abort();
    if (b1.size != b2.size || (b1.size && memcmp(b1.data, b2.data, b1.size) != 0)) abort();
    ox_buf_free(&b1);
    ox_buf_free(&b2);
  }
  ox_arena_free(a);
  return 0;
}
