#!/usr/bin/env python3
"""Oracle test: onnxc check agrees with onnx.checker.check_model (python-onnx,
Debian's 1.12) on valid/invalid for every mutation that version understands.

usage: oracle.py TEST_CHECK ONNXC WORKDIR [SHARED_DIR]
Runs `TEST_CHECK [-s SHARED_DIR] WORKDIR` to write the cases (WORKDIR/manifest.txt), then
checks each with both. Exits 77 (skip) when python-onnx is absent.

Cases flagged no-oracle in the manifest are left out: they use what 1.12 does
not know (IR > 8, opsets > 17, data types > 16, overloads) or rules added to
the reference after 1.12 (see KNOWN_NEWER below)."""
import os
import shutil
import subprocess
import sys

try:
    import onnx
    from onnx import checker
except ImportError:
    print("python-onnx is not installed: skipped")
    sys.exit(77)

# Rules of the reference checker that python-onnx 1.12 predates (notes §2.4:
# payload sizes and dimension checks came with onnx#8211/#8319): 1.12 says
# valid where the current reference and onnxc say invalid.
KNOWN_NEWER = {
    # tensor payload sizes, dims, data types in raw_data (notes §2.4)
    "tensor_raw_too_small", "tensor_dims_larger_than_data", "tensor_negative_dim",
    "tensor_dims_overflow", "tensor_float_data_too_few", "sparse_values_payload",
    "body_bad_initializer", "tensor_data_type_99",
    # opset versions must fit in int (notes §2.2 rule 4)
    "opset_version_under_int32",
    # graph outputs must be produced in their own graph (notes §2.3 rule 10)
    "graph_output_undefined", "body_output_undefined", "body_output_from_outer_scope",
    # check_function_call_cycles (notes §2.7)
    "function_self_recursion", "function_mutual_recursion", "function_recursion_via_loop",
    "function_duplicate_id",
    # external-data location rules (notes §2.8)
    "external_empty_location", "external_symlink", "external_hard_link",
    "external_is_directory", "external_escapes_deep",
}
# Where 1.12 is stricter than the current reference: it requires list
# attributes to be non-empty; the current Verify does not (notes §2.6).
KNOWN_OLDER = {"attribute_empty_list_ok"}
KNOWN_NEWER_PREFIX = ("raw_short_", "few_values_")


def main():
    test_check, onnxc, work = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    args = [test_check] + (["-s", sys.argv[4]] if len(sys.argv) > 4 else []) + [work]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        print("test_check failed")
        sys.exit(1)
    compared = skipped = disagree = 0
    with open(os.path.join(work, "manifest.txt")) as f:
        lines = [l.split() for l in f if l.strip() and not l.startswith("#")]
    cases = []
    for parts in lines:
        fname, expect, rule, flags = parts[0], parts[1], parts[2], set(parts[3:])
        case = fname[4:-5]
        if ("no-oracle" in flags or case in KNOWN_NEWER or case in KNOWN_OLDER or
                case.startswith(KNOWN_NEWER_PREFIX)):
            skipped += 1
            continue
        cases.append((fname, expect, rule, flags))
    # `onnxc check` on every case through one `onnxc batch` (a fork a case
    # instead of a start of onnxc, whose ~78 shared libraries cost 0.07 s
    # CPU each time); fullmode: valid, but not under strict shape inference:
    # compare `onnxc check --full` with check_model(full_check=True)
    blist, bout = os.path.join(work, "check.list"), os.path.join(work, "check.out")
    os.makedirs(bout, exist_ok=True)
    with open(blist, "w") as f:
        for fname, _, _, flags in cases:
            f.write("\t".join(["check", os.path.join(work, fname)] +
                               (["--full"] if "fullmode" in flags else [])) + "\n")
    b = subprocess.run([onnxc, "batch", blist, bout, "--jobs", "2"], capture_output=True, text=True)
    if b.returncode not in (0, 1):
        print("onnxc batch failed (%d): %s" % (b.returncode, b.stderr))
        sys.exit(1)
    status = dict(line.split() for line in b.stdout.splitlines())
    for n, (fname, expect, rule, flags) in enumerate(cases):
        path = os.path.join(work, fname)
        fullmode = "fullmode" in flags
        try:
            checker.check_model(path, full_check="full" in flags or fullmode)
            oracle = "valid"
            why = ""
        except Exception as e:  # ValidationError, InferenceError, parse errors
            oracle = "invalid"
            why = str(e).strip().split("\n")[0][:200]
        ours = {"0": "valid", "1": "invalid"}.get(status.get(str(n)), "unreadable")
        compared += 1
        if ours != oracle:
            disagree += 1
            print("DISAGREE %s: onnxc %s, onnx %s %s (expected %s [%s])" % (
                fname, ours, onnx.__version__, oracle, expect, rule))
            if why:
                print("   onnx: " + why)
            with open(os.path.join(bout, "%d.out" % n), errors="replace") as f:
                for l in f.read().splitlines()[:3]:
                    print("   onnxc: " + l)
    print("%d cases compared with onnx %s, %d skipped, %d disagreements" % (
        compared, onnx.__version__, skipped, disagree))
    sys.exit(1 if disagree or compared == 0 else 0)


if __name__ == "__main__":
    main()
