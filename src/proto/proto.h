/* proto.h - the protobuf wire format of onnx.proto and onnx-data.proto, and
 * loading/saving models with external data. */
#ifndef OX_PROTO_H
#define OX_PROTO_H

#include "../ir/ir.h"

/* Decoding. `data` must outlive the result: raw_data points into it.
 * Errors name the field path and byte offset:
 *   "graph.node[12].attribute[0].t.dims: truncated varint at byte 4711". */
int ox_pb_decode_model(const uint8_t *data, size_t size, ox_arena *a, ox_model_proto **out,
                       ox_err *e);
int ox_pb_decode_tensor(const uint8_t *data, size_t size, ox_arena *a, ox_tensor **out, ox_err *e);
int ox_pb_decode_sequence(const uint8_t *data, size_t size, ox_arena *a, ox_sequence_data **out,
                          ox_err *e);
int ox_pb_decode_map(const uint8_t *data, size_t size, ox_arena *a, ox_map_data **out, ox_err *e);
int ox_pb_decode_optional(const uint8_t *data, size_t size, ox_arena *a, ox_optional_data **out,
                          ox_err *e);

/* Encoding in canonical field order (ascending field numbers, packed
 * repeated scalars), unknown fields written back. Appends to out. */
int ox_pb_encode_model(const ox_model_proto *m, ox_buf *out, ox_err *e);
int ox_pb_encode_tensor(const ox_tensor *t, ox_buf *out, ox_err *e);
int ox_pb_encode_sequence(const ox_sequence_data *s, ox_buf *out, ox_err *e);
int ox_pb_encode_map(const ox_map_data *m, ox_buf *out, ox_err *e);
int ox_pb_encode_optional(const ox_optional_data *o, ox_buf *out, ox_err *e);

/* ---- models on disk ---- */
typedef struct ox_load_opts {
  bool skip_checksum;    /* do not verify external-data SHA-1 checksums */
  bool no_external_data; /* leave external tensors unresolved */
} ox_load_opts;

/* Loads a model: binary (mapped) or text (by extension .onnxtxt/.onnxtext/
 * .txt, or by content), and resolves external data (mapped, checked against
 * the folder rules). opts may be NULL. */
int ox_model_load_file(const char *path, const ox_load_opts *opts, ox_model **out, ox_err *e);
/* Decodes from a caller buffer (not copied; must outlive the model). */
int ox_model_load_buffer(const uint8_t *data, size_t size, const char *base_dir,
                         const ox_load_opts *opts, ox_model **out, ox_err *e);
/* Resolves external data of every tensor in the model (graphs, subgraphs,
 * functions, training info) relative to m->dir. */
int ox_model_resolve_external(ox_model *m, const ox_load_opts *opts, ox_err *e);

typedef struct ox_save_opts {
  const char *external_data; /* file name relative to the model's folder, or NULL */
  size_t size_threshold;     /* default 1024 */
  size_t align;              /* default 4096 */
  bool all_inline;           /* bring external data back inline */
} ox_save_opts;

/* Saves binary, or text when the extension says so. opts may be NULL. */
int ox_model_save_file(const ox_model *m, const char *path, const ox_save_opts *opts, ox_err *e);

/* true if path's extension names the text format */
bool ox_path_is_text(const char *path);

#endif
