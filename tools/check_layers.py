#!/usr/bin/env python3
"""check_layers.py - every #include against the layer order of DESIGN.md.

The "Layers" table of DESIGN.md (../shared/DESIGN.md beside the repository)
is the input: its rows, in order, are the layers, each a folder. A file may
include files of its own layer and of earlier rows, never of a later one.
Beyond the order:

  * include/onnxc.h is the public API: it counts as the layer of src/api/,
    so only src/api/ and the rows after it (cli, serve, python) may use it;
  * the rows after src/api/ are clients of that header: from src/ they may
    include only their own folder, an earlier client's folder (the server
    is a subcommand of the tool), and files that their row of the table
    names in backquotes (e.g. `src/base/sha1.h`).

Quoted includes are resolved relative to the including file, then to src/
and include/; system (<...>) includes are not looked at. A known violation
can be listed in tools/layer_exceptions.txt, one `file -> target  # reason`
per line; an exception that no longer matches is an error too, so that the
list only shrinks.

Usage: tools/check_layers.py [--root DIR] [--design FILE] [--exceptions FILE]
Exit status 0 when every include is in order, 1 otherwise, 2 on bad input.
"""

import argparse
import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ROW_RE = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*([^|]*?)\s*\|(.*)\|\s*$")
API_FOLDER = "src/api/"
PUBLIC_HEADER = "include/onnxc.h"


class Layer:
    def __init__(self, rank, folder, name, allowed):
        self.rank = rank
        self.folder = folder  # "src/base/", "python/", or the header's path
        self.name = name
        self.allowed = allowed  # paths the row names in backquotes


def read_layers(design_path):
    """The rows of the table under the "## Layers" heading, in order."""
    try:
        with open(design_path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        sys.exit(f"check_layers: cannot read {design_path} ({e.strerror}): the layer order "
                 "is its \"Layers\" table (run from a checkout beside ../shared, or pass --design)")
    layers, in_section = [], False
    for line in lines:
        if line.startswith("## "):
            in_section = line.strip() == "## Layers"
            continue
        if not in_section:
            continue
        m = ROW_RE.match(line)
        if not m:
            continue
        folder, name, owns = m.group(1), m.group(2), m.group(3)
        allowed = {p for p in re.findall(r"`([^`]+)`", owns) if p.startswith("src/")}
        layers.append(Layer(len(layers), folder, name, allowed))
    if not any(l.folder == API_FOLDER for l in layers) or len(layers) < 3:
        sys.exit(f"check_layers: no Layers table with a `{API_FOLDER}` row in {design_path}")
    return layers


def layer_of(path, layers):
    """The layer a repository-relative path belongs to (longest folder), or None."""
    if path == PUBLIC_HEADER:
        return next(l for l in layers if l.folder == API_FOLDER)
    best = None
    for l in layers:
        if l.folder.endswith("/") and path.startswith(l.folder):
            if best is None or len(l.folder) > len(best.folder):
                best = l
    return best


def sources(root):
    """Every .c/.h under src/, and the C files of the Python extension."""
    out = []
    for top in ("src", os.path.join("python", "onnxc")):
        base = os.path.join(root, top)
        for d, dirs, files in os.walk(base):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/"))
    return out


def resolve(root, src, target):
    for base in (os.path.dirname(src), "src", "include"):
        p = os.path.normpath(os.path.join(base, target)).replace(os.sep, "/")
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def read_exceptions(path):
    """{(file, target): reason} from `file -> target  # reason` lines."""
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            body, _, reason = line.partition("#")
            if not body.strip():
                continue
            m = re.match(r"^\s*(\S+)\s*->\s*(\S+)\s*$", body)
            if not m or not reason.strip():
                sys.exit(f"check_layers: {path}:{n}: want `file -> target  # reason`")
            out[(m.group(1), m.group(2))] = reason.strip()
    return out


def check(root, layers, exceptions):
    api = next(l for l in layers if l.folder == API_FOLDER)
    clients = [l for l in layers if l.rank > api.rank and l.folder.endswith("/")]
    problems, used, unplaced = [], set(), []
    for src in sources(root):
        here = layer_of(src, layers)
        if here is None:
            unplaced.append(src)
            continue
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for n, line in enumerate(lines, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            target = resolve(root, src, m.group(1))
            if target is None:
                continue  # a generated header or a system one included with quotes
            there = layer_of(target, layers)
            why = None
            if there is None:
                if target.startswith("src/"):
                    why = f"{target} is in no layer of the table"
            elif there.rank > here.rank:
                shown = PUBLIC_HEADER if target == PUBLIC_HEADER else there.folder
                why = f"{here.folder} ({here.name}) is before {shown} ({there.name})"
            elif here in clients and target.startswith("src/"):
                own = [here] + [c for c in clients if c.rank < here.rank]
                if not any(target.startswith(c.folder) for c in own) and target not in here.allowed:
                    why = (f"{here.folder} ({here.name}) is a client of {PUBLIC_HEADER}: "
                           f"it may not use {there.folder} ({there.name})")
            if why is None:
                continue
            if (src, target) in exceptions:
                used.add((src, target))
                continue
            problems.append(f"{src}:{n}: -> {target}: {why}")
    for src in unplaced:
        problems.append(f"{src}: in no layer of the table (add its folder to DESIGN.md)")
    for key in sorted(set(exceptions) - used):
        problems.append(f"tools/layer_exceptions.txt: `{key[0]} -> {key[1]}` no longer happens: "
                        "remove it")
    return problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="check every #include against DESIGN.md's layers")
    ap.add_argument("--root", default=os.path.dirname(here), help="the repository root")
    ap.add_argument("--design", help="DESIGN.md (default: ROOT/../shared/DESIGN.md)")
    ap.add_argument("--exceptions", help="default: ROOT/tools/layer_exceptions.txt")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    design = a.design or os.path.join(root, os.pardir, "shared", "DESIGN.md")
    exc = a.exceptions or os.path.join(root, "tools", "layer_exceptions.txt")
    layers = read_layers(design)
    problems = check(root, layers, read_exceptions(exc))
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} include(s) against the layer order of {design}")
        return 1
    print(f"check_layers: every include follows the {len(layers)} layers of {design}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
