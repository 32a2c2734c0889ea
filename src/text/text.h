/* text.h - the ONNX textual syntax: parser and printer. */
#ifndef OX_TEXT_H
#define OX_TEXT_H

#include "../ir/ir.h"

/* Parses a whole model. `name` prefixes error messages:
 *   "model.onnxtxt:12:7: expected ')' after the input list, found '{'"
 * followed by the source line and a caret. Allocates in a (the model's arena). */
int ox_text_parse_model(const char *text, size_t size, const char *name, ox_arena *a,
                        ox_model_proto **out, ox_err *e);
/* Parses a graph, a function, a node list, a type (for tests and tools). */
int ox_text_parse_graph(const char *text, size_t size, const char *name, ox_arena *a,
                        ox_graph **out, ox_err *e);
int ox_text_parse_function(const char *text, size_t size, const char *name, ox_arena *a,
                           ox_function **out, ox_err *e);

/* Prints a model as text that parses back to the same model. Appends to out. */
int ox_text_print_model(const ox_model_proto *m, ox_buf *out, ox_err *e);
int ox_text_print_graph(const ox_graph *g, ox_buf *out, ox_err *e);
int ox_text_print_function(const ox_function *f, ox_buf *out, ox_err *e);

#endif
