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

/* Loads a binary model (mapped) and resolves external data (mapped, checked
 * against the folder rules). opts may be NULL. Text files are src/api's
 * (ox_api_model_load chooses by extension or content). */
int ox_model_load_file(const char *path, const ox_load_opts *opts, ox_model **out, ox_err *e);
/* The steps of ox_model_load_file, for a loader that picks the format:
 * a new model holding path's bytes (mapped; "-" reads standard input) with
 * its folder set; decoding those bytes as a binary ModelProto into m->proto
 * (errors not prefixed with the path); resolving external data unless
 * opts->no_external_data. */
int ox_pb_open_file(const char *path, ox_model **out, const uint8_t **data, size_t *size,
                    ox_err *e);
int ox_pb_decode_into(ox_model *m, const uint8_t *data, size_t size, ox_err *e);
int ox_pb_finish_load(ox_model *m, const ox_load_opts *opts, ox_err *e);
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

/* Saves binary whatever the extension (ox_api_model_save writes text for
 * text extensions). opts may be NULL. */
int ox_model_save_file(const ox_model *m, const char *path, const ox_save_opts *opts, ox_err *e);

#endif
