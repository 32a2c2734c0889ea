#!/usr/bin/env python3
"""control_flow.py - If, Loop and Scan through `onnxc compile`.

usage: control_flow.py ONNXC WORKDIR [--cc CC]

Models built with python3-onnx, their expected outputs computed with numpy
(an oracle independent of onnxc), compiled with --main, built with
`-std=c99 -Wall -Wextra -Werror -O2` and run:
  - a Loop (trip count 5, its condition passed through unchanged: constant
    true) whose body reads an outer value, holds an If on the iteration's
    parity and emits a scan output;
  - a Scan with two states, a reversed scan input along axis 1 and a
    reversed scan output along axis 1;
  - an If on a run-time condition whose branches read outer values;
and a Loop whose scan output's length depends on a run-time trip count is
an error that names the node, and so is the same Loop with scan outputs
whose condition is computed (it stops after 4 of its 5 iterations: ONNX
gives the scan output 4 rows, a length known only at run time). Exit status 77 (skipped) without onnx and
numpy.
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("control_flow: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

F = TensorProto.FLOAT


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name + "_v"))


def loop_model(early):
    # body(i, cond, acc): if i % 2 == 0: t = acc + w else: t = acc * w;
    # acc' = t; cond' = i < 3 (early: stops after i == 3) or cond (Identity:
    # every iteration runs); scan y = t * 2
    then_g = helper.make_graph([helper.make_node("Add", ["acc_in", "w"], ["t_then"])], "then",
                               [], [vi("t_then", F, [3])])
    else_g = helper.make_graph([helper.make_node("Mul", ["acc_in", "w"], ["t_else"])], "else",
                               [], [vi("t_else", F, [3])])
    body = helper.make_graph(
        [const("two", np.array(2, np.int64)), const("zero", np.array(0, np.int64)),
         const("three", np.array(3, np.int64)), const("ftwo", np.array(2, np.float32)),
         helper.make_node("Mod", ["i", "two"], ["par"]),
         helper.make_node("Equal", ["par", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["t"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Less", ["i", "three"], ["cond_out"]) if early else
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["t"], ["acc_out"]),
         helper.make_node("Mul", ["t", "ftwo"], ["y_out"])],
        "body", [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
                 vi("acc_in", F, [3])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", F, [3]), vi("y_out", F, [3])])
    g = helper.make_graph(
        [const("M", np.array(5, np.int64)), const("c0", np.array(True)),
         helper.make_node("Loop", ["M", "c0", "x"], ["acc", "ys"], name="the_loop", body=body)],
        "loop", [vi("x", F, [3]), vi("w", F, [3])], [vi("acc", F, [3]), vi("ys", F, [5, 3])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def loop_expected(x, w):
    acc, ys = x.copy(), np.zeros((5, 3), np.float32)
    for i in range(5):
        t = acc + w if i % 2 == 0 else acc * w
        ys[i] = t * 2
        acc = t
    return [acc, ys]


def scan_model():
    # states s1 [2] (sum), s2 [2] (max); scan input [2, 4] along axis 1,
    # reversed; scan output [2, 4] along axis 1, reversed: s1 + v
    body = helper.make_graph(
        [helper.make_node("Add", ["s1", "v"], ["s1o"]), helper.make_node("Max", ["s2", "v"], ["s2o"]),
         helper.make_node("Add", ["s1o", "bias"], ["out"])],
        "sbody", [vi("s1", F, [2]), vi("s2", F, [2]), vi("v", F, [2])],
        [vi("s1o", F, [2]), vi("s2o", F, [2]), vi("out", F, [2])])
    g = helper.make_graph(
        [helper.make_node("Scan", ["a", "b", "xs"], ["fa", "fb", "ys"], name="the_scan", body=body,
                          num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
                          scan_output_axes=[1], scan_output_directions=[1])],
        "scan", [vi("a", F, [2]), vi("b", F, [2]), vi("xs", F, [2, 4]), vi("bias", F, [2])],
        [vi("fa", F, [2]), vi("fb", F, [2]), vi("ys", F, [2, 4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])


def scan_expected(a, b, xs, bias):
    s1, s2, ys = a.copy(), b.copy(), np.zeros((2, 4), np.float32)
    for t in range(4):
        v = xs[:, 3 - t]
        s1 = s1 + v
        s2 = np.maximum(s2, v)
        ys[:, 3 - t] = s1 + bias
    return [s1, s2, ys]


def if_model():
    then_g = helper.make_graph([helper.make_node("Sub", ["p", "q"], ["r1"])], "then", [],
                               [vi("r1", F, [2, 2])])
    else_g = helper.make_graph([helper.make_node("MatMul", ["p", "q"], ["r2"])], "else", [],
                               [vi("r2", F, [2, 2])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["r"], name="the_if", then_branch=then_g, else_branch=else_g)],
        "ifm", [vi("c", TensorProto.BOOL, []), vi("p", F, [2, 2]), vi("q", F, [2, 2])],
        [vi("r", F, [2, 2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def dynamic_loop_model():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["acc_in"], ["acc_out"]),
         helper.make_node("Identity", ["acc_in"], ["y_out"])],
        "body", [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
                 vi("acc_in", F, [3])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", F, [3]), vi("y_out", F, [3])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["acc", "ys"], name="dyn_loop", body=body)],
        "dyn", [vi("n", TensorProto.INT64, []), vi("x", F, [3])],
        [vi("acc", F, [3]), vi("ys", F, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def check(onnxc, cc, work, name, model, inputs, expected):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    mp = os.path.join(d, "model.onnx")
    onnx.save(model, mp)
    src = os.path.join(d, name + ".c")
    r = subprocess.run([onnxc, "compile", mp, "-o", src, "--main"], capture_output=True, text=True)
    if r.returncode:
        return "compile failed: " + r.stderr.strip()
    prog = os.path.join(d, "prog")
    r = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", src,
                        src[:-2] + "_main.c", "-lm", "-o", prog], capture_output=True, text=True)
    if r.returncode:
        return "build failed: " + r.stderr[-1500:]
    args = []
    for k, a in enumerate(inputs):
        p = os.path.join(d, "in%d.npy" % k)
        np.save(p, a)
        args.append(p)
    out = os.path.join(d, "out")
    r = subprocess.run([prog, "-o", out] + args, capture_output=True, text=True)
    if r.returncode:
        return "run failed: " + r.stderr
    for k, want in enumerate(expected):
        got = load_pb(os.path.join(out, "output_%d.pb" % k))
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-6):
            return "output %d: expected %s, got %s" % (k, want.tolist(), got.tolist())
    return None


def main():
    args = sys.argv[1:]
    cc = os.environ.get("CC", "cc")
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    onnxc, work = args
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    fails = []
    x, w = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    cases = [("loop", loop_model(False), [x, w], loop_expected(x, w))]
    a, b = rng.standard_normal(2).astype(np.float32), rng.standard_normal(2).astype(np.float32)
    xs, bias = rng.standard_normal((2, 4)).astype(np.float32), rng.standard_normal(2).astype(np.float32)
    cases.append(("scan", scan_model(), [a, b, xs, bias], scan_expected(a, b, xs, bias)))
    p, q = rng.standard_normal((2, 2)).astype(np.float32), rng.standard_normal((2, 2)).astype(np.float32)
    cases.append(("if_true", if_model(), [np.array(True), p, q], [p - q]))
    cases.append(("if_false", if_model(), [np.array(False), p, q], [p @ q]))
    for name, model, ins, want in cases:
        why = check(onnxc, cc, work, name, model, ins, want)
        print("%s %s%s" % ("FAIL" if why else "ok  ", name, ": " + why if why else ""))
        if why:
            fails.append(name)
    mp = os.path.join(work, "dyn.onnx")
    onnx.save(dynamic_loop_model(), mp)
    r = subprocess.run([onnxc, "compile", mp, "-o", os.path.join(work, "dyn.c")],
                       capture_output=True, text=True)
    err = r.stderr.strip()
    if r.returncode != 1 or "Loop" not in err or "trip count" not in err:
        print("FAIL dynamic loop: expected an error naming the Loop, got %d: %s" % (r.returncode, err))
        fails.append("dyn")
    else:
        print("ok   dynamic loop refused: " + err)
    mp = os.path.join(work, "early.onnx")
    onnx.save(loop_model(True), mp)
    r = subprocess.run([onnxc, "compile", mp, "-o", os.path.join(work, "early.c")],
                       capture_output=True, text=True)
    err = r.stderr.strip()
    if r.returncode != 1 or "the_loop" not in err or "constant true" not in err:
        print("FAIL early-stopping loop: expected an error naming the Loop, got %d: %s"
              % (r.returncode, err))
        fails.append("early")
    else:
        print("ok   loop with scan outputs and a computed condition refused: " + err)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
