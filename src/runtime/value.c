/* value.c - run-time values: construction, reference counting, copies,
 * TensorProto conversion (packed sub-byte types <-> one element per byte),
 * and shape helpers. */
#include "value.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t ox_value_elem_size(int32_t dtype) {
  switch (dtype) {
    case OX_FLOAT:
    case OX_INT32:
    case OX_UINT32:
      return 4;
    case OX_UINT8:
    case OX_INT8:
    case OX_BOOL:
    case OX_FLOAT8E4M3FN:
    case OX_FLOAT8E4M3FNUZ:
    case OX_FLOAT8E5M2:
    case OX_FLOAT8E5M2FNUZ:
    case OX_FLOAT8E8M0:
    case OX_UINT4:
    case OX_INT4:
    case OX_FLOAT4E2M1:
    case OX_UINT2:
    case OX_INT2:
      return 1;
    case OX_UINT16:
    case OX_INT16:
    case OX_FLOAT16:
    case OX_BFLOAT16:
      return 2;
    case OX_INT64:
    case OX_UINT64:
    case OX_DOUBLE:
    case OX_COMPLEX64:
      return 8;
    case OX_COMPLEX128:
      return 16;
    case OX_STRING:
      return sizeof(char *);
    default:
      return 0;
  }
}

static const char *dtype_name(int32_t dt) {
  const ox_dtype_info *d = ox_dtype_get(dt);
  return d ? d->name : "unknown";
}

/* Larger requests fail as out of memory without asking the allocator (no
 * machine holds them, and sanitizer allocators abort on such sizes). */
#define OX_MAX_TENSOR_BYTES ((uint64_t)1 << 40) /* 64 bits: size_t may have 32 (wasm32) */

/* The memory budget of the run (or session creation) on this thread, if
 * any: tensor storage allocated here is charged to it and storage freed
 * here is credited back, so `used` follows the bytes the run holds. */
static _Thread_local ox_mem_budget *tl_budget;

ox_mem_budget *ox_mem_budget_enter(ox_mem_budget *b) {
  ox_mem_budget *prev = tl_budget;
  tl_budget = b;
  return prev;
}

void ox_mem_budget_leave(ox_mem_budget *prev) { tl_budget = prev; }

static bool budget_charge(size_t n) {
  ox_mem_budget *b = tl_budget;
  if (!b || !b->limit) return true;
  if (n > b->limit || b->used > b->limit - n) {
    b->refused = n;
    return false;
  }
  b->used += n;
  if (b->used > b->peak) b->peak = b->used;
  return true;
}

static void budget_credit(size_t n) {
  ox_mem_budget *b = tl_budget;
  if (b && b->limit) b->used = n > b->used ? 0 : b->used - n;
}

/* Large storage freed is kept for the next block of the same size. glibc
 * maps every block of 128 KiB or more afresh and unmaps it on free (its
 * threshold rises only when a larger block is freed), so a run's outputs,
 * the same sizes on every run, paid page faults on every run: gpt2_step's
 * 24 KV-cache outputs took 4 ms of a 14 ms step. Bounded in blocks and
 * bytes; the oldest block goes first. */
enum { STORE_MIN = 64 << 10, STORE_SLOTS = 64 };
#define STORE_BYTES ((size_t)64 << 20)
static pthread_mutex_t store_mu = PTHREAD_MUTEX_INITIALIZER;
static struct kept_block {
  void *p;
  size_t n;
} store[STORE_SLOTS];
static size_t store_n, store_bytes;

static void *store_take(size_t n) {
  void *p = NULL;
  pthread_mutex_lock(&store_mu);
  for (size_t i = store_n; i-- > 0;)
    if (store[i].n == n) {
      p = store[i].p;
      store_bytes -= n;
      memmove(store + i, store + i + 1, (store_n - i - 1) * sizeof *store);
      store_n--;
      break;
    }
  pthread_mutex_unlock(&store_mu);
  return p;
}

static void store_give(void *p, size_t n) {
  if (n < STORE_MIN || n > STORE_BYTES / 4) {
    free(p);
    return;
  }
  void *evicted[STORE_SLOTS];
  size_t ne = 0;
  pthread_mutex_lock(&store_mu);
  while (store_n && (store_n == STORE_SLOTS || store_bytes + n > STORE_BYTES)) {
    evicted[ne++] = store[0].p;
    store_bytes -= store[0].n;
    memmove(store, store + 1, (store_n - 1) * sizeof *store);
    store_n--;
  }
  store[store_n++] = (struct kept_block){p, n};
  store_bytes += n;
  pthread_mutex_unlock(&store_mu);
  for (size_t i = 0; i < ne; i++) free(evicted[i]);
}

void *ox_value_alloc_data(size_t nbytes) {
  void *p = NULL;
  if ((uint64_t)nbytes > OX_MAX_TENSOR_BYTES) return NULL;
  if (nbytes == 0) nbytes = 1;
  size_t rounded = (nbytes + OX_DATA_ALIGN - 1) & ~(size_t)(OX_DATA_ALIGN - 1);
  if (rounded < nbytes) return NULL;
  if (!budget_charge(rounded)) return NULL;
  if (rounded >= STORE_MIN && (p = store_take(rounded)) != NULL) return p;
  if (posix_memalign(&p, OX_DATA_ALIGN, rounded) != 0) {
    budget_credit(rounded);
    return NULL;
  }
  return p;
}

/* The bytes ox_value_alloc_data took for nbytes. */
static size_t alloc_size(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  return (nbytes + OX_DATA_ALIGN - 1) & ~(size_t)(OX_DATA_ALIGN - 1);
}

static ox_value *value_new(ox_value_kind kind, ox_err *e) {
  /* the value itself counts too: a Loop can hold millions of small views */
  if (!budget_charge(sizeof(ox_value))) {
    ox_err_set(e, OX_ENOMEM, "out of memory allocating a value (memory limit)");
    return NULL;
  }
  ox_value *v = calloc(1, sizeof *v);
  if (!v) {
    budget_credit(sizeof(ox_value));
    ox_err_set(e, OX_ENOMEM, "out of memory allocating a value");
    return NULL;
  }
  v->kind = kind;
  v->refcount = 1;
  v->dims = v->small_dims;
  return v;
}

/* Sets dims/rank/numel/nbytes of a tensor value. */
static int set_shape(ox_value *v, int32_t dtype, const int64_t *dims, size_t rank, ox_err *e) {
  size_t es = ox_value_elem_size(dtype);
  if (es == 0) return ox_err_set(e, OX_EINVAL, "tensor of undefined element type %d", (int)dtype);
  int64_t n;
  if (rank && !dims) return ox_err_set(e, OX_EINVAL, "tensor of rank %zu without dims", rank);
  for (size_t i = 0; i < rank; i++)
    if (dims[i] < 0)
      return ox_err_set(e, OX_EINVAL, "negative dimension %lld at axis %zu", (long long)dims[i], i);
  if (!ox_numel(dims, rank, &n))
    return ox_err_set(e, OX_ENOMEM, "tensor shape overflows (element count too large)");
  size_t nb;
  if (!ox_mul_size((size_t)n, es, &nb) || (uint64_t)n > SIZE_MAX)
    return ox_err_set(e, OX_ENOMEM, "tensor of %lld %s elements is too large", (long long)n,
                      dtype_name(dtype));
  if (rank > 8) {
    int64_t *d = malloc(rank * sizeof *d);
    if (!d) return ox_err_set(e, OX_ENOMEM, "out of memory (dims of rank %zu)", rank);
    v->dims = d;
  } else {
    v->dims = v->small_dims;
  }
  if (rank) memcpy(v->dims, dims, rank * sizeof *dims);
  v->rank = rank;
  v->dtype = dtype;
  v->numel = n;
  v->nbytes = nb;
  return OX_OK;
}

ox_value *ox_tensor_new_uninit(int32_t dtype, const int64_t *dims, size_t rank, ox_err *e) {
  ox_value *v = value_new(OX_VAL_TENSOR, e);
  if (!v) return NULL;
  if (set_shape(v, dtype, dims, rank, e)) {
    ox_value_unref(v);
    return NULL;
  }
  v->data = ox_value_alloc_data(v->nbytes);
  if (!v->data) {
    const ox_mem_budget *b = tl_budget;
    if (b && b->refused)
      ox_err_set(e, OX_ENOMEM,
                 "a %s tensor of %zu bytes would exceed the memory limit of %zu bytes "
                 "(%zu in use)",
                 dtype_name(dtype), v->nbytes, b->limit, b->used);
    else
      ox_err_set(e, OX_ENOMEM, "out of memory allocating a %s tensor of %zu bytes",
                 dtype_name(dtype), v->nbytes);
    if (tl_budget) tl_budget->refused = 0;
    ox_value_unref(v);
    return NULL;
  }
  v->owns_data = true;
  if (dtype == OX_STRING) memset(v->data, 0, v->nbytes);
  return v;
}

ox_value *ox_tensor_new(int32_t dtype, const int64_t *dims, size_t rank, ox_err *e) {
  ox_value *v = ox_tensor_new_uninit(dtype, dims, rank, e);
  if (v) memset(v->data, 0, v->nbytes);
  return v;
}

ox_value *ox_tensor_wrap(int32_t dtype, const int64_t *dims, size_t rank, void *data, ox_err *e) {
  ox_value *v = value_new(OX_VAL_TENSOR, e);
  if (!v) return NULL;
  if (set_shape(v, dtype, dims, rank, e)) {
    ox_value_unref(v);
    return NULL;
  }
  if (!data && v->nbytes) {
    ox_err_set(e, OX_EINVAL, "wrapping a NULL buffer as a non-empty tensor");
    ox_value_unref(v);
    return NULL;
  }
  v->data = data;
  v->owns_data = false;
  if (!v->data) { /* empty tensor: keep a valid pointer for memcpy & co */
    v->data = ox_value_alloc_data(1);
    if (!v->data) {
      ox_err_set(e, OX_ENOMEM, "out of memory");
      ox_value_unref(v);
      return NULL;
    }
    v->owns_data = true;
  }
  return v;
}

ox_value *ox_tensor_scalar_i64(int64_t x, ox_err *e) {
  ox_value *v = ox_tensor_new_uninit(OX_INT64, NULL, 0, e);
  if (v) *(int64_t *)v->data = x;
  return v;
}

ox_value *ox_tensor_scalar_f32(float x, ox_err *e) {
  ox_value *v = ox_tensor_new_uninit(OX_FLOAT, NULL, 0, e);
  if (v) *(float *)v->data = x;
  return v;
}

ox_value *ox_sequence_new(ox_err *e) { return value_new(OX_VAL_SEQUENCE, e); }

int ox_sequence_push(ox_value *seq, ox_value *item, ox_err *e) {
  if (seq->n_items == seq->cap_items) {
    size_t cap = seq->cap_items ? seq->cap_items * 2 : 4;
    /* the item array counts against the memory budget too: a sequence of
     * references to one tensor can still grow without end */
    if (!budget_charge((cap - seq->cap_items) * sizeof(ox_value *))) {
      const ox_mem_budget *b = tl_budget;
      size_t limit = b ? b->limit : 0;
      ox_value_unref(item);
      if (tl_budget) tl_budget->refused = 0;
      return ox_err_set(e, OX_ENOMEM,
                        "a sequence of %zu items would exceed the memory limit of %zu bytes", cap,
                        limit);
    }
    ox_value **it = realloc(seq->items, cap * sizeof *it);
    if (!it) {
      budget_credit((cap - seq->cap_items) * sizeof(ox_value *));
      ox_value_unref(item);
      return ox_err_set(e, OX_ENOMEM, "out of memory growing a sequence");
    }
    seq->items = it;
    seq->cap_items = cap;
  }
  seq->items[seq->n_items++] = item;
  return OX_OK;
}

ox_value *ox_optional_new(ox_value *elem, ox_err *e) {
  ox_value *v = value_new(OX_VAL_OPTIONAL, e);
  if (!v) {
    ox_value_unref(elem);
    return NULL;
  }
  v->elem = elem;
  return v;
}

ox_value *ox_map_new(ox_value *keys, ox_value *vals, ox_err *e) {
  ox_value *v = value_new(OX_VAL_MAP, e);
  if (!v) {
    ox_value_unref(keys);
    ox_value_unref(vals);
    return NULL;
  }
  v->keys = keys;
  v->vals = vals;
  return v;
}

/* Counts are atomic: constants of a session (and views of them) are
 * referenced by every run, and runs may be concurrent. */
ox_value *ox_value_ref(ox_value *v) {
  if (v) __atomic_fetch_add(&v->refcount, 1, __ATOMIC_RELAXED);
  return v;
}

void ox_tensor_free_data(ox_value *v) {
  if (v->owns_data && v->data) {
    budget_credit(alloc_size(v->nbytes));
    if (v->dtype == OX_STRING) {
      char **s = v->data;
      for (int64_t i = 0; i < v->numel; i++) free(s[i]);
    }
    store_give(v->data, alloc_size(v->nbytes));
  }
  v->data = NULL;
  v->owns_data = false;
}

void ox_value_unref(ox_value *v) {
  if (!v || __atomic_sub_fetch(&v->refcount, 1, __ATOMIC_ACQ_REL) > 0) return;
  ox_tensor_free_data(v);
  if (v->dims != v->small_dims) free(v->dims);
  for (size_t i = 0; i < v->n_items; i++) ox_value_unref(v->items[i]);
  if (v->items) budget_credit(v->cap_items * sizeof(ox_value *));
  free(v->items);
  ox_value_unref(v->keys);
  ox_value_unref(v->vals);
  ox_value_unref(v->elem);
  ox_value_unref(v->sp_values);
  ox_value_unref(v->sp_indices);
  ox_value_unref(v->base);
  free(v);
  budget_credit(sizeof(ox_value));
}

int ox_tensor_copy_data(ox_value *dst, const ox_value *src, ox_err *e) {
  if (src->dtype != dst->dtype || src->numel != dst->numel)
    return ox_err_set(e, OX_ERUNTIME, "copy between tensors of different type or size");
  if (src->dtype == OX_STRING) {
    char **d = dst->data;
    char *const *s = src->data;
    for (int64_t i = 0; i < src->numel; i++) {
      free(d[i]);
      d[i] = strdup(s[i] ? s[i] : "");
      if (!d[i]) return ox_err_set(e, OX_ENOMEM, "out of memory copying strings");
    }
  } else if (src->nbytes) {
    memcpy(dst->data, src->data, src->nbytes);
  }
  return OX_OK;
}

ox_value *ox_value_clone(const ox_value *v, ox_err *e) {
  if (!v) return NULL;
  ox_value *r = NULL;
  switch (v->kind) {
    case OX_VAL_TENSOR:
      r = ox_tensor_new_uninit(v->dtype, v->dims, v->rank, e);
      if (r && ox_tensor_copy_data(r, v, e)) {
        ox_value_unref(r);
        return NULL;
      }
      return r;
    case OX_VAL_SEQUENCE:
      r = ox_sequence_new(e);
      if (!r) return NULL;
      r->elem_type = v->elem_type;
      for (size_t i = 0; i < v->n_items; i++) {
        ox_value *it = ox_value_clone(v->items[i], e);
        if (!it || ox_sequence_push(r, it, e)) {
          ox_value_unref(r);
          return NULL;
        }
      }
      return r;
    case OX_VAL_MAP: {
      ox_value *k = ox_value_clone(v->keys, e);
      if (v->keys && !k) return NULL;
      ox_value *x = ox_value_clone(v->vals, e);
      if (v->vals && !x) {
        ox_value_unref(k);
        return NULL;
      }
      return ox_map_new(k, x, e);
    }
    case OX_VAL_OPTIONAL: {
      ox_value *x = ox_value_clone(v->elem, e);
      if (v->elem && !x) return NULL;
      r = ox_optional_new(x, e);
      if (r) r->elem_type = v->elem_type;
      return r;
    }
    case OX_VAL_SPARSE: {
      r = value_new(OX_VAL_SPARSE, e);
      if (!r) return NULL;
      if (set_shape(r, v->dtype, v->dims, v->rank, e)) {
        ox_value_unref(r);
        return NULL;
      }
      r->sp_values = ox_value_clone(v->sp_values, e);
      r->sp_indices = ox_value_clone(v->sp_indices, e);
      if ((v->sp_values && !r->sp_values) || (v->sp_indices && !r->sp_indices)) {
        ox_value_unref(r);
        return NULL;
      }
      return r;
    }
  }
  ox_err_set(e, OX_EINVAL, "clone of a value of unknown kind %d", (int)v->kind);
  return NULL;
}

/* ---------------------------------------------------------- TensorProto */

static bool host_little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

/* Unpacks `n` elements of `bits` bits (LSB first) from src into one byte
 * each, sign-extending when `is_signed`. */
static void unpack_bits(const uint8_t *src, uint8_t *dst, int64_t n, int bits, bool is_signed) {
  int per = 8 / bits;
  uint8_t mask = (uint8_t)((1u << bits) - 1);
  for (int64_t i = 0; i < n; i++) {
    uint8_t b = (uint8_t)((src[i / per] >> ((i % per) * bits)) & mask);
    if (is_signed && (b & (1u << (bits - 1)))) b = (uint8_t)(b | (uint8_t)~mask);
    dst[i] = b;
  }
}

static void pack_bits(const uint8_t *src, uint8_t *dst, int64_t n, int bits) {
  int per = 8 / bits;
  uint8_t mask = (uint8_t)((1u << bits) - 1);
  int64_t nb = (n + per - 1) / per;
  memset(dst, 0, (size_t)nb);
  for (int64_t i = 0; i < n; i++)
    dst[i / per] = (uint8_t)(dst[i / per] | ((src[i] & mask) << ((i % per) * bits)));
}

static int sub_byte_bits(int32_t dt) {
  switch (dt) {
    case OX_UINT4:
    case OX_INT4:
    case OX_FLOAT4E2M1:
      return 4;
    case OX_UINT2:
    case OX_INT2:
      return 2;
    default:
      return 0;
  }
}

static bool sub_byte_signed(int32_t dt) { return dt == OX_INT4 || dt == OX_INT2; }

/* Copies little-endian bytes of `n` elements of size es into dst (host order). */
static void copy_le(void *dst, const uint8_t *src, size_t n, size_t es) {
  if (host_little_endian() || es == 1) {
    memcpy(dst, src, n * es);
    return;
  }
  uint8_t *d = dst;
  size_t lane = es == 16 ? 8 : es; /* complex128: two doubles */
  for (size_t i = 0; i < n * es; i += lane)
    for (size_t b = 0; b < lane; b++) d[i + b] = src[i + lane - 1 - b];
}

#define TNAME(t) ((t)->name && *(t)->name ? (t)->name : "?")

ox_value *ox_value_from_tensor_proto(const ox_tensor *t, bool borrow, ox_err *e) {
  int32_t dt = t->data_type;
  size_t es = ox_value_elem_size(dt);
  if (!t->has_data_type && dt == 0) {
    ox_err_set(e, OX_EMODEL, "tensor '%s' has no data_type", TNAME(t));
    return NULL;
  }
  if (es == 0) {
    ox_err_set(e, OX_EMODEL, "tensor '%s' has unsupported data_type %d", TNAME(t), (int)dt);
    return NULL;
  }
  if (t->data_location == 1 && !t->external.data) {
    ox_err_set(e, OX_EMODEL, "tensor '%s' has external data that was not loaded", TNAME(t));
    return NULL;
  }
  if (t->segment) {
    ox_err_set(e, OX_EUNSUPPORTED, "tensor '%s' is a segment of a larger tensor", TNAME(t));
    return NULL;
  }
  ox_value probe = {0};
  ox_err e2;
  if (set_shape(&probe, dt, t->dims, t->n_dims, &e2)) {
    ox_err_set(e, e2.code, "tensor '%s': %s", TNAME(t), e2.msg);
    if (probe.dims != probe.small_dims && probe.dims) free(probe.dims);
    return NULL;
  }
  if (probe.dims != probe.small_dims) free(probe.dims);
  int64_t n = probe.numel;
  ox_bytes pl = ox_tensor_payload(t);
  int bits = sub_byte_bits(dt);

  if (pl.data) {
    if (dt == OX_STRING) {
      ox_err_set(e, OX_EMODEL, "tensor '%s': string tensors cannot use raw_data", TNAME(t));
      return NULL;
    }
    size_t want;
    if (!ox_dtype_nbytes(dt, n, &want)) want = SIZE_MAX;
    if (pl.size != want) {
      ox_err_set(e, OX_EMODEL, "tensor '%s': raw data holds %zu bytes, %lld %s elements need %zu",
                 TNAME(t), pl.size, (long long)n, dtype_name(dt), want);
      return NULL;
    }
    if (!bits && borrow && host_little_endian() && ((uintptr_t)pl.data % es) == 0 &&
        ((uintptr_t)pl.data % (es > 8 ? 8 : es)) == 0)
      return ox_tensor_wrap(dt, t->dims, t->n_dims, (void *)pl.data, e);
    ox_value *v = ox_tensor_new_uninit(dt, t->dims, t->n_dims, e);
    if (!v) return NULL;
    if (bits)
      unpack_bits(pl.data, v->data, n, bits, sub_byte_signed(dt));
    else
      copy_le(v->data, pl.data, (size_t)n, es);
    /* a large payload copied out of the model file (not aligned for its
     * type) is read from the copy from now on: its file pages may go */
    if (pl.size >= ((size_t)64 << 10)) ox_pages_unneeded(pl.data, pl.size);
    return v;
  }

  /* typed fields */
  size_t have = 0, per = 1;
  const char *field = NULL;
  switch (dt) {
    case OX_FLOAT:
      have = t->n_float_data;
      field = "float_data";
      break;
    case OX_COMPLEX64:
      have = t->n_float_data;
      per = 2;
      field = "float_data";
      break;
    case OX_DOUBLE:
      have = t->n_double_data;
      field = "double_data";
      break;
    case OX_COMPLEX128:
      have = t->n_double_data;
      per = 2;
      field = "double_data";
      break;
    case OX_INT64:
      have = t->n_int64_data;
      field = "int64_data";
      break;
    case OX_UINT32:
    case OX_UINT64:
      have = t->n_uint64_data;
      field = "uint64_data";
      break;
    case OX_STRING:
      have = t->n_string_data;
      field = "string_data";
      break;
    default:
      have = t->n_int32_data;
      field = "int32_data";
      break;
  }
  size_t need;
  if (bits) {
    size_t epw = (size_t)(8 / bits);
    need = ((size_t)n + epw - 1) / epw;
  } else {
    need = (size_t)n * per;
  }
  if (have != need) {
    ox_err_set(e, OX_EMODEL, "tensor '%s' (%s, %lld elements): %s has %zu entries, expected %zu",
               TNAME(t), dtype_name(dt), (long long)n, field, have, need);
    return NULL;
  }
  ox_value *v = ox_tensor_new_uninit(dt, t->dims, t->n_dims, e);
  if (!v) return NULL;
  size_t un = (size_t)n;
  switch (dt) {
    case OX_FLOAT:
    case OX_COMPLEX64:
      if (have) memcpy(v->data, t->float_data, have * sizeof(float));
      break;
    case OX_DOUBLE:
    case OX_COMPLEX128:
      if (have) memcpy(v->data, t->double_data, have * sizeof(double));
      break;
    case OX_INT64:
      if (have) memcpy(v->data, t->int64_data, have * sizeof(int64_t));
      break;
    case OX_UINT64:
      if (have) memcpy(v->data, t->uint64_data, have * sizeof(uint64_t));
      break;
    case OX_UINT32:
      for (size_t i = 0; i < un; i++) ((uint32_t *)v->data)[i] = (uint32_t)t->uint64_data[i];
      break;
    case OX_STRING: {
      char **s = v->data;
      memset(s, 0, un * sizeof *s);
      for (size_t i = 0; i < un; i++) {
        const ox_bytes *b = &t->string_data[i];
        s[i] = malloc(b->size + 1);
        if (!s[i]) {
          ox_value_unref(v);
          ox_err_set(e, OX_ENOMEM, "out of memory reading strings of tensor '%s'", TNAME(t));
          return NULL;
        }
        if (b->size) memcpy(s[i], b->data, b->size);
        s[i][b->size] = 0;
      }
      break;
    }
    case OX_INT32:
      if (have) memcpy(v->data, t->int32_data, have * sizeof(int32_t));
      break;
    case OX_INT16:
    case OX_UINT16:
    case OX_FLOAT16:
    case OX_BFLOAT16:
      for (size_t i = 0; i < un; i++) ((uint16_t *)v->data)[i] = (uint16_t)t->int32_data[i];
      break;
    case OX_BOOL:
      for (size_t i = 0; i < un; i++) ((uint8_t *)v->data)[i] = t->int32_data[i] != 0;
      break;
    default:
      if (bits) {
        uint8_t *tmp = malloc(have ? have : 1);
        if (!tmp) {
          ox_value_unref(v);
          ox_err_set(e, OX_ENOMEM, "out of memory");
          return NULL;
        }
        for (size_t i = 0; i < have; i++) tmp[i] = (uint8_t)t->int32_data[i];
        unpack_bits(tmp, v->data, n, bits, sub_byte_signed(dt));
        free(tmp);
      } else { /* 1-byte types */
        for (size_t i = 0; i < un; i++) ((uint8_t *)v->data)[i] = (uint8_t)t->int32_data[i];
      }
      break;
  }
  return v;
}

int ox_value_to_tensor_proto(const ox_value *v, ox_arena *a, ox_tensor *out, ox_err *e) {
  if (!v || v->kind != OX_VAL_TENSOR)
    return ox_err_set(e, OX_EINVAL, "only a tensor value can be written as a TensorProto");
  memset(out, 0, sizeof *out);
  out->data_type = v->dtype;
  out->has_data_type = true;
  out->n_dims = v->rank;
  if (v->rank) {
    out->dims = ox_arena_memdup(a, v->dims, v->rank * sizeof *v->dims);
    if (!out->dims) return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  if (v->dtype == OX_STRING) {
    size_t n = (size_t)v->numel;
    out->string_data = ox_arena_calloc(a, n ? n : 1, sizeof *out->string_data);
    if (!out->string_data) return ox_err_set(e, OX_ENOMEM, "out of memory");
    char *const *s = v->data;
    for (size_t i = 0; i < n; i++) {
      const char *x = s[i] ? s[i] : "";
      size_t len = strlen(x);
      uint8_t *c = ox_arena_memdup(a, x, len + 1);
      if (!c) return ox_err_set(e, OX_ENOMEM, "out of memory");
      out->string_data[i].data = c;
      out->string_data[i].size = len;
    }
    out->n_string_data = n;
    return OX_OK;
  }
  size_t nb;
  if (!ox_dtype_nbytes(v->dtype, v->numel, &nb))
    return ox_err_set(e, OX_ENOMEM, "tensor too large to encode");
  uint8_t *raw = ox_arena_alloc(a, nb ? nb : 1);
  if (!raw) return ox_err_set(e, OX_ENOMEM, "out of memory encoding a tensor of %zu bytes", nb);
  int bits = sub_byte_bits(v->dtype);
  if (bits) {
    pack_bits(v->data, raw, v->numel, bits);
  } else {
    /* host -> little endian: the same swap as copy_le */
    copy_le(raw, v->data, (size_t)v->numel, ox_value_elem_size(v->dtype));
  }
  out->raw_data.data = raw;
  out->raw_data.size = nb;
  return OX_OK;
}

/* ---------------------------------------------------------- shapes */

bool ox_shape_equal(const int64_t *a, size_t ra, const int64_t *b, size_t rb) {
  if (ra != rb) return false;
  for (size_t i = 0; i < ra; i++)
    if (a[i] != b[i]) return false;
  return true;
}

int ox_broadcast_shape(const int64_t *a, size_t ra, const int64_t *b, size_t rb, int64_t *out,
                       size_t *rout, ox_err *e) {
  size_t r = ra > rb ? ra : rb;
  for (size_t i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else
      return ox_err_set(e, OX_ERUNTIME,
                        "shapes cannot be broadcast: dimension %lld vs %lld at output axis %zu",
                        (long long)da, (long long)db, i);
  }
  *rout = r;
  return OX_OK;
}

int ox_value_describe(const ox_value *v, char *buf, size_t size) {
  if (!v) return snprintf(buf, size, "none");
  switch (v->kind) {
    case OX_VAL_TENSOR:
    case OX_VAL_SPARSE: {
      int k = snprintf(buf, size, "%s(%s)[", v->kind == OX_VAL_TENSOR ? "tensor" : "sparse_tensor",
                       dtype_name(v->dtype));
      for (size_t i = 0; i < v->rank && k >= 0 && (size_t)k < size; i++)
        k += snprintf(buf + k, size - (size_t)k, "%s%lld", i ? "," : "", (long long)v->dims[i]);
      if (k >= 0 && (size_t)k < size) k += snprintf(buf + k, size - (size_t)k, "]");
      return k;
    }
    case OX_VAL_SEQUENCE:
      return snprintf(buf, size, "sequence of %zu", v->n_items);
    case OX_VAL_MAP:
      return snprintf(buf, size, "map");
    case OX_VAL_OPTIONAL:
      return snprintf(buf, size, v->elem ? "optional(value)" : "optional(none)");
  }
  return snprintf(buf, size, "?");
}
