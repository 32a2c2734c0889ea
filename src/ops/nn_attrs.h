/* nn_attrs.h - the spatial attributes of the convolution and pooling
 * operators read off their nodes (the kernels' geometry, kernels/nn.h,
 * takes them as plain values). */
#ifndef OX_OPS_NN_ATTRS_H
#define OX_OPS_NN_ATTRS_H

#include "../ir/ir.h"
#include "../kernels/nn.h"

/* Reads auto_pad, kernel_shape, strides, dilations, pads, group, ceil_mode.
 * Errors name the node. */
int ox_nn_attrs_read(const ox_node *node, ox_nn_attrs *a, ox_err *e);

#endif
