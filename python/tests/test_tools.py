"""The onnx-shaped tooling: load, save (external data), check_model,
infer_shapes, convert_version, to_text/parse_model; the onnx package
(python3-onnx 1.12) is the independent oracle where it can be."""

import os

import numpy as np
import pytest

import onnxc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PERCEPTRON = os.path.join(ROOT, "examples", "perceptron.onnxtxt")

# opset 17: onnx 1.12 knows it (its checker, inference and converter stop there)
MLP = """<ir_version: 8, opset_import: ["" : 17], producer_name: "test">
mlp (float[B, 64] x) => (float[B, 8] y)
<float[64, 32] w1, float[32] b1, float[32, 8] w2> {
  h = MatMul(x, w1)
  hb = Add(h, b1)
  r = Relu(hb)
  y = MatMul(r, w2)
}"""


def mlp_model():
    """MLP with random weights (each big enough to go to external data)."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    proto = onnx.ModelProto.FromString(onnxc.parse_model(MLP).encode())
    rng = np.random.default_rng(0)
    for name, shape in (("w1", (64, 32)), ("b1", (32,)), ("w2", (32, 8))):
        proto.graph.initializer.append(numpy_helper.from_array(rng.random(shape, np.float32), name))
    return proto


def run(model, x):
    return onnxc.InferenceSession(model).run(None, {"x": x})[0]


X = np.random.default_rng(1).random((4, 64), np.float32)


def test_load_returns_a_model_with_its_facts():
    m = onnxc.load(PERCEPTRON)
    assert isinstance(m, onnxc.Model)
    info = m.info()
    assert info["ir_version"] == 7 and info["opset_import"] == {"": 21}
    assert info["graph_name"] == "G"
    assert m.inputs() == [("X", "tensor(float)", ["N", 3])]
    assert m.base_dir == os.path.dirname(PERCEPTRON)
    with pytest.raises(onnxc.FileError) as e:
        onnxc.load(os.path.join(ROOT, "nope.onnx"))
    assert isinstance(e.value, OSError) and "nope.onnx" in str(e.value)


def test_kinds_of_model_in_and_out():
    onnx = pytest.importorskip("onnx")
    proto = mlp_model()
    data = proto.SerializeToString()
    assert isinstance(onnxc.infer_shapes(proto), onnx.ModelProto)
    assert isinstance(onnxc.infer_shapes(data), bytes)
    assert isinstance(onnxc.infer_shapes(onnxc.load_from_string(data)), onnxc.Model)
    assert isinstance(onnxc.to_onnx(data), onnx.ModelProto)
    with pytest.raises(TypeError):
        onnxc.check_model(42)


def test_save_binary_and_text(tmp_path):
    proto = mlp_model()
    expected = run(proto, X)
    for name in ("m.onnx", "m.onnxtxt"):
        path = tmp_path / name
        onnxc.save(proto, path)
        np.testing.assert_allclose(run(str(path), X), expected, rtol=1e-6)
    onnx = pytest.importorskip("onnx")
    back = onnx.load(str(tmp_path / "m.onnx"))  # the oracle reads what onnxc wrote
    assert [n.op_type for n in back.graph.node] == ["MatMul", "Add", "Relu", "MatMul"]


def test_external_data(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    proto = mlp_model()
    expected = run(proto, X)
    path = tmp_path / "m.onnx"
    onnxc.save(proto, path, external_data="weights.bin", size_threshold=256)
    assert (tmp_path / "weights.bin").stat().st_size >= (64 * 32 + 32 * 8) * 4
    assert path.stat().st_size < 1024
    np.testing.assert_allclose(run(str(path), X), expected, rtol=1e-6)
    # onnx reads the external data onnxc wrote, and agrees on every weight
    back = onnx.load(str(path))
    for a, b in zip(back.graph.initializer, proto.graph.initializer):
        np.testing.assert_array_equal(numpy_helper.to_array(a), numpy_helper.to_array(b))
    # and onnxc reads external data onnx wrote
    path2 = tmp_path / "o.onnx"
    onnx.save_model(
        proto, str(path2), save_as_external_data=True, location="o.bin", size_threshold=0
    )
    np.testing.assert_allclose(run(str(path2), X), expected, rtol=1e-6)
    # True: a file named after the model; all_inline brings it back
    onnxc.save(str(path), tmp_path / "n.onnx", external_data=True, size_threshold=256)
    assert (tmp_path / "n.onnx.data").exists()
    onnxc.save(onnxc.load(tmp_path / "n.onnx"), tmp_path / "i.onnx", all_inline=True)
    assert (tmp_path / "i.onnx").stat().st_size > 64 * 32 * 4
    np.testing.assert_allclose(run(str(tmp_path / "i.onnx"), X), expected, rtol=1e-6)
    # a model from bytes finds its external data through base_dir
    data = path.read_bytes()
    m = onnxc.load_from_string(data, base_dir=str(tmp_path))
    np.testing.assert_allclose(run(m, X), expected, rtol=1e-6)
    # external data missing: a clear error, no crash
    os.remove(tmp_path / "weights.bin")
    with pytest.raises(onnxc.Error, match="weights.bin"):
        run(str(path), X)


def test_check_model_agrees_with_onnx():
    onnx = pytest.importorskip("onnx")
    proto = mlp_model()
    onnxc.check_model(proto, full_check=True)
    onnx.checker.check_model(proto, full_check=True)
    bad = onnx.ModelProto()
    bad.CopyFrom(proto)
    bad.graph.node[1].input[0] = "undefined_value"
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(bad)
    with pytest.raises(onnxc.InvalidModel, match="undefined_value"):
        onnxc.check_model(bad)
    assert onnxc.ValidationError is onnxc.InvalidModel
    # a shape error only full_check sees
    mismatch = onnxc.parse_model(
        '<ir_version: 8, opset_import: ["" : 17]>\n'
        "g (float[2] a, float[3] b) => (float[2] c) { c = Add(a, b) }"
    )
    onnxc.check_model(mismatch)
    with pytest.raises(onnxc.InvalidModel, match="broadcast"):
        onnxc.check_model(mismatch, full_check=True)
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.checker.check_model(onnxc.to_onnx(mismatch), full_check=True)


def test_infer_shapes_agrees_with_onnx():
    onnx = pytest.importorskip("onnx")
    proto = mlp_model()
    declared = len(proto.graph.value_info)
    ours = onnxc.infer_shapes(proto)
    theirs = onnx.shape_inference.infer_shapes(proto)

    def shapes(m):
        out = {}
        for vi in m.graph.value_info:
            t = vi.type.tensor_type
            out[vi.name] = (t.elem_type, [d.dim_value or d.dim_param for d in t.shape.dim])
        return out

    assert shapes(ours) == shapes(theirs)
    assert shapes(ours)["r"] == (1, ["B", 32])
    assert len(proto.graph.value_info) == declared  # the input is not changed


def test_convert_version_agrees_with_onnx():
    onnx = pytest.importorskip("onnx")
    import onnx.version_converter
    text = (
        '<ir_version: 7, opset_import: ["" : 12]>\n'
        "g (float[2, 3, 4] x) => (float[2, 1, 4] y) { y = ReduceSum<axes = [1]>(x) }"
    )
    proto = onnxc.to_onnx(onnxc.parse_model(text))
    ours = onnxc.convert_version(proto, 13)
    theirs = onnx.version_converter.convert_version(proto, 13)
    assert ours.opset_import[0].version == theirs.opset_import[0].version == 13
    # axes became an input
    assert len(ours.graph.node[-1].input) == len(theirs.graph.node[-1].input) == 2
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(run_x(ours, x), run_x(theirs, x))
    np.testing.assert_array_equal(run_x(ours, x), x.sum(axis=1, keepdims=True))
    down = onnxc.convert_version(ours, 12)
    assert down.opset_import[0].version == 12
    with pytest.raises(onnxc.Error):
        onnxc.convert_version(onnxc.parse_model(
            '<ir_version: 10, opset_import: ["" : 21]>\n'
            "g (float[2] x) => (float[2] y) { y = Gelu(x) }"), 12)


def run_x(model, x):
    return onnxc.InferenceSession(model).run(None, {"x": x})[0]


def test_text_round_trip_and_onnx_parser():
    onnx = pytest.importorskip("onnx")
    import onnx.parser

    m = onnxc.load(PERCEPTRON)
    text = onnxc.to_text(m)
    again = onnxc.parse_model(text)
    assert onnxc.to_text(again) == text
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(
        onnxc.InferenceSession(again).run(None, {"X": x})[0],
        onnxc.InferenceSession(m).run(None, {"X": x})[0],
    )
    ours = onnxc.to_onnx(onnxc.parse_model(MLP))
    theirs = onnx.parser.parse_model(MLP)
    assert [(n.op_type, list(n.input), list(n.output)) for n in ours.graph.node] == [
        (n.op_type, list(n.input), list(n.output)) for n in theirs.graph.node
    ]
    assert [i.name for i in ours.graph.input] == [i.name for i in theirs.graph.input]
    with pytest.raises(onnxc.ParseError, match=r"\d+:\d+"):
        onnxc.parse_model("<ir_version: 8>\ng (float x) => (float y) { y = Relu(x }")
