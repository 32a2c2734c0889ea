"""cc_batch.py - what the data-driven compile tests (node_cases.py,
contrib_cases.py) share: many models through `onnxc compile --main` in one
`onnxc batch`, and their C files built into one program.

Each model k gets the prefix c<k>; its main file is built with
-DONNXC_NO_MAIN (the guarded common part once) and the program's own main
dispatches on its first argument: `prog c<k> -o OUTDIR INPUTS...` runs
model k as its generated main would."""
import concurrent.futures
import os
import shlex
import subprocess

FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]


def compile_models(onnxc, work, todo, extra=()):
    """`onnxc compile --main` on each (k, model) of todo, all through one
    `onnxc batch` (a fork a case instead of a start of onnxc, whose ~78
    shared libraries cost 0.07 s CPU each time, against 0.01 s for the fork
    and a small model's compile); yields (k, model, source, exit status,
    stderr) per model, the status negative for a signal."""
    blist = os.path.join(work, "compile.list")
    bout = os.path.join(work, "compile.out")
    os.makedirs(bout, exist_ok=True)
    with open(blist, "w") as f:
        for k, model in todo:
            src = os.path.join(work, "c%d.c" % k)
            f.write("\t".join(["compile", model, "-o", src, "--prefix", "c%d" % k, "--main"] + list(extra))
                    + "\n")
    r = subprocess.run([onnxc, "batch", blist, bout, "--jobs", "2"], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit("onnxc batch failed (%d): %s" % (r.returncode, r.stderr))
    status = {}
    for line in r.stdout.splitlines():
        n, st = line.split()
        status[int(n)] = int(st) if st.lstrip("-").isdigit() else -int(st[3:])  # sigS: -S
    for n, (k, model) in enumerate(todo):
        with open(os.path.join(bout, "%d.err" % n), errors="replace") as f:
            err = f.read().strip()
        yield k, model, os.path.join(work, "c%d.c" % k), status.get(n, -1), err


def build_program(cc, work, items, flags=FLAGS):
    """Builds the generated files of items, (k, name, source, ...) tuples, in
    units of 40 models (a unit that fails is built model by model, so that
    the failure names its model) and links them with a dispatching main.
    Returns (program or None, the items built, [(name, why)] failures,
    link error text). cc may hold options ("clang -fsanitize=address")."""
    cc = shlex.split(cc)

    def cc_unit(srcs, obj):
        unit = obj[:-2] + "_unit.c"
        with open(unit, "w") as f:
            f.write("#define ONNXC_NO_MAIN 1\n")
            for s in srcs:
                f.write('#include "%s"\n' % os.path.abspath(s))
        r = subprocess.run(cc + flags + ["-c", unit, "-o", obj], capture_output=True, text=True)
        return r.returncode == 0, r.stderr[-600:]

    def build(batch):
        i, group = batch
        obj = os.path.join(work, "batch%d.o" % i)
        srcs = [s for it in group for s in (it[2], it[2][:-2] + "_main.c")]
        ok, _ = cc_unit(srcs, obj)
        if ok:
            return [obj], group, []
        objs, good, bad = [], [], []
        for it in group:
            o = os.path.join(work, "one%d.o" % it[0])
            ok, err = cc_unit([it[2], it[2][:-2] + "_main.c"], o)
            if ok:
                objs.append(o)
                good.append(it)
            else:
                bad.append((it[1], "generated code does not build: " + err))
        return objs, good, bad

    batches = [(i, items[j:j + 40]) for i, j in enumerate(range(0, len(items), 40))]
    objs, built, failures = [], [], []
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        for o, good, bad in ex.map(build, batches):
            objs += o
            built += good
            failures += bad
    disp = os.path.join(work, "dispatch.c")
    with open(disp, "w") as f:
        f.write("#include <stdio.h>\n#include <string.h>\n")
        for it in built:
            f.write("int c%d_main(int argc, char **argv);\n" % it[0])
        f.write("int main(int argc, char **argv) {\n  if (argc < 2) return 2;\n")
        for it in built:
            f.write('  if (strcmp(argv[1], "c%d") == 0) return c%d_main(argc - 1, argv + 1);\n' % (it[0], it[0]))
        f.write('  fprintf(stderr, "unknown case %s\\n", argv[1]);\n  return 2;\n}\n')
    prog = os.path.join(work, "cases")
    r = subprocess.run(cc + flags + [disp] + objs + ["-lm", "-o", prog], capture_output=True, text=True)
    if r.returncode:
        return None, built, failures, r.stderr[-2000:]
    return prog, built, failures, ""
