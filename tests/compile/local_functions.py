#!/usr/bin/env python3
"""local_functions.py - model-local functions (ModelProto.functions) through `onnxc compile`.

usage: local_functions.py ONNXC WORKDIR [--cc CC]

The compiler inlines every call of a local function before generating code
(src/codegen/cg_inline.c, on the runtime's inliner). Each model here is
built with python3-onnx (IR 8), compiled with --main, built with
`-std=c99 -Wall -Wextra -Werror -O2`, run, and compared with a numpy oracle
and with `onnxc run` (shape_fold.check):
  - attrs: attribute references (ref_attr_name) given by the call, and
    one left to the function's default, in two calls with different values;
  - nested: a function calling another one, whose second output is left
    unused, and a top-level call that binds only its first output;
  - onnx_fn: a function whose body uses ONNX function operators
    (MeanVarianceNormalization, Celu) next to a plain one;
  - override: a local function named like an operator of its own domain
    (ai.onnx Relu as x * x), which takes precedence over the operator.
And these are refused with their reason: a function with a string value
inside, naming the calling node, and a function importing ai.onnx at
another version than the model. Exit status 77 (skipped) without onnx and
numpy.
"""
import os
import sys

try:
    import numpy as np
    from onnx import FunctionProto, TensorProto, helper
except ImportError:
    print("local_functions: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shape_fold import check, refused, vi  # noqa: E402  (the compile tests' helpers)

F = TensorProto.FLOAT
CU = "custom"


def model(nodes, ins, outs, functions, opsets=(("", 17), (CU, 1))):
    g = helper.make_graph(nodes, "g", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          functions=functions)
    m.ir_version = 8
    return m


def function(name, ins, outs, nodes, attrs=(), defaults=None, domain=CU, opset=17):
    f = helper.make_function(domain, name, list(ins), list(outs), nodes,
                             [helper.make_opsetid("", opset)], list(attrs))
    if defaults:  # attributes with a default value: FunctionProto field 11 (onnx >= 1.13)
        raw = f.SerializeToString()
        for k, v in defaults.items():
            a = helper.make_attribute(k, v).SerializeToString()
            raw += b"\x5a" + varint(len(a)) + a
        f = FunctionProto()
        f.ParseFromString(raw)  # kept as an unknown field by older onnx, written back
    return f


def varint(n):
    out = b""
    while True:
        out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            return out


def ref(attr_name, ref_name, kind):
    a = helper.make_attribute(attr_name, 0.0 if kind == "float" else 0)
    a.ClearField("f")
    a.ClearField("i")
    a.ref_attr_name = ref_name
    return a


def node_with_refs(op, ins, outs, refs):
    n = helper.make_node(op, ins, outs)
    n.attribute.extend(refs)
    return n


# ---- attribute references: LeakyRelu(x, alpha) + b, Elu(alpha = gain, default 0.5)
def attrs_model():
    body = [node_with_refs("LeakyRelu", ["x"], ["l"], [ref("alpha", "slope", "float")]),
            helper.make_node("Add", ["l", "b"], ["s"]),
            node_with_refs("Elu", ["s"], ["y"], [ref("alpha", "gain", "float")])]
    f = function("LeakyAddElu", ["x", "b"], ["y"], body, attrs=["slope"],
                 defaults={"gain": 0.5})
    calls = [helper.make_node("LeakyAddElu", ["x", "b"], ["y1"], "call1", domain=CU, slope=0.2,
                              gain=2.0),
             helper.make_node("LeakyAddElu", ["x", "b"], ["y2"], "call2", domain=CU, slope=0.05)]
    return model(calls, [vi("x", F, [2, 3, 4]), vi("b", F, [4])],
                 [vi("y1", F, None), vi("y2", F, None)], [f])


def leaky_add_elu(x, b, slope, gain):
    s = np.where(x < 0, slope * x, x) + b
    return np.where(s < 0, gain * (np.exp(s) - 1), s).astype(np.float32)


# ---- nested functions, outputs left unused
def nested_model():
    inner = function("Inner", ["a"], ["sq", "neg"],
                     [helper.make_node("Mul", ["a", "a"], ["sq"]),
                      helper.make_node("Neg", ["a"], ["neg"])])
    outer = function("Outer", ["u", "v"], ["w", "t"],
                     [helper.make_node("Inner", ["u"], ["p"], domain=CU),  # "neg" not bound
                      helper.make_node("Inner", ["v"], ["q", "r"], domain=CU),
                      helper.make_node("Sub", ["p", "q"], ["w"]),
                      helper.make_node("Tanh", ["r"], ["t"])],
                     )
    outer.opset_import.append(helper.make_opsetid(CU, 1))
    calls = [helper.make_node("Outer", ["x", "y"], ["o"], "outer_call", domain=CU)]  # t unused
    return model(calls, [vi("x", F, [3, 5]), vi("y", F, [3, 5])], [vi("o", F, None)],
                 [outer, inner])


# ---- ONNX function operators inside a local function
def onnx_fn_model():
    body = [helper.make_node("MeanVarianceNormalization", ["x"], ["m"], axes=[0, 2]),
            helper.make_node("Celu", ["m"], ["c"], alpha=0.7),
            helper.make_node("Mul", ["c", "x"], ["y"])]
    f = function("NormCelu", ["x"], ["y"], body)
    return model([helper.make_node("NormCelu", ["x"], ["y"], "nc", domain=CU)],
                 [vi("x", F, [2, 3, 4])], [vi("y", F, None)], [f])


def norm_celu(x):
    xd = x.astype(np.float64)
    m = (xd - xd.mean(axis=(0, 2), keepdims=True)) / np.sqrt(xd.var(axis=(0, 2), keepdims=True) + 1e-9)
    c = np.maximum(0, m) + np.minimum(0, 0.7 * (np.exp(m / 0.7) - 1))
    return (c * xd).astype(np.float32)


# ---- a local function named like an operator of its domain: ai.onnx Relu as x * x
def override_model():
    f = function("Relu", ["a"], ["b"], [helper.make_node("Mul", ["a", "a"], ["b"])], domain="")
    return model([helper.make_node("Relu", ["x"], ["r"], "relu_call"),
                  helper.make_node("Sigmoid", ["r"], ["y"])],
                 [vi("x", F, [6])], [vi("y", F, None)], [f], opsets=(("", 17),))


# ---- refused: a string value inside; another ai.onnx version
def strings_model():
    f = function("ViaString", ["a"], ["b"],
                 [helper.make_node("Cast", ["a"], ["s"], to=TensorProto.STRING),
                  helper.make_node("Cast", ["s"], ["b"], to=F)])
    return model([helper.make_node("Relu", ["x"], ["r"], "first"),
                  helper.make_node("ViaString", ["r"], ["y"], "string_call", domain=CU)],
                 [vi("x", F, [4])], [vi("y", F, None)], [f])


def other_opset_model():
    f = function("Twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])], opset=13)
    return model([helper.make_node("Twice", ["x"], ["y"], "twice_call", domain=CU)],
                 [vi("x", F, [4])], [vi("y", F, None)], [f])


def main():
    args = sys.argv[1:]
    cc = os.environ.get("CC", "cc")
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    onnxc, work = args
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32) * 2
    b = rng.standard_normal(4).astype(np.float32)
    u, v = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((3, 5)).astype(np.float32)
    x6 = rng.standard_normal(6).astype(np.float32)
    cases = [
        ("attrs", attrs_model(), [("x", x), ("b", b)],
         [leaky_add_elu(x, b, np.float32(0.2), np.float32(2.0)),
          leaky_add_elu(x, b, np.float32(0.05), np.float32(0.5))], 1e-5, 1e-6),
        ("nested", nested_model(), [("x", u), ("y", v)], [u * u - v * v], 1e-6, 1e-7),
        ("onnx_fn", onnx_fn_model(), [("x", x)], [norm_celu(x)], 1e-4, 1e-5),
        ("override", override_model(), [("x", x6)],
         [(1 / (1 + np.exp(-(x6.astype(np.float64) ** 2)))).astype(np.float32)], 1e-6, 1e-7),
    ]
    fails = []
    for name, mdl, ins, exp, rtol, atol in cases:
        why = check(onnxc, cc, work, name, mdl, ins, exp, rtol, atol)
        print("%s %s%s" % ("FAIL" if why else "ok  ", name, ": " + why if why else ""))
        if why:
            fails.append(name)
    for name, mdl, words in (
            ("strings", strings_model(), ["'string_call' (custom:ViaString)", "local function",
                                          "string"]),
            ("other_opset", other_opset_model(), ["'Twice'", "version 13", "17"])):
        why, err = refused(onnxc, work, name, mdl, words)
        print("%s %s%s" % ("FAIL" if why else "ok  ", name, ": " + (why or "refused: " + err)))
        if why:
            fails.append(name)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
