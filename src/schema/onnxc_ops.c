/* onnxc_ops.c - names of the ai.onnxc contract (onnxc_ops.h). */
#include "onnxc_ops.h"

#include <string.h>

static const char *const act_names[OX_ONNXC_ACT_COUNT] = {
    "none", "Relu", "LeakyRelu", "Clip", "HardSigmoid", "HardSwish", "SiLU",
};

int ox_onnxc_act_from_name(const char *name) {
  if (!name || !*name) return OX_ONNXC_ACT_NONE;
  for (int k = 0; k < OX_ONNXC_ACT_COUNT; k++)
    if (strcmp(name, act_names[k]) == 0) return k;
  return -1;
}

const char *ox_onnxc_act_name(ox_onnxc_act a) {
  return (unsigned)a < OX_ONNXC_ACT_COUNT ? act_names[a] : "none";
}
