#!/usr/bin/python3
"""make_data.py - writes the input files of tests/install/run_model.sh into
this folder with python3-onnx and numpy (the test itself needs neither).

TensorProtos with typed fields (helper.make_tensor, raw=False): h.pb float16
bits in int32_data, i.pb int64_data, d.pb double_data, b.pb bool in
int32_data, u.pb uint32 in uint64_data, s.pb string_data, limit.pb an int64
scalar; x_raw.pb examples/perceptron_input.npy as raw_data
(numpy_helper.from_array). .npy: i8.npy int8, a.npy and b.npy float32."""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))


def save(name, tensor):
    with open(os.path.join(here, name), "wb") as f:
        f.write(tensor.SerializeToString())


save("h.pb", helper.make_tensor("H", TensorProto.FLOAT16, [2, 2], [1.5, -2.0, 65504, 0.000061035156]))
save("i.pb", helper.make_tensor("I", TensorProto.INT64, [3], [-7, 0, 1 << 40]))
save("d.pb", helper.make_tensor("D", TensorProto.DOUBLE, [2], [0.25, -1e300]))
save("b.pb", helper.make_tensor("B", TensorProto.BOOL, [3], [True, False, True]))
save("u.pb", helper.make_tensor("U", TensorProto.UINT32, [2], [4000000000, 1]))
save("s.pb", helper.make_tensor("S", TensorProto.STRING, [3], [b"a", b"hello", b""]))
save("limit.pb", helper.make_tensor("L", TensorProto.INT64, [], [15]))
x = np.load(os.path.join(here, "../../../examples/perceptron_input.npy"))
save("x_raw.pb", numpy_helper.from_array(x, "X"))
np.save(os.path.join(here, "i8.npy"), np.array([[-128, 5, 127]], np.int8))
np.save(os.path.join(here, "a.npy"), np.array([1.5, -2], np.float32))
np.save(os.path.join(here, "b.npy"), np.array([3, 4, 5], np.float32))
