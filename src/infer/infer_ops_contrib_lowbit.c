/* infer_ops_contrib_lowbit.c - shape functions of onnxruntime's com.microsoft
 * MatMulNBits, GatherBlockQuantized and the contrib QuantizeLinear / DequantizeLinear (schemas in
 * src/schema/schema_contrib_lowbit.c). */
#include "../schema/schema_hand.h"
#include "infer_impl.h"

const ox_infer_def ox_infer_defs_contrib_lowbit[] = {
    {NULL, NULL, 0, 0, NULL},
};
