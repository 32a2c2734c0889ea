#!/usr/bin/python3
"""Inferred shapes == the shapes the runtime produces, on the four real
models at the benchmark input sizes of ../shared/models/README.md.

onnxc infer (with the sizes bound) writes value_info; every top-level value is
then made a graph output (with python3-onnx, used here only to edit the
protobuf), onnxc run computes them all, and each output's shape read back
from output_k.pb must equal the inferred one, dim for dim."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError:
    print("python3-onnx/numpy not installed: skipped")
    sys.exit(77)

onnxc, models = sys.argv[1], sys.argv[2]
CASES = [
    ("ch_PP-OCRv4_det_infer.onnx", [("x", np.float32, [1, 3, 640, 640])]),
    ("embedding_model.onnx", [("input_1", np.float32, [1, 76, 32, 1])]),
    ("melspectrogram.onnx", [("input", np.float32, [1, 1280])]),
    ("silero_vad_16k_op15.onnx", [("input", np.float32, [1, 512]), ("state", np.float32, [2, 1, 128]),
                                  ("sr", np.int64, [])]),
]
rng = np.random.default_rng(7)
total = bad = 0
with tempfile.TemporaryDirectory() as tmp:
    for name, inputs in CASES:
        path = os.path.join(models, name)
        inferred = os.path.join(tmp, "inferred.onnx")
        binds = []
        for n, _, dims in inputs:
            if dims:
                binds += ["--input", n + "=" + ",".join(map(str, dims))]
        r = subprocess.run([onnxc, "infer", "--quiet", path, "-o", inferred] + binds,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name}: onnxc infer: {r.stderr.strip()}")
            bad += 1
            continue
        m = onnx.load(inferred)
        shapes = {}
        for vi in list(m.graph.value_info) + list(m.graph.output):
            t = vi.type.tensor_type
            if vi.type.HasField("tensor_type") and t.HasField("shape"):
                shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.shape.dim]
        existing = {o.name for o in m.graph.output}
        for vi in m.graph.value_info:
            if vi.name not in existing and vi.name in shapes:
                m.graph.output.append(vi)
        exposed = os.path.join(tmp, "exposed.onnx")
        onnx.save(m, exposed)
        args = [onnxc, "run", exposed, "-o", os.path.join(tmp, name)]
        for n, dt, dims in inputs:
            a = (16000 * np.ones(dims, dtype=dt)) if dt == np.int64 else rng.standard_normal(dims).astype(dt)
            p = os.path.join(tmp, n + ".pb")
            with open(p, "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
            args += ["-i", f"{n}={p}"]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name}: onnxc run: {r.stderr.strip()[:300]}")
            bad += 1
            continue
        mism = 0
        for k, o in enumerate(m.graph.output):
            t = onnx.TensorProto()
            with open(os.path.join(tmp, name, f"output_{k}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            got = list(t.dims)
            want = shapes.get(o.name)
            total += 1
            if want != got:
                mism += 1
                if mism <= 5:
                    print(f"FAIL {name} {o.name}: inferred {want}, runtime {got}")
        bad += mism
        print(f"{name}: {len(m.graph.output)} values, {mism} mismatches")
print(f"{total - bad} passed, {bad} failed")
sys.exit(1 if bad else 0)
