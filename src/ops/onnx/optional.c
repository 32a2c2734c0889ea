/* optional.c - Optional, OptionalHasElement, OptionalGetElement. An empty
 * optional is an OX_VAL_OPTIONAL whose elem is NULL; a missing input counts
 * as empty. */
#include "../datamove.h"

static int optional_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *x = ox_kctx_input(c, 0);
  ox_err e2;
  ox_value *o = ox_optional_new(ox_value_ref(x), &e2);
  if (!o) return ox_kctx_fail(c, OX_ENOMEM, "out of memory");
  return ox_kctx_set_output(c, 0, o);
}

static int has_element_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *x = ox_kctx_input(c, 0);
  bool has = x && (x->kind != OX_VAL_OPTIONAL || x->elem);
  ox_value *o = ox_kctx_output(c, 0, OX_BOOL, NULL, 0);
  if (!o) return OX_ENOMEM;
  *(uint8_t *)o->data = has;
  return OX_OK;
}

static int get_element_run(ox_kctx *c, void *state) {
  (void)state;
  ox_value *x = ox_kctx_input(c, 0);
  if (!x) return ox_kctx_fail(c, OX_ERUNTIME, "input is missing");
  if (x->kind == OX_VAL_OPTIONAL) {
    if (!x->elem) return ox_kctx_fail(c, OX_ERUNTIME, "the optional input is empty");
    x = x->elem;
  }
  /* a plain value (a loop-carried value bound to an optional body input, or
   * opset 18's tensor/sequence input) is its own element */
  return ox_kctx_set_output(c, 0, ox_value_ref(x));
}

const ox_kernel_def ox_ops_optional[] = {
    {"", "Optional", 15, 1000, NULL, optional_run, NULL},
    {"", "OptionalHasElement", 15, 1000, NULL, has_element_run, NULL},
    {"", "OptionalGetElement", 15, 1000, NULL, get_element_run, NULL},
    {0},
};
