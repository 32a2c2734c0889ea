/* lowbit.h - the parts of the com.microsoft low-bit family (lowbit.c) kept in other files:
 * GatherBlockQuantized (lowbit_gather.c). */
#ifndef OX_OPS_CONTRIB_LOWBIT_H
#define OX_OPS_CONTRIB_LOWBIT_H

#include "../../runtime/kernel.h"

int ox_gbq_prepare(const ox_kinfo *info, void **state, ox_err *e);
int ox_gbq_run(ox_kctx *ctx, void *state);

#endif
