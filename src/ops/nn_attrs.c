/* nn_attrs.c - the convolution and pooling attributes (see nn_attrs.h). */
#include "nn_attrs.h"

#include <string.h>

static int read_ints(const ox_node *node, const char *name, int64_t *dst, size_t cap, size_t *n,
                     ox_err *e) {
  const ox_attr *a = ox_node_attr(node, name);
  *n = 0;
  if (!a) return OX_OK;
  if (a->n_ints > cap)
    return ox_err_set(e, OX_EINVAL, "attribute '%s' has %zu values (at most %zu supported)", name,
                      a->n_ints, cap);
  for (size_t i = 0; i < a->n_ints; i++) dst[i] = a->ints[i];
  *n = a->n_ints;
  return OX_OK;
}

int ox_nn_attrs_read(const ox_node *node, ox_nn_attrs *a, ox_err *e) {
  memset(a, 0, sizeof *a);
  const char *ap = ox_node_attr_str(node, "auto_pad", "NOTSET");
  if (strcmp(ap, "NOTSET") == 0 || !*ap)
    a->auto_pad = OX_PAD_NOTSET;
  else if (strcmp(ap, "SAME_UPPER") == 0)
    a->auto_pad = OX_PAD_SAME_UPPER;
  else if (strcmp(ap, "SAME_LOWER") == 0)
    a->auto_pad = OX_PAD_SAME_LOWER;
  else if (strcmp(ap, "VALID") == 0)
    a->auto_pad = OX_PAD_VALID;
  else
    return ox_err_set(e, OX_EINVAL, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                      ap);
  if (read_ints(node, "kernel_shape", a->kernel, OX_NN_MAXD, &a->n_kernel, e) ||
      read_ints(node, "strides", a->strides, OX_NN_MAXD, &a->n_strides, e) ||
      read_ints(node, "dilations", a->dils, OX_NN_MAXD, &a->n_dils, e) ||
      read_ints(node, "pads", a->pads, 2 * OX_NN_MAXD, &a->n_pads, e))
    return e ? e->code : OX_EINVAL;
  for (size_t i = 0; i < a->n_strides; i++)
    if (a->strides[i] <= 0) return ox_err_set(e, OX_EINVAL, "strides must be positive");
  for (size_t i = 0; i < a->n_dils; i++)
    if (a->dils[i] <= 0) return ox_err_set(e, OX_EINVAL, "dilations must be positive");
  for (size_t i = 0; i < a->n_kernel; i++)
    if (a->kernel[i] <= 0) return ox_err_set(e, OX_EINVAL, "kernel_shape must be positive");
  for (size_t i = 0; i < a->n_pads; i++)
    if (a->pads[i] < 0) return ox_err_set(e, OX_EINVAL, "pads must be non-negative");
  a->group = ox_node_attr_int(node, "group", 1);
  if (a->group <= 0) return ox_err_set(e, OX_EINVAL, "group must be positive");
  a->ceil_mode = ox_node_attr_int(node, "ceil_mode", 0) != 0;
  return OX_OK;
}
