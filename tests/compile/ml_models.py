#!/usr/bin/env python3
"""ml_models.py - the ai.onnx.ml model operators through `onnxc compile`
(imported by domains.py, the ctest compile_domains), against onnxruntime.

usage: ml_models.py --regen ORT_NODE_MODULES   rewrites ml_models_ort.json
       ml_models.py ONNXC WORKDIR [--cc CC] [--asan]

Three small models built with python3-onnx, shapes static, hold the
operators scikit-learn models converted by skl2onnx have, several attribute
variants each:
  - trees_v1: TreeEnsembleRegressor (SUM/AVERAGE/MIN/MAX; every post
    transform, PROBIT included; two targets; base_values;
    nodes_values_as_tensor) and TreeEnsembleClassifier (int64 labels, three
    classes with base values, the binary case with its votes on one class,
    two classes with votes on both as a random forest's);
  - tree5: TreeEnsemble-5 with PROBIT;
  - classic, three parts in one model (one C build):
    linear: LinearClassifier (multi-class SOFTMAX, binary LOGISTIC, NONE),
    LinearRegressor (two targets, one target);
    svm: SVMRegressor with each kernel (LINEAR, POLY, RBF, SIGMOID) and
    one_class, SVMClassifier (RBF with prob_a/prob_b over three classes,
    POLY one-vs-one votes, SIGMOID binary, the liblinear form without
    support vectors);
    prep: Normalizer (MAX, L1, L2), Scaler, Imputer (NaN floats, int64),
    OneHotEncoder (int64 and float input), FeatureVectorizer.
The expected outputs are onnxruntime's (npm onnxruntime-node), stored with
the inputs in ml_models_ort.json by --regen so that the test needs neither
node nor onnxruntime; each compiled model (cc -std=c99 -Wall -Wextra
-Werror -O2, or with -fsanitize=address,undefined under --asan) must match
them and `onnxc run`. Where onnxruntime departs from the specification
(QUIRKS below) the expected value is derived from its outputs as the
specification says.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "ml_models_ort.json")
ML = "ai.onnx.ml"
F, I64 = TensorProto.FLOAT, TensorProto.INT64
POSTS = ["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"]


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, ins, outs, ml_opset):
    g = helper.make_graph(nodes, "g", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid(ML, ml_opset)])
    m.ir_version = 8
    return m


# ---- classic trees: full binary trees of a given depth over F features ----
def forest(rng, n_trees, depth, nf, votes):
    """v1 attributes; votes(rng) gives a leaf's [(target, weight)]"""
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
                         "nodes_values", "nodes_truenodeids", "nodes_falsenodeids",
                         "nodes_missing_value_tracks_true")}
    v = {"treeids": [], "nodeids": [], "ids": [], "weights": []}
    modes = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT"]
    for t in range(n_trees):
        n_nodes = 2 ** (depth + 1) - 1
        for i in range(n_nodes):
            leaf = i >= 2 ** depth - 1
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(i)
            a["nodes_featureids"].append(0 if leaf else int(rng.integers(nf)))
            a["nodes_modes"].append("LEAF" if leaf else modes[int(rng.integers(4))])
            a["nodes_values"].append(0.0 if leaf else round(float(rng.standard_normal()), 3))
            a["nodes_truenodeids"].append(0 if leaf else 2 * i + 1)
            a["nodes_falsenodeids"].append(0 if leaf else 2 * i + 2)
            a["nodes_missing_value_tracks_true"].append(int(not leaf and rng.random() < 0.3))
            if leaf:
                for tgt, w in votes(rng):
                    v["treeids"].append(t)
                    v["nodeids"].append(i)
                    v["ids"].append(tgt)
                    v["weights"].append(w)
    return a, v


def regressor(name, rng, agg, post, T, base=None, as_tensor=False, small=False):
    def votes(r):
        return [(k, round(float(r.random() * 0.4 if small else r.standard_normal()), 3))
                for k in range(T)]
    a, v = forest(rng, 3, 2, 4, votes)
    kw = dict(a, n_targets=T, aggregate_function=agg, post_transform=post,
              target_treeids=v["treeids"], target_nodeids=v["nodeids"], target_ids=v["ids"],
              target_weights=v["weights"])
    if base is not None:
        kw["base_values"] = base
    if as_tensor:
        kw["nodes_values_as_tensor"] = numpy_helper.from_array(
            np.array(kw.pop("nodes_values"), np.float32), "nodes_values_as_tensor")
    return helper.make_node("TreeEnsembleRegressor", ["x"], [name], domain=ML, name=name, **kw)


def classifier(name, rng, labels, post, binary_id=None, base=None):
    L = len(labels)

    def votes(r):
        if binary_id is not None:
            return [(binary_id, round(float(r.random()), 3))]
        if L == 2:  # a random forest's: the two probabilities of the leaf over 3 trees
            p = round(float(r.random()), 3)
            return [(0, round((1 - p) / 3, 4)), (1, round(p / 3, 4))]
        return [(k, round(float(r.random()), 3)) for k in range(L)]
    a, v = forest(rng, 3, 2, 4, votes)
    kw = dict(a, classlabels_int64s=labels, post_transform=post, class_treeids=v["treeids"],
              class_nodeids=v["nodeids"], class_ids=v["ids"], class_weights=v["weights"])
    if base is not None:
        kw["base_values"] = base
    return helper.make_node("TreeEnsembleClassifier", ["x"], [name + "_label", name + "_scores"],
                            domain=ML, name=name, **kw)


def trees_v1_model(rng, N):
    nodes = [
        regressor("r_sum_none", rng, "SUM", "NONE", 2, base=[0.5, -1.0]),
        regressor("r_avg_logistic", rng, "AVERAGE", "LOGISTIC", 1),
        regressor("r_min_softmax", rng, "MIN", "SOFTMAX", 2, as_tensor=True),
        regressor("r_max_softmax_zero", rng, "MAX", "SOFTMAX_ZERO", 3),
        regressor("r_avg_probit", rng, "AVERAGE", "PROBIT", 2, small=True, base=[0.3, 0.25]),
        classifier("c3_none", rng, [10, 20, 30], "NONE"),
        classifier("c3_softmax", rng, [7, 8, 9], "SOFTMAX", base=[0.1, -0.2, 0.3]),
        classifier("c2_logistic", rng, [0, 1], "LOGISTIC", binary_id=1),
        classifier("c2_none", rng, [4, 5], "NONE", binary_id=1),
        classifier("c2_both", rng, [3, 9], "NONE"),
    ]
    T = {"r_sum_none": 2, "r_avg_logistic": 1, "r_min_softmax": 2, "r_max_softmax_zero": 3,
         "r_avg_probit": 2}
    outs = []
    for n in nodes:
        if n.op_type == "TreeEnsembleRegressor":
            outs.append(vi(n.output[0], F, [N, T[n.output[0]]]))
        else:
            L = len(helper.get_attribute_value([a for a in n.attribute if a.name == "classlabels_int64s"][0]))
            outs += [vi(n.output[0], I64, [N]), vi(n.output[1], F, [N, L])]
    x = rng.standard_normal((N, 4)).astype(np.float32)
    x[1, 2] = np.nan
    x[4, 0] = np.nan
    return model(nodes, [vi("x", F, [N, 4])], outs, 3), {"x": x}


def tree5_model(rng, N):
    # two trees over 3 features, two targets, weights in (0, 1) for PROBIT
    kw = dict(tree_roots=[0, 3], nodes_featureids=[0, 1, 2, 1, 0],
              nodes_truenodeids=[1, 0, 2, 4, 5], nodes_trueleafs=[0, 1, 1, 1, 1],
              nodes_falsenodeids=[2, 1, 3, 4, 6], nodes_falseleafs=[0, 1, 1, 0, 1],
              leaf_targetids=[0, 0, 0, 0, 1, 1, 1])  # a vote for each target in every row
    kw["nodes_modes"] = numpy_helper.from_array(np.array([0, 1, 3, 2, 0], np.uint8), "nodes_modes")
    kw["nodes_splits"] = numpy_helper.from_array(np.array([0.1, -0.5, 0.2, 0.3, 0.7], np.float32),
                                                 "nodes_splits")
    kw["leaf_weights"] = numpy_helper.from_array(
        np.array([0.2, 0.45, 0.8, 0.05, 0.6, 0.3, 0.9], np.float32), "leaf_weights")
    n = helper.make_node("TreeEnsemble", ["x"], ["probit"], domain=ML, name="te5_probit",
                         n_targets=2, aggregate_function=0, post_transform=4, **kw)
    x = rng.standard_normal((N, 3)).astype(np.float32)
    return model([n], [vi("x", F, [N, 3])], [vi("probit", F, [N, 2])], 5), {"x": x}


def linear_model(rng, N):
    C = 5
    def w(*s):
        return [round(float(v), 3) for v in rng.standard_normal(s).ravel()]
    nodes = [
        helper.make_node("LinearClassifier", ["x"], ["lc3_label", "lc3_scores"], domain=ML,
                         name="lc3_softmax", coefficients=w(3, C), intercepts=w(3),
                         classlabels_ints=[3, 1, 2], post_transform="SOFTMAX"),
        helper.make_node("LinearClassifier", ["x"], ["lc2_label", "lc2_scores"], domain=ML,
                         name="lc2_logistic", coefficients=w(1, C), intercepts=w(1),
                         classlabels_ints=[0, 1], post_transform="LOGISTIC"),
        helper.make_node("LinearClassifier", ["x"], ["lc4_label", "lc4_scores"], domain=ML,
                         name="lc4_none", coefficients=w(4, C), intercepts=[0.0] * 4,
                         classlabels_ints=[5, 6, 7, 8]),
        helper.make_node("LinearRegressor", ["x"], ["lr2"], domain=ML, name="lr2",
                         coefficients=w(2, C), intercepts=w(2), targets=2),
        helper.make_node("LinearRegressor", ["x"], ["lr1"], domain=ML, name="lr1",
                         coefficients=w(1, C), intercepts=[0.5]),
    ]
    outs = [vi("lc3_label", I64, [N]), vi("lc3_scores", F, [N, 3]), vi("lc2_label", I64, [N]),
            vi("lc2_scores", F, [N, 2]), vi("lc4_label", I64, [N]), vi("lc4_scores", F, [N, 4]),
            vi("lr2", F, [N, 2]), vi("lr1", F, [N, 1])]
    return model(nodes, [vi("x", F, [N, C])], outs, 1), {"x": rng.standard_normal((N, C)).astype(np.float32)}


def svm_model(rng, N):
    C = 3
    def w(*s, scale=1.0):
        return [round(float(v) * scale, 3) for v in rng.standard_normal(s).ravel()]
    kp = {"LINEAR": [0.0, 0.0, 0.0], "POLY": [0.5, 0.25, 3.0], "RBF": [0.7, 0.0, 0.0],
          "SIGMOID": [0.3, -0.1, 0.0]}
    nodes, outs = [], []
    for k in ("LINEAR", "POLY", "RBF", "SIGMOID"):
        nm = "svr_" + k.lower()
        nodes.append(helper.make_node("SVMRegressor", ["x"], [nm], domain=ML, name=nm, kernel_type=k,
                                      kernel_params=kp[k], n_supports=4, support_vectors=w(4, C),
                                      coefficients=w(4), rho=w(1)))
        outs.append(vi(nm, F, [N, 1]))
    nodes.append(helper.make_node("SVMRegressor", ["x"], ["svr_one_class"], domain=ML, name="svr_one_class",
                                  kernel_type="RBF", kernel_params=[0.5, 0.0, 0.0], n_supports=3,
                                  support_vectors=w(3, C), coefficients=w(3), rho=w(1), one_class=1))
    outs.append(vi("svr_one_class", F, [N, 1]))
    # libsvm one-vs-one: 3 classes with 2, 3, 2 vectors
    vpc = [2, 3, 2]
    nodes.append(helper.make_node("SVMClassifier", ["x"], ["svc_rbf_label", "svc_rbf_prob"], domain=ML,
                                  name="svc_rbf_proba", kernel_type="RBF", kernel_params=[0.4, 0.0, 0.0],
                                  vectors_per_class=vpc, support_vectors=w(7, C), coefficients=w(2, 7),
                                  rho=w(3), prob_a=[-1.5, -2.0, -1.2], prob_b=[0.1, -0.2, 0.05],
                                  classlabels_ints=[1, 2, 3]))
    outs += [vi("svc_rbf_label", I64, [N]), vi("svc_rbf_prob", F, [N, 3])]
    nodes.append(helper.make_node("SVMClassifier", ["x"], ["svc_poly_label", "svc_poly_dec"], domain=ML,
                                  name="svc_poly_votes", kernel_type="POLY", kernel_params=[0.3, 1.0, 2.0],
                                  vectors_per_class=vpc, support_vectors=w(7, C), coefficients=w(2, 7),
                                  rho=w(3), classlabels_ints=[4, 5, 6]))
    outs += [vi("svc_poly_label", I64, [N]), vi("svc_poly_dec", F, [N, 3])]
    nodes.append(helper.make_node("SVMClassifier", ["x"], ["svc_sig_label", "svc_sig_dec"], domain=ML,
                                  name="svc_sigmoid_binary", kernel_type="SIGMOID",
                                  kernel_params=[0.2, 0.1, 0.0], vectors_per_class=[2, 2],
                                  support_vectors=w(4, C), coefficients=w(1, 4), rho=w(1),
                                  classlabels_ints=[0, 1]))
    outs += [vi("svc_sig_label", I64, [N]), vi("svc_sig_dec", F, [N, 2])]
    nodes.append(helper.make_node("SVMClassifier", ["x"], ["svc_lin_label", "svc_lin_scores"], domain=ML,
                                  name="svc_liblinear", kernel_type="LINEAR", kernel_params=[0.0, 0.0, 0.0],
                                  coefficients=w(3, C),
                                  rho=w(1), classlabels_ints=[7, 8, 9]))
    outs += [vi("svc_lin_label", I64, [N]), vi("svc_lin_scores", F, [N, 3])]
    return model(nodes, [vi("x", F, [N, C])], outs, 1), {"x": rng.standard_normal((N, C)).astype(np.float32)}


def prep_model(rng, N):
    C = 4
    nodes = [helper.make_node("Normalizer", ["x"], ["norm_" + k.lower()], domain=ML, name="norm_" + k.lower(),
                              norm=k) for k in ("MAX", "L1", "L2")]
    nodes += [
        helper.make_node("Scaler", ["x"], ["scaled"], domain=ML, name="scaler",
                         offset=[0.5, -1.0, 0.0, 2.0], scale=[2.0, 0.5, -1.5, 1.0]),
        helper.make_node("Scaler", ["k"], ["scaled1"], domain=ML, name="scaler_one", offset=[1.0], scale=[0.25]),
        helper.make_node("Imputer", ["x"], ["imputed"], domain=ML, name="imputer_nan",
                         imputed_value_floats=[9.0, 8.0, 7.0, 6.0], replaced_value_float=float("nan")),
        helper.make_node("Imputer", ["k"], ["imputed_i"], domain=ML, name="imputer_int",
                         imputed_value_int64s=[-1], replaced_value_int64=2),
        helper.make_node("OneHotEncoder", ["k"], ["ohe_i"], domain=ML, name="ohe_int",
                         cats_int64s=[1, 2, 4, 7], zeros=1),
        helper.make_node("OneHotEncoder", ["x"], ["ohe_f"], domain=ML, name="ohe_float",
                         cats_int64s=[0, -1, 1], zeros=1),
        helper.make_node("FeatureVectorizer", ["x", "scaled1"], ["fv"], domain=ML, name="fv",
                         inputdimensions=[2, 5]),
    ]
    outs = [vi("norm_max", F, [N, C]), vi("norm_l1", F, [N, C]), vi("norm_l2", F, [N, C]),
            vi("scaled", F, [N, C]), vi("scaled1", F, [N, 3]), vi("imputed", F, [N, C]),
            vi("imputed_i", I64, [N, 3]), vi("ohe_i", F, [N, 3, 4]), vi("ohe_f", F, [N, C, 3]),
            vi("fv", F, [N, 7])]
    x = (rng.standard_normal((N, C)) * 1.5).astype(np.float32)
    x[0, 1] = np.nan
    x[2] = 0.0  # a zero row: the divisor 0 leaves it as it is
    x[3, 3] = np.nan
    k = rng.integers(0, 8, (N, 3)).astype(np.int64)
    return model(nodes, [vi("x", F, [N, C]), vi("k", I64, [N, 3])], outs, 1), {"x": x, "k": k}


def merged(parts):
    """one model of several ml-opset-1 models (fewer C builds: the test's
    time is mostly cc's); each part's input x renamed PART_x"""
    nodes, ins, outs, feeds = [], [], [], {}
    for name, (m, fd) in parts:
        ren = {"x": name + "_x"} if name != "prep" else {}
        for n in m.graph.node:
            n.input[:] = [ren.get(i, i) for i in n.input]
            nodes.append(n)
        for i in m.graph.input:
            i.name = ren.get(i.name, i.name)
            ins.append(i)
        outs += list(m.graph.output)
        feeds.update({ren.get(k, k): v for k, v in fd.items()})
    return model(nodes, ins, outs, 1), feeds


def cases():
    rng = np.random.default_rng(2024)
    trees, tree5 = trees_v1_model(rng, 8), tree5_model(rng, 6)
    parts = [("linear", linear_model(rng, 6)), ("svm", svm_model(rng, 6)), ("prep", prep_model(rng, 5))]
    return [("trees_v1",) + trees, ("tree5",) + tree5, ("classic",) + merged(parts)]


# ---- onnxruntime (only with --regen) ----
ORT_RUN = r"""
const ort = require('onnxruntime-node');
const fs = require('fs');
const jobs = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
const ARR = {float32: Float32Array, int64: BigInt64Array};
(async () => {
  const res = {};
  for (const j of jobs) {
    const s = await ort.InferenceSession.create(j.model, {intraOpNumThreads: 1, logSeverityLevel: 3});
    const feeds = {};
    for (const [k, v] of Object.entries(j.feeds)) {
      const data = v.type === 'int64' ? BigInt64Array.from(v.data.map(BigInt)) : Float32Array.from(v.data.map((d) => d === null ? NaN : d));
      feeds[k] = new ort.Tensor(v.type, data, v.dims);
    }
    const r = await s.run(feeds);
    const o = {};
    for (const k of s.outputNames)
      o[k] = {type: r[k].type, dims: r[k].dims, data: Array.from(r[k].data, (d) => typeof d === 'bigint' ? Number(d) : (Number.isNaN(d) ? null : d))};
    res[j.name] = o;
  }
  fs.writeFileSync(process.argv[2], JSON.stringify(res));
})().catch((e) => { console.error(String(e.message || e)); process.exit(1); });
"""


def to_json(a):
    return {"type": "int64" if a.dtype == np.int64 else "float32", "dims": list(a.shape),
            "data": [None if (isinstance(v, float) and v != v) else v for v in a.ravel().tolist()]}


def from_json(d):
    dt = np.int64 if d["type"] == "int64" else np.float32
    return np.array([np.nan if v is None else v for v in d["data"]], dt).reshape(d["dims"])


def regen(node_modules):
    work = tempfile.mkdtemp(prefix="ml_models_")
    jobs, store = [], {}
    for name, m, feeds in cases():
        mp = os.path.join(work, name + ".onnx")
        onnx.save(m, mp)
        jf = {k: to_json(v) for k, v in feeds.items()}
        jobs.append({"name": name, "model": mp, "feeds": jf})
        store[name] = {"inputs": jf}
    jp, op = os.path.join(work, "jobs.json"), os.path.join(work, "out.json")
    with open(jp, "w") as f:
        json.dump(jobs, f)
    env = dict(os.environ, NODE_PATH=node_modules)
    r = subprocess.run(["node", "-e", ORT_RUN, jp, op], capture_output=True, text=True, env=env)
    if r.returncode:
        sys.exit("onnxruntime failed: " + r.stderr)
    with open(op) as f:
        outs = json.load(f)
    for name in store:
        store[name]["outputs"] = outs[name]
    with open(EXPECTED, "w") as f:
        json.dump(store, f, indent=0, sort_keys=True)
        f.write("\n")
    print("wrote", EXPECTED)


# ---- the check ----
def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def differs(got, want, rtol, atol):
    if got.shape != want.shape or got.dtype != want.dtype:
        return "%s %s against %s %s" % (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype == np.int64:
        bad = np.nonzero(got != want)[0]
    else:
        ok = np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                        equal_nan=True)
        bad = np.nonzero(~ok.ravel())[0]
    if not len(bad):
        return None
    i = bad[0]
    return "%d of %d elements differ, first [%d]: %r against %r" % (
        len(bad), got.size, i, got.ravel()[i].item(), want.ravel()[i].item())


def _binary_complement(z, _):
    # onnxruntime leaves class 0's score at 0 (it had no votes) before the
    # transform; the runtime, as ONNX's reference evaluator, makes it the
    # complement: 1 - s for NONE, -s for LOGISTIC (sigmoid(-s) = 1 - p)
    z = z.copy()
    z[:, 0] = 1 - z[:, 1]
    return z


def _best_label(labels):
    # onnxruntime's label of a binary classifier with votes on both classes
    # is 1 when class 1's score is > 0, else 0 (not even a class label); the
    # specification's is the label of the best score (its scores agree)
    return lambda z, outs: np.array(labels, np.int64)[outs["c2_both_scores"].argmax(1)]


# Where onnxruntime departs from the ONNX specification (or approximates),
# the expected values are its outputs put right as the specification says
# (from its own outputs), with the tolerance of the comparison.
QUIRKS = {
    "c2_both_label": (_best_label([3, 9]), 0, 0),
    # a single-target regressor: onnxruntime applies PROBIT only (its
    # FinalizeScores1), the specification every post transform
    "r_avg_logistic": (lambda z, _: (1 / (1 + np.exp(-z.astype(np.float64)))).astype(np.float32), 1e-5, 1e-5),
    "c2_logistic_scores": (_binary_complement, 1e-5, 1e-5),
    "c2_none_scores": (_binary_complement, 1e-5, 1e-5),
    # onnxruntime's PROBIT is a float approximation of erfinv (about 1e-3
    # relative, 1e-4 absolute near 0); onnxc's is exact to double precision
    "r_avg_probit": (lambda z, _: z, 2e-3, 2e-4),
    "probit": (lambda z, _: z, 2e-3, 2e-4),
}


def check_case(onnxc, cc, work, name, m, expected, asan):
    """(errors, notes): errors fail the test; notes say where onnxc run and
    onnxruntime disagree (also errors: the compiled code must match both)"""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    mp = os.path.join(d, "model.onnx")
    onnx.save(m, mp)
    src = os.path.join(d, name + ".c")
    r = subprocess.run([onnxc, "compile", mp, "-o", src, "--main"], capture_output=True, text=True)
    if r.returncode:
        return ["compile failed: " + r.stderr.strip()]
    prog = os.path.join(d, "prog")
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
    if asan:
        flags += ["-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    r = subprocess.run([cc] + flags + [src, src[:-2] + "_main.c", "-lm", "-o", prog],
                       capture_output=True, text=True)
    if r.returncode:
        return ["build failed: " + r.stderr[-1500:]]
    args, named = [], []
    inputs = {k: from_json(v) for k, v in expected["inputs"].items()}
    for inp in m.graph.input:
        p = os.path.join(d, inp.name + ".npy")
        np.save(p, inputs[inp.name])
        args.append(p)
        named += ["-i", "%s=%s" % (inp.name, p)]
    out, ref = os.path.join(d, "out"), os.path.join(d, "ref")
    r = subprocess.run([prog, "-o", out] + args, capture_output=True, text=True)
    if r.returncode:
        return ["run failed: " + r.stderr[-1500:]]
    r = subprocess.run([onnxc, "run", mp] + named + ["-o", ref], capture_output=True, text=True)
    if r.returncode:
        return ["onnxc run failed: " + r.stderr]
    errs = []
    ort = {k: from_json(v) for k, v in expected["outputs"].items()}
    for k, o in enumerate(m.graph.output):
        got = load_pb(os.path.join(out, "output_%d.pb" % k))
        rt = load_pb(os.path.join(ref, "output_%d.pb" % k))
        want = from_json(expected["outputs"][o.name])
        fix, rtol, atol = QUIRKS.get(o.name, (lambda z, _: z, 1e-4, 1e-5))
        want = fix(want, ort)
        # onnxruntime sums the float trees and linear models in float, onnxc in double
        why = differs(got, want, rtol, atol)
        if why:
            errs.append("%s: against onnxruntime: %s" % (o.name, why))
        why = differs(got, rt, 1e-6, 1e-7)
        if why:
            errs.append("%s: against onnxc run: %s" % (o.name, why))
        why = differs(rt, want, rtol, atol)
        if why:
            errs.append("%s: onnxc run against onnxruntime: %s" % (o.name, why))
    return errs


def run_all(onnxc, cc, work, asan=False):
    """the failures, as 'case: reason' lines; prints one line per case"""
    with open(EXPECTED) as f:
        expected = json.load(f)
    fails = []
    for name, m, _ in cases():
        errs = check_case(onnxc, cc, work, "ml_" + name, m, expected[name], asan)
        print("%s ml_%s%s" % ("FAIL" if errs else "ok  ", name, "".join("\n    " + e for e in errs)))
        fails += ["ml_%s: %s" % (name, e) for e in errs]
    return fails


def refusals():
    """(name, model, words of the error) for what stays declined"""
    rng = np.random.default_rng(3)
    c = classifier("c_str", rng, [0, 1], "NONE")
    del c.attribute[[a.name for a in c.attribute].index("classlabels_int64s")]
    c.attribute.append(helper.make_attribute("classlabels_strings", ["a", "b"]))
    c.output[:] = ["lab", "sc"]
    strlab = model([c], [vi("x", F, [2, 4])], [vi("lab", TensorProto.STRING, [2]), vi("sc", F, [2, 2])], 3)
    zm = model([helper.make_node("ZipMap", ["x"], ["z"], domain=ML, name="zm", classlabels_int64s=[1, 2])],
               [vi("x", F, [2, 2])],
               [helper.make_value_info("z", helper.make_sequence_type_proto(onnx.TypeProto()))], 1)
    mt = zm.graph.output[0].type.sequence_type.elem_type.map_type
    mt.key_type = I64
    mt.value_type.tensor_type.elem_type = F
    ohe = model([helper.make_node("OneHotEncoder", ["s"], ["y"], domain=ML, name="ohe_s", cats_strings=["a", "b"])],
                [vi("s", TensorProto.STRING, [3])], [vi("y", F, [3, 2])], 1)
    return [("ml_string_labels", strlab, ["TreeEnsembleClassifier", "strings are not compiled"]),
            ("ml_zipmap", zm, ["zm", "not compiled"]),
            ("ml_ohe_strings", ohe, ["strings are not compiled"])]


def main():
    args = sys.argv[1:]
    if args[:1] == ["--regen"]:
        regen(args[1])
        return 0
    cc = os.environ.get("CC", "cc")
    asan = "--asan" in args
    if asan:
        args.remove("--asan")
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    onnxc, work = args
    os.makedirs(work, exist_ok=True)
    return 1 if run_all(onnxc, cc, work, asan) else 0


if __name__ == "__main__":
    sys.exit(main())
