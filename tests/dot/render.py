"""onnxc dot on real models and control-flow examples.

For each model: `onnxc dot MODEL -o x.svg` must succeed, the SVG must parse
as XML, and every node of the model (main graph, subgraphs, model-local
functions; by name, or by op type when unnamed) must appear in the picture's
text; edge labels must carry inferred shapes where the model has them. The
same run with -o x.dot must give Graphviz text with one box per node.

usage: render.py ONNXC OUTDIR MODEL...
Text models are converted to binary with `onnxc convert` to be read by the
onnx package. Without Graphviz's `dot` program only the .dot text is checked.
"""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import onnx


def nodes_of(graph):
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from nodes_of(a.g)
            for g in a.graphs:
                yield from nodes_of(g)


def all_nodes(model):
    out = list(nodes_of(model.graph))
    for f in model.functions:
        for n in f.node:
            out.append(n)
    return out


def main():
    onnxc, outdir, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(outdir, exist_ok=True)
    have_dot = shutil.which("dot") is not None
    fails = passed = 0
    for path in models:
        base = os.path.basename(path).split(".")[0]
        binary = path
        if not path.endswith(".onnx"):
            binary = os.path.join(outdir, base + ".onnx")
            subprocess.run([onnxc, "convert", path, binary], check=True)
        model = onnx.load(binary, load_external_data=False)
        nodes = all_nodes(model)
        problems = []
        dot_path = os.path.join(outdir, base + ".dot")
        r = subprocess.run([onnxc, "dot", path, "-o", dot_path], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append("dot text failed: " + r.stderr.strip())
        else:
            text = open(dot_path).read()
            boxes = len(re.findall(r"\[shape=box,", text))
            if boxes != len(nodes):
                problems.append("%d boxes in the .dot text for %d nodes" % (boxes, len(nodes)))
        if have_dot:
            svg = os.path.join(outdir, base + ".svg")
            r = subprocess.run([onnxc, "dot", path, "-o", svg], capture_output=True, text=True)
            if r.returncode != 0:
                problems.append("svg failed: " + r.stderr.strip())
            else:
                root = ET.parse(svg).getroot()  # raises on malformed XML
                texts = set()
                for el in root.iter():
                    if el.tag.endswith("text") and el.text:
                        texts.add(el.text.strip())
                for n in nodes:
                    want = n.name or n.op_type
                    if want not in texts and not any(t.endswith(want) for t in texts):
                        problems.append("node %r not in the picture" % want)
                        break
                # inferred shapes label the edges
                if nodes and not any("[" in t for t in texts):
                    problems.append("no edge label with a shape")
        if problems:
            fails += 1
            print("FAIL %s: %s" % (path, "; ".join(problems)))
        else:
            passed += 1
    print("%d passed, %d failed" % (passed, fails))
    sys.exit(1 if fails or not passed else 0)


main()
