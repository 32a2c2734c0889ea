"""Where against numpy.where (independent oracle): every fixed-size element
type (1, 2, 4 and 8 bytes, including float16, double and bool) and strings,
with the broadcasting patterns the row loops specialise (all contiguous, a
scalar X or Y, a row or column operand, a broadcast condition) and a general
strided one. Usage: where_oracle.py ONNXC. Exit 77 (skipped) without numpy/onnx."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import helper, mapping, numpy_helper
except ImportError:
    sys.exit(77)

# (condition, X, Y) shapes
SHAPES = [
    ((5, 7), (5, 7), (5, 7)),
    ((5, 7), (5, 7), ()),
    ((5, 7), (), (5, 7)),
    ((5, 7), (5, 1), (1, 7)),
    ((1, 7), (3, 5, 7), (3, 5, 7)),
    ((3, 1, 7), (1, 5, 1), (3, 5, 7)),
    ((2, 3, 4, 33), (2, 1, 4, 33), (33,)),
]
TYPES = [np.uint8, np.int8, np.int16, np.float16, np.float32, np.int32, np.int64, np.float64,
         np.uint64, np.bool_, np.str_]


def values(rng, shape, t):
    if t == np.bool_:
        return rng.random(shape) > 0.5
    if t == np.str_:
        return np.array(["s%d" % v for v in rng.integers(0, 1000, size=shape).ravel()],
                        dtype=object).reshape(shape)
    if np.issubdtype(t, np.floating):
        v = (rng.standard_normal(shape) * 100).astype(t)
        if v.size > 2:
            v.flat[0], v.flat[1] = np.nan, -0.0
        return v
    info = np.iinfo(t)
    return rng.integers(info.min, info.max, size=shape, dtype=t, endpoint=True)


def main():
    onnxc = sys.argv[1]
    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory() as root:
        n = 0
        for t in TYPES:
            for cs, xs, ys in SHAPES:
                c = rng.random(cs) > 0.4
                x, y = values(rng, xs, t), values(rng, ys, t)
                ref = np.where(c, x, y)
                tp = (onnx.TensorProto.STRING if t == np.str_
                      else mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(t)])
                node = helper.make_node("Where", ["c", "x", "y"], ["z"])
                graph = helper.make_graph(
                    [node], "g",
                    [helper.make_tensor_value_info("c", onnx.TensorProto.BOOL, cs),
                     helper.make_tensor_value_info("x", tp, xs),
                     helper.make_tensor_value_info("y", tp, ys)],
                    [helper.make_tensor_value_info("z", tp, None)])
                model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
                model.ir_version = 8
                case = os.path.join(root, "where_%d" % n)
                data = os.path.join(case, "test_data_set_0")
                os.makedirs(data)
                onnx.save(model, os.path.join(case, "model.onnx"))
                for i, a in enumerate((c, x, y)):
                    with open(os.path.join(data, "input_%d.pb" % i), "wb") as f:
                        f.write(numpy_helper.from_array(np.asarray(a)).SerializeToString())
                with open(os.path.join(data, "output_0.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(np.asarray(ref)).SerializeToString())
                n += 1
        r = subprocess.run([onnxc, "test", root], capture_output=True, text=True)
        sys.stdout.write(r.stdout + r.stderr)
        return r.returncode


if __name__ == "__main__":
    sys.exit(main())
