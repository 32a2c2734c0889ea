#!/usr/bin/env python3
"""Every function body of src/schema/function_bodies.txt (the text compiled
into the schema table) parses with python-onnx's text parser and passes its
checker when called from a model. A body registered for an opset the installed
python-onnx does not know is left out if it fails there. Exits 77 (skip) without python-onnx.

usage: bodies_oracle.py BODIES_FILE"""
import re
import sys

try:
    import onnx
    import onnx.checker
    import onnx.defs
    import onnx.parser
except ImportError:
    print("python-onnx is not installed: skipped")
    sys.exit(77)


def main():
    txt = open(sys.argv[1], encoding="utf-8").read()
    blocks = re.split(r"^@@ ", txt, flags=re.M)[1:]
    ok = skipped = bad = 0
    top = onnx.defs.onnx_opset_version()
    for b in blocks:
        head, body = b.split("\n", 1)
        body = "\n".join(l for l in body.split("\n") if not l.startswith("#"))
        _, op, since, opset = head.split()
        m = re.search(r"^(\w+)( <[^>]*>)? \(([^)]*)\) => \(([^)]*)\)", body, re.M)
        ins = [x.strip() for x in m.group(3).split(",")]
        outs = [x.strip() for x in m.group(4).split(",")]
        # the body as a model-local function "local.Op" called by a graph
        fbody = body.replace('domain: ""', 'domain: "local"', 1)
        graph = ('<ir_version: 8, opset_import: ["" : %s, "local" : 1]>\n'
                 "G (%s) => (%s) {\n %s = local.%s (%s)\n}\n") % (
            opset, ", ".join("float[3] " + i for i in ins), ", ".join("float[3] " + o for o in outs),
            ", ".join(outs), op, ", ".join(ins))
        try:
            onnx.checker.check_model(onnx.parser.parse_model(graph + fbody))
            ok += 1
        except Exception as e:  # parse or validation error
            if int(opset) > top:
                # python-onnx binds ops of newer opsets to its own latest
                # versions, which may differ (Split-18, ReduceMean-18, Swish-24)
                skipped += 1
                continue
            bad += 1
            print("%s-%s (opset %s): %s" % (op, since, opset, str(e).split("\n")[0][:300]))
    print("%d bodies parse and check with onnx %s, %d bad, %d left out (opset > %d and ops newer than it)" % (
        ok, onnx.__version__, bad, skipped, top))
    sys.exit(1 if bad or not ok else 0)


if __name__ == "__main__":
    main()
