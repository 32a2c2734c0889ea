#!/usr/bin/python3
"""Normalisation paths the node suite leaves out: BatchNormalization-7 with
spatial=0, BatchNormalization-9 training outputs (running mean and variance),
GroupNormalization-18 (per-group scale and bias), InstanceNormalization in
float16, LpNormalization p=1 with an all-zero slice, MeanVarianceNormalization
over custom axes, LayerNormalization with a broadcast scale, RMSNormalization
in double. Expected outputs from NumPy transcriptions of Operators.md.
Writes case folders into OUTDIR and runs `ONNXC test OUTDIR`.

usage: nnb_norm_oracle.py ONNXC OUTDIR   (exit 77 = skipped: no numpy/onnx)
"""
import os
import subprocess
import sys

try:
    import numpy as np
    from onnx import helper
except ImportError:
    print("skipped: python3 numpy/onnx are not installed")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nnb_rnn_oracle import save_case  # noqa: E402


def f32(a):
    return np.asarray(a, np.float32)


def make_cases(root):
    rng = np.random.default_rng(5)
    n = 0

    # BatchNormalization-7, spatial=0: parameters per (C, H, W) element
    x = f32(rng.standard_normal((2, 3, 4, 5)))
    s, b, m = (f32(rng.standard_normal((3, 4, 5))) for _ in range(3))
    v = f32(rng.random((3, 4, 5)) + 0.5)
    y = (x - m) / np.sqrt(v + 1e-5) * s + b
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], spatial=0)
    save_case(root, "batchnorm7_spatial0", node,
              [("x", x), ("s", s), ("b", b), ("m", m), ("v", v)], [("y", f32(y))], opset=7)
    n += 1

    # BatchNormalization-9 in training (more than one output): running statistics
    x = f32(rng.standard_normal((4, 3, 5)))
    s, b, m = (f32(rng.standard_normal(3)) for _ in range(3))
    v = f32(rng.random(3) + 0.5)
    cm = x.mean(axis=(0, 2))
    cv = x.var(axis=(0, 2))
    y = (x - cm[None, :, None]) / np.sqrt(cv[None, :, None] + 1e-5) * s[None, :, None] \
        + b[None, :, None]
    rm = m * 0.8 + cm * 0.2
    rv = v * 0.8 + cv * 0.2
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                            ["y", "rm", "rv"], momentum=0.8)
    save_case(root, "batchnorm9_training", node,
              [("x", x), ("s", s), ("b", b), ("m", m), ("v", v)],
              [("y", f32(y)), ("rm", f32(rm)), ("rv", f32(rv))], opset=9)
    n += 1

    # GroupNormalization-18: scale and bias per group
    x = f32(rng.standard_normal((2, 6, 3, 2)))
    s, b = f32(rng.standard_normal(3)), f32(rng.standard_normal(3))
    g = x.reshape(2, 3, -1)
    norm = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    y = norm * s[None, :, None] + b[None, :, None]
    node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3)
    save_case(root, "groupnorm18_per_group", node, [("x", x), ("s", s), ("b", b)],
              [("y", f32(y.reshape(x.shape)))], opset=18)
    n += 1

    # InstanceNormalization in float16
    x = rng.standard_normal((2, 3, 4)).astype(np.float16)
    s, b = rng.standard_normal(3).astype(np.float16), rng.standard_normal(3).astype(np.float16)
    xf = x.astype(np.float64)
    y = (xf - xf.mean(-1, keepdims=True)) / np.sqrt(xf.var(-1, keepdims=True) + 1e-5) \
        * s.astype(np.float64)[None, :, None] + b.astype(np.float64)[None, :, None]
    node = helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"])
    save_case(root, "instancenorm_fp16", node, [("x", x), ("s", s), ("b", b)],
              [("y", y.astype(np.float16))], opset=6)
    n += 1

    # LpNormalization p=1 over axis 0, with an all-zero column
    x = f32(rng.standard_normal((3, 4)))
    x[:, 2] = 0
    nrm = np.abs(x).sum(0, keepdims=True)
    y = np.where(nrm == 0, 0, x / np.where(nrm == 0, 1, nrm))
    node = helper.make_node("LpNormalization", ["x"], ["y"], axis=0, p=1)
    save_case(root, "lpnorm_p1_zero", node, [("x", x)], [("y", f32(y))], opset=22)
    n += 1

    # MeanVarianceNormalization over axes (1, 3)
    x = f32(rng.standard_normal((2, 3, 4, 5)))
    mu = x.mean(axis=(1, 3), keepdims=True)
    sd = np.sqrt((x * x).mean(axis=(1, 3), keepdims=True) - mu * mu)
    y = (x - mu) / (sd + 1e-9)
    node = helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[1, 3])
    save_case(root, "mvn_axes_1_3", node, [("x", x)], [("y", f32(y))], opset=13)
    n += 1

    # LayerNormalization axis=1 with a scale broadcast over the normalized shape
    x = f32(rng.standard_normal((2, 3, 4)))
    s, b = f32(rng.standard_normal((1, 4))), f32(rng.standard_normal((4,)))
    mu = x.mean(axis=(1, 2), keepdims=True)
    var = ((x - mu) ** 2).mean(axis=(1, 2), keepdims=True)
    inv = 1 / np.sqrt(var + 1e-5)
    y = (x - mu) * inv * s + b
    node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], axis=1)
    save_case(root, "layernorm_broadcast_scale", node, [("x", x), ("s", s), ("b", b)],
              [("y", f32(y)), ("mean", f32(mu)), ("inv", f32(inv))], opset=17)
    n += 1

    # RMSNormalization in double, axis=-2
    x = rng.standard_normal((2, 3, 4))
    s = rng.standard_normal((3, 4))
    y = x / np.sqrt((x * x).mean(axis=(1, 2), keepdims=True) + 1e-5) * s
    node = helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=-2)
    save_case(root, "rmsnorm_double", node, [("x", x), ("s", s)], [("y", y)], opset=23)
    n += 1
    return n


def main():
    onnxc, out = sys.argv[1], sys.argv[2]
    n = make_cases(out)
    print(f"{n} cases written to {out}")
    r = subprocess.run([onnxc, "test", out], capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
