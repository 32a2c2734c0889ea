#!/usr/bin/env python3
"""cortexm_qemu.py - a compiled model on a Cortex-M under QEMU (issue 33).

usage: cortexm_qemu.py ONNXC WORKDIR

Builds with python3-onnx an MNIST-sized float CNN (Conv/Relu/MaxPool twice,
Flatten, Gemm/Relu, Gemm, Softmax; weights from a fixed seed), compiles it with
`onnxc compile`, and for each board below cross-compiles the generated C with
the harness of tests/compile/cortexm/ (vector table, reset handler, semihosting)
using arm-none-eabi-gcc -O2 -Wall -Wextra -Werror, runs it under
`qemu-system-arm -semihosting -nographic`, and checks that the output bits it
prints match `onnxc run` on the host within `onnxc test`'s tolerance
(|got - want| <= 1e-7 + 1e-3 |want|). It prints the text/data/bss of the model
object and of the whole program (arm-none-eabi-size) and the stack's peak use
measured on the target, and checks that the model object needs no
malloc/free/printf and that the program links none.
Boards: mps2-an385 (Cortex-M3, no FPU: soft float) and mps2-an386 (Cortex-M4
with its single-precision FPU, hard-float ABI).
Exit status 77 (skipped) without onnx/numpy, arm-none-eabi-gcc with newlib, or
qemu-system-arm.
"""
import os
import re
import shutil
import subprocess
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("cortexm_qemu: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cortexm")
PREFIX = "mnist"
# (QEMU machine, what it is, the compiler's flags for its core)
BOARDS = (
    ("mps2-an385", "Cortex-M3, soft float", ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"]),
    ("mps2-an386", "Cortex-M4F, hard float",
     ["-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]),
)
RTOL, ATOL = 1e-3, 1e-7  # onnxc test's tolerance for floats
BANNED = ("malloc", "free", "calloc", "realloc", "printf", "fprintf", "sprintf", "puts", "fopen",
          "_malloc_r", "_free_r", "_printf_r", "_vfprintf_r")


def make_model(path):
    rng = np.random.default_rng(20261128)
    inits = []

    def w(name, *shape):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        a = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        inits.append(numpy_helper.from_array(a, name))
        return name

    nodes = [
        helper.make_node("Conv", ["x", w("c1w", 8, 1, 3, 3), w("c1b", 8)], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", w("c2w", 16, 8, 3, 3), w("c2b", 16)], ["c2"], name="conv2",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["fl"], name="flatten", axis=1),
        helper.make_node("Gemm", ["fl", w("f1w", 32, 784), w("f1b", 32)], ["f1"], name="fc1", transB=1),
        helper.make_node("Relu", ["f1"], ["r3"], name="relu3"),
        helper.make_node("Gemm", ["r3", w("f2w", 10, 32), w("f2b", 10)], ["f2"], name="fc2", transB=1),
        helper.make_node("Softmax", ["f2"], ["y"], name="softmax", axis=1),
    ]
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 28, 28])
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])
    m = helper.make_model(helper.make_graph(nodes, "mnist_cnn", [x_info], [y_info], inits),
                          opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return rng.random((1, 1, 28, 28)).astype(np.float32)  # "pixels" in [0, 1)


def run(cmd, timeout=None):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SystemExit("cortexm_qemu: %s ran past %d s" % (" ".join(cmd), timeout))
    if r.returncode:
        raise SystemExit("cortexm_qemu: %s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode,
                                                                  r.stdout[-2000:], r.stderr[-2000:]))
    return r


def sizes(obj):
    """text, data, bss of an object or program (arm-none-eabi-size, Berkeley format)"""
    line = run(["arm-none-eabi-size", obj]).stdout.splitlines()[1].split()
    return int(line[0]), int(line[1]), int(line[2])


def tools_missing():
    for t in ("arm-none-eabi-gcc", "arm-none-eabi-size", "arm-none-eabi-nm", "qemu-system-arm"):
        if shutil.which(t) is None:
            return "%s not found (scripts/setup.sh installs gcc-arm-none-eabi and qemu-system-arm)" % t
    libc = subprocess.run(["arm-none-eabi-gcc", "-print-file-name=libc.a"], capture_output=True,
                          text=True).stdout.strip()
    if not os.path.isabs(libc):
        return "newlib for arm-none-eabi not found (scripts/setup.sh installs libnewlib-arm-none-eabi)"
    return None


def write_io_header(path, x, prefix):
    """model_io.h: what harness.c needs to know of this model, and the input's bits"""
    bits = x.reshape(-1).view(np.uint32)
    rows = [", ".join("0x%08xu" % b for b in bits[i:i + 8]) for i in range(0, bits.size, 8)]
    with open(path, "w") as f:
        f.write("/* written by tests/compile/cortexm_qemu.py: the model's API and the test input */\n"
                "#include <stdint.h>\n#include \"%s.h\"\n"
                "#define IN_COUNT %s_INPUT0_COUNT\n#define OUT_COUNT %s_OUTPUT0_COUNT\n"
                "#define MODEL_RUN(in, out) %s_run(in, out)\n"
                "static const uint32_t input_bits[IN_COUNT] = {\n  %s\n};\n"
                % (prefix, prefix, prefix, prefix, ",\n  ".join(rows)))


def run_board(work, machine, what, cpu_flags, src, want, prefix, rtol, atol):
    """builds and runs the model of prefix (work/prefix.c, work/prefix/model_io.h)"""
    bdir = os.path.join(work, prefix, machine)
    os.makedirs(bdir, exist_ok=True)
    cc = ["arm-none-eabi-gcc"] + cpu_flags + ["-O2", "-Wall", "-Wextra", "-Werror",
                                              "-ffunction-sections", "-fdata-sections"]
    inc = ["-I", os.path.join(work, prefix), "-I", work, "-I", HERE]
    model_o = os.path.join(bdir, prefix + ".o")
    run(cc + ["-std=c99", "-c", src, "-o", model_o])
    objs = [model_o]
    for name in ("startup.c", "harness.c"):
        o = os.path.join(bdir, name[:-2] + ".o")
        run(cc + ["-std=c11"] + inc + ["-c", os.path.join(HERE, name), "-o", o])
        objs.append(o)

    undef = sorted({l.split()[-1] for l in run(["arm-none-eabi-nm", "-u", model_o]).stdout.splitlines()
                    if l.strip()})
    bad = [s for s in undef if s in BANNED or s.startswith("pthread")]
    if bad:
        raise SystemExit("cortexm_qemu: %s: the model object needs %s" % (machine, ", ".join(bad)))

    elf = os.path.join(bdir, prefix + ".elf")
    # -nostartfiles: startup.c is the whole start; nosys.specs only so that a stray
    # system call would still link (the check below says none is there)
    run(cc + ["-nostartfiles", "--specs=nosys.specs", "-T", os.path.join(HERE, "mps2.ld"),
              "-Wl,--gc-sections"] + objs + ["-lm", "-o", elf])
    syms = {l.split()[-1] for l in run(["arm-none-eabi-nm", elf]).stdout.splitlines() if l.strip()}
    linked = sorted(s for s in syms if s in BANNED or s.startswith("pthread"))
    if linked:
        raise SystemExit("cortexm_qemu: %s: the program links %s" % (machine, ", ".join(linked)))

    mt, md, mb = sizes(model_o)
    pt, pd, pb = sizes(elf)
    machine = "%s %s" % (prefix, machine)
    print("cortexm_qemu: %s (%s): model object text %d data %d bss %d; whole program text %d data %d "
          "bss %d" % (machine, what, mt, md, mb, pt, pd, pb))
    print("cortexm_qemu: %s: the model object needs %s" % (machine, " ".join(undef) or "nothing"))

    qemu = ["qemu-system-arm", "-M", machine.split()[1], "-nographic", "-monitor", "none", "-serial", "none",
            "-semihosting-config", "enable=on,target=native", "-kernel", elf]
    try:
        r = subprocess.run(qemu, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise SystemExit("cortexm_qemu: %s: the program under QEMU ran past 60 s" % machine)
    out = r.stdout + r.stderr
    if r.returncode or "cortexm: done" not in out:
        raise SystemExit("cortexm_qemu: %s: the program under QEMU failed (%d):\n%s"
                         % (machine, r.returncode, out[-2000:]))
    m = re.search(r"^stack peak: (\d+) bytes$", out, re.M)
    stack = int(m.group(1)) if m else 0
    print("cortexm_qemu: %s: flash %d bytes (text + data), RAM %d bytes (data + bss + the stack's "
          "peak of %d)" % (machine, pt + pd, pd + pb + stack, stack))
    vals = {}
    for m in re.finditer(r"^y\[(\d+)\] = 0x([0-9a-f]{8})$", out, re.M):
        vals[int(m.group(1))] = int(m.group(2), 16)
    if sorted(vals) != list(range(want.size)):
        raise SystemExit("cortexm_qemu: %s: expected %d output values, got:\n%s" % (machine, want.size, out))
    got = np.array([vals[i] for i in range(want.size)], dtype=np.uint32).view(np.float32)
    w = want.reshape(-1).astype(np.float64)
    g = got.astype(np.float64)
    ok = np.isclose(g, w, rtol=rtol, atol=atol)
    if not ok.all():
        i = int(np.argmin(ok))
        raise SystemExit("cortexm_qemu: %s: output element %d is %r, onnxc run gives %r"
                         % (machine, i, g[i], w[i]))
    print("cortexm_qemu: %s: output under QEMU matches onnxc run (max abs diff %.3g, %d of %d bit-identical)"
          % (machine, float(np.max(np.abs(g - w))), int(np.sum(got.view(np.uint32) ==
                                                             want.reshape(-1).view(np.uint32))), want.size))


def reference(onnxc, model, work):
    """writes the model and its input; returns the input and `onnxc run`'s output"""
    x = make_model(model)
    np.save(os.path.join(work, "x.npy"), x)
    ref = os.path.join(work, "ref")
    run([onnxc, "run", model, "-i", "x=" + os.path.join(work, "x.npy"), "-o", ref])
    return x, numpy_helper.to_array(onnx.load_tensor(os.path.join(ref, "output_0.pb"))).astype(np.float32)


def main():
    onnxc, work = sys.argv[1:]
    why = tools_missing()
    if why:
        print("cortexm_qemu: %s; skipped" % why)
        return 77
    work = os.path.abspath(work)
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "mnist_cnn.onnx")
    x, want = reference(onnxc, model, work)

    # the float model, and its int8 QDQ version (tests/compile/qdq_mnist.py),
    # whose output may differ from onnxc run's where one rounding of the
    # int8 logits falls the other way: by at most their scale / 4 after the
    # Softmax
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import qdq_mnist
    _, qmodel = qdq_mnist.make(onnxc, os.path.join(work, "qdq"))
    ref = os.path.join(work, "ref_q")
    run([onnxc, "run", qmodel, "-i", "x=" + os.path.join(work, "x.npy"), "-o", ref])
    want_q = numpy_helper.to_array(onnx.load_tensor(os.path.join(ref, "output_0.pb")))
    f2_s = [numpy_helper.to_array(t) for t in onnx.load(qmodel).graph.initializer if t.name == "f2_s"][0]
    models = ((PREFIX, model, want, RTOL, ATOL), (PREFIX + "q", qmodel, want_q, 0.0, float(f2_s) / 4 * 1.01 + 1e-6))
    for prefix, path, _, _, _ in models:
        os.makedirs(os.path.join(work, prefix), exist_ok=True)
        run([onnxc, "compile", path, "-o", os.path.join(work, prefix + ".c"), "--prefix", prefix])
        write_io_header(os.path.join(work, prefix, "model_io.h"), x, prefix)

    boards = run(["qemu-system-arm", "-M", "help"]).stdout
    done = 0
    for machine, what, flags in BOARDS:
        if not re.search(r"^%s\s" % re.escape(machine), boards, re.M):
            print("cortexm_qemu: this QEMU has no %s; that board skipped" % machine)
            continue
        for prefix, _, w, rtol, atol in models:
            run_board(work, machine, what, flags, os.path.join(work, prefix + ".c"), w, prefix, rtol, atol)
        done += 1
    if not done:
        print("cortexm_qemu: this QEMU emulates none of the boards; skipped")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
