#!/usr/bin/env python3
"""model_e2e.py - a small CNN end to end through `onnxc compile`.

usage: model_e2e.py ONNXC WORKDIR [--cc CC]

Builds with python3-onnx a keyword-spotting-sized CNN (Conv with groups,
pads and strides, BatchNormalization, Relu, MaxPool, a depthwise Conv,
AveragePool, Concat, GlobalAveragePool, Flatten, Gemm, Softmax, Reshape,
Transpose, ReduceMean; weights from a fixed seed), and checks:
  - the compiled program's output matches `onnxc run` on the same input
    (|got - want| <= 1e-6 + 1e-4 |want|);
  - compiling twice gives the same bytes;
  - `nm` on the compiled model object lists no malloc, free, printf or
    pthread symbols (only libm's functions and memcpy/memset may be undefined);
  - an unsupported operator or domain and an unbound symbolic dim are errors
    that name the node or input; --input binds the dim;
  - the generated code builds and runs clean under -fsanitize=address,undefined
    (skipped where the compiler cannot link the sanitizers);
  - in-place element-wise nodes make the arena smaller (the compiler reports
    both sizes);
  - --weights blob: the program that loads the blob gives the same output bits
    as the inline build; a blob with a bad header, of the wrong size or of
    another model is refused, and running before the blob is set fails;
  - --arena caller: no static arena, PREFIX_run_with_arena on the caller's
    memory gives the same bits; a NULL or misaligned arena is refused;
  - --target avx2 / avx512 (where this CPU has them) and cortex-m give the
    same bits; cortex-m declines a float64 model.
Exit status 77 (skipped) without onnx and numpy.
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
    print("model_e2e: python3 onnx and numpy are needed; skipped")
    sys.exit(77)


def make_model(path):
    rng = np.random.default_rng(1234)
    inits = []

    def w(name, *shape, scale=0.3):
        a = (rng.standard_normal(shape) * scale).astype(np.float32)
        inits.append(numpy_helper.from_array(a, name))
        return name

    nodes = [
        helper.make_node("Conv", ["x", w("c1w", 8, 1, 3, 3), w("c1b", 8)], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["c1", w("bns", 8), w("bnb", 8), w("bnm", 8),
                                                "bnv"], ["bn"], name="bn1", epsilon=1e-3),
        helper.make_node("Relu", ["bn"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", w("dww", 8, 1, 3, 3)], ["dw"], name="dwconv", group=8,
                         pads=[1, 1, 1, 1], dilations=[1, 1]),
        helper.make_node("Conv", ["dw", w("pww", 16, 4, 1, 1), w("pwb", 16)], ["pw"], name="pwconv",
                         group=2),
        helper.make_node("LeakyRelu", ["pw"], ["r2"], name="lrelu", alpha=0.1),
        helper.make_node("AveragePool", ["r2"], ["ap"], name="avgpool", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["ap", "ap"], ["cat"], name="concat", axis=1),
        helper.make_node("Transpose", ["cat"], ["tr"], name="transpose", perm=[0, 2, 3, 1]),
        helper.make_node("ReduceMean", ["tr"], ["rm"], name="rmean", axes=[1, 2], keepdims=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["fl"], name="flatten", axis=1),
        helper.make_node("Reshape", ["rm", "shape2"], ["rs"], name="reshape"),
        helper.make_node("Add", ["fl", "rs"], ["sum"], name="add"),
        helper.make_node("Gemm", ["sum", w("fcw", 10, 32), w("fcb", 10)], ["fc"], name="fc",
                         transB=1),
        helper.make_node("Softmax", ["fc"], ["y"], name="softmax", axis=1),
    ]
    var = (rng.random(8) + 0.5).astype(np.float32)
    inits.append(numpy_helper.from_array(var, "bnv"))
    inits.append(numpy_helper.from_array(np.array([1, 32], dtype=np.int64), "shape2"))
    g = helper.make_graph(nodes, "small_cnn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 16, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, path)
    x = rng.standard_normal((1, 1, 16, 12)).astype(np.float32)
    return x


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        raise SystemExit("model_e2e: %s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode,
                                                               r.stdout[-1500:], r.stderr[-1500:]))
    return r


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def c_harness(path, prefix, blob):
    """A C program that checks the run-with-arena and blob entry points:
    argv[1] the input as raw floats, argv[2] the blob (blob builds); prints
    the output's bits."""
    P = prefix
    src = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "%(P)s.h"
static float x[%(P)s_INPUT0_COUNT], y1[%(P)s_OUTPUT0_COUNT], y2[%(P)s_OUTPUT0_COUNT];
int main(int argc, char **argv) {
  unsigned char *blob = NULL;
  FILE *fx = argc > 1 ? fopen(argv[1], "rb") : NULL;
  if (!fx || fread(x, sizeof x, 1, fx) != 1) return 2;
  fclose(fx);
#if %(B)d
  if (%(P)s_run_with_arena(NULL, x, y1) != %(P)s_ERR_ARENA &&
      %(P)s_run_with_arena(malloc(%(P)s_ARENA_BYTES), x, y1) != %(P)s_ERR_WEIGHTS) {
    puts("run before set_weights was not refused");
    return 1;
  }
  FILE *f = argc > 2 ? fopen(argv[2], "rb") : NULL;
  if (!f) return 2;
  blob = malloc(%(P)s_WEIGHTS_BYTES + 8);
  size_t n = fread(blob, 1, %(P)s_WEIGHTS_BYTES + 8, f);
  fclose(f);
  if (n != %(P)s_WEIGHTS_BYTES) return 3;
  if (%(P)s_set_weights(blob, n - 1) != %(P)s_ERR_BLOB_SIZE) { puts("size not checked"); return 1; }
  if (%(P)s_set_weights(blob + 1, n) != %(P)s_ERR_BLOB_ALIGN) { puts("alignment not checked"); return 1; }
  blob[8] ^= 1; /* version */
  if (%(P)s_set_weights(blob, n) != %(P)s_ERR_BLOB_HEADER) { puts("header not checked"); return 1; }
  blob[8] ^= 1;
  blob[24] ^= 1; /* fingerprint */
  if (%(P)s_set_weights(blob, n) != %(P)s_ERR_BLOB_MODEL) { puts("fingerprint not checked"); return 1; }
  blob[24] ^= 1;
  if (%(P)s_set_weights(blob, n) != 0) { puts("the blob was refused"); return 1; }
#endif
  size_t sz = %(P)s_arena_size();
  unsigned char *mem = malloc(sz + 16);
  if (!mem) return 2;
  if (%(P)s_run_with_arena(NULL, x, y1) != %(P)s_ERR_ARENA ||
      %(P)s_run_with_arena(mem + 4, x, y1) != %(P)s_ERR_ARENA) {
    puts("a NULL or misaligned arena was not refused");
    return 1;
  }
  memset(mem, 0xff, sz + 16); /* garbage in the arena must not matter */
  if (%(P)s_run_with_arena(mem + 8, x, y1) != 0 || %(P)s_run_with_arena(mem, x, y2) != 0) return 4;
  if (memcmp(y1, y2, sizeof y1) != 0) { puts("two arenas differ"); return 1; }
  for (int i = 0; i < %(P)s_OUTPUT0_COUNT; i++) {
    unsigned u;
    memcpy(&u, &y1[i], 4);
    printf("%%08x\n", u);
  }
  free(mem);
  free(blob);
  return 0;
}
""" % {"P": P, "B": 1 if blob else 0}
    with open(path, "w") as f:
        f.write(src)


def check_options(onnxc, work, model, xin, want, cc, flags):
    """--weights blob, --arena caller, the in-place arena and --target."""
    r = run([onnxc, "compile", model, "-o", os.path.join(work, "cnn.c")])
    m = re.search(r"(\d+)-byte arena \((\d+) without in-place nodes\)", r.stderr)
    if not m or not int(m.group(1)) < int(m.group(2)):
        raise SystemExit("model_e2e: in-place nodes did not shrink the arena: " + r.stderr)
    print("model_e2e: arena %s bytes with in-place element-wise nodes, %s without"
          % (m.group(1), m.group(2)))

    def build_run(name, extra, run_args=(), harness_blob=None):
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        src = os.path.join(d, "cnn.c")
        run([onnxc, "compile", model, "-o", src, "--main"] + extra)
        prog = os.path.join(d, "cnn")
        run([cc] + flags + [src, src[:-2] + "_main.c", "-lm", "-o", prog])
        out = os.path.join(d, "out")
        run([prog, "-o", out, "x=" + xin] + list(run_args))
        got = load_pb(os.path.join(out, "output_0.pb"))
        if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
            raise SystemExit("model_e2e: %s: output differs from the inline build:\n%s\n%s"
                             % (name, got, want))
        if harness_blob is not None:
            h = os.path.join(d, "harness.c")
            c_harness(h, "cnn", harness_blob)
            hp = os.path.join(d, "harness")
            run([cc] + flags + ["-I", d, src, h, "-lm", "-o", hp])
            raw = os.path.join(d, "x.raw")
            np.load(xin).astype(np.float32).tofile(raw)
            bits = run([hp, raw] + ([harness_blob] if harness_blob else [])).stdout.split()
            if bits != ["%08x" % v for v in want.view(np.uint32).reshape(-1)]:
                raise SystemExit("model_e2e: %s: run_with_arena gives other bits" % name)
        return d

    # the blob's default path is the one given to --weights (relative to the cwd)
    bd = os.path.join(work, "blob2")
    os.makedirs(bd, exist_ok=True)
    blob = os.path.join(bd, "cnn.bin")
    build_run("blob2", ["--weights", "blob", blob, "--weights-min", "64"], harness_blob=blob)
    with open(blob, "rb") as f:
        data = f.read()
    if data[:8] != b"ONNXCWB\0" or len(data) % 64:
        raise SystemExit("model_e2e: the blob's header or size is off")
    prog = os.path.join(bd, "cnn")
    bad = os.path.join(bd, "bad.bin")
    for what, content, needle in (("truncated", data[:-64], "wrong size"),
                                  ("another model's", data[:24] + bytes([data[24] ^ 1]) + data[25:],
                                   "another model"),
                                  ("not a blob", b"x" * len(data), "not a weights blob")):
        with open(bad, "wb") as f:
            f.write(content)
        r = subprocess.run([prog, "-o", os.path.join(bd, "o2"), "-w", bad, "x=" + xin],
                           capture_output=True, text=True)
        if r.returncode == 0 or needle not in r.stderr:
            raise SystemExit("model_e2e: a %s blob was not refused: %s" % (what, r.stderr))
    r = subprocess.run([prog, "-o", os.path.join(bd, "o2"), "-w", os.path.join(bd, "none.bin"),
                        "x=" + xin], capture_output=True, text=True)
    if r.returncode == 0:
        raise SystemExit("model_e2e: a missing blob was not an error")
    print("model_e2e: --weights blob: same output bits; bad, truncated, foreign and missing "
          "blobs refused")

    cd = build_run("caller", ["--arena", "caller"], harness_blob="")
    with open(os.path.join(cd, "cnn.c")) as f:
        text = f.read()
    if "cnn_arena[" in text or "int cnn_run(" in text:
        raise SystemExit("model_e2e: --arena caller still has a static arena or cnn_run")
    print("model_e2e: --arena caller: no static arena; run_with_arena gives the same bits; "
          "NULL and misaligned arenas refused")

    with open("/proc/cpuinfo") if os.path.exists("/proc/cpuinfo") else open(os.devnull) as f:
        cpu = f.read()
    for t, flag in (("avx2", " avx2"), ("avx512", " avx512f"), ("cortex-m", None)):
        if flag and flag not in cpu:
            print("model_e2e: --target %s: this CPU lacks it; skipped" % t)
            continue
        build_run("target_" + t, ["--target", t])
    print("model_e2e: --target avx2/avx512/cortex-m: same output bits")
    dm = os.path.join(work, "f64.onnx")
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [4])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), dm)
    r = subprocess.run([onnxc, "compile", dm, "-o", os.path.join(work, "f64.c"), "--target",
                        "cortex-m"], capture_output=True, text=True)
    if r.returncode != 1 or "single precision" not in r.stderr:
        raise SystemExit("model_e2e: cortex-m accepted a float64 model: " + r.stderr)


def main():
    args = sys.argv[1:]
    cc = os.environ.get("CC", "cc")
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    onnxc, work = args
    os.makedirs(work, exist_ok=True)
    model = os.path.join(work, "small_cnn.onnx")
    x = make_model(model)
    xin = os.path.join(work, "x.npy")
    np.save(xin, x)
    run([onnxc, "run", model, "-i", "x=" + xin, "-o", os.path.join(work, "ref")])
    want = load_pb(os.path.join(work, "ref", "output_0.pb"))

    src = os.path.join(work, "cnn.c")
    run([onnxc, "compile", model, "-o", src, "--main"])
    with open(src, "rb") as f:
        first = f.read()
    run([onnxc, "compile", model, "-o", src, "--main"])
    with open(src, "rb") as f:
        if f.read() != first:
            raise SystemExit("model_e2e: compiling twice gave different bytes")
    print("model_e2e: deterministic output: ok")

    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
    obj = os.path.join(work, "cnn.o")
    run([cc] + flags + ["-c", src, "-o", obj])
    syms = run(["nm", obj]).stdout.split()
    banned = [s for s in syms if s in ("malloc", "free", "calloc", "realloc", "printf", "fprintf",
                                       "puts", "fopen") or s.startswith("pthread")]
    if banned:
        raise SystemExit("model_e2e: the model object uses %s" % ", ".join(banned))
    undef = sorted({l.split()[-1] for l in run(["nm", "-u", obj]).stdout.splitlines() if l.strip()})
    print("model_e2e: nm: no malloc/free/printf/pthread; undefined: %s" % " ".join(undef))

    prog = os.path.join(work, "cnn")
    run([cc] + flags + [src, src[:-2] + "_main.c", "-lm", "-o", prog])
    out = os.path.join(work, "out")
    run([prog, "-o", out, "x=" + xin])
    got = load_pb(os.path.join(out, "output_0.pb"))
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-6):
        raise SystemExit("model_e2e: compiled output differs from onnxc run:\n%s\n%s" % (got, want))
    print("model_e2e: compiled output matches onnxc run (max abs diff %.3g)"
          % float(np.max(np.abs(got - want))))

    # errors name the node or input and the reason; --input binds a symbolic dim
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    for nodes, needle, bind in (
            ([helper.make_node("Relu", ["x"], ["y"], name="r")], "graph input 'x': dim 0 is 'N'", None),
            ([helper.make_node("Relu", ["x"], ["y"], name="r")], None, "x=3,4"),
            ([helper.make_node("Hamming", ["x"], ["y"], name="odd", domain="my.ops")],
             "node 0 'odd' (Hamming): operators of domain 'my.ops'", "x=3,4"),
            ([helper.make_node("MaxRoiPool", ["x", "x"], ["y"], name="roi", pooled_shape=[1, 1])],
             "node 0 'roi' (MaxRoiPool): no C generator", "x=4,4"),
            ([helper.make_node("NonZero", ["x"], ["y"], name="nz")],
             "node 0 'nz' (NonZero): the length of its output depends on the input values", "x=4,4")):
        g = helper.make_graph(nodes, "g", [x], [y])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("my.ops", 1)])
        mp = os.path.join(work, "err.onnx")
        onnx.save(m, mp)
        cmd = [onnxc, "compile", mp, "-o", os.path.join(work, "err.c")] + (["--input", bind] if bind else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if needle is None:
            if r.returncode:
                raise SystemExit("model_e2e: --input did not bind the dim: " + r.stderr)
        elif r.returncode != 1 or needle not in r.stderr:
            raise SystemExit("model_e2e: expected an error with %r, got %d: %s" % (needle, r.returncode, r.stderr))
    print("model_e2e: errors name the input or node and the reason; --input binds dims")

    check_options(onnxc, work, model, xin, got, cc, flags)

    asan = os.path.join(work, "cnn_asan")
    r = subprocess.run([cc] + flags + ["-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                                       src, src[:-2] + "_main.c", "-lm", "-o", asan],
                       capture_output=True, text=True)
    if r.returncode:
        print("model_e2e: sanitizers not available here (%s); that check skipped" % r.stderr.strip()[-200:])
    else:
        run([asan, "-o", os.path.join(work, "out_asan"), "x=" + xin])
        got2 = load_pb(os.path.join(work, "out_asan", "output_0.pb"))
        if not np.array_equal(got2.view(np.uint32), got.view(np.uint32)) and not np.allclose(got2, got, rtol=1e-6):
            raise SystemExit("model_e2e: the sanitized build gives other results")
        # the blob and caller-arena builds too (their pointers and checks)
        for name in ("blob2", "caller"):
            d = os.path.join(work, name)
            prog = os.path.join(d, "cnn_asan")
            run([cc] + flags + ["-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                                os.path.join(d, "cnn.c"), os.path.join(d, "cnn_main.c"), "-lm", "-o", prog])
            run([prog, "-o", os.path.join(d, "out_asan"), "x=" + xin])
            got3 = load_pb(os.path.join(d, "out_asan", "output_0.pb"))
            if not np.allclose(got3, got, rtol=1e-6):
                raise SystemExit("model_e2e: the sanitized %s build gives other results" % name)
        print("model_e2e: clean under -fsanitize=address,undefined (inline, blob, caller arena)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
