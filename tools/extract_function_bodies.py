#!/usr/bin/python3
"""Recovers the function bodies of the operators with a static (attribute- and
type-independent) body (notes §4.2) from ONNX's backend test data, and writes
them in the ONNX textual syntax to src/schema/function_bodies.txt, which
tools/gen_schema.py compiles into the schema table.

usage: tools/extract_function_bodies.py [TESTDATA_NODE_DIR] [OUT]
Needs python3-onnx (any version that reads the models); only for
regeneration: the output is committed.

The test generator writes, for every body registered for opset N, a test
`test_<case>_expanded[_verN]` whose graph is the body inlined into a model:
formal parameters renamed to the test's value names, internal names prefixed
with `<Op>_<test>_function_`, and attribute references replaced by the test
node's attribute values. This script undoes the three: it maps actual names
back to the schema's formal names (from Changelog.md), strips the prefix, and
turns an attribute value back into `@attr` when it follows an attribute of
the node across all test cases of the op (or names one, or is the scalar
`value_<type>` of a Constant equal to one).
"""
import collections
import os
import re
import sys

import numpy
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_schema  # noqa: E402  (changelog parser)

# (op, since_version of the schema version the tests exercise): static bodies
# of notes §4.2.
STATIC = {
    "AffineGrid", "BlackmanWindow", "Celu", "DynamicQuantizeLinear", "Elu", "GreaterOrEqual",
    "HammingWindow", "HannWindow", "HardSigmoid", "HardSwish", "LeakyRelu", "LessOrEqual",
    "MeanVarianceNormalization", "Mish", "PRelu", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceSumSquare", "Relu", "Selu", "Shrink", "Softplus", "Softsign",
    "SwiGLU", "Swish", "ThresholdedRelu",
}

# References the test data cannot show (the attribute keeps its default in
# every test): (op, output of the body node, attribute) -> referenced attribute.
OVERRIDES = {
    ("BlackmanWindow", "output", "to"): "output_datatype",
    ("HammingWindow", "output", "to"): "output_datatype",
    ("HannWindow", "output", "to"): "output_datatype",
}

ATTR_TEXT_TYPE = {
    onnx.AttributeProto.FLOAT: "float", onnx.AttributeProto.INT: "int",
    onnx.AttributeProto.STRING: "string", onnx.AttributeProto.FLOATS: "floats",
    onnx.AttributeProto.INTS: "ints", onnx.AttributeProto.STRINGS: "strings",
    onnx.AttributeProto.TENSOR: "tensor",
}
GEN_TYPE = {"OX_ATTR_FLOAT": onnx.AttributeProto.FLOAT, "OX_ATTR_INT": onnx.AttributeProto.INT,
            "OX_ATTR_STRING": onnx.AttributeProto.STRING,
            "OX_ATTR_FLOATS": onnx.AttributeProto.FLOATS,
            "OX_ATTR_INTS": onnx.AttributeProto.INTS,
            "OX_ATTR_STRINGS": onnx.AttributeProto.STRINGS,
            "OX_ATTR_TENSOR": onnx.AttributeProto.TENSOR}
DTYPE_NAME = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
              8: "string", 9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64",
              16: "bfloat16"}


def fmt_float(x, single=True):
    # shortest text that gives the same float32 (or double) back
    r = str(numpy.float32(x)) if single else repr(float(x))
    if r in ("inf", "-inf", "nan"):
        return r
    if "e" not in r and "." not in r:
        r += ".0"
    return r


def parse_default(atype, text):
    """Value of a schema default (gen_schema's text form) as python."""
    if text is None:
        return None
    if atype == onnx.AttributeProto.INT:
        return int(text)
    if atype == onnx.AttributeProto.FLOAT:
        return float(text)
    if atype == onnx.AttributeProto.STRING:
        return text[1:-1].encode()
    if atype in (onnx.AttributeProto.INTS, onnx.AttributeProto.FLOATS):
        items = [x.strip() for x in text.strip("[]").split(",") if x.strip()]
        conv = int if atype == onnx.AttributeProto.INTS else float
        return [conv(x) for x in items]
    return None


def attr_value(a):
    v = helper.get_attribute_value(a)
    if isinstance(v, onnx.TensorProto):
        return ("tensor", v.data_type, tuple(v.dims), tuple(numpy_helper.to_array(v).flatten().tolist()))
    if isinstance(v, list):
        return list(v)
    return v


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        try:
            # changelog defaults are printed with 6 digits ("1.67326")
            return abs(float(a) - float(b)) <= 1e-5 * max(1.0, abs(float(b)))
        except (TypeError, ValueError):
            return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def fmt_value(a, rename=None, indent="   "):
    v = helper.get_attribute_value(a)
    t = a.type
    if t == onnx.AttributeProto.GRAPH:
        ins = ", ".join(rename(x.name) for x in v.input)
        outs = ", ".join(rename(x.name) for x in v.output)
        body = "\n".join(fmt_node(n, rename, {}, -1, indent + "   ") for n in v.node)
        return "%s (%s) => (%s) {\n%s\n%s}" % (rename(v.name), ins, outs, body, indent)
    if t == onnx.AttributeProto.FLOAT:
        return fmt_float(v)
    if t == onnx.AttributeProto.INT:
        return str(v)
    if t == onnx.AttributeProto.STRING:
        return '"%s"' % v.decode()
    if t == onnx.AttributeProto.FLOATS:
        return "[" + ", ".join(fmt_float(x) for x in v) + "]"
    if t == onnx.AttributeProto.INTS:
        return "[" + ", ".join(str(x) for x in v) + "]"
    if t == onnx.AttributeProto.TENSOR:
        arr = numpy_helper.to_array(v)
        name = DTYPE_NAME[v.data_type]
        dims = "" if not v.dims else "[" + ",".join(str(d) for d in v.dims) + "]"
        vals = arr.flatten().tolist()
        if name in ("float", "double", "float16", "bfloat16"):
            body = ", ".join(fmt_float(x, name != "double") for x in vals)
        elif name == "bool":
            body = ", ".join("1" if x else "0" for x in vals)
        else:
            body = ", ".join(str(int(x)) for x in vals)
        return "%s%s {%s}" % (name, dims, body)
    raise ValueError("attribute %s of type %d" % (a.name, t))


def fmt_node(n, rename, ref_of, i, indent):
    attrs = []
    for a in n.attribute:
        if (i, a.name) in ref_of:
            attrs.append("%s: %s = @%s" % (a.name, ATTR_TEXT_TYPE[a.type], ref_of[(i, a.name)]))
        else:
            attrs.append("%s = %s" % (a.name, fmt_value(a, rename, indent)))
    attr_s = " <%s>" % ", ".join(attrs) if attrs else ""
    return "%s%s = %s%s (%s)" % (indent, ", ".join(rename(x) for x in n.output), n.op_type, attr_s,
                                 ", ".join(rename(x) for x in n.input))


def base_of(test):
    b = re.sub(r"_expanded(_ver\d+)?$", "", test)
    return b


def body_opset(test, model):
    m = re.search(r"_ver(\d+)$", test)
    if m:
        return int(m.group(1))
    return [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")][0]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    node_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "..", "shared", "testdata", "node")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "src", "schema", "function_bodies.txt")
    spec = os.path.join(root, "..", "shared", "spec", "onnx", "Changelog.md")
    schemas = {}
    for s in gen_schema.parse_changelog(spec, []):
        gen_schema.finish(s, [])
        schemas.setdefault(s.name, []).append(s)

    groups = collections.defaultdict(list)  # (op, body opset) -> [(test, expanded, node)]
    for test in sorted(os.listdir(node_dir)):
        if "_expanded" not in test:
            continue
        base = os.path.join(node_dir, base_of(test), "model.onnx")
        if not os.path.exists(base):
            continue
        bm = onnx.load(base)
        if len(bm.graph.node) != 1 or bm.graph.node[0].op_type not in STATIC:
            continue
        em = onnx.load(os.path.join(node_dir, test, "model.onnx"))
        node = bm.graph.node[0]
        groups[(node.op_type, body_opset(test, em))].append((test, em, node, bm))

    blocks = []
    for (op, opset), cases in sorted(groups.items()):
        # the schema version the test node binds to
        model_opset = [o.version for o in cases[0][3].opset_import if o.domain in ("", "ai.onnx")][0]
        s = [x for x in schemas[op] if x.since <= model_opset][-1]
        attr_types = {a[0]: GEN_TYPE.get(a[1]) for a in s.attrs}
        defaults = {a[0]: parse_default(attr_types[a[0]], a[3]) for a in s.attrs}

        def node_attr_values(node):
            vals = dict(defaults)
            for a in node.attribute:
                vals[a.name] = attr_value(a)
            return vals

        # per body node position: the attribute values in each case
        ref_of = {}
        n_nodes = len(cases[0][1].graph.node)
        for i in range(n_nodes):
            for a in cases[0][1].graph.node[i].attribute:
                per_case = []
                for test, em, node, _ in cases:
                    if len(em.graph.node) != n_nodes:
                        break
                    ea = [x for x in em.graph.node[i].attribute if x.name == a.name]
                    if not ea:
                        break
                    per_case.append((attr_value(ea[0]), node_attr_values(node)))
                if len(per_case) != len(cases):
                    continue
                cands = [name for name, t in attr_types.items()
                         if t == a.type and all(vals.get(name) is not None and same(v, vals[name])
                                                for v, vals in per_case)]
                if not cands:
                    continue
                varies = len({repr(v) for v, _ in per_case}) > 1
                is_const_scalar = (cases[0][1].graph.node[i].op_type == "Constant"
                                   and a.name.startswith("value_"))
                named = [c for c in cands if c == a.name]
                if named:
                    ref_of[(i, a.name)] = named[0]
                elif varies or (is_const_scalar and len(cands) == 1):
                    ref_of[(i, a.name)] = cands[0]

        test, em, node, _ = cases[0]
        for i, n in enumerate(em.graph.node):
            for a in n.attribute:
                for (oop, oout, oattr), ref in OVERRIDES.items():
                    if oop == op and oattr == a.name and any(
                            re.sub(r"^.*?_function_", "", x) == oout or x in node.output
                            and s.outputs[list(node.output).index(x)][0] == oout for x in n.output):
                        ref_of[(i, a.name)] = ref
        names = {}
        for k, actual in enumerate(node.input):
            if actual and k < len(s.inputs):
                names[actual] = s.inputs[k][0]
        for k, actual in enumerate(node.output):
            if actual and k < len(s.outputs):
                names[actual] = s.outputs[k][0]

        def rename(n):
            if n in names:
                return names[n]
            return re.sub(r"^.*?_function_", "", n)

        lines = [fmt_node(n, rename, ref_of, i, "   ") for i, n in enumerate(em.graph.node)]
        imports = ", ".join('"%s" : %d' % (o.domain, o.version) for o in em.opset_import)
        fattrs = " <%s>" % ", ".join(a[0] for a in s.attrs) if s.attrs else ""
        text = "<\n  domain: \"\",\n  opset_import: [%s]\n>\n%s%s (%s) => (%s)\n{\n%s\n}\n" % (
            imports, op, fattrs, ", ".join(f[0] for f in s.inputs), ", ".join(f[0] for f in s.outputs),
            "\n".join(lines))
        blocks.append("@@ - %s %d %d\n# from %s\n%s" % (op, s.since, opset, ", ".join(c[0] for c in cases), text))
    with open(out, "w", encoding="utf-8") as f:
        f.write("# Function bodies of the operators with a static body (notes §4.2), recovered from\n"
                "# the backend tests' *_expanded models by tools/extract_function_bodies.py.\n"
                "# Block header: @@ DOMAIN(- = ai.onnx) OP SINCE_VERSION BODY_OPSET\n\n")
        f.write("\n".join(blocks))
    print("%d bodies -> %s" % (len(blocks), out))


if __name__ == "__main__":
    main()
