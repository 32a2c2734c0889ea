"""Opset conversion against onnx 1.12's version converter (an independent
oracle; opsets up to 17). For every conformance case of the old-opset suites
(pytorch-converted, pytorch-operator, simple) and the node cases whose model
imports opset <= 17, and for each target opset of TARGETS: onnx's
convert_version and `onnxc convert --opset` both convert the model; where both
succeed, the two converted models are run by `onnxc run` on the case's first
test data set and their outputs must agree (rtol 1e-4). Where only onnx
converts, the onnxc refusal must be a clear one-line error (listed, not a
failure); where only onnxc converts, its output must still match the case's
expected outputs. Exit 77 when onnx is missing.

usage: oracle_onnx112.py ONNXC TESTDATA"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper, version_converter
except ImportError:
    print("onnx/numpy not available: skipped")
    sys.exit(77)

ONNXC, DATA = sys.argv[1], sys.argv[2]
TARGETS = [9, 13, 17]
SAMPLE = int(os.environ.get("ONNXC_ORACLE_SAMPLE", "12"))  # every 12th node case


def cases():
    for suite in ("pytorch-converted", "pytorch-operator", "simple", "node"):
        root = os.path.join(DATA, suite)
        if not os.path.isdir(root):
            continue
        for i, name in enumerate(sorted(os.listdir(root))):
            if suite == "node" and i % SAMPLE:
                continue
            d = os.path.join(root, name)
            if os.path.isfile(os.path.join(d, "model.onnx")) and os.path.isdir(
                    os.path.join(d, "test_data_set_0")):
                yield suite + "/" + name, d


def opset_of(m):
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def load_outputs(folder, names):
    vals = []
    for f in names:
        t = onnx.TensorProto()
        with open(os.path.join(folder, f), "rb") as fh:
            t.ParseFromString(fh.read())
        try:
            vals.append(numpy_helper.to_array(t))
        except ValueError:  # not a tensor (a sequence, map or optional output)
            return None
    return vals


def run(model_path, d, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    ds = os.path.join(d, "test_data_set_0")
    ins = sorted((f for f in os.listdir(ds) if f.startswith("input_")),
                 key=lambda f: int(f[6:-3]))
    args = [ONNXC, "run", model_path, "-o", out]
    for f in ins:
        args += ["-i", os.path.join(ds, f)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip()
    outs = sorted((f for f in os.listdir(out) if f.startswith("output_")),
                  key=lambda f: int(f[7:-3]))
    return load_outputs(out, outs), ""


def expected(d):
    ds = os.path.join(d, "test_data_set_0")
    outs = sorted((f for f in os.listdir(ds) if f.startswith("output_")),
                  key=lambda f: int(f[7:-3]))
    return load_outputs(ds, outs)


def ref_convert(m, target, path):
    """onnx's converter in a forked child: it may abort or crash on models
    it does not handle."""
    if os.path.exists(path):
        os.unlink(path)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            onnx.save(version_converter.convert_version(m, target), path)
            code = 0
        except BaseException:
            pass
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def same(a, b, rtol=1e-4, atol=1e-6):
    if a is None or b is None or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.kind in "fc":
            if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


agree = both_refuse = only_onnx = only_onnxc = failures = compared = 0
notes = []
with tempfile.TemporaryDirectory() as tmp:
    for name, d in cases():
        m = onnx.load(os.path.join(d, "model.onnx"))
        v = opset_of(m)
        if v is None or v > 17:
            continue
        for target in TARGETS:
            if target == v:
                continue
            ref_path = os.path.join(tmp, "ref.onnx")
            ours_path = os.path.join(tmp, "ours.onnx")
            ref_ok = ref_convert(m, target, ref_path)
            r = subprocess.run([ONNXC, "convert", os.path.join(d, "model.onnx"), ours_path,
                                "--opset", str(target)], capture_output=True, text=True)
            ours_ok = r.returncode == 0
            err = r.stderr.strip()
            if not ours_ok and (not err or "\n" in err or "opset" not in err):
                failures += 1
                print("FAIL %s -> %d: unclear refusal: %r" % (name, target, err))
                continue
            if not ref_ok and not ours_ok:
                both_refuse += 1
                continue
            if ref_ok and not ours_ok:
                only_onnx += 1
                notes.append("%s -> %d: onnx converts, onnxc refuses: %s" % (name, target, err))
                continue
            ours, why = run(ours_path, d, tmp)
            if ours is None and not why:
                continue  # outputs that are not tensors: not compared here
            if ours is None:
                failures += 1
                print("FAIL %s -> %d: the onnxc-converted model does not run: %s" %
                      (name, target, why))
                continue
            if not ref_ok:
                only_onnxc += 1
                if not same(ours, expected(d), 1e-3, 1e-7):
                    failures += 1
                    print("FAIL %s -> %d: onnxc-converted outputs differ from the expected" %
                          (name, target))
                continue
            theirs, why = run(ref_path, d, tmp)
            compared += 1
            if theirs is None and not why:
                continue
            if theirs is None:
                notes.append("%s -> %d: onnx's converted model does not run here: %s" %
                             (name, target, why))
                continue
            if same(ours, theirs):
                agree += 1
            else:
                failures += 1
                print("FAIL %s -> %d: outputs differ between onnx's and onnxc's conversion" %
                      (name, target))
for n in notes:
    print("note: " + n)
print("%d agree with onnx 1.12 (of %d run both ways), %d refused by both, %d converted only "
      "by onnx, %d only by onnxc, %d failures" % (agree, compared, both_refuse, only_onnx,
                                                   only_onnxc, failures))
sys.exit(1 if failures else 0)
