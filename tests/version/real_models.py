"""The real models of ../shared/models converted to opset 28 and to opset 11
(`onnxc convert --opset`) give the same outputs as the originals under
`onnxc run` on the same (seeded random) inputs, shaped as the models' README
says. Exit 77 when numpy/onnx are missing.

usage: real_models.py ONNXC MODELS_DIR"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError:
    print("onnx/numpy not available: skipped")
    sys.exit(77)

ONNXC, MODELS = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
CASES = {
    "ch_PP-OCRv4_det_infer": [rng.standard_normal((1, 3, 64, 64)).astype(np.float32)],
    "embedding_model": [rng.standard_normal((1, 76, 32, 1)).astype(np.float32)],
    "melspectrogram": [rng.standard_normal((1, 1280)).astype(np.float32)],
    "silero_vad_16k_op15": [(rng.standard_normal((1, 512)) * 0.1).astype(np.float32),
                            np.zeros((2, 1, 128), np.float32), np.array(16000, np.int64)],
}


def run(model, inputs, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    args = [ONNXC, "run", model, "-o", out]
    for i in inputs:
        args += ["-i", i]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip())
    vals = []
    for f in sorted(os.listdir(out)):
        t = onnx.TensorProto()
        with open(os.path.join(out, f), "rb") as fh:
            t.ParseFromString(fh.read())
        vals.append(numpy_helper.to_array(t))
    return vals


failures = checked = 0
with tempfile.TemporaryDirectory() as tmp:
    for name, arrays in CASES.items():
        model = os.path.join(MODELS, name + ".onnx")
        if not os.path.isfile(model):
            continue
        inputs = []
        for k, a in enumerate(arrays):
            p = os.path.join(tmp, "%s_%d.pb" % (name, k))
            with open(p, "wb") as fh:
                fh.write(numpy_helper.from_array(a).SerializeToString())
            inputs.append(p)
        want = run(model, inputs, tmp)
        for target in (28, 11):
            conv = os.path.join(tmp, "%s_%d.onnx" % (name, target))
            r = subprocess.run([ONNXC, "convert", model, conv, "--opset", str(target)],
                               capture_output=True, text=True)
            checked += 1
            if r.returncode:
                failures += 1
                print("FAIL %s -> %d: %s" % (name, target, r.stderr.strip()))
                continue
            got = run(conv, inputs, tmp)
            ok = len(got) == len(want) and all(
                x.shape == y.shape and np.allclose(x, y, rtol=1e-4, atol=1e-5)
                for x, y in zip(got, want))
            print("%s %s -> %d" % ("ok  " if ok else "FAIL", name, target))
            failures += not ok
print("%d conversions, %d failures" % (checked, failures))
sys.exit(1 if failures or not checked else 0)
