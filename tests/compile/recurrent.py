#!/usr/bin/env python3
"""recurrent.py - RNN, GRU and LSTM through `onnxc compile`.

usage: recurrent.py ONNXC WORKDIR [--cc CC]

The ONNX node tests cover only forward layers with default activations; this
test covers the rest of the operators' surface: forward, reverse and
bidirectional; layout 0 and 1; sequence_lens shorter than the sequence (the
padded steps give zero rows and keep the state); initial_h / initial_c;
LSTM peepholes and input_forget; GRU linear_before_reset 0 and 1; clip;
activations with alpha and beta (HardSigmoid, ScaledTanh, Affine, LeakyRelu,
Elu, ThresholdedRelu, Softsign, Softplus, Relu), one list for both
directions or one per direction; float64. Each model is compiled with
--main, built with `-std=c99 -Wall -Wextra -Werror -O2`, run, and its outputs
compared with a numpy implementation of the equations of the ONNX operator
specification written here (an oracle independent of onnxc). Exit status 77
(skipped) without onnx and numpy.
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("recurrent: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DEFAULT_ACTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}
USES = {"Affine": "ab", "LeakyRelu": "a", "ThresholdedRelu": "a", "ScaledTanh": "ab",
        "HardSigmoid": "ab", "Elu": "a"}
DEFAULT_AB = {"Affine": (1.0, 0.0), "LeakyRelu": (0.01, 0.0), "ThresholdedRelu": (1.0, 0.0),
              "ScaledTanh": (1.0, 1.0), "HardSigmoid": (0.2, 0.5), "Elu": (1.0, 0.0)}


def act_fn(name, a, b):
    f = {
        "Relu": lambda x: np.maximum(x, 0),
        "Tanh": np.tanh,
        "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "Affine": lambda x: a * x + b,
        "LeakyRelu": lambda x: np.where(x >= 0, x, a * x),
        "ThresholdedRelu": lambda x: np.where(x > a, x, 0),
        "ScaledTanh": lambda x: a * np.tanh(b * x),
        "HardSigmoid": lambda x: np.clip(a * x + b, 0, 1),
        "Elu": lambda x: np.where(x >= 0, x, a * (np.exp(x) - 1)),
        "Softsign": lambda x: x / (1 + np.abs(x)),
        "Softplus": lambda x: np.log1p(np.exp(x)),
    }
    return f[name]


def activations(op, dirs, acts, alphas, betas):
    """Per direction, the activation functions: alpha and beta are taken in
    order by the activations of the list that use them."""
    n = len(DEFAULT_ACTS[op])
    if not acts:
        acts = DEFAULT_ACTS[op]
    names = acts if len(acts) == n * dirs else acts * dirs
    ia = ib = 0
    fns = []
    for k, name in enumerate(names):
        a, b = DEFAULT_AB.get(name, (0.0, 0.0))
        if k < len(acts):
            if "a" in USES.get(name, "") and ia < len(alphas):
                a, ia = alphas[ia], ia + 1
            if "b" in USES.get(name, "") and ib < len(betas):
                b, ib = betas[ib], ib + 1
        fns.append(act_fn(name, a, b))
    return [fns[d * n:(d + 1) * n] for d in range(dirs)]


def reference(op, cfg, X, W, R, B, lens, h0, c0, P):
    """Y [S, D, Bn, H], Y_h (and Y_c) [D, Bn, H] in layout 0."""
    S, Bn, _ = X.shape
    D, _, H = R.shape
    dirs_back = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[cfg["direction"]]
    fns = activations(op, D, cfg.get("activations"), cfg.get("activation_alpha", []),
                      cfg.get("activation_beta", []))
    clip = cfg.get("clip")
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    Y = np.zeros((S, D, Bn, H), X.dtype)
    Yh = np.zeros((D, Bn, H), X.dtype)
    Yc = np.zeros((D, Bn, H), X.dtype)
    for d, back in enumerate(dirs_back):
        f = fns[d]
        wb = B[d][:GATES[op] * H] if B is not None else np.zeros(GATES[op] * H, X.dtype)
        rb = B[d][GATES[op] * H:] if B is not None else np.zeros(GATES[op] * H, X.dtype)
        for b in range(Bn):
            h = h0[d, b].copy() if h0 is not None else np.zeros(H, X.dtype)
            c = c0[d, b].copy() if c0 is not None else np.zeros(H, X.dtype)
            L = int(lens[b]) if lens is not None else S
            steps = range(L - 1, -1, -1) if back else range(L)
            for t in steps:
                x = X[t, b]
                if op == "RNN":
                    h = f[0](cl(W[d] @ x + R[d] @ h + wb + rb))
                elif op == "GRU":
                    Wz, Wr, Wh = np.split(W[d], 3)
                    Rz, Rr, Rh = np.split(R[d], 3)
                    wz, wr, wh = np.split(wb, 3)
                    rz, rr, rh = np.split(rb, 3)
                    z = f[0](cl(Wz @ x + Rz @ h + wz + rz))
                    r = f[0](cl(Wr @ x + Rr @ h + wr + rr))
                    if cfg.get("linear_before_reset"):
                        hh = f[1](cl(Wh @ x + r * (Rh @ h + rh) + wh))
                    else:
                        hh = f[1](cl(Wh @ x + Rh @ (r * h) + rh + wh))
                    h = (1 - z) * hh + z * h
                else:
                    Wi, Wo, Wf, Wc = np.split(W[d], 4)
                    Ri, Ro, Rf, Rc = np.split(R[d], 4)
                    wi, wo, wf, wc = np.split(wb, 4)
                    ri, ro, rf, rc = np.split(rb, 4)
                    pi, po, pf = np.split(P[d], 3) if P is not None else (0, 0, 0)
                    i = f[0](cl(Wi @ x + Ri @ h + pi * c + wi + ri))
                    if cfg.get("input_forget"):
                        fg = 1 - i
                    else:
                        fg = f[0](cl(Wf @ x + Rf @ h + pf * c + wf + rf))
                    ct = f[1](cl(Wc @ x + Rc @ h + wc + rc))
                    c = fg * c + i * ct
                    o = f[0](cl(Wo @ x + Ro @ h + po * c + wo + ro))
                    h = o * f[2](c)
                Y[t, d, b] = h
            Yh[d, b] = h
            Yc[d, b] = c
    return Y, Yh, Yc


def build_case(op, cfg, rng):
    dt = np.float64 if cfg.get("double") else np.float32
    elem = TensorProto.DOUBLE if cfg.get("double") else TensorProto.FLOAT
    S, Bn, I, H = cfg.get("S", 4), cfg.get("Bn", 3), cfg.get("I", 5), cfg.get("H", 4)
    D = 2 if cfg["direction"] == "bidirectional" else 1
    G = GATES[op]
    X = rng.uniform(-1, 1, (S, Bn, I)).astype(dt)
    W = rng.uniform(-0.6, 0.6, (D, G * H, I)).astype(dt)
    R = rng.uniform(-0.6, 0.6, (D, G * H, H)).astype(dt)
    B = rng.uniform(-0.3, 0.3, (D, 2 * G * H)).astype(dt) if cfg.get("bias") else None
    lens = np.array(cfg["lens"], np.int32) if cfg.get("lens") else None
    h0 = rng.uniform(-0.5, 0.5, (D, Bn, H)).astype(dt) if cfg.get("h0") else None
    c0 = rng.uniform(-0.5, 0.5, (D, Bn, H)).astype(dt) if cfg.get("c0") and op == "LSTM" else None
    P = rng.uniform(-0.4, 0.4, (D, 3 * H)).astype(dt) if cfg.get("peep") and op == "LSTM" else None
    Y, Yh, Yc = reference(op, cfg, X, W, R, B, lens, h0, c0, P)
    layout = cfg.get("layout", 0)
    if layout:  # [B, S, I]; Y [B, S, D, H]; states [B, D, H]
        X = X.transpose(1, 0, 2).copy()
        Y = Y.transpose(2, 0, 1, 3).copy()
        Yh, Yc = Yh.transpose(1, 0, 2).copy(), Yc.transpose(1, 0, 2).copy()
        h0 = h0.transpose(1, 0, 2).copy() if h0 is not None else None
        c0 = c0.transpose(1, 0, 2).copy() if c0 is not None else None
    # graph inputs: X, lens, h0, c0 (run-time data); W, R, B, P initializers
    names = ["X", "W", "R", "B", "lens", "h0", "c0", "P"]
    arrs = [X, W, R, B, lens, h0, c0, P]
    if op != "LSTM":
        names, arrs = names[:6], arrs[:6]
    while arrs[-1] is None:
        names.pop()
        arrs.pop()
    node_in = [n if a is not None else "" for n, a in zip(names, arrs)]
    graph_in, inits, feeds = [], [], []
    for n, a in zip(names, arrs):
        if a is None:
            continue
        if n in ("W", "R", "B", "P"):
            inits.append(numpy_helper.from_array(a, n))
        else:
            et = TensorProto.INT32 if n == "lens" else elem
            graph_in.append(helper.make_tensor_value_info(n, et, list(a.shape)))
            feeds.append(a)
    outs = [("Y", Y), ("Yh", Yh)] + ([("Yc", Yc)] if op == "LSTM" else [])
    attrs = {"hidden_size": H, "direction": cfg["direction"]}
    for k in ("activations", "activation_alpha", "activation_beta", "clip", "linear_before_reset",
              "input_forget", "layout"):
        if k in cfg:
            attrs[k] = cfg[k]
    node = helper.make_node(op, node_in, [o[0] for o in outs], name="rnn_node", **attrs)
    g = helper.make_graph([node], "rec", graph_in,
                          [helper.make_tensor_value_info(o[0], elem, list(o[1].shape)) for o in outs],
                          initializer=inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    return model, feeds, [o[1] for o in outs]


CASES = [
    ("RNN", dict(direction="forward", bias=True, h0=True)),
    ("RNN", dict(direction="reverse", lens=[4, 2, 0], activations=["LeakyRelu"],
                 activation_alpha=[0.3])),
    ("RNN", dict(direction="bidirectional", layout=1, lens=[3, 4, 1], clip=0.7,
                 activations=["Relu", "Softsign"])),
    ("GRU", dict(direction="forward", bias=True, lens=[2, 4, 3])),
    ("GRU", dict(direction="reverse", bias=True, h0=True, linear_before_reset=1)),
    ("GRU", dict(direction="bidirectional", bias=True, h0=True, lens=[1, 4, 2],
                 linear_before_reset=1, activations=["HardSigmoid", "Elu", "Sigmoid", "Softplus"],
                 activation_alpha=[0.25, 0.8], activation_beta=[0.45])),
    ("GRU", dict(direction="bidirectional", layout=1, clip=0.9, h0=True)),
    ("LSTM", dict(direction="forward", bias=True, h0=True, c0=True, peep=True)),
    ("LSTM", dict(direction="reverse", lens=[3, 1, 4], peep=True, input_forget=1, bias=True)),
    ("LSTM", dict(direction="bidirectional", bias=True, h0=True, c0=True, lens=[4, 2, 3],
                  activations=["HardSigmoid", "ScaledTanh", "Affine"],
                  activation_alpha=[0.3, 0.9, 0.7], activation_beta=[0.4, 1.1, 0.1])),
    ("LSTM", dict(direction="bidirectional", layout=1, clip=0.5, peep=True, h0=True, c0=True,
                  activations=["Sigmoid", "Tanh", "Tanh", "ThresholdedRelu", "Tanh", "Softsign"],
                  activation_alpha=[0.1])),
    ("LSTM", dict(direction="forward", double=True, bias=True, h0=True, c0=True, S=3, Bn=2)),
    ("GRU", dict(direction="reverse", double=True, bias=True, lens=[2, 3], S=3, Bn=2)),
]


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def run_case(onnxc, cc, work, name, model, feeds, want):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    mp = os.path.join(d, "model.onnx")
    onnx.save(model, mp)
    src = os.path.join(d, "m.c")
    r = subprocess.run([onnxc, "compile", mp, "-o", src, "--main"], capture_output=True, text=True)
    if r.returncode:
        return "compile failed: " + r.stderr.strip()
    prog = os.path.join(d, "prog")
    r = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", src, src[:-2] + "_main.c",
                        "-lm", "-o", prog], capture_output=True, text=True)
    if r.returncode:
        return "build failed: " + r.stderr[-1500:]
    args = []
    for k, a in enumerate(feeds):
        p = os.path.join(d, "in%d.npy" % k)
        np.save(p, a)
        args.append(p)
    out = os.path.join(d, "out")
    r = subprocess.run([prog, "-o", out] + args, capture_output=True, text=True)
    if r.returncode:
        return "run failed: " + r.stderr
    for k, w in enumerate(want):
        got = load_pb(os.path.join(out, "output_%d.pb" % k))
        tol = 1e-12 if w.dtype == np.float64 else 1e-5
        if got.shape != w.shape or got.dtype != w.dtype or not np.allclose(got, w, rtol=tol * 10, atol=tol):
            err = np.abs(got.astype(np.float64) - w).max() if got.shape == w.shape else None
            return "output %d: shape %s %s, expected %s %s; max error %s" % (
                k, got.dtype, got.shape, w.dtype, w.shape, err)
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
    rng = np.random.default_rng(11)
    fails = 0
    for k, (op, cfg) in enumerate(CASES):
        model, feeds, want = build_case(op, cfg, rng)
        name = "%s_%d" % (op.lower(), k)
        why = run_case(onnxc, cc, work, name, model, feeds, want)
        desc = ", ".join("%s=%s" % kv for kv in sorted(cfg.items()))
        print("%s %s (%s)%s" % ("FAIL" if why else "ok  ", name, desc, ": " + why if why else ""))
        fails += why is not None
    print("recurrent: %d of %d cases pass" % (len(CASES) - fails, len(CASES)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
