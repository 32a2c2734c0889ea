/* value.h - run-time values: tensor, sequence, map, optional, sparse.
 *
 * Tensors are dense, row-major, contiguous. Element storage by type:
 *  - numeric types: their natural C layout (float16/bfloat16 as uint16_t,
 *    float8 kinds and float8e8m0 as uint8_t, complex64 as float[2], bool as
 *    uint8_t 0/1);
 *  - sub-byte types (int4, uint4, int2, uint2, float4e2m1) are held UNPACKED,
 *    one element per byte (int4/int2 sign-extended in an int8_t, uint4/uint2 in
 *    a uint8_t, float4e2m1 as its 4-bit code in a uint8_t). They are packed
 *    only at the edges (TensorProto in and out), so every data-movement kernel
 *    handles them as 1-byte elements;
 *  - string: `char *` per element, NUL-terminated, malloc'd and owned by the
 *    tensor (a NULL element reads as "").
 *
 * Values are reference counted: ox_value_ref / ox_value_unref. A tensor's
 * data is either owned (freed with the value) or borrowed (a caller buffer,
 * an initializer in the model mapping): see `owns_data`. */
#ifndef OX_VALUE_H
#define OX_VALUE_H

#include "../ir/ir.h"

typedef enum ox_value_kind {
  OX_VAL_TENSOR = 1,
  OX_VAL_SEQUENCE = 2,
  OX_VAL_MAP = 3,
  OX_VAL_OPTIONAL = 4,
  OX_VAL_SPARSE = 5,
} ox_value_kind;

typedef struct ox_value ox_value;

struct ox_value {
  ox_value_kind kind;
  int refcount;
  /* tensor */
  int32_t dtype; /* ox_dtype */
  size_t rank;
  int64_t *dims; /* rank entries (points to small_dims when rank <= 8) */
  int64_t numel;
  void *data; /* numel elements of ox_value_elem_size(dtype) bytes */
  size_t nbytes;
  bool owns_data;
  /* a tensor whose data is borrowed from another value (a view: Reshape &
   * co) holds a reference to it here; released with this value */
  ox_value *base;
  int64_t small_dims[8];
  /* sequence: items (tensors or other values), elem type for an empty one */
  ox_value **items;
  size_t n_items, cap_items;
  const ox_type *elem_type; /* optional: the declared element type (borrowed) */
  /* map: keys is a 1-D tensor (int64 or string ...), values a sequence-like
   * 1-D tensor or a sequence value */
  ox_value *keys, *vals;
  /* optional: elem == NULL means "no value" */
  ox_value *elem;
  /* sparse (COO): values 1-D [NNZ], indices [NNZ, rank] or [NNZ] linear, dims
   * in dims/rank as for a tensor */
  ox_value *sp_values, *sp_indices;
};

/* Bytes per element in run-time storage (1 for sub-byte types,
 * sizeof(char*) for string, 0 for undefined). */
size_t ox_value_elem_size(int32_t dtype);

/* New tensor with owned, zeroed storage. NULL and *e set on OOM or overflow. */
ox_value *ox_tensor_new(int32_t dtype, const int64_t *dims, size_t rank, ox_err *e);
/* New tensor that borrows data (not freed with the value). */
ox_value *ox_tensor_wrap(int32_t dtype, const int64_t *dims, size_t rank, void *data, ox_err *e);
/* Scalar helpers. */
ox_value *ox_tensor_scalar_i64(int64_t v, ox_err *e);
ox_value *ox_tensor_scalar_f32(float v, ox_err *e);

ox_value *ox_sequence_new(ox_err *e);
int ox_sequence_push(ox_value *seq, ox_value *item, ox_err *e); /* takes a reference */
ox_value *ox_optional_new(ox_value *elem, ox_err *e); /* takes a reference; elem may be NULL */
ox_value *ox_map_new(ox_value *keys, ox_value *vals, ox_err *e); /* takes references */

ox_value *ox_value_ref(ox_value *v);
void ox_value_unref(ox_value *v);

/* Deep copy of a value (owned storage). */
ox_value *ox_value_clone(const ox_value *v, ox_err *e);

/* Converts a TensorProto (inline data, raw_data or resolved external data,
 * packed sub-byte types, typed fields) to a tensor value. The result owns its
 * data unless `borrow` is true and the payload can be used as is (aligned
 * raw bytes of a type whose run-time layout equals the file layout). */
ox_value *ox_value_from_tensor_proto(const ox_tensor *t, bool borrow, ox_err *e);
/* Writes a tensor value into a TensorProto allocated in arena a (raw_data
 * copied into the arena; strings into string_data). */
int ox_value_to_tensor_proto(const ox_value *v, ox_arena *a, ox_tensor *out, ox_err *e);

/* Shape helpers */
bool ox_shape_equal(const int64_t *a, size_t ra, const int64_t *b, size_t rb);
/* Multidirectional (numpy) broadcast of two shapes; out must hold max(ra,rb). */
int ox_broadcast_shape(const int64_t *a, size_t ra, const int64_t *b, size_t rb, int64_t *out,
                       size_t *rout, ox_err *e);

/* ---- additions (runtime) ---- */
/* Like ox_tensor_new but the storage is not zeroed (strings are). */
ox_value *ox_tensor_new_uninit(int32_t dtype, const int64_t *dims, size_t rank, ox_err *e);
/* Tensor storage is aligned to, and allocated in multiples of, this many bytes. */
#define OX_DATA_ALIGN 64
/* 64-byte aligned storage for tensor data (free with free()); NULL on OOM
 * or when the thread's memory budget would be exceeded. */
void *ox_value_alloc_data(size_t nbytes);

/* A limit on the tensor storage one run (or one session creation) holds:
 * while a budget is entered on a thread, storage allocated there is charged
 * to it and storage freed there credited back; an allocation that would
 * pass `limit` fails (a clear error through ox_tensor_new*). limit 0: none. */
typedef struct ox_mem_budget {
  size_t limit, used, peak;
  size_t refused; /* the size of the last refused allocation */
} ox_mem_budget;
/* Enters b on this thread; returns the previous budget for ox_mem_budget_leave. */
ox_mem_budget *ox_mem_budget_enter(ox_mem_budget *b);
void ox_mem_budget_leave(ox_mem_budget *prev);
/* Frees the data of a tensor if owned (strings included) and clears it. */
void ox_tensor_free_data(ox_value *v);
/* Copies elements (same dtype and count; strings duplicated). */
int ox_tensor_copy_data(ox_value *dst, const ox_value *src, ox_err *e);
/* "tensor(float)[2,3]", "sequence of 4", ... for messages; snprintf result. */
int ox_value_describe(const ox_value *v, char *buf, size_t size);

/* onnx-data.proto messages <-> values (value_data.c). The *_to_* functions
 * allocate in arena a. A map's values come back as a sequence value. */
ox_value *ox_value_from_sequence_data(const ox_sequence_data *s, ox_err *e);
ox_value *ox_value_from_map_data(const ox_map_data *m, ox_err *e);
ox_value *ox_value_from_optional_data(const ox_optional_data *o, ox_err *e);
int ox_value_to_sequence_data(const ox_value *v, ox_arena *a, ox_sequence_data *out, ox_err *e);
int ox_value_to_map_data(const ox_value *v, ox_arena *a, ox_map_data *out, ox_err *e);
int ox_value_to_optional_data(const ox_value *v, ox_arena *a, ox_optional_data *out, ox_err *e);
/* Compares for conformance tests: exact kind, shape and element type; floats
 * within atol + rtol * |want| (NaN equals NaN); others exactly. 0 if equal,
 * else 1 with the first difference described in why. */
int ox_value_compare(const ox_value *want, const ox_value *got, double rtol, double atol, char *why,
                     size_t n);

#endif
