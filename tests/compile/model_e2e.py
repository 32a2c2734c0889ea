#!/usr/bin/env python3
"""model_e2e.py - a small CNN end to end through `onnxc compile`.

usage: model_e2e.py ONNXC WORKDIR [--cc CC]

Builds with python3-onnx a keyword-spotting-sized CNN (Conv with groups,
pads and strides, BatchNormalization, Relu, MaxPool, a depthwise Conv,
AveragePool, Concat, GlobalAveragePool, Flatten, Gemm, Softmax, Reshape,
Transpose, ReduceMean; weights from a fixed seed), and checks:
  - the compiled program's output matches `onnxc run` on the same input
    (|got - want| <= 1e-6 + 1e-4 |want|);
  - compiling twice gives the same bytes;
  - `nm` on the compiled model object lists no malloc, free, printf or
    pthread symbols (only libm's functions and memcpy/memset may be undefined);
  - an unsupported operator or domain and an unbound symbolic dim are errors
    that name the node or input; --input binds the dim;
  - the generated code builds and runs clean under -fsanitize=address,undefined
    (skipped where the compiler cannot link the sanitizers).
Exit status 77 (skipped) without onnx and numpy.
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("model_e2e: python3 onnx and numpy are needed; skipped")
    sys.exit(77)


def make_model(path):
    rng = np.random.default_rng(1234)
    inits = []

    def w(name, *shape, scale=0.3):
        a = (rng.standard_normal(shape) * scale).astype(np.float32)
        inits.append(numpy_helper.from_array(a, name))
        return name

    nodes = [
        helper.make_node("Conv", ["x", w("c1w", 8, 1, 3, 3), w("c1b", 8)], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["c1", w("bns", 8), w("bnb", 8), w("bnm", 8),
                                                "bnv"], ["bn"], name="bn1", epsilon=1e-3),
        helper.make_node("Relu", ["bn"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", w("dww", 8, 1, 3, 3)], ["dw"], name="dwconv", group=8,
                         pads=[1, 1, 1, 1], dilations=[1, 1]),
        helper.make_node("Conv", ["dw", w("pww", 16, 4, 1, 1), w("pwb", 16)], ["pw"], name="pwconv",
                         group=2),
        helper.make_node("LeakyRelu", ["pw"], ["r2"], name="lrelu", alpha=0.1),
        helper.make_node("AveragePool", ["r2"], ["ap"], name="avgpool", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["ap", "ap"], ["cat"], name="concat", axis=1),
        helper.make_node("Transpose", ["cat"], ["tr"], name="transpose", perm=[0, 2, 3, 1]),
        helper.make_node("ReduceMean", ["tr"], ["rm"], name="rmean", axes=[1, 2], keepdims=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["fl"], name="flatten", axis=1),
        helper.make_node("Reshape", ["rm", "shape2"], ["rs"], name="reshape"),
        helper.make_node("Add", ["fl", "rs"], ["sum"], name="add"),
        helper.make_node("Gemm", ["sum", w("fcw", 10, 32), w("fcb", 10)], ["fc"], name="fc",
                         transB=1),
        helper.make_node("Softmax", ["fc"], ["y"], name="softmax", axis=1),
    ]
    var = (rng.random(8) + 0.5).astype(np.float32)
    inits.append(numpy_helper.from_array(var, "bnv"))
    inits.append(numpy_helper.from_array(np.array([1, 32], dtype=np.int64), "shape2"))
    g = helper.make_graph(nodes, "small_cnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 16, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, path)
    x = rng.standard_normal((1, 1, 16, 12)).astype(np.float32)
    return x


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise SystemExit("model_e2e: %s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode,
                                                               r.stdout[-1500:], r.stderr[-1500:]))
    return r


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main():
    args = sys.argv[1:]
    cc = os.environ.get("CC", "cc")
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    onnxc, work = args
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "small_cnn.onnx")
    x = make_model(model)
    xin = os.path.join(work, "x.npy")
    np.save(xin, x)
    run([onnxc, "run", model, "-i", "x=" + xin, "-o", os.path.join(work, "ref")])
    want = load_pb(os.path.join(work, "ref", "output_0.pb"))

    src = os.path.join(work, "cnn.c")
    run([onnxc, "compile", model, "-o", src, "--main"])
    with open(src, "rb") as f:
        first = f.read()
    run([onnxc, "compile", model, "-o", src, "--main"])
    with open(src, "rb") as f:
        if f.read() != first:
            raise SystemExit("model_e2e: compiling twice gave different bytes")
    print("model_e2e: deterministic output: ok")

    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
    obj = os.path.join(work, "cnn.o")
    run([cc] + flags + ["-c", src, "-o", obj])
    syms = run(["nm", obj]).stdout.split()
    banned = [s for s in syms if s in ("malloc", "free", "calloc", "realloc", "printf", "fprintf",
                                       "puts", "fopen") or s.startswith("pthread")]
    if banned:
        raise SystemExit("model_e2e: the model object uses %s" % ", ".join(banned))
    undef = sorted({l.split()[-1] for l in run(["nm", "-u", obj]).stdout.splitlines() if l.strip()})
    print("model_e2e: nm: no malloc/free/printf/pthread; undefined: %s" % " ".join(undef))

    prog = os.path.join(work, "cnn")
    run([cc] + flags + [src, src[:-2] + "_main.c", "-lm", "-o", prog])
    out = os.path.join(work, "out")
    run([prog, "-o", out, "x=" + xin])
    got = load_pb(os.path.join(out, "output_0.pb"))
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-6):
        raise SystemExit("model_e2e: compiled output differs from onnxc run:\n%s\n%s" % (got, want))
    print("model_e2e: compiled output matches onnxc run (max abs diff %.3g)"
          % float(np.max(np.abs(got - want))))

    # errors name the node or input and the reason; --input binds a symbolic dim
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    for nodes, needle, bind in (
            ([helper.make_node("Relu", ["x"], ["y"], name="r")], "graph input 'x': dim 0 is 'N'", None),
            ([helper.make_node("Relu", ["x"], ["y"], name="r")], None, "x=3,4"),
            ([helper.make_node("Hamming", ["x"], ["y"], name="odd", domain="my.ops")],
             "node 0 'odd' (Hamming): operators of domain 'my.ops'", "x=3,4"),
            ([helper.make_node("Det", ["x"], ["y"], name="det")],
             "node 0 'det' (Det): no C generator", "x=4,4")):
        g = helper.make_graph(nodes, "g", [x], [y])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("my.ops", 1)])
        mp = os.path.join(work, "err.onnx")
        onnx.save(m, mp)
        cmd = [onnxc, "compile", mp, "-o", os.path.join(work, "err.c")] + (["--input", bind] if bind else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if needle is None:
            if r.returncode:
                raise SystemExit("model_e2e: --input did not bind the dim: " + r.stderr)
        elif r.returncode != 1 or needle not in r.stderr:
            raise SystemExit("model_e2e: expected an error with %r, got %d: %s" % (needle, r.returncode, r.stderr))
    print("model_e2e: errors name the input or node and the reason; --input binds dims")

    asan = os.path.join(work, "cnn_asan")
    r = subprocess.run([cc] + flags + ["-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                                       src, src[:-2] + "_main.c", "-lm", "-o", asan],
                       capture_output=True, text=True)
    if r.returncode:
        print("model_e2e: sanitizers not available here (%s); that check skipped" % r.stderr.strip()[-200:])
    else:
        run([asan, "-o", os.path.join(work, "out_asan"), "x=" + xin])
        got2 = load_pb(os.path.join(work, "out_asan", "output_0.pb"))
        if not np.array_equal(got2.view(np.uint32), got.view(np.uint32)) and not np.allclose(got2, got, rtol=1e-6):
            raise SystemExit("model_e2e: the sanitized build gives other results")
        print("model_e2e: clean under -fsanitize=address,undefined")
    return 0


if __name__ == "__main__":
    sys.exit(main())
