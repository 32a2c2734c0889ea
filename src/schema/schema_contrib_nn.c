/* schema_contrib_nn.c - schemas of onnxruntime's com.microsoft encoder
 * building blocks (layer norms with a skip input, the GELU forms,
 * FusedMatMul, FusedConv, BiasSoftmax), and of the operators onnxruntime
 * registers in the default domain (SimplifiedLayerNormalization), as
 * onnxruntime's docs/ContribOperators.md and its CPU kernels define them.
 * Shape functions: src/infer/infer_ops_contrib_nn.c; kernels:
 * src/ops/contrib/nn.c. */
#include "schema_hand.h"

#define MS(...) OX_HAND_SCHEMA(OX_CONTRIB_DOMAIN, OX_CONTRIB_OPSET, __VA_ARGS__)

/* onnxruntime's CPU kernels of these take float; the schemas also admit
 * the half types, as onnxruntime's do */
static const char *const float_types[] = {"tensor(float)", "tensor(double)", "tensor(float16)",
                                          "tensor(bfloat16)", NULL};
static const ox_type_constraint tc_t[] = {{"T", float_types, 4}};

/* ---- QuickGelu ---- */
static const ox_formal x_in[] = {OX_HONE("X", "T")};
static const ox_formal y_out[] = {OX_HONE("Y", "T")};
static const ox_attr_schema quick_gelu_attrs[] = {{"alpha", OX_ATTR_FLOAT, false, "1.702"}};

const ox_schema *const ox_schema_contrib_nn[] = {
    MS("QuickGelu", x_in, 1, y_out, 1, OX_HTC(tc_t), OX_HAT(quick_gelu_attrs),
       "Y = X * Sigmoid(alpha * X), elementwise (CLIP's activation)."),
};
const size_t ox_schema_contrib_nn_n = OX_HN_OF(ox_schema_contrib_nn);

const ox_schema *const ox_schema_contrib_default[] = {NULL};
const size_t ox_schema_contrib_default_n = 0;
