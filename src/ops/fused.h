/* fused.h - the internal operators of the session's fusion pass: their
 * domain and the opcodes of ElementwiseChain (see fused.c). */
#ifndef OX_FUSED_H
#define OX_FUSED_H

#include "../runtime/kernel.h"

#define OX_FUSED_DOMAIN "ai.onnxc"

/* binary ops first, then ops of one value operand */
enum {
  FZ_ADD,
  FZ_SUB,
  FZ_MUL,
  FZ_DIV,
  FZ_MAX,
  FZ_MIN,
  FZ_CLIP, /* params: lo, hi */
  FZ_RELU,
  FZ_LEAKY,    /* params: alpha */
  FZ_HSIGMOID, /* params: alpha, beta */
  FZ_HSWISH,
  FZ_NEG,
  FZ_ABS,
  FZ_SQRT,
  FZ_TANH,
  FZ_ERF,
  FZ_POW2, /* Pow by a float32 constant 2: x * x, as the Pow kernel */
  FZ_POW3, /* and 3: x * x * x */
  FZ_SIGMOID,
  FZ_N_OPS
};

#endif
