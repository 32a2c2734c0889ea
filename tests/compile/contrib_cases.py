#!/usr/bin/env python3
"""contrib_cases.py - onnxruntime's com.microsoft operators through `onnxc compile`.

usage: contrib_cases.py ONNXC GENERATOR WORKDIR [--cc CC] [--filter SUBSTR] [-v]

GENERATOR is one of tests/contrib/gen_*.py, the cases the ort_contrib_*
tests run through onnxruntime-node and `onnxc run` (cases.py describes
them). Here each case is compiled with `onnxc compile --main`, the cases
built together into one program with `-std=c99 -Wall -Wextra -Werror -O2`
(cc_batch.py), run on the case's .npy inputs, and every output compared
with onnxruntime-node's (tests/oracle/ort_refs.mjs) or, where the case says
onnxruntime refuses it ("ort": "none"), with its independent "expected"
arrays, within the case's tolerance (|got - ref| <= atol + rtol |ref|,
NaN equal to NaN).
A case may name nodes whose generated functions must be integer-only
("integer_nodes": no float or double in their bodies, no read of a float
parameter). A case the compiler must refuse names it: "compile": ["substring", ...],
words its message must hold (e.g. an output length that depends on data).
Cases where onnxc's runtime must fail ("error") are not compiled: they are
checked by ort_contrib_*; cases onnxruntime refuses to run ("ort":
"refuses") have no reference. Any other case the compiler declines is a
failure. Exit status 1 on any failure, 77 (skipped) without numpy,
python3-onnx, node or onnxruntime-node.
"""
import json
import os
import re
import shutil
import subprocess
import sys

try:
    import numpy as np
    from onnx import TensorProto, numpy_helper  # noqa: F401  (load_pb's)
except ImportError:
    print("contrib_cases: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cc_batch  # noqa: E402
from shape_fold import load_pb  # noqa: E402


def ref_array(r):
    """ort_refs.json's { type, dims, data } as a float64 array (float
    outputs) or an int64 one"""
    data = [float(v) if isinstance(v, str) else v for v in r["data"]]
    kind = np.float64 if r["type"].startswith(("float", "bfloat")) else np.int64
    return np.array(data, dtype=kind).reshape(r["dims"])


def differs(name, got, ref, rtol, atol):
    if list(got.shape) != list(ref.shape):
        return "%s: shape %s where the reference gives %s" % (name, list(got.shape), list(ref.shape))
    g = got.astype(np.float64).ravel()
    r = ref.astype(np.float64).ravel()
    same = (g == r) | (np.isnan(g) & np.isnan(r))
    ok = same | (np.abs(g - r) <= atol + rtol * np.abs(r))
    if ok.all():
        return None
    i = int(np.argmax(~ok))
    return "%s[%d]: %r where the reference gives %r (tolerance %g + %g x |ref|)" % (name, i, g[i], r[i], atol, rtol)


def float_in(src, nodes):
    """Why the C functions of the named nodes in generated file src are not
    integer-only (a float or double in their bodies, or a read of a float
    parameter such as a scale), or None"""
    with open(src) as f:
        text = f.read()
    for name in nodes:
        safe = re.sub(r"[^A-Za-z0-9]", "_", name)
        m = re.search(r"static void \w+?_n\d+_%s\((.*?)\) \{\n(.*?)\n\}\n" % re.escape(safe), text,
                      re.S)
        if not m:
            return "no function of node '%s' in %s" % (name, src)
        floats = re.findall(r"\bfloat \*restrict (X\d+)", m.group(1))
        body = "\n".join(l for l in m.group(2).splitlines() if not l.strip().startswith("(void)"))
        hit = re.search(r"\b(float|double|nearbyintf?|%s)\b" % "|".join(floats or ["float"]), body)
        if hit:
            return "node '%s' is compiled with floating-point arithmetic ('%s')" % (name, hit.group(1))
    return None


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    args = [a for a in args if a != "-v"]
    opts = {"--cc": os.environ.get("CC", "cc"), "--filter": None}
    for o in list(opts):
        if o in args:
            i = args.index(o)
            opts[o] = args[i + 1]
            del args[i:i + 2]
    onnxc, generator, work = args
    node = shutil.which("node")
    if not node:
        print("contrib_cases: node is needed for onnxruntime-node; skipped")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cdir = os.path.join(work, "gen")
    os.makedirs(cdir)
    r = subprocess.run([sys.executable, generator, cdir], capture_output=True, text=True)
    if r.returncode == 77:
        print("contrib_cases: generator skipped: " + r.stdout + r.stderr)
        return 77
    if r.returncode:
        print("contrib_cases: generator failed:\n" + r.stdout + r.stderr)
        return 1
    r = subprocess.run([node, os.path.join(HERE, "..", "oracle", "ort_refs.mjs"), cdir],
                       capture_output=True, text=True)
    if r.returncode == 77:
        print("contrib_cases: onnxruntime-node not found; skipped")
        return 77
    if r.returncode:
        print("contrib_cases: ort_refs.mjs failed:\n" + r.stdout + r.stderr)
        return 1
    with open(os.path.join(cdir, "cases.json")) as f:
        cases = json.load(f)
    with open(os.path.join(cdir, "ort_refs.json")) as f:
        ort_refs = json.load(f)

    failures, todo, refs, skipped = [], [], {}, 0
    for k, c in enumerate(cases):
        if opts["--filter"] and opts["--filter"] not in c["name"]:
            continue
        mode = c.get("ort", "compare")
        if c.get("error") or mode == "refuses":
            skipped += 1
            continue
        if mode == "compare":
            got = ort_refs.get(c["name"], {})
            if "error" in got:
                failures.append((c["name"], "onnxruntime cannot run it: " + got["error"]))
                continue
            refs[k] = {n: ref_array(v) for n, v in got.items()}
        else:
            refs[k] = {n: np.load(os.path.join(cdir, f)) for n, f in (c.get("expected") or {}).items()}
        todo.append((k, os.path.join(cdir, c["model"])))

    compiled, declined = [], []
    for k, model, src, rc, err in cc_batch.compile_models(onnxc, work, todo):
        c = cases[k]
        must = c.get("compile")
        if rc == 0 and must:
            failures.append((c["name"], "compiled; the case says the compiler refuses it"))
        elif rc == 0:
            why = float_in(src, c.get("integer_nodes") or [])
            if why:
                failures.append((c["name"], why))
            else:
                compiled.append((k, c["name"], src))
        elif rc == 1 and err.startswith("onnxc compile:"):
            missing = [w for w in must or [] if w not in err]
            if must and not missing:
                declined.append(c["name"])
            elif must:
                failures.append((c["name"], "the refusal does not say %s: %s" % (missing, err)))
            else:
                failures.append((c["name"], "not compiled: " + err))
        else:
            failures.append((c["name"], "compiler crashed or failed (%d): %s" % (rc, err[-300:])))

    passed = 0
    if compiled:
        prog, built, bad, link_err = cc_batch.build_program(opts["--cc"], work, compiled)
        failures += bad
        if prog is None:
            print("contrib_cases: link failed:\n" + link_err)
            return 1
        for k, name, _ in built:
            c = cases[k]
            out = os.path.join(work, "out%d" % k)
            ins = ["%s=%s" % (n, os.path.join(cdir, f)) for n, f in (c.get("inputs") or {}).items()]
            r = subprocess.run([prog, "c%d" % k, "-o", out] + ins, capture_output=True, text=True, timeout=60)
            if r.returncode:
                failures.append((name, "run failed (%d): %s" % (r.returncode, r.stderr.strip()[-300:])))
                continue
            why = None
            # the generated main writes graph output i as output_i.pb; the
            # case lists the graph's outputs in order
            for i, n in enumerate(c.get("outputs") or []):
                if n not in refs[k]:
                    continue
                got = os.path.join(out, "output_%d.pb" % i)
                if not os.path.exists(got):
                    why = "output_%d.pb missing" % i
                    break
                why = differs(n, load_pb(got), refs[k][n], c.get("rtol", 1e-4), c.get("atol", 1e-5))
                if why:
                    break
            if why:
                failures.append((name, why))
            else:
                passed += 1
                if verbose:
                    print("pass", name)
    for name, why in failures:
        print("FAIL %s: %s" % (name, why))
    print("contrib_cases %s: %d cases compiled and compared: %d passed, %d failed; %d refused as the case "
          "says; %d left to ort_contrib (errors, onnxruntime refuses)"
          % (os.path.basename(generator), len(compiled), passed, len(failures), len(declined), skipped))
    return 1 if failures or passed + len(declined) == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
