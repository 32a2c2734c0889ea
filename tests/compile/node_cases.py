#!/usr/bin/env python3
"""node_cases.py - the ONNX node test cases through `onnxc compile`.

usage: node_cases.py ONNXC TESTDATA WORKDIR [--cc CC] [--filter SUBSTR]
                     [--compile-arg ARG]... [-v]

For every TESTDATA/node/test_*/ case: `onnxc compile --main`; a case the
compiler declines (an operator, type or dynamic shape it does not compile:
exit status 1 with a message) is counted as unsupported and left out. The
others are built together into one program (each model with its own prefix,
their main files with -DONNXC_NO_MAIN and a dispatcher), with
`-std=c99 -Wall -Wextra -Werror -O2`, run on test_data_set_0's inputs, and
their outputs compared with the expected ones as `onnxc test` does
(|got - want| <= 1e-7 + 1e-3 |want|, NaN equal to NaN, infinities exact).
A case whose reference is a random draw (a reason starting "random" in
tests/conformance/expected_failures.txt, as `onnxc test` reads that list)
counts as passed when it matches and is listed apart, not failed, when not.
--compile-arg passes ARG to every `onnxc compile` (e.g. --float-only: the
cases it refuses are counted as not compiled, with its reason).
The expected outputs come from the ONNX test data (the reference
implementation), read with python3-onnx. Exit status 1 if any compiled case
fails to build, run or match; 77 (skipped) without onnx and numpy.
"""
import glob
import os
import subprocess
import sys

try:
    import numpy as np
    from onnx import TensorProto, numpy_helper
except ImportError:
    print("node_cases: python3 onnx and numpy are needed; skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cc_batch  # noqa: E402  (compile in one batch, build as one program)


# float8 kinds (TensorProto.DataType 17..20, newer than some python3-onnx):
# (mantissa bits, exponent bias, kind) with kind 0: E4M3FN (NaN is
# S.1111.111), 1: FNUZ (NaN is 0x80, no -0), 2: E5M2 (IEEE inf and NaN),
# decoded here by the formats' definitions into float32 tables
F8 = {17: (3, 7, 0), 18: (3, 8, 1), 19: (2, 15, 2), 20: (2, 16, 1)}
# packed types: bits, signed (uint4, int4, float4e2m1, uint2, int2)
PACKED = {21: (4, False), 22: (4, True), 23: (4, False), 25: (2, False), 26: (2, True)}


def f8_table(man, bias, kind):
    import math
    out = []
    for v in range(256):
        s, e, m = v >> 7, (v & 0x7F) >> man, v & ((1 << man) - 1)
        emax = 0x7F >> man
        if (kind == 1 and v == 0x80) or (kind == 0 and v & 0x7F == 0x7F) or (kind == 2 and e == emax and m):
            x = float("nan")
        elif kind == 2 and e == emax:
            x = float("inf")
        elif e == 0:
            x = math.ldexp(m, 1 - bias - man)
        else:
            x = math.ldexp((1 << man) | m, e - bias - man)
        out.append(-x if s else x)
    return np.array(out, dtype=np.float32)


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type == 24:  # float8e8m0: 2^(v - 127), 0xFF is NaN
        bits = (np.frombuffer(t.raw_data, dtype=np.uint8) if t.raw_data else
                np.array(t.int32_data, dtype=np.int64).astype(np.uint8))
        x = np.where(bits == 255, np.nan, np.ldexp(1.0, bits.astype(np.int32) - 127)).astype(np.float32)
        return x.reshape(tuple(t.dims))
    if t.data_type in F8 or t.data_type == 16:
        # bfloat16 and float8 as float32 values, from their bits
        dt = np.uint16 if t.data_type == 16 else np.uint8
        bits = (np.frombuffer(t.raw_data, dtype=dt) if t.raw_data else
                np.array(t.int32_data, dtype=np.int64).astype(dt))
        if t.data_type == 16:
            x = (bits.astype(np.uint32) << 16).view(np.float32)
        else:
            x = f8_table(*F8[t.data_type])[bits]
        return x.reshape(tuple(t.dims))
    if t.data_type in PACKED:
        # 4- and 2-bit types: unpacked, element 0 in the low bits of byte 0
        bits, signed = PACKED[t.data_type]
        raw = (np.frombuffer(t.raw_data, dtype=np.uint8) if t.raw_data else
               np.array(t.int32_data, dtype=np.int64).astype(np.uint8))
        n = int(np.prod(t.dims)) if len(t.dims) else 1
        per = 8 // bits
        v = np.stack([(raw >> (bits * j)) & ((1 << bits) - 1) for j in range(per)], 1).reshape(-1)[:n]
        if t.data_type == 23:  # float4e2m1: 1 mantissa bit, bias 1, no inf or NaN
            x = f8_table(1, 1, 3)[(v & 7) | ((v & 8) << 4)]
        elif signed:
            x = ((v.astype(np.int16) ^ (1 << (bits - 1))) - (1 << (bits - 1))).astype(np.int8)
        else:
            x = v.astype(np.uint8)
        return x.reshape(tuple(t.dims))
    return numpy_helper.to_array(t)


def close(want, got):
    if want.shape != got.shape or want.dtype != got.dtype:
        return "shape/type: expected %s %s, got %s %s" % (want.dtype, want.shape, got.dtype, got.shape)
    if want.dtype.kind in "fc":
        w = want.astype(np.float64)
        g = got.astype(np.float64)
        ok = np.isclose(g, w, rtol=1e-3, atol=1e-7, equal_nan=True)
        inf = np.isinf(w) | np.isinf(g)
        ok = np.where(inf, w == g, ok)
        if not ok.all():
            i = int(np.argmin(ok.reshape(-1)))
            return "element %d: expected %r, got %r" % (i, w.reshape(-1)[i], g.reshape(-1)[i])
        return None
    if not np.array_equal(want, got):
        i = int(np.argmin((want == got).reshape(-1)))
        return "element %d: expected %r, got %r" % (i, want.reshape(-1)[i], got.reshape(-1)[i])
    return None


def main():
    args = sys.argv[1:]
    verbose = "-v" in args
    args = [a for a in args if a != "-v"]
    cc = os.environ.get("CC", "cc")
    filt = None
    extra = []
    while "--compile-arg" in args:
        i = args.index("--compile-arg")
        extra.append(args[i + 1])
        del args[i:i + 2]
    if "--cc" in args:
        i = args.index("--cc")
        cc = args[i + 1]
        del args[i:i + 2]
    if "--filter" in args:
        i = args.index("--filter")
        filt = args[i + 1]
        del args[i:i + 2]
    onnxc, testdata, work = args
    os.makedirs(work, exist_ok=True)
    cases = sorted(glob.glob(os.path.join(testdata, "node", "test_*", "model.onnx")))
    if filt:
        cases = [c for c in cases if filt in c]
    if not cases:
        print("node_cases: no test cases under %s/node" % testdata)
        return 1

    # the cases with an operator of another domain are counted as not
    # compiled without running the compiler on them
    # (--list-ops names the default domain's operators plainly, the others
    # as DOMAIN:Op)
    ops = set(subprocess.run([onnxc, "compile", "--list-ops"], capture_output=True, text=True,
                             check=True).stdout.split())
    import onnx

    def qualified(n):
        return n.op_type if n.domain in ("", "ai.onnx") else "%s:%s" % (n.domain, n.op_type)

    todo, unsupported, failures = [], {}, []
    for k, model in enumerate(cases):
        try:
            m = onnx.load(model, load_external_data=False)
            bad = sorted({qualified(n) for n in m.graph.node
                          if n.domain not in ("", "ai.onnx") and qualified(n) not in ops})
        except Exception as e:  # a model python3-onnx cannot read: let the compiler say
            bad = []
        if bad:
            unsupported[os.path.basename(os.path.dirname(model))] = "no C generator for " + bad[0]
        else:
            # the compiler itself says why it refuses an operator of the
            # default domain (a data-dependent output length, strings ...)
            todo.append((k, model))

    compiled = []
    if todo:
        for k, model, src, rc, err in cc_batch.compile_models(onnxc, work, todo, extra):
            d = os.path.dirname(model)
            name = os.path.basename(d)
            if rc == 0:
                compiled.append((k, name, src, d))
            elif rc == 1 and err.startswith("onnxc compile:"):
                reason = err.split(": ", 1)[1] if ": " in err else err
                unsupported[name] = reason
            else:
                failures.append((name, "compiler crashed or failed (%d): %s" % (rc, err[-300:])))

    # build: the compiled cases as one program (cc_batch.py)
    prog, built, bad, link_err = cc_batch.build_program(cc, work, compiled)
    failures += bad
    if prog is None:
        print("node_cases: link failed:\n" + link_err)
        return 1

    # the cases whose reference comes from a random draw: listed with a
    # reason starting "random" in the conformance expected failures, as
    # `onnxc test` reads them; a mismatch there is expected (the compiled
    # draws are not numpy's, nor the runtime's), a match is a pass
    random_cases = set()
    xf = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance",
                      "expected_failures.txt")
    if os.path.exists(xf):
        with open(xf) as f:
            for line in f:
                parts = line.split(None, 1)
                if len(parts) == 2 and not parts[0].startswith("#") and parts[1].startswith("random"):
                    random_cases.add(parts[0].rsplit("/", 1)[-1])
    passed, random_differ = 0, []
    for k, name, src, d in built:
        ds = os.path.join(d, "test_data_set_0")
        ins = sorted(glob.glob(os.path.join(ds, "input_*.pb")), key=lambda p: int(p[:-3].rsplit("_", 1)[1]))
        want = sorted(glob.glob(os.path.join(ds, "output_*.pb")), key=lambda p: int(p[:-3].rsplit("_", 1)[1]))
        out = os.path.join(work, "out%d" % k)
        r = subprocess.run([prog, "c%d" % k, "-o", out] + ins, capture_output=True, text=True, timeout=60)
        if r.returncode:
            failures.append((name, "run failed (%d): %s" % (r.returncode, r.stderr.strip()[-300:])))
            continue
        why = None
        for i, w in enumerate(want):
            got = os.path.join(out, "output_%d.pb" % i)
            if not os.path.exists(got):
                why = "output_%d.pb missing" % i
                break
            why = close(load_pb(w), load_pb(got))
            if why:
                why = "output %d: %s" % (i, why)
                break
        if why and name in random_cases:
            random_differ.append(name)
        elif why:
            failures.append((name, why))
        else:
            passed += 1
            if verbose:
                print("pass", name)
    total = len(cases)
    print("node_cases: %d test cases; %d compiled, %d passed, %d failed; %d not compiled (unsupported op, type or dynamic shape)"
          % (total, len(compiled), passed, len(failures), len(unsupported)))
    if random_differ:
        print("node_cases: %d random-draw cases ran and differ from their reference as expected "
              "(listed \"random\" in tests/conformance/expected_failures.txt): %s"
              % (len(random_differ), ", ".join(sorted(random_differ))))
    if verbose:
        reasons = {}
        for n, why in unsupported.items():
            key = why.split(": ", 1)[-1][:70]
            reasons[key] = reasons.get(key, 0) + 1
        for key, cnt in sorted(reasons.items(), key=lambda x: -x[1])[:80]:
            print("  not compiled x%d: %s" % (cnt, key))
        # the same cases by operator: the one the message names ("(Op)"),
        # else the family the case's name gives
        import re
        byop = {}
        for n, why in unsupported.items():
            m = re.search(r"\(([A-Za-z0-9_]+)\)", why)
            op = m.group(1) if m else (why[len("no C generator for "):] if why.startswith("no C generator for ")
                                       else n[len("test_"):].split("_")[0])
            byop[op] = byop.get(op, 0) + 1
        print("  not compiled by operator: " + ", ".join(
            "%s %d" % kv for kv in sorted(byop.items(), key=lambda x: (-x[1], x[0]))))
    for n, why in failures:
        print("FAIL %s: %s" % (n, why))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
