"""1-D Conv (Whisper's front end, and the other 1-D shapes) against a direct
NumPy evaluation of the convolution definition in float64 (an independent
oracle): strides 1, 2 and 3, symmetric and asymmetric pads, dilations,
groups and depthwise layers, lengths around the GEMM's panel widths, W a
constant initializer (packed once) or a graph input (read in place), a
batch of two. Writes conformance cases to a temporary folder and runs
`onnxc test` on them at 1 and 2 threads. Exit 77 (skipped) without
onnx/numpy.

usage: conv1d_oracle.py ONNXC"""
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


def conv1d_ref(x, w, b, s, p, d, groups):
    n, c, length = x.shape
    m, cg, k = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p[0], p[1])))
    ol = (length + p[0] + p[1] - ((k - 1) * d + 1)) // s + 1
    y = np.zeros((n, m, ol))
    mg = m // groups
    for o in range(m):
        g = o // mg
        for ci in range(cg):
            for j in range(k):
                y[:, o] += w[o, ci, j] * xp[:, g * cg + ci, j * d:j * d + s * (ol - 1) + 1:s]
    return (y + b[None, :, None]).astype(np.float32)


# (x shape, M, kernel, stride, pads, dilation, groups, W constant)
CASES = [
    ((1, 80, 300), 96, 3, 1, (1, 1), 1, 1, True),   # Whisper's first layer, shorter
    ((1, 64, 301), 64, 3, 2, (1, 1), 1, 1, True),   # its second (stride 2), odd length
    ((1, 48, 3000), 40, 3, 2, (1, 1), 1, 1, True),  # long: the columns in several chunks
    ((2, 6, 50), 10, 5, 2, (2, 1), 2, 1, True),
    ((1, 8, 40), 12, 3, 1, (0, 2), 3, 2, True),
    ((1, 6, 37), 6, 3, 2, (1, 1), 1, 6, True),      # depthwise
    ((1, 4, 33), 8, 3, 1, (1, 1), 1, 4, False),     # depthwise, two maps per channel
    ((1, 16, 1000), 24, 3, 1, (1, 1), 1, 1, False),
    ((2, 5, 17), 7, 1, 1, (0, 0), 1, 1, True),      # pointwise
    ((1, 3, 20), 5, 4, 3, (0, 0), 1, 1, True),
    ((1, 32, 129), 48, 7, 1, (3, 3), 1, 1, True),
    ((1, 12, 64), 12, 3, 2, (0, 1), 2, 3, False),
]
# Conv -> Add(residual) -> Relu (a FusedConv epilogue on every chunk)
EPILOGUE = {1, 2, 7}


def main():
    onnxc = sys.argv[1]
    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory() as tmp:
        dirs = []
        for i, (xs, m, k, s, p, d, g, const_w) in enumerate(CASES):
            # multiples of 1/8 in [-4, 4]: every partial sum is exact in
            # float32, so any order of summation gives the oracle's value
            x = (rng.integers(-32, 33, xs) / 8).astype(np.float32)
            w = (rng.integers(-32, 33, (m, xs[1] // g, k)) / 8).astype(np.float32)
            b = (rng.integers(-32, 33, m) / 8).astype(np.float32)
            y = conv1d_ref(x, w, b, s, p, d, g)
            epi = i in EPILOGUE
            nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c" if epi else "y"], group=g,
                                      strides=[s], pads=list(p), dilations=[d],
                                      kernel_shape=[k])]
            feeds = [("x", x)] if const_w else [("x", x), ("w", w), ("b", b)]
            if epi:
                r = (rng.integers(-32, 33, y.shape) / 8).astype(np.float32)
                y = np.maximum(y + r, 0).astype(np.float32)
                nodes += [helper.make_node("Add", ["c", "r"], ["a"]),
                          helper.make_node("Relu", ["a"], ["y"])]
                feeds.append(("r", r))
            ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in feeds]
            inits = [nh.from_array(w, "w"), nh.from_array(b, "b")] if const_w else []
            out = [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)]
            model = helper.make_model(helper.make_graph(nodes, "conv1d", ins, out, inits),
                                      opset_imports=[helper.make_opsetid("", 11)])
            case = os.path.join(tmp, "case%d" % i)
            os.makedirs(os.path.join(case, "test_data_set_0"))
            onnx.save(model, os.path.join(case, "model.onnx"))
            for j, (_, a) in enumerate(feeds):
                with open(os.path.join(case, "test_data_set_0", "input_%d.pb" % j), "wb") as f:
                    f.write(nh.from_array(a).SerializeToString())
            with open(os.path.join(case, "test_data_set_0", "output_0.pb"), "wb") as f:
                f.write(nh.from_array(y).SerializeToString())
            dirs.append(case)
        rc = 0
        for threads in ("1", "2"):
            rc = rc or subprocess.call([onnxc, "test", "--jobs", "1", "--threads", threads] + dirs)
        return rc


if __name__ == "__main__":
    sys.exit(main())
