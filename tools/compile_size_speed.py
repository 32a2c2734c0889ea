#!/usr/bin/env python3
"""compile_size_speed.py - the "Size and speed" table of docs/compile.md.

usage: compile_size_speed.py ONNXC WORKDIR [MODELS_DIR]   (ROUNDS=5 by default)

For each model: the `onnxc compile` wall time, the C compiler's CPU time
for the model object (cc -std=c99 -O2), `size` of that object and of the
--weights blob one (and the blob's bytes), the fastest run of PREFIX_run
in a harness built at -O2, -O3 and from --target avx2 at -O2, and
`onnxc bench --threads 1` (its min); the timings alternate ROUNDS times and
the fastest is printed, one Markdown row per model. The small and MNIST
CNNs come from tests/compile/model_e2e.py and cortexm_qemu.py; the others
from MODELS_DIR (default ../shared/models). Needs python3-onnx for the two
CNNs."""
import importlib.util
import os
import re
import resource
import subprocess
import sys
import time

ONNXC = os.path.abspath(sys.argv[1])
W = os.path.abspath(sys.argv[2])
SHARED = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "..", "..", "shared", "models")
os.makedirs(W, exist_ok=True)
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "compile")
for mod, f, out in [("e2e", "model_e2e.py", "small_cnn.onnx"), ("cm", "cortexm_qemu.py", "mnist_cnn.onnx")]:
    spec = importlib.util.spec_from_file_location(mod, os.path.join(HERE, f))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    m.make_model(os.path.join(W, out))
MODELS = [
    ("small CNN", W + "/small_cnn.onnx", [], 20000),
    ("MNIST CNN", W + "/mnist_cnn.onnx", [], 5000),
    ("mel spectrogram", SHARED + "/melspectrogram.onnx", ["--input", "input=1,1280"], 1000),
    ("speech embedding", SHARED + "/embedding_model.onnx", ["--input", "input_1=1,76,32,1"], 100),
    ("Silero VAD", SHARED + "/silero_vad_16k_op15.onnx", ["--input", "input=1,512", "--input", "state=2,1,128"], 2000),
]
ROUNDS = int(os.environ.get("ROUNDS", "5"))

def harness(h, prefix, reps):
    proto = re.search(r"int %s_run\((.*?)\);" % prefix, open(h).read(), re.S).group(1)
    params = [p.strip() for p in proto.split(",")]
    decl, args = [], []
    for k, p in enumerate(params):
        m = re.match(r"(const )?(\w+) \*(\w+)", p)
        t, nm = m.group(2), m.group(3)
        if nm.startswith("in_"):
            idx = sum(1 for q in params[:k] if "in_" in q)
            cnt = "%s_INPUT%d_COUNT" % (prefix, idx)
        else:
            idx = sum(1 for q in params[:k] if "out_" in q)
            cnt = "%s_OUTPUT%d_COUNT" % (prefix, idx)
        decl.append("static %s b%d[%s];" % (t, k, cnt))
        if nm.startswith("in_"):
            decl.append("static void fill%d(void) { for (size_t i = 0; i < %s; i++) b%d[i] = (%s)(%s); }" %
                        (k, cnt, k, t, "16000" if t == "int64_t" else "((i * 7919u) % 1000u) / 1000.0 - 0.5"))
        args.append("b%d" % k)
    fills = " ".join("fill%d();" % k for k, p in enumerate(params) if "in_" in p.split("*")[1])
    return """#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>
#include "%s.h"
%s
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) {
  %s
  double best = 1e9;
  for (int r = 0; r < %d; r++) {
    double t0 = now();
    %s_run(%s);
    double t = now() - t0;
    if (t < best) best = t;
  }
  printf("%%.2f\\n", best * 1e6);
  return 0;
}
""" % (prefix, "\n".join(decl), fills, reps, prefix, ", ".join(args))

def cpu_time(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, capture_output=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)

def size(obj):
    out = subprocess.run(["size", obj], capture_output=True, text=True, check=True).stdout.split("\n")[1].split()
    return int(out[0]), int(out[1]), int(out[2])

rows = []
for name, model, inp, reps in MODELS:
    d = os.path.join(W, re.sub(r"\W", "_", name))
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "m.c")
    t0 = time.time()
    r = subprocess.run([ONNXC, "compile", model, "-o", src, "--prefix", "m"] + inp, capture_output=True, text=True)
    tc = time.time() - t0
    if r.returncode:
        print(name, "declined:", r.stderr.strip()); continue
    subprocess.run([ONNXC, "compile", model, "-o", os.path.join(d, "mx.c"), "--prefix", "m", "--target", "avx2"] + inp, check=True, capture_output=True)
    subprocess.run([ONNXC, "compile", model, "-o", os.path.join(d, "mb.c"), "--prefix", "m", "--weights", "blob", os.path.join(d, "mb.bin")] + inp, check=True, capture_output=True)
    tcc = cpu_time(["cc", "-std=c99", "-O2", "-c", src, "-o", os.path.join(d, "m.o")])
    sz = size(os.path.join(d, "m.o"))
    subprocess.run(["cc", "-std=c99", "-O2", "-c", os.path.join(d, "mb.c"), "-o", os.path.join(d, "mb.o")], check=True)
    szb = size(os.path.join(d, "mb.o"))[0], os.path.getsize(os.path.join(d, "mb.bin"))
    with open(os.path.join(d, "h.c"), "w") as f:
        f.write(harness(os.path.join(d, "m.h"), "m", reps))
    progs = {}
    for tag, s, fl in [("O2", "m.c", "-O2"), ("O3", "m.c", "-O3"), ("avx2", "mx.c", "-O2")]:
        exe = os.path.join(d, "t_" + tag)
        subprocess.run(["cc", "-std=c99", fl, "-I", d, os.path.join(d, "h.c"), os.path.join(d, s), "-lm", "-o", exe], check=True)
        progs[tag] = exe
    best = {k: 1e18 for k in list(progs) + ["bench"]}
    for rnd in range(ROUNDS):
        for tag, exe in progs.items():
            best[tag] = min(best[tag], float(subprocess.run([exe], capture_output=True, text=True, check=True).stdout))
        b = subprocess.run([ONNXC, "bench", model, "--threads", "1", "--runs", str(min(reps, 2000))] + inp, capture_output=True, text=True)
        m = re.search(r"min[ =:]+([0-9.]+) *(us|ms)", b.stdout + b.stderr)
        if m:
            v = float(m.group(1)) * (1000 if m.group(2) == "ms" else 1)
            best["bench"] = min(best["bench"], v)
        elif rnd == 0:
            print("bench output:", (b.stdout + b.stderr)[-400:])
    row = (name, tc, tcc, sz, szb, best)
    rows.append(row)
    print("| %s | %.1f | %.1f | %s / %s / %s | %s / %s | %.1f | %.1f | %.1f | %.1f |" % (
        name, tc, tcc, format(sz[0], ","), format(sz[1], ","), format(sz[2], ","), format(szb[0], ","), format(szb[1], ","),
        best["O2"], best["O3"], best["avx2"], best["bench"]), flush=True)
