"""Depthwise and grouped Conv against a direct NumPy evaluation of the
convolution definition (an independent oracle): widths that exercise the
vectorised interior of the depthwise kernel, strides, dilations, asymmetric
pads and channel multipliers. Writes conformance cases to a temporary folder
and runs `onnxc test` on them. Exit 77 (skipped) without onnx/numpy.

usage: dwconv_oracle.py ONNXC"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
    from onnx import numpy_helper as nh
except ImportError:
    sys.exit(77)


def conv_ref(x, w, b, s, p, d, groups):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    oh = (h + p[0] + p[2] - ((kh - 1) * d[0] + 1)) // s[0] + 1
    ow = (wd + p[1] + p[3] - ((kw - 1) * d[1] + 1)) // s[1] + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // groups
    for o in range(m):
        g = o // mg
        for ci in range(cg):
            for i in range(kh):
                for j in range(kw):
                    y[:, o] += w[o, ci, i, j] * xp[:, g * cg + ci,
                                                   i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                                                   j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
    return (y + b[None, :, None, None]).astype(np.float32)


# (x shape, kernel, strides, pads, dilations, channel multiplier, groups or 0 = depthwise)
CASES = [
    ((1, 4, 9, 45), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, 0),
    ((2, 3, 11, 50), (5, 5), (2, 2), (2, 2, 2, 2), (1, 1), 1, 0),
    ((1, 2, 8, 70), (3, 3), (1, 2), (0, 1, 2, 0), (2, 2), 2, 0),
    ((1, 3, 7, 40), (3, 5), (2, 1), (1, 2, 0, 1), (1, 3), 1, 0),
    ((1, 6, 9, 33), (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, 2),
]


def main():
    onnxc = sys.argv[1]
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        dirs = []
        for i, (xs, k, s, p, d, mult, groups) in enumerate(CASES):
            c = xs[1]
            g = groups or c
            x = rng.standard_normal(xs).astype(np.float32)
            w = rng.standard_normal((c * mult, c // g) + k).astype(np.float32)
            b = rng.standard_normal(c * mult).astype(np.float32)
            y = conv_ref(x, w, b, s, p, d, g)
            node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=g, strides=list(s),
                                    pads=list(p), dilations=list(d), kernel_shape=list(k))
            ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
                   for n, a in (("x", x), ("w", w), ("b", b))]
            out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)]
            model = helper.make_model(helper.make_graph([node], "dw", ins, out),
                                      opset_imports=[helper.make_opsetid("", 11)])
            case = os.path.join(tmp, "case%d" % i)
            os.makedirs(os.path.join(case, "test_data_set_0"))
            onnx.save(model, os.path.join(case, "model.onnx"))
            for j, a in enumerate((x, w, b)):
                with open(os.path.join(case, "test_data_set_0", "input_%d.pb" % j), "wb") as f:
                    f.write(nh.from_array(a).SerializeToString())
            with open(os.path.join(case, "test_data_set_0", "output_0.pb"), "wb") as f:
                f.write(nh.from_array(y).SerializeToString())
            dirs.append(case)
        return subprocess.call([onnxc, "test"] + dirs)


if __name__ == "__main__":
    sys.exit(main())
