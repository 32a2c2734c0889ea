#!/usr/bin/env python3
"""Every model of the bench set (../shared/bench/bench.json), after
`onnxc convert --optimize`, passes `onnxc check --strict` and
`onnxc infer --strict`: the ai.onnxc operators the passes write are the ones
their schemas describe (src/schema/schema_onnxc.c), with the attribute types
the schemas declare and shapes inference can follow.

usage: optimized_bench.py ONNXC SHARED_DIR WORK_DIR [NODE_PATH]
Models come from SHARED_DIR/models and SHARED_DIR/testdata as bench.json
says; the generated ones (make_transformers.py, make_cnn.py; resnet50_qdq is
calibrated with onnxruntime-node, found in NODE_PATH) are read from
$ONNXC_BENCH_MODELS (default: onnxc-bench-models in the temporary folder, as
sidebyside.py has them) and made there when absent. Exits 77 when SHARED_DIR
has no bench.json."""
import json
import os
import subprocess
import sys
import tempfile
import time

CNNS = ("resnet50", "mobilenet_v2")  # make_cnn.py's, with their _qdq forms


def generated_dir():
    return os.environ.get("ONNXC_BENCH_MODELS") or os.path.join(
        tempfile.gettempdir(), "onnxc-bench-models"
    )


def ensure(path, entry, shared, node_path):
    """Makes a generated model that is not there yet, as sidebyside.py does."""
    if os.path.exists(path) or entry.get("root") != "generated":
        return
    base = entry["file"][:-5]
    cnn = base.replace("_qdq", "") if base.replace("_qdq", "") in CNNS else None
    script = os.path.join(shared, "bench", "make_cnn.py" if cnn else "make_transformers.py")
    env = dict(os.environ)
    if node_path:
        env["NODE_PATH"] = node_path
    t0 = time.time()
    subprocess.run([sys.executable, script, generated_dir(), cnn or base], check=True, env=env)
    print("  generated %s in %.1f s" % (entry["file"], time.time() - t0))


def onnxc_nodes(path):
    """The op types of the main graph's ai.onnxc nodes (the model's own
    weights stay on disk)."""
    import onnx

    m = onnx.load(path, load_external_data=False)
    return [n.op_type for n in m.graph.node if n.domain == "ai.onnxc"]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    onnxc, shared, work = sys.argv[1], sys.argv[2], sys.argv[3]
    node_path = sys.argv[4] if len(sys.argv) > 4 else None
    bench = os.path.join(shared, "bench", "bench.json")
    if not os.path.exists(bench):
        print("no %s: skipped" % bench)
        sys.exit(77)
    with open(bench, encoding="utf-8") as f:
        models = json.load(f)
    roots = {
        "shared": os.path.join(shared, "models"),
        "testdata": os.path.join(shared, "testdata"),
        "generated": generated_dir(),
    }
    os.makedirs(work, exist_ok=True)
    failed, fused_ops = [], {}
    for name, entry in models.items():
        root = roots.get(entry.get("root"))
        if root is None:
            print("FAIL %s: unknown root %r" % (name, entry.get("root")))
            failed.append(name)
            continue
        src = os.path.join(root, entry["file"])
        t0 = time.time()
        try:
            ensure(src, entry, shared, node_path)
        except (subprocess.CalledProcessError, OSError) as e:
            print("FAIL %s: could not generate %s: %s" % (name, src, e))
            failed.append(name)
            continue
        out = os.path.join(work, name + ".onnx")
        steps = [
            ("convert --optimize", [onnxc, "convert", "--optimize", src, out]),
            ("check --strict", [onnxc, "check", "--strict", "--quiet", out]),
            ("infer --strict", [onnxc, "infer", "--strict", "--quiet", out]),
        ]
        ok = True
        for what, cmd in steps:
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print("FAIL %s: %s exits %d" % (name, what, r.returncode))
                lines = (r.stdout + r.stderr).strip().split("\n")
                for line in lines[:12]:
                    print("  " + line)
                if len(lines) > 12:
                    print("  ... %d more lines" % (len(lines) - 12))
                ok = False
                break
        ops = onnxc_nodes(out) if ok else []
        for op in ops:
            fused_ops[op] = fused_ops.get(op, 0) + 1
        # the optimised copies (their external data too) go: the largest is
        # half a gigabyte
        for f in os.listdir(work):
            if f.startswith(name + ".onnx"):
                os.remove(os.path.join(work, f))
        if ok:
            print("ok   %-22s %4d ai.onnxc nodes  %5.1f s" % (name, len(ops), time.time() - t0))
        else:
            failed.append(name)
    print("ai.onnxc operators seen: " + ", ".join("%s %d" % kv for kv in sorted(fused_ops.items())))
    print("%d models, %d failed%s" % (len(models), len(failed), (": " + " ".join(failed)) if failed else ""))
    # the set must exercise the schemas, not only pass: most operators appear
    if len(fused_ops) < 8:
        print("FAIL: only %d ai.onnxc operators seen" % len(fused_ops))
        sys.exit(1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
