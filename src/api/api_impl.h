/* api_impl.h - what the files of src/api share (not public). */
#ifndef OX_API_IMPL_H
#define OX_API_IMPL_H

#include "../ir/ir.h"
#include "../runtime/kernel.h"

#include "../runtime/session.h"

struct onnxc_op_registry;
struct onnxc_session_options;

/* The runtime's options from the public ones (not the log target, which
 * belongs to the session handle). opts may be NULL. */
ox_session_opts ox_api_session_opts(const struct onnxc_session_options *opts);

/* The registry's kernels as the session looks them up (NULL when empty). */
const ox_custom_ops *ox_api_custom_ops(const struct onnxc_op_registry *r);

/* ox_infer_opts.custom over a registry (user is the registry). */
int ox_api_custom_infer(const void *user, const ox_node *n, const char *domain, int64_t opset,
                        const ox_type *const *in, size_t n_in, ox_type **out, size_t n_out,
                        ox_arena *a, char *why, size_t why_size);

/* Checks the arity of every node of the registry's operators in m (graphs,
 * subgraphs, functions): one report line per wrong node; returns how many. */
size_t ox_api_custom_check(const struct onnxc_op_registry *r, const ox_model *m, ox_buf *report);

struct onnxc_session;
/* The runtime session behind a handle (NULL for NULL). */
ox_session *ox_api_session(const struct onnxc_session *s);

#endif
