#!/usr/bin/env python3
"""make_walk.py - writes walk.onnx and walk.bin, the model test_api_walk.c
walks through the public API, with the onnx package (1.12 or later):

  python3 make_walk.py        (in tests/api/; the outputs are committed)

Made by another implementation than the one tested, so that the test's
expected values are what this script puts in, not what onnxc reads back.
It holds what the text syntax cannot say or says only through onnxc's own
parser: optional fields present but empty (producer_name "", model_version
0, domain ""), a type denotation, a negative dim and an empty dim_param as
a malformed exporter writes them, an opaque type, initializers stored in
raw_data, int64_data and string_data, one in an external file, a sparse
initializer, attributes of every scalar and list kind, a GRAPHS attribute,
an If, a model-local function and a training info entry with bindings."""
import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

x = h.make_tensor_value_info("x", T.FLOAT, ["N", 3])
x.type.denotation = "TENSOR"
odd = h.make_tensor_value_info("odd", T.FLOAT, [-1, 2])
odd.type.tensor_type.shape.dim[1].dim_param = ""
blob = onnx.ValueInfoProto(name="blob")
blob.type.opaque_type.domain = "com.test"
blob.type.opaque_type.name = "Blob"
cond = h.make_tensor_value_info("cond", T.BOOL, [])
y = h.make_tensor_value_info("y", T.FLOAT, None)
z = h.make_tensor_value_info("z", T.FLOAT, None)

w = nh.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")  # raw_data, 24 bytes
b = h.make_tensor("b", T.INT64, [2], [5, 6])  # int64_data, 16 bytes
names = h.make_tensor("names", T.STRING, [2], [b"ab", b"cde"])  # string_data, 5 bytes
e = nh.from_array(np.arange(1024, dtype=np.float32), "e")  # external, 4096 bytes
sp = h.make_sparse_tensor(h.make_tensor("sp", T.FLOAT, [2], [1.0, 2.0]),
                          h.make_tensor("sp_idx", T.INT64, [2], [0, 3]), [5])

b1 = h.make_graph([h.make_node("Identity", ["x"], ["q"])], "b1", [],
                  [h.make_tensor_value_info("q", T.FLOAT, None)])
b2 = h.make_graph([h.make_node("Neg", ["x"], ["q"]), h.make_node("Abs", ["q"], ["r"])], "b2", [],
                  [h.make_tensor_value_info("r", T.FLOAT, None)])
custom = h.make_node("Custom", ["x", "", "w"], ["y"], name="custom", domain="com.test",
                     alpha=0.5, axis=-1, mode="edge", scales=[1.5, 2.5], perm=[1, 0, 2],
                     tags=["p", "qr"], t=h.make_tensor("t", T.INT32, [3], [7, 8, 9]),
                     bodies=[b1, b2])
then_g = h.make_graph([h.make_node("Constant", [], ["c1"], value_float=1.0)], "then_g", [],
                      [h.make_tensor_value_info("c1", T.FLOAT, [])])
else_g = h.make_graph([h.make_node("Constant", [], ["c2"], value_float=2.0)], "else_g", [],
                      [h.make_tensor_value_info("c2", T.FLOAT, [])])
branch = h.make_node("If", ["cond"], ["z"], then_branch=then_g, else_branch=else_g)
call = h.make_node("Twice", ["x"], ["u"], domain="com.test")
g = h.make_graph([custom, branch, call], "walk", [x, odd, blob, cond], [y, z], [w, b, names, e],
                 sparse_initializer=[sp])

fn = h.make_function("com.test", "Twice", ["a"], ["c"],
                     [h.make_node("Add", ["a", "a"], ["t"]), h.make_node("Relu", ["t"], ["c"])],
                     [h.make_opsetid("", 17)])

init = h.make_graph([h.make_node("Constant", [], ["w_init"],
                                 value=nh.from_array(np.zeros((2, 3), np.float32)))], "init", [],
                    [h.make_tensor_value_info("w_init", T.FLOAT, [2, 3])])
algo = h.make_graph([h.make_node("Mul", ["w", "w"], ["w2"]),
                     h.make_node("Sub", ["w", "w2"], ["w_new"])], "algo", [],
                    [h.make_tensor_value_info("w_new", T.FLOAT, [2, 3])])
ti = onnx.TrainingInfoProto(initialization=init, algorithm=algo)
ti.initialization_binding.add(key="w", value="w_init")
ti.update_binding.add(key="w", value="w_new")
ti.update_binding.add(key="e", value="e_new")

m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.test", 1)],
                 functions=[fn])
m.ir_version = 8
m.producer_name = ""  # present, empty
m.model_version = 0   # present, 0
m.domain = ""         # present, empty
m.training_info.append(ti)
onnx.save_model(m, "walk.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                location="walk.bin", size_threshold=1024)
