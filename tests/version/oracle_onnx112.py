"""Opset conversion against onnx 1.12's version converter (an independent
oracle; opsets up to 17). For every conformance case of the old-opset suites
(pytorch-converted, pytorch-operator, simple) and the node cases whose model
imports opset <= 17, and for each target opset of TARGETS: onnx's
convert_version and `onnxc convert --opset` both convert the model; where both
succeed, the two converted models are run by `onnxc run` on the case's first
test data set (all the conversions, then all the runs, through `onnxc batch`) and their outputs must agree (rtol 1e-4). Where only onnx
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


def batch(lines, tmp, tag):
    """Runs onnxc commands (argument lists) through `onnxc batch` (one start
    of onnxc, a forked child per command: the same code and exit status as a
    process of its own, without the 0.07 s CPU of loading onnxc's shared
    libraries each time, which was most of this test's cost). Returns
    (status, stderr) per command: status is the exit code, or -S for a
    child killed by signal S."""
    outdir = tempfile.mkdtemp(dir=tmp, prefix=tag)
    listf = os.path.join(outdir, "list")
    with open(listf, "w") as fh:
        for args in lines:
            assert not any("\t" in a or "\n" in a for a in args)
            fh.write("\t".join(args) + "\n")
    r = subprocess.run([ONNXC, "batch", listf, outdir, "--jobs", "2"], capture_output=True,
                       text=True)
    status = {}
    for ln in r.stdout.splitlines():
        n, st = ln.split()
        status[int(n)] = -int(st[3:]) if st.startswith("sig") else int(st)
    if r.returncode not in (0, 1) or len(status) != len(lines):
        sys.exit("onnxc batch failed (%d): %s" % (r.returncode, r.stderr.strip()))
    res = []
    for i in range(len(lines)):
        with open(os.path.join(outdir, "%d.err" % i)) as fh:
            err = fh.read().strip()
        if status[i] < 0:
            err = ("killed by signal %d " % -status[i]) + err
        res.append((status[i], err))
    return res


def run_args(model_path, d, out):
    ds = os.path.join(d, "test_data_set_0")
    ins = sorted((f for f in os.listdir(ds) if f.startswith("input_")),
                 key=lambda f: int(f[6:-3]))
    args = ["run", model_path, "-o", out]
    for f in ins:
        args += ["-i", os.path.join(ds, f)]
    return args


def run_result(out, status):
    """(outputs, why) of one run: (None, stderr) when it failed, (None, "")
    when an output is not a tensor."""
    code, err = status
    if code:
        return None, err or "exit status %d" % code
    outs = sorted((f for f in os.listdir(out) if f.startswith("output_")),
                  key=lambda f: int(f[7:-3]))
    return load_outputs(out, outs), ""


def expected(d):
    ds = os.path.join(d, "test_data_set_0")
    outs = sorted((f for f in os.listdir(ds) if f.startswith("output_")),
                  key=lambda f: int(f[7:-3]))
    return load_outputs(ds, outs)


def ref_convert_all(todo):
    """onnx's converter on each (model, target, path) of todo, in a forked
    child: it may abort or crash on models it does not handle. One child
    converts one after another and reports each as it ends; when one kills
    it, that one counts as refused and a new child goes on with the next (a
    child per conversion was most of this test's CPU time: the copy-on-write
    faults of a fork of Python with onnx and numpy loaded). Returns a list of
    booleans: converted and saved."""
    done = []
    while len(done) < len(todo):
        first = len(done)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            for m, target, path in todo[first:]:
                ok = b"0"
                try:
                    onnx.save(version_converter.convert_version(m, target), path)
                    ok = b"1"
                except BaseException:
                    pass
                os.write(w, ok)
            os._exit(0)
        os.close(w)
        with os.fdopen(r, "rb") as fh:
            got = fh.read()
        os.waitpid(pid, 0)
        done += [c == ord("1") for c in got]
        if len(done) < len(todo):
            done.append(False)  # the one the child died on
    return done


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
    # 1: onnx's conversions, each to a file of its own
    jobs = []  # (name, case folder, target, ref_ok, ref path, ours path)
    for name, d in cases():
        m = onnx.load(os.path.join(d, "model.onnx"))
        v = opset_of(m)
        if v is None or v > 17:
            continue
        for target in TARGETS:
            if target == v:
                continue
            k = len(jobs)
            ref_path = os.path.join(tmp, "ref%d.onnx" % k)
            ours_path = os.path.join(tmp, "ours%d.onnx" % k)
            jobs.append([name, d, target, (m, target, ref_path), ref_path, ours_path])
    for j, ok in zip(jobs, ref_convert_all([j[3] for j in jobs])):
        j[3] = ok
    # 2: onnxc's conversions
    conv = batch([["convert", os.path.join(j[1], "model.onnx"), j[5], "--opset", str(j[2])]
                  for j in jobs], tmp, "convert")
    # 3: the converted models that are compared, run (ours, and onnx's where it converted)
    runs, run_at = [], {}
    for k, (name, d, target, ref_ok, ref_path, ours_path) in enumerate(jobs):
        if conv[k][0] != 0:
            continue
        for which, path in (("ours", ours_path), ("ref", ref_path)):
            if which == "ref" and not ref_ok:
                continue
            out = tempfile.mkdtemp(dir=tmp)
            run_at[(k, which)] = (len(runs), out)
            runs.append(run_args(path, d, out))
    ran = batch(runs, tmp, "run")

    def result(k, which):
        i, out = run_at[(k, which)]
        return run_result(out, ran[i])

    # 4: the verdicts, case by case
    for k, (name, d, target, ref_ok, ref_path, ours_path) in enumerate(jobs):
        code, err = conv[k]
        ours_ok = code == 0
        if not ours_ok and (code < 0 or not err or "\n" in err or "opset" not in err):
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
        ours, why = result(k, "ours")
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
        theirs, why = result(k, "ref")
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
