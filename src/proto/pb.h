/* pb.h - internal to src/proto: the field descriptor tables that drive the
 * decoder and the encoder, and the shared wire helpers. */
#ifndef OX_PB_H
#define OX_PB_H

#include "proto.h"

/* Kinds of field (how the value is stored in the C struct). */
enum {
  PB_I32,    /* int32 varint (also enums) */
  PB_I64,    /* int64 varint */
  PB_U64,    /* uint64 varint */
  PB_F32,    /* float fixed32 */
  PB_F64,    /* double fixed64 */
  PB_STR,    /* string -> char* (NUL-terminated, no embedded NUL) */
  PB_BYTES,  /* bytes -> ox_bytes copied into the arena with a trailing NUL */
  PB_RAW,    /* bytes -> ox_bytes pointing into the input (zero copy) */
  PB_MSG,    /* sub-message -> pointer (singular) or array of structs (repeated) */
  PB_INLINE, /* TypeProto oneof member: decoded into the same ox_type */
};

/* Field flags */
enum {
  PB_REP = 1,    /* repeated */
  PB_PACKED = 2, /* written packed (declared [packed = true]) */
  PB_ONEOF = 4,  /* member of the message's (single) plain oneof */
};

typedef struct pb_msg pb_msg;

typedef struct pb_field {
  uint32_t num;
  uint8_t kind, flags;
  uint32_t off; /* value (singular) or array pointer (repeated) */
  uint32_t aux; /* has_ flag (singular scalar) or count (repeated); unused otherwise */
  const pb_msg *sub;
  const char *name;
} pb_field;

struct pb_msg {
  const char *name; /* "TensorProto" */
  size_t size;      /* sizeof the C struct */
  const pb_field *f;
  size_t nf;        /* fields, sorted by number */
  uint32_t unknown; /* offset of the ox_bytes of unknown fields */
};

extern const pb_msg ox_pb_model_msg, ox_pb_tensor_msg, ox_pb_sequence_msg, ox_pb_map_msg,
    ox_pb_optional_msg, ox_pb_type_msg;

/* Bytes of one array element of a repeated field; the wire type of one
 * (unpacked) value of a field of this kind. */
size_t ox_pb_elem_size(const pb_field *f);
int ox_pb_wire_of(int kind);

/* Decodes into obj (zeroed or already holding a message to merge into). */
int ox_pb_decode_msg(const pb_msg *d, const uint8_t *data, size_t size, ox_arena *a, void *obj,
                     ox_err *e);

/* The encoder's sink: a growing buffer, optionally flushed to a file
 * descriptor (fd >= 0) so that large models are streamed. */
typedef struct pb_sink {
  ox_buf *buf;
  int fd;
  const char *path; /* for error messages when fd >= 0 */
  /* Optional substitution: the encoder writes *subst(ud, t) instead of each
   * TensorProto t (used to move data to or from external files). */
  const ox_tensor *(*subst)(void *ud, const ox_tensor *t);
  void *ud;
} pb_sink;

int ox_pb_encode_msg(const pb_msg *d, const void *obj, pb_sink *s, ox_err *e);

/* Calls fn on every TensorProto of the model that can hold data:
 * initializers, sparse initializers, attribute tensors, in graphs,
 * subgraphs, functions and training info. Stops at the first error. */
typedef int (*ox_pb_tensor_fn)(void *ud, ox_tensor *t, const char *where, ox_err *e);
int ox_pb_walk_tensors(ox_model_proto *m, ox_pb_tensor_fn fn, void *ud, ox_err *e);

#endif
