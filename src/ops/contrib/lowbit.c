/* lowbit.c - kernels of onnxruntime's com.microsoft MatMulNBits, GatherBlockQuantized and the
 * contrib QuantizeLinear / DequantizeLinear (schemas in src/schema/schema_contrib_lowbit.c). */
#include "../../schema/schema_hand.h"
#include "../opcore.h"

const ox_kernel_def ox_ops_contrib_lowbit[] = {
    {NULL, NULL, 0, 0, NULL, NULL, NULL},
};
