"""InferenceSession: every element type in and out, sequences, maps,
optionals, layouts, errors, models from bytes, threads."""

import os
import threading

import numpy as np
import pytest

import onnxc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PERCEPTRON = os.path.join(ROOT, "examples", "perceptron.onnxtxt")


def session(text, **kw):
    return onnxc.InferenceSession(onnxc.parse_model(text), **kw)


def identity(elem, opset=25):
    return session(
        f'<ir_version: 11, opset_import: ["" : {opset}]>\n'
        f"g ({elem}[N, 3] x) => ({elem}[N, 3] y) {{ y = Identity(x) }}"
    )


# every element type: its ONNX name and the numpy dtype that carries it
DTYPES = [
    ("float", np.float32),
    ("double", np.float64),
    ("float16", np.float16),
    ("int8", np.int8),
    ("int16", np.int16),
    ("int32", np.int32),
    ("int64", np.int64),
    ("uint8", np.uint8),
    ("uint16", np.uint16),
    ("uint32", np.uint32),
    ("uint64", np.uint64),
    ("bool", np.bool_),
    ("complex64", np.complex64),
    ("complex128", np.complex128),
    ("bfloat16", np.uint16),
    ("float8e4m3fn", np.uint8),
    ("float8e4m3fnuz", np.uint8),
    ("float8e5m2", np.uint8),
    ("float8e5m2fnuz", np.uint8),
    ("float8e8m0", np.uint8),
    ("float4e2m1", np.uint8),
    ("uint4", np.uint8),
    ("int4", np.int8),
    ("uint2", np.uint8),
    ("int2", np.int8),
]

# values each bit-pattern type holds exactly
SAMPLES = {
    "float4e2m1": [0, 1, 2, 7, 9, 15],
    "uint4": [0, 1, 2, 7, 9, 15],
    "int4": [-8, -1, 0, 1, 5, 7],
    "uint2": [0, 1, 2, 3, 1, 0],
    "int2": [-2, -1, 0, 1, 0, -2],
}


@pytest.mark.parametrize("elem,dtype", DTYPES, ids=[d[0] for d in DTYPES])
def test_every_dtype_round_trips(elem, dtype):
    s = identity(elem)
    assert s.get_inputs()[0].type == f"tensor({elem})"
    assert s.get_inputs()[0].shape == ["N", 3]
    if elem in SAMPLES:
        x = np.array(SAMPLES[elem], dtype=dtype).reshape(2, 3)
    elif dtype is np.bool_:
        x = np.array([[True, False, True], [False, False, True]])
    else:
        x = (np.arange(6) + 1).astype(dtype).reshape(2, 3)
    (y,) = s.run(None, {"x": x})
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y, x)


def test_strings_in_and_out():
    s = identity("string")
    x = np.array([["a", "bé", ""], ["long " * 10, "x", "€"]], dtype=object)
    (y,) = s.run(None, {"x": x})
    assert y.dtype == object and y.shape == (2, 3)
    assert y.tolist() == x.tolist()
    (y,) = s.run(None, {"x": np.array([["a", "b", "c"]])})  # numpy str arrays too
    assert y.tolist() == [["a", "b", "c"]]
    with pytest.raises(onnxc.InvalidArgument):
        s.run(None, {"x": np.array([[1, "b", "c"]], dtype=object)})


def test_bit_patterns_mean_what_they_say():
    s = session(
        '<ir_version: 11, opset_import: ["" : 23]>\n'
        "g (bfloat16[2] b, float[2] f, int4[2] i)\n"
        " => (float[2] fb, float8e4m3fn[2] f8, int32[2] ii) {\n"
        " fb = Cast<to = 1>(b)\n f8 = Cast<to = 17>(f)\n ii = Cast<to = 6>(i) }"
    )
    fb, f8, ii = s.run(
        None,
        {
            "b": np.array([0x3F80, 0xC000], np.uint16),
            "f": np.array([1.0, -2.0], np.float32),
            "i": np.array([-8, 7], np.int8),
        },
    )
    np.testing.assert_array_equal(fb, [1.0, -2.0])
    np.testing.assert_array_equal(f8, np.array([0x38, 0xC0], np.uint8))
    np.testing.assert_array_equal(ii, np.array([-8, 7], np.int32))


def test_sub_byte_values_out_of_range_raise():
    for elem, dtype, bad in (("int4", np.int8, 8), ("int4", np.int8, -9), ("uint4", np.uint8, 16),
                             ("float4e2m1", np.uint8, 0x10), ("int2", np.int8, 2),
                             ("uint2", np.uint8, 4)):
        x = np.zeros((2, 3), dtype)
        x[1, 2] = bad
        with pytest.raises(onnxc.InvalidArgument, match=f"element 5 is {bad}, outside {elem}"):
            identity(elem).run(None, {"x": x})


def test_non_contiguous_and_foreign_layouts():
    s = identity("float")
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for x in (base[:, ::2], base[::2, 1:4], base.T[:3].T, np.asfortranarray(base[:, :3])):
        (y,) = s.run(None, {"x": x})
        np.testing.assert_array_equal(y, x)
    big_endian = np.arange(6, dtype=">f4").reshape(2, 3)
    (y,) = s.run(None, {"x": big_endian})
    np.testing.assert_array_equal(y, big_endian)
    readonly = np.ones((2, 3), np.float32)
    readonly.flags.writeable = False
    (y,) = s.run(None, {"x": readonly})
    assert y.flags.writeable


def test_zero_size():
    s = identity("float")
    (y,) = s.run(None, {"x": np.zeros((0, 3), np.float32)})
    assert y.shape == (0, 3) and y.dtype == np.float32
    (y,) = identity("string").run(None, {"x": np.zeros((0, 3), dtype=object)})
    assert y.shape == (0, 3)


def test_outputs_are_independent_of_inputs():
    s = identity("float")
    x = np.ones((2, 3), np.float32)
    (y,) = s.run(None, {"x": x})
    y[0, 0] = 5
    assert x[0, 0] == 1
    (y2,) = s.run(None, {"x": x})
    assert y2[0, 0] == 1


def test_scalars_and_lists_as_tensors():
    s = session(
        '<ir_version: 8, opset_import: ["" : 17]>\n'
        "g (float x, int64[3] v) => (float y, int64[3] w) { y = Identity(x)\n w = Identity(v) }"
    )
    y, w = s.run(None, {"x": np.float32(2.5), "v": [1, 2, 3]})
    assert y.shape == () and y == 2.5
    np.testing.assert_array_equal(w, [1, 2, 3])
    assert w.dtype == np.int64


def test_sequences_maps_optionals():
    with open(os.path.join(ROOT, "tests", "install", "data", "kinds.onnxtxt")) as f:
        m = onnxc.parse_model(f.read())
    s = onnxc.InferenceSession(m)
    types = {o.name: o.type for o in s.get_outputs()}
    assert types["Seq"] == "seq(tensor(float))"
    assert types["Opt"] == "optional(tensor(float))"
    assert types["Map"] == "seq(map(string,tensor(float)))"
    a = np.array([1, 2], np.float32)
    b = np.array([3, 4, 5], np.float32)
    strings = np.array(["p", "q", "r"], object)
    seq, opt, none, s2, zipmap = s.run(None, {"A": a, "B": b, "S": strings})
    assert isinstance(seq, list) and len(seq) == 2
    np.testing.assert_array_equal(seq[1], b)
    np.testing.assert_array_equal(opt, a)
    assert none is None
    assert s2.tolist() == ["p", "q", "r"]
    assert zipmap == [{"x": 1.0, "y": 2.0}]


def test_sequence_and_optional_inputs():
    s = session(
        '<ir_version: 8, opset_import: ["" : 18]>\n'
        "g (seq(float[N]) s, optional(float[2]) o) => (int64 n, bool has) {\n"
        " n = SequenceLength(s)\n has = OptionalHasElement(o) }"
    )
    x = np.ones(2, np.float32)
    n, has = s.run(None, {"s": [x, x, x], "o": None})
    assert n == 3 and not has
    n, has = s.run(None, {"s": [], "o": x})
    assert n == 0 and has


def test_map_input():
    s = session(
        '<ir_version: 8, opset_import: ["" : 17, "ai.onnx.ml" : 3]>\n'
        "g (map(int64, float) X) => (float[1, 3] Y) {\n"
        " Y = ai.onnx.ml.CastMap<map_form = \"SPARSE\", max_map = 3>(X) }"
    )
    (y,) = s.run(None, {"X": {0: 1.5, 2: 3.0}})
    np.testing.assert_array_equal(y, [[1.5, 0, 3.0]])


def test_wrong_names_dtypes_shapes_raise():
    s = onnxc.InferenceSession(PERCEPTRON)
    x = np.ones((2, 3), np.float32)
    cases = [
        ({"X": np.ones((2, 3))}, r"tensor\(double\)"),
        ({"X": x.astype(np.int32)}, "X"),
        ({"X": np.ones((2, 4), np.float32)}, "dimension"),
        ({"X": np.ones(3, np.float32)}, "X"),
        ({"Y": x}, "Y"),
        ({}, "missing"),
        ({"X": [x]}, "X"),
        ({"X": None}, "optional"),
        ({"X": np.array(["a"], object)}, "X"),
        ({"X": np.zeros(2, "datetime64[s]")}, "dtype"),
        ({"X": np.ones((2, 3), np.longdouble)}, "dtype"),
    ]
    for feeds, words in cases:
        with pytest.raises(onnxc.InvalidArgument, match=words):
            s.run(None, feeds)
    with pytest.raises(onnxc.InvalidArgument, match="nope"):
        s.run(["nope"], {"X": x})
    with pytest.raises(onnxc.InvalidArgument):
        s.run(None, {1: x})
    with pytest.raises(TypeError):
        s.run(None, [x])
    assert issubclass(onnxc.InvalidArgument, ValueError)
    # still usable after every failure
    (y,) = s.run(["Out"], {"X": x})
    assert y.shape == (2, 2)


def test_bad_models_raise():
    with pytest.raises(onnxc.FileError):
        onnxc.InferenceSession(os.path.join(ROOT, "no-such-model.onnx"))
    with pytest.raises(onnxc.ParseError):
        onnxc.InferenceSession(b"\x08\x07\x12\xff\xff garbage")
    with pytest.raises(onnxc.ParseError):
        onnxc.parse_model("g (float x) => (float y) { y = }")
    with pytest.raises(onnxc.Error) as e:
        session(
            '<ir_version: 8, opset_import: ["" : 17]>\n'
            "g (float x) => (float y) { y = NoSuchOp(x) }"
        )
    assert "NoSuchOp" in str(e.value)
    with pytest.raises(TypeError):
        onnxc.InferenceSession(3.5)


def test_runtime_errors_carry_the_message():
    s = session(
        '<ir_version: 8, opset_import: ["" : 17]>\n'
        "g (float[N] x, int64[1] shape) => (float[M] y) { y = Reshape(x, shape) }"
    )
    with pytest.raises(onnxc.Error, match="Reshape"):
        s.run(None, {"x": np.ones(6, np.float32), "shape": np.array([4], np.int64)})


def test_model_from_bytes_path_and_proto():
    x = np.ones((2, 3), np.float32)
    expected = onnxc.InferenceSession(PERCEPTRON).run(None, {"X": x})[0]
    data = onnxc.load(PERCEPTRON).encode()
    for source in (data, bytearray(data), memoryview(data), onnxc.load_from_string(data)):
        s = onnxc.InferenceSession(source)
        np.testing.assert_array_equal(s.run(None, {"X": x})[0], expected)
    onnx = pytest.importorskip("onnx")
    s = onnxc.InferenceSession(onnx.ModelProto.FromString(data))
    np.testing.assert_array_equal(s.run(None, {"X": x})[0], expected)


def test_ort_style_arguments_and_metadata():
    opts = onnxc.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = onnxc.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = onnxc.InferenceSession(PERCEPTRON, sess_options=opts, providers=["CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    ro = onnxc.RunOptions()
    ro.run_log_tag = "tagged"
    (y,) = s.run([], {"X": np.ones((1, 3), np.float32)}, ro)
    assert y.shape == (1, 2)
    text = (
        '<ir_version: 8, opset_import: ["" : 17], producer_name: "maker", domain: "ex.dom",\n'
        ' model_version: 7, doc_string: "about", metadata_props: ["k" : "v", "a" : "b"]>\n'
        "gname (float x) => (float y) { y = Identity(x) }"
    )
    meta = session(text).get_modelmeta()
    assert (meta.producer_name, meta.graph_name, meta.domain) == ("maker", "gname", "ex.dom")
    assert (meta.description, meta.version) == ("about", 7)
    assert meta.custom_metadata_map == {"k": "v", "a": "b"}


def test_unknown_dims_and_rank():
    s = session(
        '<ir_version: 8, opset_import: ["" : 17]>\n'
        "g (float[2, ?] x) => (y) { y = Identity(x) }"
    )
    assert s.get_inputs()[0].shape == [2, None]
    assert (s.get_outputs()[0].type, s.get_outputs()[0].shape) == ("unknown", [])


def test_threads_share_one_session():
    s = onnxc.InferenceSession(PERCEPTRON)
    xs = [np.random.default_rng(i).random((64, 3), dtype=np.float32) for i in range(8)]
    serial = [s.run(None, {"X": x})[0] for x in xs]
    results = {}
    errors = []

    def work(k):
        try:
            for _ in range(25):
                for i, x in enumerate(xs):
                    y = s.run(None, {"X": x})[0]
                    if not np.array_equal(y, serial[i]):
                        results[k] = False
                        return
            results[k] = True
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(results.values()) and len(results) == 6


def test_gil_is_released_during_run():
    # While one thread runs a slow model, another keeps running Python: with
    # the GIL held it would get in only between runs (a handful of ticks).
    s = session(
        '<ir_version: 8, opset_import: ["" : 17]>\n'
        "g (float[N, N] a) => (float[N, N] c) {\n"
        " b = MatMul(a, a)\n c1 = MatMul(b, a)\n c = MatMul(c1, a) }",
        threads=1,
    )
    a = np.ones((1000, 1000), np.float32) / 1000
    ticks = []
    done = threading.Event()

    def run():
        for _ in range(3):
            s.run(None, {"a": a})
        done.set()

    t = threading.Thread(target=run)
    t.start()
    while not done.is_set():
        ticks.append(1)
        done.wait(0.001)
    t.join()
    assert len(ticks) > 20


def test_pickle_model_and_session():
    import pickle

    s = onnxc.InferenceSession(PERCEPTRON, threads=1)
    x = np.ones((2, 3), np.float32)
    s2 = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(s2.run(None, {"X": x})[0], s.run(None, {"X": x})[0])
    m = pickle.loads(pickle.dumps(onnxc.load(PERCEPTRON)))
    assert m.to_text() == s.model.to_text() and m.base_dir == os.path.dirname(PERCEPTRON)


def test_low_bit_int8_and_no_quant_fusion_options():
    # MatMul by an int4 weight with per-block scales: the float path is the
    # DequantizeLinear + MatMul arithmetic within float rounding; low_bit_int8
    # quantizes the activations per block (an error of at most 1/254 of the
    # block's largest activation times the weights' magnitude)
    rng = np.random.default_rng(3)
    q = rng.integers(-8, 8, size=(64, 5))
    s = rng.uniform(0.01, 0.02, size=(2, 5)).astype(np.float32)
    text = (
        '<ir_version: 10, opset_import: ["" : 21]>\n'
        "g (float[1,64] A) => (float[1,5] Y) <int4[64,5] wq = {%s}, float[2,5] ws = {%s}>\n"
        "{\n  w = DequantizeLinear <axis = 0, block_size = 32> (wq, ws)\n  Y = MatMul (A, w)\n}\n"
        % (",".join(str(v) for v in q.flatten()), ",".join(repr(float(v)) for v in s.flatten()))
    )
    a = rng.standard_normal((1, 64)).astype(np.float32)
    w = q.astype(np.float32) * np.repeat(s, 32, axis=0)
    want = a.astype(np.float64) @ w.astype(np.float64)
    bound = np.abs(a).max() / 254 * np.abs(w).sum(axis=0)
    for kw in ({}, {"no_quant_fusion": True}, {"low_bit_int8": True}):
        got = session(text, **kw).run(None, {"A": a})[0]
        tol = bound + 1e-5 if kw.get("low_bit_int8") else 1e-5 * np.abs(want).max()
        assert np.all(np.abs(got - want) <= tol), (kw, got, want)
    with pytest.raises(TypeError):
        onnxc._onnxc.Session(onnxc.parse_model(text), low_bit_int8="yes please", bogus=1)


# A Conv (2 -> 2 channels, 3 x 3) followed by a Relu: the conv_epilogue pass
# makes one FusedConv of them; a MatMul by a constant with its bias Add:
# matmul_epi makes a MatMulFused.
CONV_RELU = """
<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,5,5] X, float[3,4] A) => (float[1,2,5,5] Y, float[3,2] Z)
<float[2,2,3,3] W = {0.5,-0.25,0.125,1,-1,0.75,-0.5,0.25,0.375,
                     -0.125,0.625,-0.75,0.875,-0.375,0.5,0.25,-0.625,1,
                     0.25,0.5,-1,0.125,-0.25,0.75,-0.875,0.375,-0.5,
                     1,-0.125,0.25,-0.375,0.625,-0.75,0.5,0.125,-0.25},
 float[2] B = {0.25, -0.5}, float[4,2] M = {1,-0.5,0.25,2,-1,0.75,0.5,-0.25},
 float[2] C = {0.125, -1}> {
  c = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (X, W, B)
  Y = Relu (c)
  p = MatMul (A, M)
  Z = Add (p, C)
}
"""


def test_passes_table_and_disabled_optimizers():
    table = onnxc.passes()
    names = [p.name for p in table]
    for want in ("cse", "conv_epilogue", "matmul_epi", "elementwise_chain",
                 "constant_folding"):
        assert want in names
    assert names.index("conv_fold") < names.index("conv_epilogue")
    assert all(p.level >= 1 and p.default_on and p.description for p in table)
    rng = np.random.default_rng(3)
    feeds = {"X": rng.standard_normal((1, 2, 5, 5)).astype(np.float32),
             "A": rng.standard_normal((3, 4)).astype(np.float32)}
    plain = session(CONV_RELU, optimization_level=0).run(None, feeds)
    for off in (["conv_epilogue"], ["matmul_epi", "cse"], ("conv_epilogue",)):
        got = session(CONV_RELU, disabled_optimizers=off).run(None, feeds)
        for g, p in zip(got, plain):
            np.testing.assert_allclose(g, p, rtol=1e-6, atol=1e-6)
    so = onnxc.SessionOptions()
    so.disabled_optimizers = ["conv_epilogue", "matmul_epi"]
    got = onnxc.InferenceSession(onnxc.parse_model(CONV_RELU), so).run(None, feeds)
    np.testing.assert_allclose(got[0], plain[0], rtol=1e-6, atol=1e-6)
    with pytest.raises(onnxc.InvalidArgument, match="no_such_pass"):
        session(CONV_RELU, disabled_optimizers=["conv_epilogue", "no_such_pass"])


def test_thread_spin_and_pinning_options():
    # the same results from a pool whose workers sleep at once and are pinned,
    # and from onnxruntime's "allow_spinning" = "0" config entry
    rng = np.random.default_rng(5)
    feeds = {"X": rng.standard_normal((1, 2, 5, 5)).astype(np.float32),
             "A": rng.standard_normal((3, 4)).astype(np.float32)}
    plain = session(CONV_RELU, threads=1).run(None, feeds)
    quiet = session(CONV_RELU, threads=2, thread_spin_us=-1, pin_threads=True)
    for _ in range(3):
        for g, p in zip(quiet.run(None, feeds), plain):
            np.testing.assert_allclose(g, p, rtol=1e-6, atol=1e-6)
    so = onnxc.SessionOptions()
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    s = onnxc.InferenceSession(onnxc.parse_model(CONV_RELU), so, threads=2)
    for g, p in zip(s.run(None, feeds), plain):
        np.testing.assert_allclose(g, p, rtol=1e-6, atol=1e-6)


def test_parallel_branches_option():
    # the convolution and the product are independent branches: side by side
    # (keyword, or onnxruntime's ExecutionMode.ORT_PARALLEL) they give the bytes
    # of the node-by-node run, on the timed runs that pick the way too
    rng = np.random.default_rng(6)
    feeds = {"X": rng.standard_normal((1, 2, 5, 5)).astype(np.float32),
             "A": rng.standard_normal((3, 4)).astype(np.float32)}
    plain = session(CONV_RELU, threads=2).run(None, feeds)
    so = onnxc.SessionOptions()
    so.execution_mode = onnxc.ExecutionMode.ORT_PARALLEL
    both = [session(CONV_RELU, threads=2, parallel_branches=True),
            onnxc.InferenceSession(onnxc.parse_model(CONV_RELU), so, threads=2)]
    for s in both:
        for _ in range(5):
            for g, p in zip(s.run(None, feeds), plain):
                np.testing.assert_array_equal(g, p)
