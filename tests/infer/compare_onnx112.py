#!/usr/bin/python3
"""Compare onnxc's inferred types with onnx 1.12's shape inference (Debian
python3-onnx), used only as an independent oracle.

For every model whose opsets onnx 1.12 knows, and every value to which 1.12
gives a type, onnxc's type must be the same or more precise: same element
type and rank, and every dim that 1.12 knows as a number known as the same
number. Differences in the other direction must be listed with a reason in
tests/infer/onnx112_differences.txt ("model value: reason"); the test fails on
any other difference, and on listed ones that no longer occur."""
import os
import subprocess
import sys
import tempfile

try:
    import onnx
    from onnx import shape_inference
except ImportError:
    print("onnx (python3-onnx) not installed: skipped")
    sys.exit(77)

onnxc, shared, listfile = sys.argv[1], sys.argv[2], sys.argv[3]
MAX = {"": 17, "ai.onnx": 17, "ai.onnx.ml": 3, "ai.onnx.training": 1, "ai.onnx.preview.training": 1}

def known_opsets(m):
    for o in m.opset_import:
        if o.version > MAX.get(o.domain, 0):
            return False
    return True

def types_of(g, prefix, out):
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if vi.type.HasField("tensor_type"):
            out[prefix + vi.name] = vi.type.tensor_type
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                types_of(a.g, prefix + (n.name or n.op_type) + "." + a.name + "/", out)

def dims(t):
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]

allowed = {}
if os.path.exists(listfile):
    for line in open(listfile):
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, reason = line.partition(": ")
            allowed[key] = reason

models = []
for root in (os.path.join(shared, "testdata"), os.path.join(shared, "models")):
    for dp, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(".onnx"):
                models.append(os.path.join(dp, f))
models.sort()
checked = values = better = 0
problems = []
seen = set()
with tempfile.TemporaryDirectory() as tmp:
    # onnxc's inference of every model, through one `onnxc batch` (a fork a
    # model instead of a start of onnxc, whose ~78 shared libraries cost
    # 0.07 s CPU each time: ~1,950 models); the models onnx 1.12 cannot read
    # or infer are inferred too, and their results not looked at
    blist, bout = os.path.join(tmp, "infer.list"), os.path.join(tmp, "infer")
    os.mkdir(bout)
    with open(blist, "w") as f:
        for k, path in enumerate(models):
            f.write(f"infer\t--quiet\t{path}\t-o\t{os.path.join(bout, str(k) + '.onnx')}\n")
    b = subprocess.run([onnxc, "batch", blist, bout, "--jobs", "2"], capture_output=True, text=True)
    if b.returncode not in (0, 1):
        print(f"onnxc batch failed ({b.returncode}): {b.stderr}")
        sys.exit(1)
    status = dict(line.split() for line in b.stdout.splitlines())
    for k, path in enumerate(models):
        try:
            m = onnx.load(path)
        except Exception:
            continue
        if not known_opsets(m):
            continue
        try:
            ref = shape_inference.infer_shapes(m)
        except Exception:
            continue
        out = os.path.join(bout, f"{k}.onnx")
        rel = os.path.relpath(path, shared)
        if status.get(str(k)) != "0":
            with open(os.path.join(bout, f"{k}.err"), errors="replace") as f:
                err = f.read()
            problems.append(f"{rel}: onnxc infer failed ({status.get(str(k))}): {err.strip()[:200]}")
            continue
        ours_m = onnx.load(out)
        theirs, ours = {}, {}
        types_of(ref.graph, "", theirs)
        types_of(ours_m.graph, "", ours)
        checked += 1
        for name, t in theirs.items():
            if t.elem_type == 0:
                continue
            values += 1
            key = f"{rel} {name}"
            o = ours.get(name)
            why = None
            if o is None:
                why = "no type inferred"
            elif o.elem_type != t.elem_type:
                why = f"element type {o.elem_type} vs onnx 1.12's {t.elem_type}"
            else:
                td, od = dims(t), dims(o)
                if td is not None:
                    if od is None:
                        why = f"rank unknown, onnx 1.12 has rank {len(td)}"
                    elif len(od) != len(td):
                        why = f"rank {len(od)} vs onnx 1.12's {len(td)}"
                    else:
                        for k, (a, b) in enumerate(zip(od, td)):
                            if b is not None and a != b:
                                why = f"dim {k} is {a} vs onnx 1.12's {b}"
                                break
                        else:
                            if any(b is None and a is not None for a, b in zip(od, td)):
                                better += 1
                elif od is not None:
                    better += 1
            if why:
                seen.add(key)
                if key not in allowed:
                    problems.append(f"{key}: {why}")
for key in allowed:
    if key not in seen:
        problems.append(f"{key}: listed in {os.path.basename(listfile)} but no longer differs")
for p in problems:
    print("DIFF", p)
print(f"{checked} models, {values} values typed by onnx 1.12; onnxc more precise on {better}; "
      f"{len(seen)} listed differences")
print(f"{values - len(problems)} passed, {len(problems)} failed")
sys.exit(1 if problems else 0)
