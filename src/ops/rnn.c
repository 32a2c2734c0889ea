/* rnn.c - kernels of the rnn family. */
#include "../runtime/kernel.h"

const ox_kernel_def ox_ops_rnn[] = {
    {0},
};
