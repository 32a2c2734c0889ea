/* fused.h - the kernels of onnxc's own operators (ai.onnxc); the contract
 * they share with the passes is src/schema/onnxc_ops.h. */
#ifndef OX_FUSED_H
#define OX_FUSED_H

#include "../runtime/kernel.h"

#include "../schema/onnxc_ops.h"

#define OX_FUSED_DOMAIN OX_ONNXC_DOMAIN

#endif
