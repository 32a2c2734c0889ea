"""Compares onnxc's parser with python3-onnx's onnx.parser (Debian, ONNX 1.12).

usage: oracle.py DIR MIN_COUNT
DIR holds pairs N.onnxtxt (a text) and N.onnx (what onnxc parsed it to),
written by `text_roundtrip -o DIR`. Every text that ONNX 1.12 parses must give
the same ModelProto, apart from the normalisations listed in
docs/text-format.md ("python3-onnx 1.12"). Exit 77 (skipped) without onnx.
"""
import glob
import os
import sys

try:
    import onnx
    import onnx.parser
except ImportError:
    print("python3-onnx is not installed: skipped")
    sys.exit(77)


def normalise(m):
    """1.12 writes domain "" on every node and name "" on every attribute
    tensor that has none; onnxc leaves them absent (as binary files do)."""

    def graph(g):
        for n in g.node:
            node(n)

    def tensor(t):
        if t.HasField("name") and t.name == "":
            t.ClearField("name")

    def node(n):
        if n.HasField("domain") and n.domain == "":
            n.ClearField("domain")
        for a in n.attribute:
            if a.HasField("t"):
                tensor(a.t)
            if a.HasField("g"):
                graph(a.g)
            for sub in a.graphs:
                graph(sub)

    graph(m.graph)
    for f in m.functions:
        for n in f.node:
            node(n)
    return m


def main():
    folder, need = sys.argv[1], int(sys.argv[2])
    same = differ = rejected = escapes = 0
    for txt in sorted(glob.glob(os.path.join(folder, "*.onnxtxt"))):
        with open(txt, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        try:
            ref = onnx.parser.parse_model(text)
        except Exception:  # 1.12 does not know this construct
            rejected += 1
            continue
        ours = onnx.ModelProto()
        with open(txt[: -len(".onnxtxt")] + ".onnx", "rb") as f:
            ours.ParseFromString(f.read())
        if normalise(ref) == normalise(ours):
            same += 1
        elif "\\" in text:
            escapes += 1  # 1.12 keeps the backslash of an escape (fixed later)
        else:
            differ += 1
            if differ <= 5:
                print(f"DIFFER {txt}")
                a, b = str(ref).splitlines(), str(ours).splitlines()
                import difflib

                for line in list(difflib.unified_diff(a, b, "onnx 1.12", "onnxc", lineterm=""))[:30]:
                    print("   ", line)
    print(
        f"{same} same, {differ} different, {escapes} differ only by 1.12's backslash bug, "
        f"{rejected} not understood by onnx {onnx.__version__}"
    )
    if differ or same < need:
        sys.exit(1)


main()
