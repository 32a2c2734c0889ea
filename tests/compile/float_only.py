#!/usr/bin/env python3
"""float_only.py - `onnxc compile --float-only`: no double arithmetic.

usage: float_only.py ONNXC WORKDIR [--cc CC]

  - a float32 model (MatMul, Add, Tanh, Softmax, Sigmoid, Mul by a
    constant, ReduceMean, Sqrt, LRN, GroupNormalization, an LSTM, a Shape ->
    Reshape whose int64 shape tensor is folded at compile time) compiled
    with --float-only: the .c and .h files contain no `double` (as a word),
    build with `-std=c99 -Wall -Wextra -Werror -Wdouble-promotion -O2`, and
    the program's outputs match numpy's (an oracle independent of onnxc);
  - a model with a float64 value is refused (exit status 1, a message
    naming the value, float64 and --float-only), while it compiles without
    the flag;
  - a float32 model whose generator computes in double
    (SoftmaxCrossEntropyLoss) is refused with a message naming the node.
Exit status 77 (skipped) without onnx and numpy.
"""
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("float_only: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

F = TensorProto.FLOAT


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, arr):
    return numpy_helper.from_array(arr, name)


def good_model(rng):
    w = rng.uniform(-0.5, 0.5, (6, 4)).astype(np.float32)
    b = rng.uniform(-0.2, 0.2, (4,)).astype(np.float32)
    half = np.array(0.5, np.float32)
    gs = rng.uniform(0.5, 1.5, (4,)).astype(np.float32)
    gb = rng.uniform(-0.2, 0.2, (4,)).astype(np.float32)
    lw = rng.uniform(-0.5, 0.5, (1, 8, 6)).astype(np.float32)
    lr = rng.uniform(-0.5, 0.5, (1, 8, 2)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"]),
        helper.make_node("Add", ["mm", "b"], ["lin"]),
        helper.make_node("Tanh", ["lin"], ["th"]),
        helper.make_node("Softmax", ["th"], ["sm"], axis=-1),
        helper.make_node("Sigmoid", ["lin"], ["sg"]),
        helper.make_node("Mul", ["sg", "half"], ["y1"]),
        helper.make_node("ReduceMean", ["lin", "ax1"], ["rm"], keepdims=1),
        helper.make_node("Mul", ["rm", "rm"], ["sq"]),
        helper.make_node("Sqrt", ["sq"], ["y2"]),
        # [3, 4] -> [1, 4, 3, 1] for LRN and GroupNormalization; the shape
        # is an int64 tensor folded at compile time
        helper.make_node("Transpose", ["lin"], ["lt"], perm=[1, 0]),
        helper.make_node("Shape", ["lt"], ["ls"]),
        helper.make_node("Concat", ["one", "ls", "one"], ["shp"], axis=0),
        helper.make_node("Reshape", ["lt", "shp"], ["l4"]),
        helper.make_node("LRN", ["l4"], ["y3"], size=3, alpha=0.3, beta=0.75, bias=1.5),
        helper.make_node("GroupNormalization", ["l4", "gs", "gb"], ["y4"], num_groups=2,
                         epsilon=1e-3),
        helper.make_node("Unsqueeze", ["x", "ax1"], ["xs"]),
        helper.make_node("LSTM", ["xs", "lw", "lr"], ["", "y5"], hidden_size=2),
    ]
    g = helper.make_graph(
        nodes, "fo", [vi("x", F, [3, 6])],
        [vi("sm", F, [3, 4]), vi("y1", F, [3, 4]), vi("y2", F, [3, 1]), vi("y3", F, [1, 4, 3, 1]),
         vi("y4", F, [1, 4, 3, 1]), vi("y5", F, [1, 1, 2])],
        initializer=[init("w", w), init("b", b), init("half", half), init("gs", gs),
                     init("gb", gb), init("lw", lw), init("lr", lr),
                     init("one", np.array([1], np.int64)), init("ax1", np.array([1], np.int64))])
    # GroupNormalization-18 has per-group scale/bias, -21 per channel: use 21
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m, (w, b, half, gs, gb, lw, lr)


def good_expected(x, p):
    w, b, half, gs, gb, lw, lr = p
    lin = x @ w + b
    th = np.tanh(lin)
    e = np.exp(th - th.max(-1, keepdims=True))
    sm = e / e.sum(-1, keepdims=True)
    y1 = 1 / (1 + np.exp(-lin)) * half
    rm = lin.mean(1, keepdims=True)
    y2 = np.sqrt(rm * rm)
    l4 = lin.T.reshape(1, 4, 3, 1)
    sq = np.zeros_like(l4)
    for c in range(4):
        lo, hi = max(0, c - 1), min(3, c + 1)
        sq[:, c] = (l4[:, lo:hi + 1] ** 2).sum(1)
    y3 = l4 / (1.5 + 0.3 / 3 * sq) ** 0.75
    grp = l4.reshape(1, 2, 6)
    mu, var = grp.mean(-1, keepdims=True), grp.var(-1, keepdims=True)
    y4 = ((grp - mu) / np.sqrt(var + 1e-3)).reshape(1, 4, 3, 1) * gs.reshape(1, 4, 1, 1) + \
        gb.reshape(1, 4, 1, 1)
    # LSTM, one step per row of x, batch 1... here x is [3, 1, 6]: 3 steps
    h, c = np.zeros(2, np.float32), np.zeros(2, np.float32)
    sig = lambda v: 1 / (1 + np.exp(-v))
    for t in range(3):
        gts = lw[0] @ x[t] + lr[0] @ h
        i, o, f, cc = np.split(gts, 4)
        c = sig(f) * c + sig(i) * np.tanh(cc)
        h = sig(o) * np.tanh(c)
    return [sm, y1, y2, y3, y4, h.reshape(1, 1, 2)]


def double_model():
    g = helper.make_graph([helper.make_node("Add", ["a", "a"], ["s"], name="dbl_add")], "d",
                          [vi("a", TensorProto.DOUBLE, [4])], [vi("s", TensorProto.DOUBLE, [4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def loss_model():
    g = helper.make_graph(
        [helper.make_node("SoftmaxCrossEntropyLoss", ["s", "l"], ["loss"], name="the_loss",
                          reduction="mean")], "l",
        [vi("s", F, [3, 5]), vi("l", TensorProto.INT64, [3])], [vi("loss", F, [])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def compile_model(onnxc, work, name, model, extra):
    mp = os.path.join(work, name + ".onnx")
    onnx.save(model, mp)
    src = os.path.join(work, name + ".c")
    r = subprocess.run([onnxc, "compile", mp, "-o", src, "--main"] + extra, capture_output=True,
                       text=True)
    return r, src


def main():
    args = sys.argv[1:]
    cc = os.environ.get("CC", "cc")
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    onnxc, work = args
    os.makedirs(work, exist_ok=True)
    fails = []

    def report(name, why):
        print("%s %s%s" % ("FAIL" if why else "ok  ", name, ": " + why if why else ""))
        if why:
            fails.append(name)

    rng = np.random.default_rng(5)
    model, params = good_model(rng)
    r, src = compile_model(onnxc, work, "good", model, ["--float-only"])
    why = None
    if r.returncode:
        why = "compile failed: " + r.stderr.strip()
    else:
        for path in (src, src[:-2] + ".h"):
            with open(path) as f:
                text = f.read()
            m = re.search(r"\bdouble\b", text)
            if m:
                line = text[:m.start()].count("\n") + 1
                why = "%s line %d has 'double': %s" % (path, line, text.splitlines()[line - 1])
                break
    if not why:
        prog = os.path.join(work, "good")
        b = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-Wdouble-promotion",
                            "-O2", src, src[:-2] + "_main.c", "-lm", "-o", prog],
                           capture_output=True, text=True)
        if b.returncode:
            why = "build failed: " + b.stderr[-1500:]
    if not why:
        x = rng.uniform(-1, 1, (3, 6)).astype(np.float32)
        np.save(os.path.join(work, "x.npy"), x)
        out = os.path.join(work, "out")
        rr = subprocess.run([prog, "-o", out, os.path.join(work, "x.npy")], capture_output=True,
                            text=True)
        if rr.returncode:
            why = "run failed: " + rr.stderr
        else:
            for k, want in enumerate(good_expected(x, params)):
                got = load_pb(os.path.join(out, "output_%d.pb" % k))
                if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                    why = "output %d: expected %s, got %s" % (k, want.tolist(), got.tolist())
                    break
    report("float32 model: no 'double' in the generated code, matches numpy", why)

    r, _ = compile_model(onnxc, work, "dbl", double_model(), ["--float-only"])
    err = r.stderr.strip()
    why = None
    if r.returncode != 1 or "float64" not in err or "--float-only" not in err:
        why = "expected an error naming float64 and --float-only, got %d: %s" % (r.returncode, err)
    elif compile_model(onnxc, work, "dbl_plain", double_model(), [])[0].returncode != 0:
        why = "the float64 model does not compile without --float-only either"
    report("float64 model refused (%s)" % err, why)

    r, _ = compile_model(onnxc, work, "loss", loss_model(), ["--float-only"])
    err = r.stderr.strip()
    why = None
    if r.returncode != 1 or "the_loss" not in err or "--float-only" not in err:
        why = "expected an error naming the node and --float-only, got %d: %s" % (r.returncode, err)
    report("node computing in double refused (%s)" % err, why)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
