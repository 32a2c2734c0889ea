/* base.h - the lowest layer: errors, arenas, growable arrays, byte spans,
 * hash maps, file mapping. Every other layer includes this. */
#ifndef OX_BASE_H
#define OX_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- status codes (same values as the public onnxc_status) ---- */
enum {
  OX_OK = 0,
  OX_EINVAL = 1,       /* bad argument from the caller */
  OX_ENOMEM = 2,       /* allocation failed or a size overflowed */
  OX_EIO = 3,          /* file system */
  OX_EPARSE = 4,       /* malformed binary or text input */
  OX_EMODEL = 5,       /* the model breaks an IR or schema rule */
  OX_EUNSUPPORTED = 6, /* valid, but not implemented */
  OX_ERUNTIME = 7,     /* failure while running (shape mismatch, ...) */
  OX_ECANCELLED = 8,   /* the caller's cancellation callback said stop */
};

/* An error: a code plus one message. Functions that can fail take an
 * `ox_err *` (may be NULL) and return the code. The message says what and
 * where (byte offset, line:col, graph/node path). */
typedef struct ox_err {
  int code;
  char msg[1024];
} ox_err;

/* Sets e (when non-NULL) and returns code. printf-style. */
int ox_err_set(ox_err *e, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int ox_err_vset(ox_err *e, int code, const char *fmt, va_list ap);
/* Prepends "prefix: " to an existing message (for adding context while
 * unwinding). Returns e->code. */
int ox_err_prefix(ox_err *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- checked size arithmetic ---- */
/* Each returns false on overflow and leaves *r unspecified. */
bool ox_mul_size(size_t a, size_t b, size_t *r);
bool ox_add_size(size_t a, size_t b, size_t *r);
bool ox_mul_i64(int64_t a, int64_t b, int64_t *r);
bool ox_add_i64(int64_t a, int64_t b, int64_t *r);

/* ---- byte spans ---- */
/* A span of bytes that the owner of the model keeps alive (a file mapping
 * or an arena). data == NULL means "absent"; data != NULL with size == 0
 * means "present and empty". */
typedef struct ox_bytes {
  const uint8_t *data;
  size_t size;
} ox_bytes;

/* ---- arena ---- */
/* Bump allocator in chunks; everything is freed at once. Memory is zeroed
 * and 16-byte aligned. */
typedef struct ox_arena ox_arena;

ox_arena *ox_arena_new(void);
void ox_arena_free(ox_arena *a);
void *ox_arena_alloc(ox_arena *a, size_t n);               /* NULL on OOM */
void *ox_arena_calloc(ox_arena *a, size_t n, size_t elem); /* overflow-checked */
char *ox_arena_strdup(ox_arena *a, const char *s);
char *ox_arena_strndup(ox_arena *a, const char *s, size_t n);
void *ox_arena_memdup(ox_arena *a, const void *p, size_t n);
char *ox_arena_printf(ox_arena *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Bytes handed out so far (for memory accounting and benchmarks). */
size_t ox_arena_used(const ox_arena *a);

/* ---- growable arrays in an arena ----
 * The IR stores repeated fields as `T *items; size_t n_items;`. The capacity
 * is implicit: it is the smallest power of two >= n (0 for n == 0), so every
 * array built with ox_vec_push keeps that invariant and no capacity field is
 * needed. Arrays made another way (exact size) must be copied before pushing:
 * use ox_vec_reserve_exact only for arrays that are never pushed to again. */
void *ox_vec_push_(ox_arena *a, void **arr, size_t *n, size_t elem);
/* Push one zeroed element and return a pointer to it (NULL on OOM, in which
 * case the array is unchanged). */
#define OX_VEC_PUSH(arena, arr, n) \
  ((__typeof__(arr))ox_vec_push_((arena), (void **)&(arr), &(n), sizeof *(arr)))

/* ---- hash map: string key -> void* or integer ----
 * Open addressing; keys are not copied (they must outlive the map). Allocated
 * with malloc; free with ox_map_free. */
typedef struct ox_map {
  const char **keys;
  uintptr_t *vals;
  size_t cap, count;
} ox_map;

void ox_map_init(ox_map *m);
void ox_map_free(ox_map *m);
int ox_map_put(ox_map *m, const char *key, uintptr_t val); /* OX_OK or OX_ENOMEM */
bool ox_map_get(const ox_map *m, const char *key, uintptr_t *val);
uint64_t ox_hash_str(const char *s);

/* ---- files ---- */
typedef struct ox_file_map {
  const uint8_t *data;
  size_t size;
  size_t map_size; /* 0 when data is not an mmap (empty file) */
} ox_file_map;

/* Maps a whole file read-only. Errors name the path. */
int ox_file_map_open(ox_file_map *m, const char *path, ox_err *e);
void ox_file_map_close(ox_file_map *m);
/* A hint that the pages wholly inside [p, p + n) will not be read again
 * soon (a weight copied into a packed layout): clean file-backed pages leave
 * the process's resident set and come back from the file if read. Harmless
 * on any memory (anonymous pages are kept without swap, and never lost). */
void ox_pages_unneeded(const void *p, size_t n);
/* Memory for packed weights that kernels stream on every run (release with
 * ox_free_streamed): 64-byte aligned, carved from 2 MiB-aligned slabs asked
 * to be backed by huge pages where the system allows (src/base/streamed.c).
 * A streaming core otherwise walks the page tables every 4 KiB, and reads a
 * weight matrix at well under the memory's bandwidth; small matrices share
 * slabs so that they get huge pages too. Thread-safe. NULL when out of
 * memory. */
/* Scratch memory of the calling thread (src/base/scratch.c): slot's block
 * of at least `bytes`, 64-byte aligned, contents undefined; NULL when out of
 * memory. It stays the thread's (no free) and is valid until the thread
 * asks for the same slot again or ends. For a kernel's leaf tasks: a task
 * must not call code that asks for the slots it holds. Slots 0-3 are the
 * leaf tasks'; slot 4 is held by a kernel's calling thread across its
 * tasks (the phase planes of a stride-2 convolution); slots 5-7 are a
 * Winograd convolution task's (transformed input, products, padded rows). */
#define OX_SCRATCH_SLOTS 8
void *ox_scratch(int slot, size_t bytes);
void *ox_alloc_streamed(size_t n);
void ox_free_streamed(void *p);
/* Reads a whole file into malloc'd memory (for small files and pipes). */
int ox_file_read_all(const char *path, uint8_t **data, size_t *size, ox_err *e);
int ox_file_write_all(const char *path, const void *data, size_t size, ox_err *e);
/* true when path names an existing folder / regular file (after symlinks). */
bool ox_path_is_dir(const char *path);
bool ox_path_is_file(const char *path);

/* ---- growable byte buffer (malloc) ---- */
typedef struct ox_buf {
  uint8_t *data;
  size_t size, cap;
  bool failed; /* sticky: set when an append could not allocate */
} ox_buf;

void ox_buf_free(ox_buf *b);
bool ox_buf_reserve(ox_buf *b, size_t extra);
void ox_buf_append(ox_buf *b, const void *p, size_t n);
void ox_buf_putc(ox_buf *b, char c);
void ox_buf_puts(ox_buf *b, const char *s);
void ox_buf_printf(ox_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
