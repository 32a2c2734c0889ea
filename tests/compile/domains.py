#!/usr/bin/env python3
"""domains.py - operators of other domains than ai.onnx through `onnxc compile`.

usage: domains.py ONNXC WORKDIR [--cc CC]

The ONNX node test cases cover FlexAttention (ai.onnx.preview), Adagrad,
Adam and Momentum (ai.onnx.preview.training) and one case each of
ArrayFeatureExtractor, Binarizer and TreeEnsemble (ai.onnx.ml); this test
covers what they leave out, with models built with python3-onnx, compiled
with --main, built with `-std=c99 -Wall -Wextra -Werror -O2`, run, and
compared with a numpy oracle written from the operators' specifications and
with `onnxc run`:
  - label_encoder: LabelEncoder-2 int64 keys to float values (a default for
    the missing ones), float keys (NaN among them) to int64 values;
  - binarizer: int32 and float64 (NaN stays NaN);
  - afe: ArrayFeatureExtractor on a 3-D tensor with indices given at run time;
  - trees: TreeEnsemble-5 on float16 input, two trees, AVERAGE with SOFTMAX,
    MIN with LOGISTIC, MAX with SOFTMAX_ZERO, a BRANCH_MEMBER set, a node
    whose NaN takes the true branch;
  - ml_*: the model operators scikit-learn models converted by skl2onnx
    have (TreeEnsembleClassifier/Regressor, Linear*, SVM*, Normalizer,
    Scaler, Imputer, OneHotEncoder, FeatureVectorizer, PROBIT), against
    onnxruntime's outputs stored in ml_models_ort.json (ml_models.py);
  - adam: Adam on float64 with norm_coefficient and norm_coefficient_post,
    two optimized tensors;
  - random_*: RandomUniform, RandomNormal (and *Like), Bernoulli and
    Multinomial checked against their distributions (random_draws.py);
  - flex_bodies: FlexAttention inside an If branch (with a score_mod), a
    Loop body (its output carried into the next iteration) and a Scan body.
And these are errors with their reason: a string input (strings are not
compiled), a TreeEnsemble whose tree has a cycle, an ai.onnx.ml node
named like an ai.onnx operator (Relu), which must not get ai.onnx's
generator, string class labels, ZipMap and string categories. Exit status 77 (skipped) without onnx and numpy.
"""
import math
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("domains: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shape_fold import load_pb, refused, run, vi  # noqa: E402  (the compile tests' helpers)
import ml_models  # noqa: E402
import random_draws  # noqa: E402

F, D, H, I32, I64 = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT32,
                     TensorProto.INT64)
ML, TR = "ai.onnx.ml", "ai.onnx.preview.training"


def model(nodes, ins, outs, opsets):
    g = helper.make_graph(nodes, "g", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    return m


def t(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


# ---- LabelEncoder ----
def label_encoder_model():
    a = helper.make_node("LabelEncoder", ["x"], ["y"], domain=ML, keys_int64s=[1, 5, 7],
                         values_floats=[0.5, 1.5, -2.5], default_float=9.0)
    b = helper.make_node("LabelEncoder", ["f"], ["z"], domain=ML, keys_floats=[0.5, float("nan"), 2.0],
                         values_int64s=[10, 20, 30], default_int64=-7)
    return model([a, b], [vi("x", I64, [6]), vi("f", F, [2, 3])], [vi("y", F, [6]), vi("z", I64, [2, 3])],
                 [("", 17), (ML, 2)])


def label_encoder_oracle(x, f):
    m1 = {1: 0.5, 5: 1.5, 7: -2.5}
    y = np.array([m1.get(int(v), 9.0) for v in x], np.float32)
    def enc(v):
        if math.isnan(v):
            return 20
        return {0.5: 10, 2.0: 30}.get(float(v), -7)
    z = np.array([enc(v) for v in f.ravel()], np.int64).reshape(f.shape)
    return [y, z]


# ---- Binarizer ----
def binarizer_model():
    a = helper.make_node("Binarizer", ["i"], ["bi"], domain=ML, threshold=2.0)
    b = helper.make_node("Binarizer", ["d"], ["bd"], domain=ML, threshold=-0.25)
    return model([a, b], [vi("i", I32, [7]), vi("d", D, [2, 4])], [vi("bi", I32, [7]), vi("bd", D, [2, 4])],
                 [("", 17), (ML, 1)])


def binarizer_oracle(i, d):
    bi = (i > 2).astype(np.int32)
    bd = np.where(np.isnan(d), d, (d > -0.25).astype(np.float64))
    return [bi, bd]


# ---- ArrayFeatureExtractor ----
def afe_model():
    n = helper.make_node("ArrayFeatureExtractor", ["x", "ix"], ["z"], domain=ML)
    return model([n], [vi("x", F, [2, 3, 5]), vi("ix", I64, [2, 2])], [vi("z", F, [2, 3, 4])],
                 [("", 17), (ML, 1)])


# ---- TreeEnsemble ----
# two trees over 3 features; node modes: 0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ, 6 MEMBER
# tree 0: n0 x0 <= 0.5 ? n1 : n2;  n1 x1 MEMBER {1, 3} ? leaf0 : leaf1;  n2 x2 > 0 ? leaf2 : leaf3
# tree 1: n3 x1 < -1 (NaN true) ? leaf4 : n4;  n4 x0 NEQ 2 ? leaf5 : leaf6
TREE = dict(
    tree_roots=[0, 3],
    nodes_featureids=[0, 1, 2, 1, 0],
    nodes_modes=[0, 6, 3, 1, 5],
    nodes_splits=[0.5, 0.0, 0.0, -1.0, 2.0],
    nodes_truenodeids=[1, 0, 2, 4, 5],
    nodes_trueleafs=[0, 1, 1, 1, 1],
    nodes_falsenodeids=[2, 1, 3, 4, 6],
    nodes_falseleafs=[0, 1, 1, 0, 1],
    nodes_missing_value_tracks_true=[0, 0, 0, 1, 0],
    membership_values=[1.0, 3.0, float("nan")],
    leaf_targetids=[0, 1, 2, 0, 0, 1, 2],
    leaf_weights=[1.0, -2.0, 0.5, 3.0, 0.25, 1.5, -0.75],
)


def tree_node(agg, post, name, tree=TREE):
    kw = dict(tree)
    for k in ("nodes_modes",):
        kw[k] = numpy_helper.from_array(np.array(tree[k], np.uint8), k)
    for k in ("nodes_splits", "membership_values", "leaf_weights"):
        kw[k] = numpy_helper.from_array(np.array(tree[k], np.float32), k)
    return helper.make_node("TreeEnsemble", ["x"], [name], domain=ML, n_targets=3, aggregate_function=agg,
                            post_transform=post, **kw)


def trees_model():
    nodes = [tree_node(0, 1, "avg_softmax"), tree_node(2, 2, "min_logistic"), tree_node(3, 3, "max_softmax_zero")]
    return model(nodes, [vi("x", H, [5, 3])], [vi(n.output[0], H, [5, 3]) for n in nodes],
                 [("", 17), (ML, 5)])


def tree_leaf(x, root):
    i = root
    while True:
        f, m, s = TREE["nodes_featureids"][i], TREE["nodes_modes"][i], np.float32(TREE["nodes_splits"][i])
        v = float(x[f])
        if math.isnan(v) and TREE["nodes_missing_value_tracks_true"][i]:
            c = True
        elif m == 6:
            c = v in (1.0, 3.0)
        else:
            c = [v <= s, v < s, v >= s, v > s, v == s, v != s][m]
        nxt, leaf = ((TREE["nodes_truenodeids"][i], TREE["nodes_trueleafs"][i]) if c else
                     (TREE["nodes_falsenodeids"][i], TREE["nodes_falseleafs"][i]))
        if leaf:
            return nxt
        i = nxt


def trees_oracle(x):
    outs = []
    for agg, post in ((0, 1), (2, 2), (3, 3)):
        res = []
        for row in x.astype(np.float64):
            votes = [[], [], []]
            for root in TREE["tree_roots"]:
                leaf = tree_leaf(row, root)
                votes[TREE["leaf_targetids"][leaf]].append(float(np.float32(TREE["leaf_weights"][leaf])))
            sc = []
            for v in votes:
                if not v:
                    sc.append(0.0)
                elif agg == 0:
                    sc.append(sum(v) / 2.0)
                else:
                    sc.append(min(v) if agg == 2 else max(v))
            sc = np.array(sc)
            if post == 1:
                e = np.exp(sc - sc.max())
                sc = e / e.sum()
            elif post == 2:
                sc = 1.0 / (1.0 + np.exp(-sc))
            elif post == 3:
                nz = sc != 0
                if nz.any():
                    e = np.where(nz, np.exp(sc - sc[nz].max()), 0.0)
                    sc = e / e.sum()
                else:
                    sc = np.full_like(sc, 0.5)
            res.append(sc)
        outs.append(np.array(res).astype(np.float16))
    return outs


# ---- Adam ----
ADAM = dict(alpha=0.85, beta=0.95, epsilon=1e-6, norm_coefficient=0.01, norm_coefficient_post=0.02)


def adam_model():
    n = helper.make_node("Adam", ["r", "t", "x1", "x2", "g1", "g2", "v1", "v2", "h1", "h2"],
                         ["x1n", "x2n", "v1n", "v2n", "h1n", "h2n"], domain=TR, **ADAM)
    ins = [vi("r", D, []), vi("t", I64, []), vi("x1", D, [4]), vi("x2", D, [2, 3]), vi("g1", D, [4]),
           vi("g2", D, [2, 3]), vi("v1", D, [4]), vi("v2", D, [2, 3]), vi("h1", D, [4]), vi("h2", D, [2, 3])]
    outs = [vi(nm, D, [4] if nm.startswith(("x1", "v1", "h1")) else [2, 3]) for nm in n.output]
    return model([n], ins, outs, [(TR, 1)])


def adam_oracle(r, t, xs, gs, vs, hs):
    # the spec's formulas, with the attributes as float32 (their ONNX type)
    a = {k: float(np.float32(v)) for k, v in ADAM.items()}
    xo, vo, ho = [], [], []
    for x, g, v, h in zip(xs, gs, vs, hs):
        g = a["norm_coefficient"] * x + g
        v = a["alpha"] * v + (1 - a["alpha"]) * g
        h = a["beta"] * h + (1 - a["beta"]) * g * g
        r_ = r * math.sqrt(1 - a["beta"] ** t) / (1 - a["alpha"] ** t) if t > 0 else r
        xn = (1 - a["norm_coefficient_post"]) * (x - r_ * v / (np.sqrt(h) + a["epsilon"]))
        xo.append(xn), vo.append(v), ho.append(h)
    return xo + vo + ho


# ---- FlexAttention inside If, Loop and Scan bodies ----
PV = "ai.onnx.preview"
FB, FH, FL, FD, FS = 1, 2, 3, 4, 5


def flex(q, out, bias=None):
    kw = {}
    if bias is not None:
        kw["score_mod"] = helper.make_graph(
            [helper.make_node("Add", ["sc", "bias"], ["sc2"])], "mod", [vi("sc", F, [FB, FH, FL, FS])],
            [vi("sc2", F, [FB, FH, FL, FS])], [t("bias", np.float32(bias))])
    return helper.make_node("FlexAttention", [q, "k", "v"], [out], domain=PV, **kw)


def flex_bodies_model():
    qs = [FB, FH, FL, FD]
    then_g = helper.make_graph([flex("q", "ya", 0.5)], "then", [], [vi("ya", F, qs)])
    else_g = helper.make_graph([flex("q", "yb")], "else", [], [vi("yb", F, qs)])
    loop_g = helper.make_graph([flex("s", "s2"), helper.make_node("Identity", ["cin"], ["cout"])], "loop",
                               [vi("i", I64, []), vi("cin", TensorProto.BOOL, []), vi("s", F, qs)],
                               [vi("cout", TensorProto.BOOL, []), vi("s2", F, qs)])
    scan_g = helper.make_graph([flex("qt", "yt", -1.0)], "scan", [vi("qt", F, qs)], [vi("yt", F, qs)])
    nodes = [helper.make_node("If", ["c"], ["y_if"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Loop", ["m", "", "q"], ["y_loop"], body=loop_g),
             helper.make_node("Scan", ["qs"], ["y_scan"], body=scan_g, num_scan_inputs=1)]
    ins = [vi("c", TensorProto.BOOL, []), vi("m", I64, []), vi("q", F, qs), vi("k", F, [FB, FH, FS, FD]),
           vi("v", F, [FB, FH, FS, FD]), vi("qs", F, [3] + qs)]
    outs = [vi("y_if", F, qs), vi("y_loop", F, qs), vi("y_scan", F, [3] + qs)]
    return model(nodes, ins, outs, [("", 21), (PV, 1)])


def flex_oracle(q, k, v, bias=0.0):
    # the spec: softmax over the keys of scale * Q K^T (+ the score_mod's bias), times V
    s = np.einsum("bhld,bhsd->bhls", q.astype(np.float64), k) / math.sqrt(FD) + bias
    p = np.exp(s - s.max(-1, keepdims=True))
    return (np.einsum("bhls,bhsd->bhld", p / p.sum(-1, keepdims=True), v)).astype(np.float32)


def close(got, want, rtol, atol):
    g, w = got.astype(np.float64), want.astype(np.float64)
    return got.shape == want.shape and got.dtype == want.dtype and np.allclose(g, w, rtol=rtol, atol=atol,
                                                                              equal_nan=True)


def check(onnxc, cc, work, name, m, inputs, expected, rtol, atol):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    mp = os.path.join(d, "model.onnx")
    onnx.save(m, mp)
    src = os.path.join(d, name + ".c")
    r = run([onnxc, "compile", mp, "-o", src, "--main"])
    if r.returncode:
        return "compile failed: " + r.stderr.strip()
    prog = os.path.join(d, "prog")
    r = run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", src, src[:-2] + "_main.c", "-lm",
             "-o", prog])
    if r.returncode:
        return "build failed: " + r.stderr[-1500:]
    args, named = [], []
    for (nm, a) in inputs:
        p = os.path.join(d, nm + ".npy")
        np.save(p, a)
        args.append(p)
        named += ["-i", "%s=%s" % (nm, p)]
    out, ref = os.path.join(d, "out"), os.path.join(d, "ref")
    r = run([prog, "-o", out] + args)
    if r.returncode:
        return "run failed: " + r.stderr
    r = run([onnxc, "run", mp] + named + ["-o", ref])
    if r.returncode:
        return "onnxc run failed: " + r.stderr
    for k, want in enumerate(expected):
        got = load_pb(os.path.join(out, "output_%d.pb" % k))
        rt = load_pb(os.path.join(ref, "output_%d.pb" % k))
        if not close(got, want, rtol, atol):
            return "output %d: expected %s %s, got %s %s" % (k, want.dtype, want.tolist(), got.dtype,
                                                             got.tolist())
        if not close(got, rt, rtol, atol):
            return "output %d differs from onnxc run: %s against %s" % (k, got.tolist(), rt.tolist())
    return None


def main():
    args = sys.argv[1:]
    cc = os.environ.get("CC", "cc")
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    onnxc, work = args
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    cases = []
    x = np.array([5, 1, 2, 7, -3, 5], np.int64)
    f = np.array([[0.5, np.nan, 3.0], [2.0, -0.0, 0.25]], np.float32)
    cases.append(("label_encoder", label_encoder_model(), [("x", x), ("f", f)], label_encoder_oracle(x, f),
                  0, 0))
    i = np.array([-5, 0, 1, 2, 3, 2147483647, -2147483648], np.int32)
    d = np.array([[-1.0, -0.25, -0.2, np.nan], [0.0, 3.5, -np.inf, np.inf]], np.float64)
    cases.append(("binarizer", binarizer_model(), [("i", i), ("d", d)], binarizer_oracle(i, d), 0, 0))
    xa = rng.standard_normal((2, 3, 5)).astype(np.float32)
    ix = np.array([[4, 0], [2, 4]], np.int64)
    cases.append(("afe", afe_model(), [("x", xa), ("ix", ix)], [xa[..., ix.ravel()]], 0, 0))
    xt = np.array([[0.5, 1.0, 2.0], [0.75, 3.0, -1.0], [2.0, np.nan, 0.0], [-4.0, -1.0, 1.0],
                   [2.0, -2.0, np.nan]], np.float16)
    # float16 outputs: the double scores rounded through float (one ulp of float16 allowed)
    cases.append(("trees", trees_model(), [("x", xt)], trees_oracle(xt), 1e-3, 1e-3))
    r, tt = np.array(0.1), np.array(3, np.int64)
    xs = [rng.standard_normal(4), rng.standard_normal((2, 3))]
    gs = [rng.standard_normal(4), rng.standard_normal((2, 3))]
    vs = [rng.standard_normal(4), rng.standard_normal((2, 3))]
    hs = [rng.random(4), rng.random((2, 3))]
    ins = [("r", r), ("t", tt), ("x1", xs[0]), ("x2", xs[1]), ("g1", gs[0]), ("g2", gs[1]), ("v1", vs[0]),
           ("v2", vs[1]), ("h1", hs[0]), ("h2", hs[1])]
    cases.append(("adam", adam_model(), ins, adam_oracle(float(r), int(tt), xs, gs, vs, hs), 1e-12, 1e-14))
    fq, fk, fv = (rng.standard_normal(sh).astype(np.float32)
                  for sh in ([FB, FH, FL, FD], [FB, FH, FS, FD], [FB, FH, FS, FD]))
    fqs = rng.standard_normal((3, FB, FH, FL, FD)).astype(np.float32)
    want = [flex_oracle(fq, fk, fv, 0.5), flex_oracle(flex_oracle(fq, fk, fv), fk, fv),
            np.stack([flex_oracle(a, fk, fv, -1.0) for a in fqs])]
    cases.append(("flex_bodies", flex_bodies_model(), [("c", np.array(True)), ("m", np.array(2, np.int64)),
                  ("q", fq), ("k", fk), ("v", fv), ("qs", fqs)], want, 1e-5, 1e-6))
    fails = []
    for name, mdl, ins, exp, rtol, atol in cases:
        why = check(onnxc, cc, work, name, mdl, ins, exp, rtol, atol)
        print("%s %s%s" % ("FAIL" if why else "ok  ", name, ": " + why if why else ""))
        if why:
            fails.append(name)
    fails += ml_models.run_all(onnxc, cc, work)
    fails += random_draws.run_all(onnxc, cc, work)
    # refusals with their reason
    strings = model([helper.make_node("LabelEncoder", ["s"], ["y"], domain=ML, keys_strings=["a", "b"],
                                      values_int64s=[1, 2])],
                    [vi("s", TensorProto.STRING, [3])], [vi("y", I64, [3])], [("", 17), (ML, 2)])
    cyc = dict(TREE, nodes_truenodeids=[1, 0, 2, 4, 3], nodes_trueleafs=[0, 1, 1, 1, 0])
    cycle = model([tree_node(1, 0, "y", cyc)], [vi("x", F, [2, 3])], [vi("y", F, [2, 3])],
                  [("", 17), (ML, 5)])
    relu = model([helper.make_node("Relu", ["x"], ["y"], domain=ML, name="ml_relu")],
                 [vi("x", F, [2])], [vi("y", F, [2])], [("", 17), (ML, 1)])
    for name, mdl, words in [("strings", strings, ["strings are not compiled"]),
                             ("cycle", cycle, ["TreeEnsemble", "cycle"]),
                             ("ml_relu", relu, ["ml_relu", "ai.onnx.ml"])] + ml_models.refusals():
        why, err = refused(onnxc, work, name, mdl, words)
        print("%s %s%s" % ("FAIL" if why else "ok  ", name, ": " + (why or "refused: " + err)))
        if why:
            fails.append(name)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
