"""random_draws.py - the random operators through `onnxc compile` (run by domains.py).

The compiled draws are not numpy's nor the runtime's (docs/compile.md), so
the outputs are checked against the distributions the ONNX specification
gives, with about 10,000 draws each and bounds of 5 standard deviations of
the estimate:
  - RandomUniform (float32, seed) and RandomUniformLike (float16 from a
    float64 input): every value in [low, high), mean and variance;
  - RandomNormal (float64, seed) and RandomNormalLike (the input's type, no
    seed): mean and variance;
  - Bernoulli on p in {0, 0.3, 1}: the rates (0 and 1 exactly), with the
    output type the input's (default) and bool (dtype);
  - Multinomial (int64, 10,000 samples per row, a -inf log-probability in a
    row) and its default int32 output: class frequencies against the
    softmax of the row, never a class of probability 0;
  - no correlation between two unseeded RandomNormalLike nodes' draws;
  - output types and shapes, and the same bytes from two runs of the
    program (the generated code has no state).
The same model is compiled with --float-only (float32 for the float64
values) and checked alike, and the generated code is built once more with
-fsanitize=address,undefined and run (when the compiler can link those).
"""
import math
import os

import numpy as np
from onnx import TensorProto, helper

from shape_fold import load_pb, run, vi  # the compile tests' helpers

F, D, H, I32, I64, B = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT32,
                        TensorProto.INT64, TensorProto.BOOL)
N = 10000
LOGITS = np.array([[0.0, math.log(2.0), -np.inf, 1.0], [-1.0, -1.0, 0.5, -3.0]], np.float32)


def random_model(wide):
    """wide: the float64 values (float32 for --float-only)"""
    nodes = [
        helper.make_node("RandomUniform", [], ["ru"], shape=[100, 100], low=-2.0, high=3.0, seed=7.0,
                         dtype=F),
        helper.make_node("RandomNormal", [], ["rn"], shape=[N], mean=1.5, scale=2.0, seed=3.0, dtype=wide),
        helper.make_node("RandomUniformLike", ["x"], ["rul"], dtype=H),
        helper.make_node("RandomNormalLike", ["x"], ["rnl"]),
        helper.make_node("Bernoulli", ["p"], ["bern"], seed=11.0),
        helper.make_node("Bernoulli", ["p"], ["bern_b"], dtype=B),
        helper.make_node("Multinomial", ["lg"], ["mult"], sample_size=N, dtype=I64, seed=5.0),
        helper.make_node("Multinomial", ["lg"], ["mult32"], sample_size=6),
        helper.make_node("RandomNormalLike", ["x"], ["rnl2"]),
    ]
    ins = [vi("x", wide, [N]), vi("p", F, [3, N]), vi("lg", F, [2, 4])]
    outs = [vi("ru", F, [100, 100]), vi("rn", wide, [N]), vi("rul", H, [N]), vi("rnl", wide, [N]),
            vi("bern", F, [3, N]), vi("bern_b", B, [3, N]), vi("mult", I64, [2, N]),
            vi("mult32", I32, [2, 6]), vi("rnl2", wide, [N])]
    g = helper.make_graph(nodes, "random", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)])
    m.ir_version = 8
    return m


def moments(name, v, mean, var, mu4):
    """None, or why v's sample mean and variance are not within 5 sigma"""
    v = np.asarray(v, np.float64).ravel()
    n = len(v)
    m, s2 = v.mean(), v.var()
    if abs(m - mean) > 5 * math.sqrt(var / n):
        return "%s: mean %g, want %g" % (name, m, mean)
    if abs(s2 - var) > 5 * math.sqrt((mu4 - var * var) / n):
        return "%s: variance %g, want %g" % (name, s2, var)
    return None


def check_outputs(outs, wide_np):
    """the reasons the outputs do not follow their distributions"""
    why = []
    want = [("ru", np.float32, (100, 100)), ("rn", wide_np, (N,)), ("rul", np.float16, (N,)),
            ("rnl", wide_np, (N,)), ("bern", np.float32, (3, N)), ("bern_b", np.bool_, (3, N)),
            ("mult", np.int64, (2, N)), ("mult32", np.int32, (2, 6)), ("rnl2", wide_np, (N,))]
    for k, (name, dt, shape) in enumerate(want):
        if outs[k].dtype != dt or outs[k].shape != shape:
            why.append("%s: %s%s, want %s%s" % (name, outs[k].dtype, outs[k].shape, np.dtype(dt), shape))
    if why:
        return why
    ru, rn, rul, rnl, bern, bern_b, mult, mult32, rnl2 = outs
    if not (ru.min() >= -2 and ru.max() < 3) or not (rul.min() >= 0 and rul.max() < 1):
        why.append("uniform values outside [low, high)")
    why.append(moments("RandomUniform", ru, 0.5, 25 / 12, 5 ** 4 / 80))
    why.append(moments("RandomUniformLike", rul, 0.5, 1 / 12, 1 / 80))
    why.append(moments("RandomNormal", rn, 1.5, 4.0, 3 * 16.0))
    why.append(moments("RandomNormalLike", rnl, 0.0, 1.0, 3.0))
    for name, b in (("Bernoulli", bern), ("Bernoulli bool", bern_b.astype(np.float32))):
        if not np.all((b == 0) | (b == 1)) or b[0].any() or not b[2].all():
            why.append("%s: values other than 0 and 1, or not all 0 for p = 0 / 1 for p = 1" % name)
        elif abs(b[1].sum() - 0.3 * N) > 5 * math.sqrt(N * 0.3 * 0.7):
            why.append("%s: rate %g for p = 0.3" % (name, b[1].mean()))
    # unseeded nodes have keys of their own: their draws are not correlated
    r = np.corrcoef(rnl.astype(np.float64), rnl2.astype(np.float64))[0, 1]
    if abs(r) > 5 / math.sqrt(N):
        why.append("two unseeded RandomNormalLike correlate (r = %g)" % r)
    if (mult32 < 0).any() or (mult32 > 3).any() or (mult32[0] == 2).any():
        why.append("Multinomial int32: classes %s" % mult32.tolist())
    for r in range(2):
        e = np.exp(LOGITS[r].astype(np.float64) - LOGITS[r].max())
        p = e / e.sum()
        cnt = np.bincount(mult[r], minlength=4)
        if len(cnt) > 4 or mult[r].min() < 0:
            why.append("Multinomial: classes outside [0, 4)")
            continue
        for k in range(4):
            if abs(cnt[k] - N * p[k]) > 5 * math.sqrt(N * p[k] * (1 - p[k])):
                why.append("Multinomial row %d: class %d drawn %d times, want about %g"
                           % (r, k, cnt[k], N * p[k]))
    return [w for w in why if w]


def build_run(onnxc, cc, d, mp, compile_args, cc_args, inputs):
    """(output arrays, raw bytes of the two runs) or the reason it failed"""
    src = os.path.join(d, "random.c")
    r = run([onnxc, "compile", mp, "-o", src, "--main"] + compile_args)
    if r.returncode:
        return "compile failed: " + r.stderr.strip()
    prog = os.path.join(d, "prog")
    r = run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"] + cc_args +
            [src, src[:-2] + "_main.c", "-lm", "-o", prog])
    if r.returncode:
        return "build failed: " + r.stderr[-1500:]
    runs = []
    for k in range(2):
        out = os.path.join(d, "out%d" % k)
        r = run([prog, "-o", out] + inputs)
        if r.returncode or r.stderr:
            return "run failed (%d): %s" % (r.returncode, r.stderr[-1500:])
        files = [os.path.join(out, "output_%d.pb" % i) for i in range(9)]
        raw = []
        for f in files:
            with open(f, "rb") as fh:
                raw.append(fh.read())
        runs.append(raw)
    if runs[0] != runs[1]:
        return "two runs gave different bytes"
    return [load_pb(os.path.join(d, "out0", "output_%d.pb" % i)) for i in range(9)]


def sanitizers_work(cc, d):
    probe = os.path.join(d, "probe.c")
    with open(probe, "w") as f:
        f.write("int main(void) { return 0; }\n")
    r = run([cc, "-fsanitize=address,undefined", probe, "-o", probe[:-2]])
    return r.returncode == 0 and run([probe[:-2]]).returncode == 0


def run_all(onnxc, cc, work):
    import onnx
    fails = []
    p = np.repeat(np.array([[0.0], [0.3], [1.0]], np.float32), N, axis=1)
    variants = [("random_double", D, np.float64, [], []), ("random_float_only", F, np.float32, ["--float-only"], [])]
    d0 = os.path.join(work, "random_double")
    os.makedirs(d0, exist_ok=True)
    if sanitizers_work(cc, d0):
        variants.append(("random_sanitized", D, np.float64, [],
                         ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]))
    else:
        print("random_draws: %s cannot link -fsanitize=address,undefined; that build left out" % cc)
    for name, wide, wide_np, cargs, ccargs in variants:
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        mp = os.path.join(d, "model.onnx")
        onnx.save(random_model(wide), mp)
        inputs = []
        for nm, a in (("x", np.zeros(N, wide_np)), ("p", p), ("lg", LOGITS)):
            path = os.path.join(d, nm + ".npy")
            np.save(path, a)
            inputs.append("%s=%s" % (nm, path))
        got = build_run(onnxc, cc, d, mp, cargs, ccargs, inputs)
        why = [got] if isinstance(got, str) else check_outputs(got, wide_np)
        print("%s %s%s" % ("ok  " if not why else "FAIL", name, "" if not why else ": " + "; ".join(why)))
        if why:
            fails.append(name)
    return fails
