#!/usr/bin/env python3
"""ctest: trains examples/linreg_train (Gradient + Adagrad) with `onnxc train`
for 100 steps on fixed data and checks, against an independent NumPy
computation of the same 100 Adagrad steps, (1) the loss printed at steps 1
and 100, (2) the saved W, B, H_W, H_B, T (read with python-onnx), and (3) the
loss `onnxc run` computes with the saved model (binary, and text), which must
have fallen below 1/100 of the initial loss. Exit 77 (skip) without python-onnx/NumPy.

usage: linreg_check.py ONNXC EXAMPLES_DIR WORK_DIR"""
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import onnx
    import onnx.numpy_helper
except ImportError:
    sys.exit(77)

STEPS, LR, EPS = 100, 0.3, 1e-7


def oracle(X, Y):
    """Adagrad on mean((X W + B - Y)^2) from W = 0, B = 0, H = 0, in float64."""
    X, Y = X.astype(np.float64), Y.astype(np.float64)
    n = X.shape[0]
    W, B = np.zeros((2, 1)), np.zeros(1)
    HW, HB = np.zeros((2, 1)), np.zeros(1)
    losses = []
    for _ in range(STEPS):
        diff = X @ W + B - Y
        losses.append(np.mean(diff * diff))
        gW = 2.0 / n * X.T @ diff  # d/dW of the mean squared error
        gB = 2.0 / n * np.sum(diff, axis=0)
        HW += gW * gW
        HB += gB * gB
        W = W - LR * gW / (np.sqrt(HW) + EPS)
        B = B - LR * gB / (np.sqrt(HB) + EPS)
    diff = X @ W + B - Y
    return losses, np.mean(diff * diff), W, B, HW, HB


def floats(line):
    return [float(v) for v in re.findall(r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?", line.split("=", 1)[1])]


def close(a, b, rtol=1e-4, atol=1e-6):
    return np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol)


def main():
    onnxc, examples, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    X = np.array([[i / 4.0, (i % 3) - 1.0] for i in range(8)], dtype=np.float32)
    Y = (2.0 * X[:, 0:1] - 3.0 * X[:, 1:2] + 0.5).astype(np.float32)
    xp, yp = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    np.save(xp, X)
    np.save(yp, Y)
    # the committed example is the text form (examples/linreg_train.onnxtxt,
    # printed by onnxc from what linreg_train.py builds); check it still is
    built = os.path.join(work, "linreg_train.onnx")
    subprocess.run([sys.executable, os.path.join(examples, "linreg_train.py"), built], check=True)
    model = os.path.join(examples, "linreg_train.onnxtxt")
    printed = subprocess.run([onnxc, "print", built], check=True, capture_output=True, text=True).stdout
    with open(model) as f:
        if f.read() != printed:
            print("examples/linreg_train.onnxtxt differs from what linreg_train.py builds")
            sys.exit(1)
    trained = os.path.join(work, "trained.onnx")
    out = subprocess.run([onnxc, "train", model, "--init", "--steps", str(STEPS), "-i", "X=" + xp,
                          "-i", "Y=" + yp, "--print", "loss", "--save", trained],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    losses, final, W, B, HW, HB = oracle(X, Y)
    bad = []
    if len(out) != STEPS:
        bad.append("expected %d printed losses, got %d" % (STEPS, len(out)))
    else:
        for k in (0, 1, STEPS - 1):
            got = floats(out[k])[0]
            if not close(got, losses[k], rtol=1e-4):
                bad.append("loss at step %d: onnxc %r, numpy %r" % (k + 1, got, losses[k]))
    m = onnx.load(trained)
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    inits.update({t.name: onnx.numpy_helper.to_array(t)
                  for t in m.training_info[0].algorithm.initializer})
    for name, want in (("W", W), ("B", B), ("H_W", HW), ("H_B", HB), ("T", STEPS)):
        if not close(inits[name], want, rtol=1e-3):
            bad.append("saved %s: %r, numpy %r" % (name, inits[name].ravel(), np.ravel(want)))
    run = subprocess.run([onnxc, "run", trained, "-i", "X=" + xp, "-i", "Y=" + yp],
                         check=True, capture_output=True, text=True).stdout
    got = [floats(l)[0] for l in run.splitlines() if l.startswith("loss:")]
    if len(got) != 1 or not close(got[0], final, rtol=1e-3):
        bad.append("onnxc run of the trained model: loss %r, numpy %r" % (got, final))
    # the same training saved as text: the inference model with the trained weights
    text = os.path.join(work, "trained.onnxtxt")
    subprocess.run([onnxc, "train", model, "--init", "--steps", str(STEPS), "-i", "X=" + xp,
                    "-i", "Y=" + yp, "--save", text], check=True, capture_output=True)
    run = subprocess.run([onnxc, "run", text, "-i", "X=" + xp, "-i", "Y=" + yp],
                         check=True, capture_output=True, text=True).stdout
    got_t = [floats(l)[0] for l in run.splitlines() if l.startswith("loss:")]
    if len(got_t) != 1 or not close(got_t[0], final, rtol=1e-3):
        bad.append("onnxc run of the trained text model: loss %r, numpy %r" % (got_t, final))
    if not final < losses[0] / 100:
        bad.append("numpy loss did not fall: %r -> %r" % (losses[0], final))
    print("initial loss %.6g, after %d Adagrad steps %.6g (numpy), onnxc run %r" %
          (losses[0], STEPS, final, got))
    for b in bad:
        print("FAIL:", b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
