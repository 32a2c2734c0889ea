#!/usr/bin/env python3
"""qdq_mnist.py - the int8 QDQ version of the Cortex-M test's MNIST CNN.

usage: qdq_mnist.py ONNXC WORKDIR [--cc CC] [--testdata DIR]   (host test: ctest compile_qdq_e2e)
   or: import qdq_mnist; qdq_mnist.make(onnxc, work)   (cortexm_qemu.py)

make() quantizes the float CNN of cortexm_qemu.py the way onnxruntime's
quantize_static writes a QDQ model, with python3-onnx nodes only:
activations int8 asymmetric (scale and zero point from the minimum and
maximum over a calibration of 16 fixed random inputs, computed by `onnxc
run` on the float model with every intermediate as an output), weights int8
symmetric (per output channel for the convolutions, per tensor for the
Gemms), biases int32 with scale x_scale * w_scale; QuantizeLinear ->
DequantizeLinear around every Conv/Relu, MaxPool, Flatten and Gemm, the
Softmax in float on the last DequantizeLinear.

The host test compiles it (`onnxc compile` folds each DQ -> Conv/Gemm
[-> Relu] -> Q into an integer-only kernel, and DQ -> MaxPool/Flatten -> Q
into the op on the int8 values), builds it with -std=c99 -Wall -Wextra
-Werror -O2 and checks:
  - compiling twice gives the same bytes;
  - the generated file has no float arithmetic in the folded kernels
    (their functions mention no float);
  - the int8 values before the Softmax differ from `onnxc run`'s by at most
    1 (a rounding tie falls the other way), and the output from `onnxc
    run`'s within what one quantum of the last Gemm makes; it prints how
    many int8 values differ;
  - the same under -fsanitize=address,undefined (skipped where the compiler
    cannot link them);
  - a small model with the other layouts (uint8, weight zero point, no
    bias, strides, MatMul with W [K, N] per column, Clip) within 1 of onnxc run;
  - with --testdata: the ONNX node cases of QLinearConv and QLinearMatMul
    (2-D) with their scales and zero points made initializers compile to
    the integer-only kernel, within 1 of the expected outputs.
Exit status 77 without onnx and numpy.
"""
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("qdq_mnist: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cortexm_qemu  # noqa: E402  (the float model)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise SystemExit("qdq_mnist: %s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode,
                                                              r.stdout[-2000:], r.stderr[-2000:]))
    return r


def load_pb(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


def calibrate(onnxc, fmodel, work):
    """min and max of every value of the float model over 16 fixed inputs"""
    m = onnx.load(fmodel)
    names = ["x"] + [n.output[0] for n in m.graph.node]
    del m.graph.output[:]
    for nm in names:
        m.graph.output.append(helper.make_tensor_value_info(nm, TensorProto.FLOAT, None))
    cal = os.path.join(work, "calib.onnx")
    onnx.save(m, cal)
    rng = np.random.default_rng(7)
    lo = {nm: 0.0 for nm in names}
    hi = {nm: 0.0 for nm in names}
    for k in range(16):
        x = rng.random((1, 1, 28, 28)).astype(np.float32)
        np.save(os.path.join(work, "cal_x.npy"), x)
        out = os.path.join(work, "cal_out")
        run([onnxc, "run", cal, "-i", "x=" + os.path.join(work, "cal_x.npy"), "-o", out])
        for i, nm in enumerate(names):
            v = load_pb(os.path.join(out, "output_%d.pb" % i))
            lo[nm] = min(lo[nm], float(v.min()))
            hi[nm] = max(hi[nm], float(v.max()))
    return lo, hi


def make(onnxc, work):
    """writes work/mnist_cnn.onnx (float) and work/mnist_qdq.onnx; returns
    (input, qdq model path)"""
    os.makedirs(work, exist_ok=True)
    fmodel = os.path.join(work, "mnist_cnn.onnx")
    x = cortexm_qemu.make_model(fmodel)
    lo, hi = calibrate(onnxc, fmodel, work)
    fm = onnx.load(fmodel)
    w = {t.name: numpy_helper.to_array(t) for t in fm.graph.initializer}
    inits, nodes = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(a, name))
        return name

    act = {}  # float value name -> (scale, zero point) names

    def qparams(v):
        if v not in act:
            rmin, rmax = min(lo[v], 0.0), max(hi[v], 0.0)
            s = np.float32((rmax - rmin) / 255.0 if rmax > rmin else 1.0)
            z = int(np.clip(np.round(-128 - rmin / s), -128, 127))
            act[v] = (const(v + "_s", np.array(s, np.float32)), const(v + "_z", np.array(z, np.int8)))
        return act[v]

    def qdq(v, like=None):
        """Q then DQ of float value v (with like's parameters); the DQ's output name"""
        s, z = qparams(like or v)
        act.setdefault(v, (s, z))
        nodes.append(helper.make_node("QuantizeLinear", [v, s, z], [v + "_q"], name=v + "_Q"))
        nodes.append(helper.make_node("DequantizeLinear", [v + "_q", s, z], [v + "_dq"], name=v + "_DQ"))
        return v + "_dq"

    def weights(name, per_channel):
        a = w[name]
        if per_channel:
            s = (np.abs(a.reshape(a.shape[0], -1)).max(axis=1) / 127.0).astype(np.float32)
            q = np.clip(np.round(a / s.reshape((-1,) + (1,) * (a.ndim - 1))), -127, 127).astype(np.int8)
            zp = np.zeros(a.shape[0], np.int8)
        else:
            s = np.float32(np.abs(a).max() / 127.0)
            q = np.clip(np.round(a / s), -127, 127).astype(np.int8)
            zp = np.array(0, np.int8)
        nodes.append(helper.make_node("DequantizeLinear", [const(name + "_q", q), const(name + "_s", np.array(s)),
                                                           const(name + "_z", zp)],
                                      [name + "_dq"], name=name + "_DQ", axis=0))
        return s

    def bias(name, xs_name, ws):
        xs = numpy_helper.to_array([t for t in inits if t.name == xs_name][0])
        bs = (np.float32(xs) * np.asarray(ws, np.float32)).astype(np.float32)
        q = np.round(w[name] / bs).astype(np.int32)
        bs = np.broadcast_to(bs, q.shape).astype(np.float32) if bs.ndim else bs
        nodes.append(helper.make_node("DequantizeLinear", [const(name + "_q", q), const(name + "_s", np.array(bs))],
                                      [name + "_dq"], name=name + "_DQ", **({"axis": 0} if bs.ndim else {})))
        return name + "_dq"

    src = {n.output[0]: n for n in fm.graph.node}
    xin = qdq("x")
    # conv1 -> relu1 -> pool1, conv2 -> relu2 -> pool2, flatten, fc1 -> relu3, fc2, softmax
    cur = xin
    for conv, relu, pool in (("c1", "r1", "p1"), ("c2", "r2", "p2")):
        cn = src[conv]
        wn, bn = cn.input[1], cn.input[2]
        ws = weights(wn, True)
        b = bias(bn, act[cur[:-3]][0], ws)
        nodes.append(helper.make_node("Conv", [cur, wn + "_dq", b], [conv], name=cn.name,
                                      pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [conv], [relu], name=src[relu].name))
        r = qdq(relu)
        nodes.append(helper.make_node("MaxPool", [r], [pool], name=src[pool].name,
                                      kernel_shape=[2, 2], strides=[2, 2]))
        cur = qdq(pool, like=relu)
    nodes.append(helper.make_node("Flatten", [cur], ["fl"], name="flatten", axis=1))
    cur = qdq("fl", like="r2")
    for fc, relu in (("f1", "r3"), ("f2", None)):
        gn = src[fc]
        wn, bn = gn.input[1], gn.input[2]
        ws = weights(wn, False)
        b = bias(bn, act[cur[:-3]][0], ws)
        nodes.append(helper.make_node("Gemm", [cur, wn + "_dq", b], [fc], name=gn.name, transB=1))
        if relu:
            nodes.append(helper.make_node("Relu", [fc], [relu], name=src[relu].name))
            cur = qdq(relu)
        else:
            cur = qdq(fc)
    nodes.append(helper.make_node("Softmax", [cur], ["y"], name="softmax", axis=1))
    g = helper.make_graph(nodes, "mnist_qdq",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 28, 28])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    onnx.checker.check_model(m)
    path = os.path.join(work, "mnist_qdq.onnx")
    onnx.save(m, path)
    return x, path


def build_run(cc, flags, src, work, tag, x_npy):
    """builds src (+ its _main.c) and runs it on x; returns the output dir"""
    exe = os.path.join(work, "m_" + tag)
    run([cc] + flags + [src, src[:-2] + "_main.c", "-lm", "-o", exe])
    out = os.path.join(work, "out_" + tag)
    run([exe, "-o", out, "x=" + x_npy])
    return out


def qlinear_consts(onnxc, cc, testdata, work):
    """QLinearConv and QLinearMatMul node cases with their scales and zero
    points made initializers: the integer-only kernels; within 1 of the
    expected outputs of the ONNX test data"""
    for case in ("test_qlinearconv", "test_qlinearmatmul_2D_uint8_float32",
                 "test_qlinearmatmul_2D_int8_float32"):
        d = os.path.join(testdata, "node", case)
        if not os.path.isdir(d):
            print("qdq_mnist: no %s; that case skipped" % d)
            continue
        m = onnx.load(os.path.join(d, "model.onnx"))
        ds = os.path.join(d, "test_data_set_0")
        ins = [load_pb(os.path.join(ds, "input_%d.pb" % i)) for i in range(len(m.graph.input))]
        keep = []
        for i, vi in enumerate(list(m.graph.input)):
            if i in (0, 3):  # x and w stay inputs
                keep.append((vi, ins[i]))
            else:
                m.graph.initializer.append(numpy_helper.from_array(ins[i], vi.name))
        del m.graph.input[:]
        for vi, _ in keep:
            m.graph.input.append(vi)
        path = os.path.join(work, case + "_const.onnx")
        onnx.save(m, path)
        src = os.path.join(work, case + ".c")
        run([onnxc, "compile", path, "-o", src, "--prefix", "ql", "--main"])
        text = open(src).read()
        func = text.split("static void", 1)[1].split(") {\n", 1)[1].split("\nint ql_run")[0]
        if re.search(r"\b(float|double)\b|nearbyint", func):
            raise SystemExit("qdq_mnist: %s: constant scales did not give the integer kernel" % case)
        exe = os.path.join(work, case)
        run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", src, src[:-2] + "_main.c", "-lm", "-o", exe])
        args = []
        for k, (vi, v) in enumerate(keep):
            f = os.path.join(work, "%s_in%d.npy" % (case, k))
            np.save(f, v)
            args.append("%s=%s" % (vi.name, f))
        out = os.path.join(work, case + "_out")
        run([exe, "-o", out] + args)
        got = load_pb(os.path.join(out, "output_0.pb")).astype(np.int32)
        want = load_pb(os.path.join(ds, "output_0.pb")).astype(np.int32)
        diff = np.abs(got - want)
        if diff.max() > 1:
            raise SystemExit("qdq_mnist: %s: integer kernel differs from the expected output by %d"
                             % (case, diff.max()))
        print("qdq_mnist: %s with constant scales: integer kernel, %d of %d values differ by 1 "
              "from the ONNX expected output" % (case, int(np.sum(diff != 0)), diff.size))


def qdq_layouts(onnxc, cc, work):
    """the other layouts of the folded units on a small model: uint8
    activations (a QuantizeLinear without zero point), uint8 weights with a
    zero point, no bias, strides; a MatMul with W [K, N] scaled per column
    and a Clip;
    compiled output within 1 of onnxc run"""
    rng = np.random.default_rng(99)
    f = lambda a: np.array(a, np.float32)
    inits = [
        numpy_helper.from_array(f(0.02), "xs"),
        numpy_helper.from_array(rng.integers(0, 256, (4, 2, 3, 3)).astype(np.uint8), "wq"),
        numpy_helper.from_array(f(0.01), "ws"), numpy_helper.from_array(np.array(3, np.uint8), "wz"),
        numpy_helper.from_array(f(0.05), "cs"), numpy_helper.from_array(np.array(10, np.uint8), "cz"),
        numpy_helper.from_array(rng.integers(-127, 128, (36, 70)).astype(np.int8), "mq"),
        numpy_helper.from_array((rng.random(70) * 0.01 + 0.002).astype(np.float32), "ms"),
        numpy_helper.from_array(f(0.03), "ys"), numpy_helper.from_array(np.array(-5, np.int8), "yz"),
        numpy_helper.from_array(np.array([1, 36], np.int64), "shape"),
        numpy_helper.from_array(f(-0.5), "lo"), numpy_helper.from_array(f(1.2), "hi"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"]),
        helper.make_node("Conv", ["xd", "wd"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "cs", "cz"], ["cq"]),
        helper.make_node("DequantizeLinear", ["cq", "cs", "cz"], ["cd"]),
        helper.make_node("Reshape", ["cd", "shape"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "cs", "cz"], ["rq"]),
        helper.make_node("DequantizeLinear", ["rq", "cs", "cz"], ["rd"]),
        helper.make_node("DequantizeLinear", ["mq", "ms"], ["md"], axis=1),
        helper.make_node("MatMul", ["rd", "md"], ["mm"]),
        helper.make_node("Clip", ["mm", "lo", "hi"], ["mr"]),
        helper.make_node("QuantizeLinear", ["mr", "ys", "yz"], ["y"]),
    ]
    g = helper.make_graph(nodes, "qdq_variants",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 70]),
                           helper.make_tensor_value_info("cq", TensorProto.UINT8, [1, 4, 3, 3])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    onnx.checker.check_model(m)
    path = os.path.join(work, "variants.onnx")
    onnx.save(m, path)
    x = (rng.random((1, 2, 5, 5)) * 4).astype(np.float32)
    xf = os.path.join(work, "variants_x.npy")
    np.save(xf, x)
    ref = os.path.join(work, "variants_ref")
    run([onnxc, "run", path, "-i", "x=" + xf, "-o", ref])
    src = os.path.join(work, "variants.c")
    run([onnxc, "compile", path, "-o", src, "--prefix", "qv", "--main"])
    if open(src).read().count(": QdqConv(") != 1 or open(src).read().count(": QdqMatMul(") != 1:
        raise SystemExit("qdq_mnist: variants: the Conv and MatMul units were not folded")
    out = build_run(cc, ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"], src, work, "variants", xf)
    for i in range(2):
        got = load_pb(os.path.join(out, "output_%d.pb" % i)).astype(np.int32)
        want = load_pb(os.path.join(ref, "output_%d.pb" % i)).astype(np.int32)
        d = np.abs(got - want)
        if d.max() > 1:
            raise SystemExit("qdq_mnist: variants: output %d differs from onnxc run by %d" % (i, d.max()))
        print("qdq_mnist: variants: output %d: %d of %d values differ by 1 from onnxc run"
              % (i, int(np.sum(d != 0)), d.size))


def main():
    args = sys.argv[1:]
    cc = "cc"
    testdata = None
    if "--testdata" in args:
        i = args.index("--testdata")
        testdata = args[i + 1]
        del args[i:i + 2]
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    onnxc, work = args
    work = os.path.abspath(work)
    x, qmodel = make(onnxc, work)
    x_npy = os.path.join(work, "x.npy")
    np.save(x_npy, x)
    # a copy that also gives every int8 tensor (the QuantizeLinear outputs;
    # f2_q, the logits, last)
    m = onnx.load(qmodel)
    qnames = [n.output[0] for n in m.graph.node if n.op_type == "QuantizeLinear"]
    for nm in qnames:
        m.graph.output.append(helper.make_tensor_value_info(nm, TensorProto.INT8, None))
    qm2 = os.path.join(work, "mnist_qdq_logits.onnx")
    onnx.save(m, qm2)
    ref = os.path.join(work, "ref")
    run([onnxc, "run", qm2, "-i", "x=" + x_npy, "-o", ref])
    src = os.path.join(work, "qdq.c")
    r = run([onnxc, "compile", qm2, "-o", src, "--prefix", "qdq", "--main"])
    text = open(src).read()
    os.makedirs(os.path.join(work, "again"), exist_ok=True)
    src2 = os.path.join(work, "again", "qdq.c")
    run([onnxc, "compile", qm2, "-o", src2, "--prefix", "qdq"])
    if open(src2).read() != text:
        raise SystemExit("qdq_mnist: compiling twice gave different bytes")
    # the folded kernels: one function per unit, with no float in them
    funcs = re.findall(r"/\* node \d+ '[^']*': (Qdq\w+)\(.*?\*/\nstatic void (\w+)\((.*?)\n}\n", text, re.S)
    kinds = sorted({f[0] for f in funcs})
    if len(funcs) != 6 or kinds != ["QdqConv", "QdqMatMul", "QdqMaxPool"]:
        raise SystemExit("qdq_mnist: expected 6 folded units (2 QdqConv, 2 QdqMaxPool, 2 QdqMatMul"
                         ", got %s" % [f[0] for f in funcs])
    for kind, name, body in funcs:
        if re.search(r"\b(float|double)\b|nearbyint", body):
            raise SystemExit("qdq_mnist: %s (%s) has float arithmetic" % (name, kind))
    print("qdq_mnist: %d folded units (%s), no float in them" % (len(funcs), ", ".join(f[0] for f in funcs)))
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
    nq = len(qnames)
    want_q = [load_pb(os.path.join(ref, "output_%d.pb" % (1 + i))).astype(np.int32) for i in range(nq)]
    want_y = load_pb(os.path.join(ref, "output_0.pb"))
    variants = [("plain", flags)]
    probe = subprocess.run([cc, "-fsanitize=address,undefined", "-x", "c", "-", "-o",
                            os.path.join(work, "probe")], input="int main(void){return 0;}",
                           capture_output=True, text=True)
    if probe.returncode == 0:
        variants.append(("asan", flags[:-1] + ["-O1", "-g", "-fsanitize=address,undefined",
                                               "-fno-sanitize-recover=all"]))
    else:
        print("qdq_mnist: the compiler cannot link the sanitizers; that part skipped")
    for tag, fl in variants:
        out = build_run(cc, fl, src, work, tag, x_npy)
        got_y = load_pb(os.path.join(out, "output_0.pb"))
        ndiff, total = [], 0
        for i, nm in enumerate(qnames):
            got_q = load_pb(os.path.join(out, "output_%d.pb" % (1 + i))).astype(np.int32)
            dq = np.abs(got_q - want_q[i])
            if dq.max() > 1:
                raise SystemExit("qdq_mnist: %s: int8 tensor %s differs from onnxc run by %d"
                                 % (tag, nm, dq.max()))
            ndiff.append("%s %d/%d" % (nm, int(np.sum(dq != 0)), dq.size))
            total += dq.size
        # one quantum of the logits moves a softmax output by at most
        # s * y * (1 - y) <= s / 4
        s = float(numpy_helper.to_array([t for t in m.graph.initializer if t.name == "f2_s"][0]))
        dy = float(np.abs(got_y - want_y).max())
        if dy > s / 4 * 1.01 + 1e-6:
            raise SystemExit("qdq_mnist: %s: output differs from onnxc run by %g" % (tag, dy))
        print("qdq_mnist: %s: int8 values differing from onnxc run by 1 (none by more): %s; "
              "output max abs diff %.3g" % (tag, ", ".join(ndiff), dy))
    qdq_layouts(onnxc, cc, work)
    if testdata:
        qlinear_consts(onnxc, cc, testdata, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
