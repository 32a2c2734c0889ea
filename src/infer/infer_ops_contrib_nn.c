/* infer_ops_contrib_nn.c - shape functions of onnxruntime's com.microsoft
 * encoder building blocks and of its default-domain additions (schemas in
 * src/schema/schema_contrib_nn.c). */
#include "../schema/schema_hand.h"
#include "infer_impl.h"

const ox_infer_def ox_infer_defs_contrib_nn[] = {
    {OX_CONTRIB_DOMAIN, "QuickGelu", 1, 1, ix_same_as_input0},
    {NULL, NULL, 0, 0, NULL},
};
