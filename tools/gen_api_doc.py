#!/usr/bin/env python3
"""Writes docs/api.md, the reference of the public API, from include/onnxc.h.

Each section of the header (its "/* ---- name */" rulers) becomes a heading;
each declaration (function, type, enum) is listed in a code block with the
comment written above it as its text. `--check` compares the generated page
with the committed one and fails when they differ, so the page stays in step
with the header (ctest api_doc_sync).

usage: gen_api_doc.py [--check] HEADER OUT
"""
import re
import sys

RULER = re.compile(r"^/\* -{8,} ([^*]+?) \*/$")


def blocks(text):
    """Yields (kind, payload): ('section', name), ('decl', (comment, code))."""
    lines = text.split("\n")
    i, comment = 0, []
    while i < len(lines):
        line = lines[i]
        m = RULER.match(line.strip())
        if m:
            yield "section", m.group(1).strip()
            comment = []
            i += 1
            continue
        if line.startswith("/*"):
            comment = []
            while True:
                comment.append(lines[i])
                if "*/" in lines[i]:
                    break
                i += 1
            i += 1
            continue
        if line.startswith("#"):
            comment = []  # a comment above preprocessor lines is theirs
            i += 1
            continue
        if not line.strip() or line.startswith("extern") or line == "}":
            i += 1
            continue
        # a declaration: up to the ';' that closes it at depth 0
        code, depth = [], 0
        while i < len(lines):
            code.append(lines[i])
            depth += lines[i].count("{") - lines[i].count("}")
            if depth <= 0 and lines[i].rstrip().endswith(";"):
                break
            i += 1
        i += 1
        yield "decl", (comment, code)
        comment = []


def comment_text(comment):
    out = []
    for c in comment:
        c = c.strip()
        c = re.sub(r"^/\*+ ?", "", c)
        c = re.sub(r" ?\*/$", "", c)
        c = re.sub(r"^\* ?", "", c)
        out.append(c)
    return "\n".join(out).strip()


def render(header_text, header_name):
    out = [
        "# libonnxc API reference",
        "",
        f"Generated from `{header_name}` by `tools/gen_api_doc.py` (the test `api_doc_sync`",
        "fails when this page and the header differ: edit the header, then run",
        "`python3 tools/gen_api_doc.py include/onnxc.h docs/api.md`).",
        "",
    ]
    first = re.match(r"\s*(/\*.*?\*/)", header_text, re.S)
    if first:
        out += [comment_text(first.group(1).split("\n")), ""]
    intro_done = False
    for kind, payload in blocks(header_text):
        if kind == "section":
            out += [f"## {payload[0].upper()}{payload[1:]}", ""]
            intro_done = True
            continue
        comment, code = payload
        if code[0].startswith("ONNXC_API "):
            pad = len("ONNXC_API ")
            code = [code[0][pad:]] + [c[pad:] if c.startswith(" " * pad) else c for c in code[1:]]
        if not intro_done and not any("onnxc" in c for c in code):  # pragma: no cover
            continue
        text = comment_text(comment)
        out += ["```c"] + code + ["```", ""]
        if text:
            out += [text, ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    header, target = args
    with open(header, encoding="utf-8") as f:
        page = render(f.read(), "include/onnxc.h")
    if check:
        try:
            with open(target, encoding="utf-8") as f:
                old = f.read()
        except OSError as e:
            print(f"api_doc_sync: {e}", file=sys.stderr)
            return 1
        if old != page:
            print(f"api_doc_sync: {target} differs from what {header} gives; run "
                  f"python3 tools/gen_api_doc.py {header} {target}", file=sys.stderr)
            return 1
        return 0
    with open(target, "w", encoding="utf-8") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
