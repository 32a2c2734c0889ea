/* sequence.c - kernels of the sequence family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_sequence[] = {
    {0},
};
