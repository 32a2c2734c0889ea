#!/usr/bin/env python3
"""pool_pads.py - pooling through `onnxc compile` with pads larger than the
kernel, so that some windows lie wholly in the padding.

usage: pool_pads.py ONNXC WORKDIR [--cc CC]

MaxPool (a window with no input value gives -inf), AveragePool with and
without count_include_pad (excluded: a window with no input value is 0/0,
NaN, as in the ONNX reference), LpPool, in 1-D and 2-D with strides and
asymmetric pads; compiled with --main, built with `-std=c99 -Wall -Wextra
-Werror -O2` and, where the compiler has them, -fsanitize=address,undefined
(no read outside the input), run, and compared with a numpy implementation
written here (pads as NaN, windows reduced over their non-padding values).
Exit status 77 (skipped) without onnx and numpy.
"""
import itertools
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("pool_pads: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

CASES = [
    ("MaxPool", dict(kernel_shape=[2, 2], pads=[3, 3, 3, 3], strides=[1, 1])),
    ("MaxPool", dict(kernel_shape=[3], pads=[4, 5], strides=[2])),
    ("AveragePool", dict(kernel_shape=[2, 2], pads=[3, 2, 3, 2], strides=[2, 1], count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[2, 2], pads=[3, 2, 4, 2], strides=[1, 2])),
    ("AveragePool", dict(kernel_shape=[2], pads=[3, 3], strides=[1])),
    ("LpPool", dict(kernel_shape=[2, 2], pads=[3, 3, 3, 3], strides=[1, 1], p=2)),
]


def reference(op, a, x):
    k = a["kernel_shape"]
    r = len(k)
    pads, st = a["pads"], a["strides"]
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[i], pads[i + r]) for i in range(r)],
                constant_values=np.nan)
    osz = [(xp.shape[2 + i] - k[i]) // st[i] + 1 for i in range(r)]
    y = np.zeros(x.shape[:2] + tuple(osz))
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*[range(s) for s in osz]):
            win = xp[(n, c) + tuple(slice(o[i] * st[i], o[i] * st[i] + k[i]) for i in range(r))]
            vals = win[~np.isnan(win)]
            if op == "MaxPool":
                v = vals.max() if vals.size else -np.inf
            elif op == "LpPool":
                v = np.sqrt((vals ** 2).sum())
            elif a.get("count_include_pad"):
                v = vals.sum() / win.size
            else:
                v = vals.sum() / vals.size if vals.size else np.nan
            y[(n, c) + o] = v
    return y.astype(np.float32)


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
    rng = np.random.default_rng(3)
    probe = subprocess.run([cc, "-fsanitize=address,undefined", "-x", "c", "-", "-o",
                            os.path.join(work, "probe")], input="int main(void){return 0;}\n",
                           capture_output=True, text=True)
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"] if probe.returncode == 0 else []
    fails = 0
    for k, (op, a) in enumerate(CASES):
        r = len(a["kernel_shape"])
        x = rng.standard_normal([1, 2] + [5] * r).astype(np.float32)
        want = reference(op, a, x)
        d = os.path.join(work, "case%d" % k)
        os.makedirs(d, exist_ok=True)
        g = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="pool", **a)], "p",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(want.shape))])
        mp = os.path.join(d, "model.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]), mp)
        src = os.path.join(d, "m.c")
        why = None
        c = subprocess.run([onnxc, "compile", mp, "-o", src, "--main"], capture_output=True, text=True)
        if c.returncode:
            why = "compile failed: " + c.stderr.strip()
        else:
            prog = os.path.join(d, "prog")
            b = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"] + san +
                               [src, src[:-2] + "_main.c", "-lm", "-o", prog], capture_output=True,
                               text=True)
            if b.returncode:
                why = "build failed: " + b.stderr[-1500:]
            else:
                np.save(os.path.join(d, "x.npy"), x)
                run = subprocess.run([prog, "-o", os.path.join(d, "out"), os.path.join(d, "x.npy")],
                                     capture_output=True, text=True)
                if run.returncode:
                    why = "run failed: " + run.stderr[-1500:]
                else:
                    got = load_pb(os.path.join(d, "out", "output_0.pb"))
                    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-6,
                                                                  equal_nan=True):
                        why = "expected %s, got %s" % (want.tolist(), got.tolist())
        print("%s %s %s%s" % ("FAIL" if why else "ok  ", op, a, ": " + why if why else ""))
        fails += why is not None
    print("pool_pads: %d of %d cases pass%s" % (len(CASES) - fails, len(CASES),
                                              " (with ASan+UBSan)" if san else ""))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
