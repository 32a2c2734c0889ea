#!/usr/bin/python3
"""RNN/GRU/LSTM cases the ONNX node suite does not cover (reverse and
bidirectional directions, layout 1, sequence_lens, initial states, peepholes,
linear_before_reset), with expected outputs from an independent NumPy
implementation of the equations in Operators.md. Writes conformance-style
case folders into OUTDIR and runs `ONNXC test OUTDIR`.

usage: nnb_rnn_oracle.py ONNXC OUTDIR        (exit 77 = skipped: no numpy/onnx)
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
except ImportError:
    print("skipped: python3 numpy/onnx are not installed")
    sys.exit(77)


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def tensor_type(v):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype]


def save_case(root, name, node, inputs, outputs, opset=14):
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    gi = [helper.make_tensor_value_info(n, tensor_type(v), v.shape) for n, v in inputs]
    go = [helper.make_tensor_value_info(n, tensor_type(v), v.shape) for n, v in outputs]
    graph = helper.make_graph([node], name, gi, go)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, items in (("input", inputs), ("output", outputs)):
        for i, (_, v) in enumerate(items):
            path = os.path.join(d, "test_data_set_0", f"{kind}_{i}.pb")
            with open(path, "wb") as f:
                f.write(numpy_helper.from_array(v).SerializeToString())


def one_direction(kind, X, W, R, B, lens, h0, c0, P, H, reverse, lbr):
    S, nb, _ = X.shape
    Y = np.zeros((S, nb, H), np.float32)
    h, c = h0.copy(), (c0.copy() if c0 is not None else None)
    for b in range(nb):
        hb = h[b].copy()
        cb = c[b].copy() if c is not None else None
        steps = range(lens[b] - 1, -1, -1) if reverse else range(lens[b])
        for t in steps:
            x = X[t, b]
            if kind == "RNN":
                hb = np.tanh(W @ x + R @ hb + B[:H] + B[H:])
            elif kind == "GRU":
                Wz, Wr, Wh = np.split(W, 3)
                Rz, Rr, Rh = np.split(R, 3)
                wb, rb = np.split(B[: 3 * H], 3), np.split(B[3 * H :], 3)
                z = sig(Wz @ x + Rz @ hb + wb[0] + rb[0])
                r = sig(Wr @ x + Rr @ hb + wb[1] + rb[1])
                if lbr:
                    hh = np.tanh(Wh @ x + wb[2] + r * (Rh @ hb + rb[2]))
                else:
                    hh = np.tanh(Wh @ x + Rh @ (r * hb) + rb[2] + wb[2])
                hb = (1 - z) * hh + z * hb
            else:
                Wi, Wo, Wf, Wc = np.split(W, 4)
                Ri, Ro, Rf, Rc = np.split(R, 4)
                wb, rb = np.split(B[: 4 * H], 4), np.split(B[4 * H :], 4)
                Pi, Po, Pf = np.split(P, 3)
                i = sig(Wi @ x + Ri @ hb + Pi * cb + wb[0] + rb[0])
                f = sig(Wf @ x + Rf @ hb + Pf * cb + wb[2] + rb[2])
                cc = np.tanh(Wc @ x + Rc @ hb + wb[3] + rb[3])
                cb = f * cb + i * cc
                o = sig(Wo @ x + Ro @ hb + Po * cb + wb[1] + rb[1])
                hb = o * np.tanh(cb)
            Y[t, b] = hb
        h[b] = hb
        if c is not None:
            c[b] = cb
    return Y, h, c


def make_cases(root):
    rng = np.random.default_rng(7)
    n = 0
    for kind, G in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        for direction in ("forward", "reverse", "bidirectional"):
            for layout in (0, 1):
                for lbr in (0, 1) if kind == "GRU" else (0,):
                    S, nb, I, H = 5, 3, 4, 6
                    D = 2 if direction == "bidirectional" else 1
                    X = rng.standard_normal((S, nb, I)).astype(np.float32)
                    W = (rng.standard_normal((D, G * H, I)) * 0.5).astype(np.float32)
                    R = (rng.standard_normal((D, G * H, H)) * 0.5).astype(np.float32)
                    B = (rng.standard_normal((D, 2 * G * H)) * 0.5).astype(np.float32)
                    lens = np.array([5, 3, 1], np.int32)
                    h0 = rng.standard_normal((D, nb, H)).astype(np.float32)
                    c0 = rng.standard_normal((D, nb, H)).astype(np.float32)
                    P = rng.standard_normal((D, 3 * H)).astype(np.float32)
                    ys, hs, cs = [], [], []
                    for d in range(D):
                        y, h, c = one_direction(
                            kind, X, W[d], R[d], B[d], lens, h0[d],
                            c0[d] if kind == "LSTM" else None, P[d], H,
                            direction == "reverse" or d == 1, lbr)
                        ys.append(y)
                        hs.append(h)
                        cs.append(c)
                    Y, Yh = np.stack(ys, 1), np.stack(hs, 0)
                    ins = ["X", "W", "R", "B", "seq", "h0"] + (["c0", "P"] if kind == "LSTM" else [])
                    outs = ["Y", "Yh"] + (["Yc"] if kind == "LSTM" else [])
                    Yc = np.stack(cs, 0) if kind == "LSTM" else None
                    if layout:
                        X, h0, c0 = (a.transpose(1, 0, 2).copy() for a in (X, h0, c0))
                        Y = Y.transpose(2, 0, 1, 3).copy()
                        Yh = Yh.transpose(1, 0, 2).copy()
                        if Yc is not None:
                            Yc = Yc.transpose(1, 0, 2).copy()
                    vals = [X, W, R, B, lens, h0] + ([c0, P] if kind == "LSTM" else [])
                    ovals = [Y, Yh] + ([Yc] if kind == "LSTM" else [])
                    attrs = dict(hidden_size=H, direction=direction, layout=layout)
                    if kind == "GRU":
                        attrs["linear_before_reset"] = lbr
                    node = helper.make_node(kind, ins, outs, **attrs)
                    save_case(root, f"{kind}_{direction}_layout{layout}_lbr{lbr}", node,
                              list(zip(ins, vals)), list(zip(outs, ovals)))
                    n += 1
    return n


def main():
    onnxc, out = sys.argv[1], sys.argv[2]
    n = make_cases(out)
    print(f"{n} cases written to {out}")
    r = subprocess.run([onnxc, "test", out], capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
