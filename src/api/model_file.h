/* model_file.h - model files in either format: the choice between the
 * binary protobuf (src/proto) and the ONNX text syntax (src/text) by the
 * file's extension or content is made here, above both layers. */
#ifndef OX_API_MODEL_FILE_H
#define OX_API_MODEL_FILE_H

#include "../proto/proto.h"

/* true if path's extension names the text format (.onnxtxt, .onnxtext, .txt) */
bool ox_api_path_is_text(const char *path);
/* Loads a model: text by extension; otherwise binary (mapped), and text
 * when the binary decoding fails on bytes that look like text. External
 * data are resolved unless opts->no_external_data. opts may be NULL. */
int ox_api_model_load(const char *path, const ox_load_opts *opts, ox_model **out, ox_err *e);
/* Saves as text when the extension says so, else binary with opts. */
int ox_api_model_save(const ox_model *m, const char *path, const ox_save_opts *opts, ox_err *e);

#endif
