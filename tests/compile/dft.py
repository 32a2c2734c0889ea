#!/usr/bin/env python3
"""dft.py - DFT through `onnxc compile` beyond the ONNX node tests.

usage: dft.py ONNXC WORKDIR [--cc CC]

Forward complex-to-complex and real-to-complex transforms, dft_length
padding with zeros and truncating, onesided, inverse (float64; float32 as
numpy's single-precision FFT) and the inverse onesided (complex-to-real)
transform, the axis as an attribute
(opset 17) and as a run-time input (opset 20: the generated code switches on
it); compiled with --main, built with `-std=c99 -Wall -Wextra -Werror -O2`,
run, and compared with numpy.fft (an oracle independent of onnxc).
Exit status 77 (skipped) without onnx and numpy.
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("dft: python3 onnx and numpy are needed; skipped")
    sys.exit(77)


def as_complex(x):
    return x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(np.complex128)


def as_pairs(z, dt):
    return np.stack([z.real, z.imag], -1).astype(dt)


# (name, opset, dtype, input shape, axis, dft_length, onesided, inverse, runtime axis)
CASES = [
    ("c2c", 17, np.float32, [2, 7, 3, 2], 1, None, 0, 0, False),
    ("r2c_pad", 17, np.float32, [2, 5, 3, 1], 1, 8, 0, 0, False),
    ("r2c_trunc_onesided", 17, np.float32, [3, 9, 1], 1, 6, 1, 0, False),
    ("inverse_f64", 17, np.float64, [2, 3, 6, 2], 2, None, 0, 1, False),
    ("irfft", 20, np.float32, [2, 5, 3, 2], 1, None, 1, 1, False),
    ("runtime_axis", 20, np.float32, [2, 4, 6, 1], 2, None, 0, 0, True),
    # the inverse complex transform of float32 data: numpy's single-precision
    # FFT (radix 8 and 5; 4 and 3 with zero padding; 3 and 11 truncating)
    ("inverse_f32_r8r5", 17, np.float32, [2, 40, 3, 2], 1, None, 0, 1, False),
    ("inverse_f32_pad", 17, np.float32, [2, 9, 2], 1, 12, 0, 1, False),
    ("inverse_f32_trunc", 20, np.float32, [1, 2, 40, 2], 2, 33, 0, 1, True),
]


def expected(x, axis, n, onesided, inverse):
    z = as_complex(x.astype(np.float64))
    if inverse and onesided:
        nn = n if n else 2 * (z.shape[axis] - 1)
        return np.fft.irfft(z, n=nn, axis=axis)[..., None]
    if inverse:
        return as_pairs(np.fft.ifft(z, n=n, axis=axis), np.float64)
    y = np.fft.fft(z, n=n, axis=axis)
    if onesided:
        nn = n if n else z.shape[axis]
        y = np.take(y, range(nn // 2 + 1), axis=axis)
    return as_pairs(y, np.float64)


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main():
    args = sys.argv[1:]
    cc = os.environ.get("CC", "cc")
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    onnxc, work = args
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(9)
    fails = 0
    for name, opset, dt, shape, axis, n, onesided, inverse, rt in CASES:
        x = rng.uniform(-1, 1, shape).astype(dt)
        want = expected(x, axis, n, onesided, inverse).astype(dt)
        elem = TensorProto.DOUBLE if dt == np.float64 else TensorProto.FLOAT
        inits, ins, feeds = [], [helper.make_tensor_value_info("x", elem, shape)], [x]
        node_in = ["x", ""]
        if n:
            inits.append(numpy_helper.from_array(np.array(n, np.int64), "len"))
            node_in[1] = "len"
        attrs = dict(onesided=onesided, inverse=inverse)
        if opset >= 20:
            node_in.append("axis")
            if rt:
                ins.append(helper.make_tensor_value_info("axis", TensorProto.INT64, []))
                feeds.append(np.array(axis, np.int64))
            else:
                inits.append(numpy_helper.from_array(np.array(axis, np.int64), "axis"))
        else:
            attrs["axis"] = axis
        g = helper.make_graph([helper.make_node("DFT", node_in, ["y"], name="dft", **attrs)], "d",
                              ins, [helper.make_tensor_value_info("y", elem, list(want.shape))],
                              initializer=inits)
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        mp = os.path.join(d, "model.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), mp)
        src = os.path.join(d, "m.c")
        why = None
        c = subprocess.run([onnxc, "compile", mp, "-o", src, "--main"], capture_output=True, text=True)
        if c.returncode:
            why = "compile failed: " + c.stderr.strip()
        else:
            prog = os.path.join(d, "prog")
            b = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", src,
                                src[:-2] + "_main.c", "-lm", "-o", prog], capture_output=True, text=True)
            if b.returncode:
                why = "build failed: " + b.stderr[-1500:]
            else:
                paths = []
                for k, f in enumerate(feeds):
                    paths.append(os.path.join(d, "in%d.npy" % k))
                    np.save(paths[-1], f)
                run = subprocess.run([prog, "-o", os.path.join(d, "out")] + paths,
                                     capture_output=True, text=True)
                if run.returncode:
                    why = "run failed: " + run.stderr
                else:
                    got = load_pb(os.path.join(d, "out", "output_0.pb"))
                    tol = 1e-12 if dt == np.float64 else 1e-5
                    if got.shape != want.shape or not np.allclose(got, want, rtol=tol * 10, atol=tol):
                        why = "expected %s, got %s" % (want.tolist(), got.tolist())
        print("%s %s%s" % ("FAIL" if why else "ok  ", name, ": " + why[:1500] if why else ""))
        fails += why is not None
    print("dft: %d of %d cases pass" % (len(CASES) - fails, len(CASES)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
