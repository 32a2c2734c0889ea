/* registry.h - every kernel table of src/ops. */
#ifndef OX_REGISTRY_H
#define OX_REGISTRY_H

#include "../runtime/kernel.h"

/* Finds the kernel for (domain, op) whose since range covers since_version.
 * domain "" and "ai.onnx" are the same. NULL if none. */
const ox_kernel_def *ox_registry_find(const char *domain, const char *op, int64_t since_version);
/* true if some kernel exists for (domain, op) at any version */
bool ox_registry_has_op(const char *domain, const char *op);
/* Every kernel, table after table: i in [0, ox_registry_count()), NULL
 * beyond (the contract test of ai.onnxc walks them). */
size_t ox_registry_count(void);
const ox_kernel_def *ox_registry_at(size_t i);

/* The operator families this build leaves out ("ml, strings": the
 * WebAssembly build's ONNXC_WASM_EXCLUDE), or NULL when it has them all. */
const char *ox_registry_left_out(void);

/* Both as the table a session is given (ox_session_opts.kernels). */
extern const ox_kernel_registry ox_registry_builtin;

#endif
