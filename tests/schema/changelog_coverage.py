#!/usr/bin/env python3
"""Checks that every entry of Changelog.md and Changelog-ml.md is in onnxc's
schema table, with the same version line, attributes, inputs, outputs, arity
ranges and type constraints.

usage: changelog_coverage.py ONNXC SPEC_DIR
Compares the structural lines of each `### <a name=...>` entry of the
changelogs (prose dropped) with `onnxc schema --dump`. Exits 77 (skip) when
the spec folder is absent."""
import os
import re
import subprocess
import sys

KEEP = re.compile(r"^(### <a name=|#### |<dt>|This version of the operator|No versioning)")


def norm(line):
    # The table keeps "differentiable" as yes/no; "non-differentiable" is the
    # doc's word for no.
    line = re.sub(r" \(non-differentiable\)", "", line)
    line = line.replace(", non-differentiable)", ")").replace("(non-differentiable, ", "(")
    # "(default is (3.402823e+38))" -> "(default is 3.402823e+38)"
    line = re.sub(r"\(default is \(([^()]*)\)\)", r"(default is \1)", line)
    return line.rstrip()


def entries(lines):
    out, cur = {}, None
    for line in lines:
        if line.startswith("### <a name="):
            name = re.match(r'^### <a name="([^"]+)"', line).group(1)
            cur = out.setdefault(name, [])
        elif line.startswith("# ") or line.startswith("## "):
            cur = None
        if cur is not None and KEEP.match(line):
            # "#### Function (opset N)" sections exist only in onnxc's output
            if line.startswith("#### Function"):
                continue
            cur.append(norm(line))
    return out


def main():
    onnxc, spec = sys.argv[1], sys.argv[2]
    files = [os.path.join(spec, f) for f in ("Changelog.md", "Changelog-ml.md")]
    if not all(os.path.exists(f) for f in files):
        print("spec folder %s absent: skipped" % spec)
        sys.exit(77)
    want = {}
    for f in files:
        with open(f, encoding="utf-8") as fh:
            want.update(entries(fh.read().split("\n")))
    dump = subprocess.run([onnxc, "schema", "--dump"], check=True, capture_output=True, text=True).stdout
    got = entries(dump.split("\n"))
    bad = 0
    for name, lines in want.items():
        if name not in got:
            print("missing from the table: %s" % name)
            bad += 1
        elif got[name] != lines:
            bad += 1
            print("differs: %s" % name)
            for a, b in zip(lines, got[name]):
                if a != b:
                    print("  spec:  %s\n  onnxc: %s" % (a, b))
                    break
            else:
                print("  spec has %d lines, onnxc %d" % (len(lines), len(got[name])))
    # onnxc's own operators (ai.onnxc, src/schema/schema_onnxc.c) and
    # onnxruntime's (com.microsoft, and its additions to the default domain,
    # src/schema/schema_contrib_*.c) are in no changelog of the spec; every
    # other table entry must be
    ort_default = ("SimplifiedLayerNormalization-1",)
    for name in got:
        if (name not in want and not name.startswith(("ai.onnxc.", "com.microsoft."))
                and name not in ort_default):
            print("in the table but not in the changelogs: %s" % name)
            bad += 1
    print("%d changelog entries, %d table entries, %d problems" % (len(want), len(got), bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
