/* nn.c - kernels of onnxruntime's com.microsoft encoder building blocks
 * and of its default-domain additions (schemas in
 * src/schema/schema_contrib_nn.c). Each runs on the kernel of the standard
 * operator it extends. */
#include "../../schema/schema_hand.h"
#include "../onnx/unary.h"
#include "../opcore.h"

const ox_kernel_def ox_ops_contrib_nn[] = {
    {OX_CONTRIB_DOMAIN, "QuickGelu", 1, 1, ox_unary_prepare_quick_gelu, ox_unary_run, NULL},
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
