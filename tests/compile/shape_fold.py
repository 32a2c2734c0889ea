#!/usr/bin/env python3
"""shape_fold.py - values known at compile time, and float16 products, through `onnxc compile`.

usage: shape_fold.py ONNXC WORKDIR [--cc CC]

Models built with python3-onnx whose shapes are computed by the graph from
the input shapes (what the expanded ONNX functions do), compiled with
--main, built with `-std=c99 -Wall -Wextra -Werror -O2`, run, and compared
with numpy (an oracle independent of onnxc) and with `onnxc run`:
  - reshape: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]));
  - shapes: ConstantOfShape(Shape(x)), Range(0, Shape(x)[2]) cast to float,
    Expand to Concat(Shape(y)[0:1], Shape(x)[1:]), Tile by counts
    computed from Size(x), and Tile by a count chosen by Where(Equal(Mod(
    Shape(x)[1], 2), 1), ...) (values shape inference does not propagate:
    declined before the compiler folded them);
  - branch: an If whose condition is Equal(Size(Shape(x)), 3) (known at
    compile time) and whose branches give different ranks;
  - fp16: float16 MatMul, Gemm, Conv, Pad and Clip (numpy computes in float32
    and rounds to float16, as the runtime does);
and an Expand whose shape is a graph input, and a TopK whose k is one, are
errors naming the node (their shapes depend on data). Exit status 77
(skipped) without onnx and numpy.
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("shape_fold: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

F, H, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name + "_v"))


def model(nodes, ins, outs, opset=17):
    g = helper.make_graph(nodes, "g", ins, outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def reshape_model():
    return model(
        [const("zero", np.array(0, np.int64)), const("minus1", np.array([-1], np.int64)),
         const("ax0", np.array([0], np.int64)),
         helper.make_node("Shape", ["x"], ["sx"]),
         helper.make_node("Gather", ["sx", "zero"], ["n"]),
         helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
         helper.make_node("Concat", ["n1", "minus1"], ["shp"], axis=0),
         helper.make_node("Reshape", ["x", "shp"], ["y"], name="the_reshape")],
        [vi("x", F, [2, 3, 4])], [vi("y", F, None)])


def shapes_model():
    # a = ConstantOfShape(Shape(x), 1.5) + x; r = float(Range(0, Shape(x)[2], 1)) + x
    # e = Expand(y, Concat(Shape(y)[0:1], Shape(x)[1:])); t = Tile(y, [Size(x) / 12, 1, 1])
    return model(
        [const("two", np.array(2, np.int64)), const("zero", np.array(0, np.int64)),
         const("one", np.array(1, np.int64)), const("twelve", np.array(12, np.int64)),
         const("ones2", np.array([1, 1], np.int64)), const("ax0", np.array([0], np.int64)),
         const("three1", np.array([3, 1], np.int64)),
         helper.make_node("Shape", ["x"], ["sx"]),
         helper.make_node("ConstantOfShape", ["sx"], ["c"],
                          value=numpy_helper.from_array(np.array([1.5], np.float32))),
         helper.make_node("Add", ["c", "x"], ["a"]),
         helper.make_node("Gather", ["sx", "two"], ["w"]),
         helper.make_node("Range", ["zero", "w", "one"], ["rg"]),
         helper.make_node("Cast", ["rg"], ["rgf"], to=F),
         helper.make_node("Add", ["rgf", "x"], ["r"]),
         helper.make_node("Shape", ["y"], ["sy0"], end=1),
         helper.make_node("Shape", ["x"], ["sx1"], start=1),
         helper.make_node("Concat", ["sy0", "sx1"], ["eshape"], axis=0),
         helper.make_node("Expand", ["y", "eshape"], ["e"]),
         helper.make_node("Size", ["x"], ["nx"]),
         helper.make_node("Div", ["nx", "twelve"], ["reps0"]),
         helper.make_node("Unsqueeze", ["reps0", "ax0"], ["reps1"]),
         helper.make_node("Concat", ["reps1", "ones2"], ["reps"], axis=0),
         helper.make_node("Tile", ["y", "reps"], ["t"]),
         # through operators that shape inference does not propagate values
         # through: Mod, Equal, Where (the expanded Attention's GQA test)
         helper.make_node("Gather", ["sx", "one"], ["d1"]),
         helper.make_node("Mod", ["d1", "two"], ["odd"]),
         helper.make_node("Equal", ["odd", "one"], ["is_odd"]),
         helper.make_node("Gather", ["sx", "zero"], ["d0"]),
         helper.make_node("Where", ["is_odd", "d0", "one"], ["rep"]),
         helper.make_node("Unsqueeze", ["rep", "ax0"], ["rep1"]),
         helper.make_node("Concat", ["rep1", "three1"], ["wreps"], axis=0),
         helper.make_node("Tile", ["y", "wreps"], ["tw"], name="tile_where")],
        [vi("x", F, [2, 3, 4]), vi("y", F, [2, 1, 4])],
        [vi("a", F, None), vi("r", F, None), vi("e", F, None), vi("t", F, None),
         vi("tw", F, None)])


def branch_model():
    three = helper.make_graph([helper.make_node("ReduceSum", ["x", "ax1"], ["s3"], keepdims=0)],
                              "rank3", [], [vi("s3", F, None)])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["s_other"])], "other", [],
                              [vi("s_other", F, None)])
    return model(
        [const("three", np.array(3, np.int64)), const("ax1", np.array([1], np.int64)),
         helper.make_node("Shape", ["x"], ["sx"]), helper.make_node("Size", ["sx"], ["rank"]),
         helper.make_node("Equal", ["rank", "three"], ["is3"]),
         helper.make_node("If", ["is3"], ["s"], then_branch=three, else_branch=other),
         helper.make_node("Relu", ["s"], ["y"])],
        [vi("x", F, [2, 3, 4])], [vi("y", F, None)])


def fp16_model():
    w = np.linspace(-1, 1, 4 * 2 * 3 * 3).astype(np.float16).reshape(4, 2, 3, 3)
    b = np.array([0.5, -0.25, 0.125, 1.0], np.float16)
    gb = np.linspace(-2, 2, 3 * 5).astype(np.float16).reshape(3, 5)
    return model(
        [helper.make_node("MatMul", ["a", "m"], ["mm"]),
         helper.make_node("Gemm", ["a", "g"], ["gm"], alpha=0.5, transB=1),
         helper.make_node("Conv", ["x", "w", "b"], ["cv"], pads=[1, 1, 1, 1]),
         helper.make_node("Pad", ["a", "pads", "pv"], ["pd"], mode="constant"),
         helper.make_node("Clip", ["cv", "lo", "hi"], ["cl"])],
        [vi("a", H, [3, 5]), vi("m", H, [5, 4]), vi("x", H, [1, 2, 5, 5])],
        [vi("mm", H, [3, 4]), vi("gm", H, [3, 3]), vi("cv", H, [1, 4, 5, 5]),
         vi("pd", H, [5, 6]), vi("cl", H, [1, 4, 5, 5])],
        opset=18), {"w": w, "b": b, "g": gb}


def with_inits(m, inits):
    for k, v in inits.items():
        m.graph.initializer.append(numpy_helper.from_array(v, k))
    return m


def conv2d(x, w, b, pad):
    n, c, hh, ww = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = hh + 2 * pad - kh + 1, ww + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i:i + kh, j:j + kw]
            y[:, :, i, j] = np.tensordot(win, w, axes=([1, 2, 3], [1, 2, 3])) + b
    return y


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def check(onnxc, cc, work, name, m, inputs, expected, rtol, atol):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    mp = os.path.join(d, "model.onnx")
    onnx.save(m, mp)
    src = os.path.join(d, name + ".c")
    r = run([onnxc, "compile", mp, "-o", src, "--main"])
    if r.returncode:
        return "compile failed: " + r.stderr.strip()
    prog = os.path.join(d, "prog")
    r = run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", src, src[:-2] + "_main.c", "-lm",
             "-o", prog])
    if r.returncode:
        return "build failed: " + r.stderr[-1500:]
    args, named = [], []
    for (nm, a) in inputs:
        p = os.path.join(d, nm + ".npy")
        np.save(p, a)
        args.append(p)
        named += ["-i", "%s=%s" % (nm, p)]
    out, ref = os.path.join(d, "out"), os.path.join(d, "ref")
    r = run([prog, "-o", out] + args)
    if r.returncode:
        return "run failed: " + r.stderr
    r = run([onnxc, "run", mp] + named + ["-o", ref])
    if r.returncode:
        return "onnxc run failed: " + r.stderr
    for k, want in enumerate(expected):
        got = load_pb(os.path.join(out, "output_%d.pb" % k))
        rt = load_pb(os.path.join(ref, "output_%d.pb" % k))
        if got.shape != want.shape or got.dtype != want.dtype or not np.allclose(
                got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol):
            return "output %d: expected %s %s, got %s %s" % (k, want.dtype, want.tolist(), got.dtype,
                                                             got.tolist())
        if rt.shape != got.shape or not np.allclose(got.astype(np.float64), rt.astype(np.float64),
                                                    rtol=rtol, atol=atol):
            return "output %d differs from onnxc run: %s against %s" % (k, got.tolist(), rt.tolist())
    return None


def refused(onnxc, work, name, m, words):
    mp = os.path.join(work, name + ".onnx")
    onnx.save(m, mp)
    r = run([onnxc, "compile", mp, "-o", os.path.join(work, name + ".c")])
    err = r.stderr.strip()
    if r.returncode != 1 or not all(w in err for w in words):
        return "expected an error naming %s, got %d: %s" % (words, r.returncode, err), err
    return None, err


def main():
    args = sys.argv[1:]
    cc = os.environ.get("CC", "cc")
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    onnxc, work = args
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    y = rng.standard_normal((2, 1, 4)).astype(np.float32)
    cases = [
        ("reshape", reshape_model(), [("x", x)], [x.reshape(2, 12)], 1e-6, 0),
        ("shapes", shapes_model(), [("x", x), ("y", y)],
         [x + 1.5, x + np.arange(4, dtype=np.float32), np.broadcast_to(y, (2, 3, 4)).copy(),
          np.tile(y, (2, 1, 1)), np.tile(y, (2, 3, 1))], 1e-6, 0),
        ("branch", branch_model(), [("x", x)], [np.maximum(x.sum(axis=1), 0)], 1e-5, 1e-6),
    ]
    fm, inits = fp16_model()
    fm = with_inits(fm, dict(inits, pads=np.array([1, 0, 1, 1], np.int64),
                             pv=np.array(0.5, np.float16), lo=np.array(-0.5, np.float16),
                             hi=np.array(0.75, np.float16)))
    a = rng.standard_normal((3, 5)).astype(np.float16)
    m = rng.standard_normal((5, 4)).astype(np.float16)
    xc = rng.standard_normal((1, 2, 5, 5)).astype(np.float16)
    f32 = lambda t: t.astype(np.float32)
    cv = conv2d(f32(xc), f32(inits["w"]), f32(inits["b"]), 1)
    want = [(f32(a) @ f32(m)).astype(np.float16), (0.5 * (f32(a) @ f32(inits["g"]).T)).astype(np.float16),
            cv.astype(np.float16), np.pad(a, ((1, 1), (0, 1)), constant_values=np.float16(0.5)),
            np.clip(cv.astype(np.float16), np.float16(-0.5), np.float16(0.75))]
    # float16 results: one rounding of a float sum; the oracle's float32 sum
    # order differs, so a last-bit difference is allowed
    cases.append(("fp16", fm, [("a", a), ("m", m), ("x", xc)], want, 1e-3, 1e-3))
    fails = []
    for name, mdl, ins, exp, rtol, atol in cases:
        why = check(onnxc, cc, work, name, mdl, ins, exp, rtol, atol)
        print("%s %s%s" % ("FAIL" if why else "ok  ", name, ": " + why if why else ""))
        if why:
            fails.append(name)
    # shapes that depend on data: declined, naming the node
    dyn_expand = model([helper.make_node("Expand", ["x", "s"], ["y"], name="dyn_expand")],
                       [vi("x", F, [1, 4]), vi("s", I64, [2])], [vi("y", F, None)])
    dyn_topk = model([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="dyn_topk")],
                     [vi("x", F, [3, 8]), vi("k", I64, [1])], [vi("v", F, None), vi("i", I64, None)])
    for name, mdl, words in (("dyn_expand", dyn_expand, ["Expand", "not a fixed number"]),
                             ("dyn_topk", dyn_topk, ["TopK", "not a fixed number"])):
        why, err = refused(onnxc, work, name, mdl, words)
        print("%s %s%s" % ("FAIL" if why else "ok  ", name, ": " + (why or "refused: " + err)))
        if why:
            fails.append(name)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
