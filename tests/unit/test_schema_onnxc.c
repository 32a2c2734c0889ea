/* test_schema_onnxc.c - the ai.onnxc contract holds on both sides: every
 * kernel registered in domain ai.onnxc (src/ops/registry.c) has a schema
 * and a shape function at OX_ONNXC_OPSET, and every ai.onnxc schema has a
 * kernel; the lookup finds the domain like any other; FusedConv's
 * activation is a name. */
#include <stdio.h>
#include <string.h>

#include "infer/infer_impl.h"
#include "ops/registry.h"
#include "schema/onnxc_ops.h"
#include "schema/schema.h"

static int fails;
#define CHECK(c)                                                            \
  do {                                                                      \
    if (!(c)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      fails++;                                                              \
    }                                                                       \
  } while (0)

static bool is_onnxc(const char *d) { return d && strcmp(d, OX_ONNXC_DOMAIN) == 0; }

int main(void) {
  /* kernels -> schemas and shape functions */
  size_t n_kernels = 0;
  for (size_t i = 0; i < ox_registry_count(); i++) {
    const ox_kernel_def *k = ox_registry_at(i);
    CHECK(k != NULL);
    if (!k || !is_onnxc(k->domain)) continue;
    n_kernels++;
    const ox_schema *s = ox_schema_lookup(OX_ONNXC_DOMAIN, k->op, OX_ONNXC_OPSET);
    if (!s) fprintf(stderr, "kernel %s of %s has no schema\n", k->op, OX_ONNXC_DOMAIN);
    CHECK(s != NULL);
    CHECK(k->since_min <= OX_ONNXC_OPSET && OX_ONNXC_OPSET <= k->since_max);
    if (!ox_infer_find(OX_ONNXC_DOMAIN, k->op, OX_ONNXC_OPSET))
      fprintf(stderr, "kernel %s of %s has no shape function\n", k->op, OX_ONNXC_DOMAIN);
    CHECK(ox_infer_find(OX_ONNXC_DOMAIN, k->op, OX_ONNXC_OPSET) != NULL);
  }
  CHECK(ox_registry_at(ox_registry_count()) == NULL);

  /* schemas -> kernels; the domain's entries are sorted and documented */
  size_t n_schemas = 0;
  const ox_schema *prev = NULL;
  for (size_t i = 0; i < ox_schema_count(); i++) {
    const ox_schema *s = ox_schema_at(i);
    if (!is_onnxc(s->domain)) continue;
    n_schemas++;
    if (!ox_registry_find(OX_ONNXC_DOMAIN, s->name, s->since_version))
      fprintf(stderr, "schema %s of %s has no kernel\n", s->name, OX_ONNXC_DOMAIN);
    CHECK(ox_registry_find(OX_ONNXC_DOMAIN, s->name, s->since_version) != NULL);
    CHECK(s->since_version == OX_ONNXC_OPSET);
    CHECK(s->doc && strlen(s->doc) > 40);
    /* one output, or (KVCacheAppend) one required and optional ones after it */
    CHECK(s->n_outputs >= 1 && s->min_outputs == 1 && s->max_outputs == (int)s->n_outputs);
    for (size_t k = 1; k < s->n_outputs; k++) CHECK(s->outputs[k].option == OX_PARAM_OPTIONAL);
    CHECK(s->min_inputs >= 1 && s->max_inputs == (int)s->n_inputs);
    /* min_inputs reaches the last required input (optional ones may sit
     * between required ones, as QLinearConv's zero points do) */
    int last_required = 0;
    for (size_t k = 0; k < s->n_inputs; k++)
      if (s->inputs[k].option == OX_PARAM_SINGLE) last_required = (int)k + 1;
    CHECK(s->min_inputs == last_required);
    /* every type constraint a formal names exists */
    for (size_t k = 0; k < s->n_inputs + s->n_outputs; k++) {
      const ox_formal *f = k < s->n_inputs ? &s->inputs[k] : &s->outputs[k - s->n_inputs];
      CHECK(strchr(f->type_str, '(') || ox_schema_find_constraint(s, f->type_str));
    }
    if (prev) CHECK(strcmp(prev->name, s->name) < 0);
    prev = s;
    size_t nv = 0;
    const ox_schema *const *v = ox_schema_versions(OX_ONNXC_DOMAIN, s->name, &nv);
    CHECK(nv == 1 && v && v[0] == s);
    CHECK(ox_schema_lookup(OX_ONNXC_DOMAIN, s->name, OX_ONNXC_OPSET) == s);
    CHECK(ox_schema_lookup(OX_ONNXC_DOMAIN, s->name, 0) == NULL);
  }
  CHECK(n_schemas == n_kernels);
  CHECK(n_schemas >= 12);
  CHECK(ox_schema_max_opset(OX_ONNXC_DOMAIN) == OX_ONNXC_OPSET);
  CHECK(ox_schema_lookup(OX_ONNXC_DOMAIN, "Conv", OX_ONNXC_OPSET) == NULL);
  CHECK(ox_schema_lookup("", OX_ONNXC_FUSED_CONV, 22) == NULL);

  /* FusedConv's activation: a string whose default is a known name, and
   * every name of the contract reads back */
  const ox_schema *fc = ox_schema_lookup(OX_ONNXC_DOMAIN, OX_ONNXC_FUSED_CONV, OX_ONNXC_OPSET);
  const ox_attr_schema *act = ox_schema_find_attr(fc, OX_ONNXC_ATTR_ACTIVATION);
  CHECK(act && act->type == OX_ATTR_STRING && !act->required);
  CHECK(act && act->default_text && strcmp(act->default_text, "\"none\"") == 0);
  for (int a = 0; a < OX_ONNXC_ACT_COUNT; a++)
    CHECK(ox_onnxc_act_from_name(ox_onnxc_act_name((ox_onnxc_act)a)) == a);
  CHECK(ox_onnxc_act_from_name("Gelu") < 0);

  printf("%zu ai.onnxc kernels, %zu schemas; %d failures\n", n_kernels, n_schemas, fails);
  return fails ? 1 : 0;
}
