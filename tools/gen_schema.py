#!/usr/bin/env python3
"""Generates src/schema/schema_table.c from the operator changelogs.

Usage: tools/gen_schema.py [SPEC_DIR] [OUT_C]
  SPEC_DIR defaults to ../shared/spec/onnx (relative to the repository root),
  OUT_C to src/schema/schema_table.c.

Every `### <a name="[domain.]Op-N">` entry of Changelog.md and Changelog-ml.md
becomes one ox_schema: name, domain, since_version, deprecation, attributes
(type, required, default in text syntax), inputs and outputs (type string,
optional/variadic, homogeneous, differentiable, min arity), type constraints
and the arity ranges printed in the section headers. Function bodies come from
src/schema/function_bodies.txt when that file exists (see schema_function.c).

The output is sorted by (domain, name, since_version) so that the C side can
binary-search it without building anything at run time.
"""
import os
import re
import sys

DOMAINS = ["ai.onnx.preview.training", "ai.onnx.preview", "ai.onnx.ml"]  # longest first

ATTR_TYPES = {
    "float": "OX_ATTR_FLOAT",
    "int": "OX_ATTR_INT",
    "string": "OX_ATTR_STRING",
    "tensor": "OX_ATTR_TENSOR",
    "graph": "OX_ATTR_GRAPH",
    "sparse_tensor": "OX_ATTR_SPARSE_TENSOR",
    "type_proto": "OX_ATTR_TYPE_PROTO",
    "list of floats": "OX_ATTR_FLOATS",
    "list of ints": "OX_ATTR_INTS",
    "list of strings": "OX_ATTR_STRINGS",
    "list of tensors": "OX_ATTR_TENSORS",
    "list of graphs": "OX_ATTR_GRAPHS",
    "list of sparse_tensors": "OX_ATTR_SPARSE_TENSORS",
    "list of type_protos": "OX_ATTR_TYPE_PROTOS",
}

HEAD_RE = re.compile(r'^### <a name="([^"]+)-(\d+)"></a>\*\*[^*]+\*\*( \(deprecated\))?</a>\s*$')
DT_RE = re.compile(r"^<dt><tt>([^<]*)</tt>(?: \(([^)]*)\))? : (.*)</dt>\s*$")
RANGE_RE = re.compile(r"^#### (Inputs|Outputs)(?: \((\d+) - (\d+|&#8734;)\))?\s*$")
INF = 2147483647


class Schema:
    def __init__(self, domain, name, since, deprecated):
        self.domain, self.name, self.since, self.deprecated = domain, name, since, deprecated
        self.experimental = False
        self.attrs, self.inputs, self.outputs, self.constraints = [], [], [], []
        self.in_range = self.out_range = None
        self.body = None
        self.source = ""


def split_domain(full):
    for d in DOMAINS:
        if full.startswith(d + "."):
            return d, full[len(d) + 1 :]
    return "", full


def c_str(s):
    if s is None:
        return "NULL"
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 32 or ord(ch) > 126:
            for b in ch.encode("utf-8"):
                out.append("\\%03o" % b)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def default_text(atype, raw):
    """The changelog's default (as printed by the doc generator) in text syntax."""
    raw = raw.strip()
    if atype in ("int", "float"):
        if raw.startswith("(") and raw.endswith(")"):
            raw = raw[1:-1]
        float(raw)  # validates
        return raw
    if atype == "string":
        return '"' + raw.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if atype.startswith("list of"):
        m = re.match(r"^\[(.*)\]$", raw)
        if not m:
            raise ValueError("bad list default " + raw)
        items = [x.strip().strip("'") for x in m.group(1).split(",") if x.strip()]
        if atype == "list of strings":
            return "[" + ", ".join('"' + x + '"' for x in items) + "]"
        return "[" + ", ".join(items) + "]"
    raise ValueError("no default form for %s" % atype)


def parse_changelog(path, errors):
    schemas = []
    cur = None
    section = None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for ln, line in enumerate(lines, 1):
        m = HEAD_RE.match(line)
        if m:
            dom, name = split_domain(m.group(1))
            cur = Schema(dom, name, int(m.group(2)), bool(m.group(3)))
            cur.source = "%s:%d" % (os.path.basename(path), ln)
            schemas.append(cur)
            section = None
            continue
        if cur is None:
            continue
        if line.startswith("### ") or line.startswith("## ") or line.startswith("# "):
            cur, section = None, None
            continue
        if line.startswith("#### "):
            r = RANGE_RE.match(line)
            if r:
                section = r.group(1).lower()
                if r.group(2) is not None:
                    hi = INF if r.group(3) == "&#8734;" else int(r.group(3))
                    rng = (int(r.group(2)), hi)
                    if section == "inputs":
                        cur.in_range = rng
                    else:
                        cur.out_range = rng
            elif line.startswith("#### Attributes"):
                section = "attrs"
            elif line.startswith("#### Type Constraints"):
                section = "constraints"
            elif line.startswith("#### Version"):
                section = "version"
            else:
                section = None
            continue
        if section == "version":
            if "No versioning maintained for experimental ops" in line:
                cur.experimental = True
            elif "has been deprecated since version" in line:
                cur.deprecated = True
            continue
        if not line.startswith("<dt>"):
            continue
        d = DT_RE.match(line)
        if not d:
            errors.append("%s:%d: unparsed entry: %s" % (path, ln, line))
            continue
        name, flags, rest = d.group(1), d.group(2), d.group(3)
        if section == "attrs":
            am = re.match(r"^(.*?)(?: \((required|default is (.*))\))?$", rest)
            atype = am.group(1)
            if atype not in ATTR_TYPES:
                errors.append("%s:%d: unknown attribute type '%s'" % (path, ln, atype))
                continue
            required = am.group(2) == "required"
            dflt = None
            if am.group(3) is not None:
                try:
                    dflt = default_text(atype, am.group(3))
                except ValueError as ex:
                    errors.append("%s:%d: %s" % (path, ln, ex))
            cur.attrs.append((name, ATTR_TYPES[atype], required, dflt))
        elif section in ("inputs", "outputs"):
            fl = [x.strip() for x in flags.split(",")] if flags else []
            option = "OX_PARAM_SINGLE"
            if "optional" in fl:
                option = "OX_PARAM_OPTIONAL"
            if "variadic" in fl:
                option = "OX_PARAM_VARIADIC"
            homogeneous = "heterogeneous" not in fl
            differentiable = "differentiable" in fl
            for x in fl:
                if x not in ("optional", "variadic", "heterogeneous", "differentiable",
                             "non-differentiable"):
                    errors.append("%s:%d: unknown formal flag '%s'" % (path, ln, x))
            (cur.inputs if section == "inputs" else cur.outputs).append(
                [name, rest.strip(), option, homogeneous, differentiable, 1])
        elif section == "constraints":
            types = [t.strip() for t in rest.split(", ")] if rest.strip() else []
            cur.constraints.append((name, types))
    return schemas


def finish(s, errors):
    """Arity ranges and variadic min_arity from the section headers."""
    for formals, rng, what in ((s.inputs, s.in_range, "inputs"), (s.outputs, s.out_range, "outputs")):
        singles = [k for k, f in enumerate(formals) if f[2] == "OX_PARAM_SINGLE"]
        n_single = singles[-1] + 1 if singles else 0
        has_var = any(f[2] == "OX_PARAM_VARIADIC" for f in formals)
        if rng is None:
            rng = (n_single, INF if has_var else len(formals))
            if has_var:
                # a variadic alone with min == max would have printed a range
                rng = (n_single + 1, INF)
        if has_var:
            # the reference counts every formal before the variadic one
            # (optional ones included) into the minimum, then its min arity
            pos = [k for k, f in enumerate(formals) if f[2] == "OX_PARAM_VARIADIC"]
            if pos != [len(formals) - 1]:
                errors.append("%s-%d: variadic %s not last" % (s.name, s.since, what))
            formals[-1][5] = max(rng[0] - pos[0], 0)
        if what == "inputs":
            s.in_range = rng
        else:
            s.out_range = rng
    return s


def load_bodies(path):
    """function_bodies.txt: blocks `@@ DOMAIN OP SINCE OPSET` (DOMAIN "-" for
    ai.onnx) followed by one function in the ONNX textual syntax, up to the
    next `@@`; lines starting with '#' are comments."""
    bodies = {}
    if not os.path.exists(path):
        return bodies
    key, buf = None, []

    def flush():
        if key:
            bodies.setdefault(key[:3], []).append((key[3], "".join(buf).strip() + "\n"))

    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("@@"):
                flush()
                parts = line[2:].split()
                dom = "" if parts[0] in ("-", "ai.onnx") else parts[0]
                key, buf = (dom, parts[1], int(parts[2]), int(parts[3])), []
            elif key and not line.startswith("#"):
                buf.append(line)
    flush()
    return bodies


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "..", "shared", "spec", "onnx")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "src", "schema", "schema_table.c")
    errors = []
    schemas = []
    for fn in ("Changelog.md", "Changelog-ml.md"):
        schemas += parse_changelog(os.path.join(spec, fn), errors)
    for s in schemas:
        finish(s, errors)
    seen = set()
    for s in schemas:
        k = (s.domain, s.name, s.since)
        if k in seen:
            errors.append("duplicate entry %s" % (k,))
        seen.add(k)
    schemas.sort(key=lambda s: (s.domain, s.name, s.since))

    bodies = load_bodies(os.path.join(root, "src", "schema", "function_bodies.txt"))
    # Each body names the schema version it belongs to (its since_version) and
    # the opset it is registered for (which may be lower: Elu-22's is 18).
    n_bodies = 0
    body_entries = []  # (schema index, opset, text)
    index = {(s.domain, s.name, s.since): i for i, s in enumerate(schemas)}
    for (dom, name, since), lst in bodies.items():
        if (dom, name, since) not in index:
            errors.append("function body for unknown schema %s.%s-%d" % (dom, name, since))
            continue
        for opset, text in lst:
            body_entries.append((index[(dom, name, since)], opset, text))
            n_bodies += 1

    if errors:
        for e in errors:
            print(e, file=sys.stderr)
        sys.exit(1)

    o = []
    o.append("/* schema_table.c - GENERATED by tools/gen_schema.py from the spec's Changelog.md and")
    o.append(" * Changelog-ml.md (and src/schema/function_bodies.txt). Do not edit. */")
    o.append("/* clang-format off */")
    o.append('#include "schema_table.h"')
    o.append("")
    tl_ids = {}
    for s in schemas:
        for _, types in s.constraints:
            key = tuple(types)
            if key not in tl_ids:
                tl_ids[key] = len(tl_ids)
                o.append("static const char *const tl%d[] = {%s};" % (
                    tl_ids[key], ", ".join([c_str(t) for t in types] + ["NULL"])))
    o.append("")
    by_schema_bodies = {}
    for idx, opset, text in body_entries:
        by_schema_bodies.setdefault(idx, []).append((opset, text))
    for i, s in enumerate(schemas):
        if s.inputs:
            o.append("static const ox_formal in%d[] = {%s};" % (i, ", ".join(
                "{%s, %s, %s, %s, %s, %d}" % (c_str(f[0]), c_str(f[1]), f[2], "true" if f[3] else "false",
                                            "true" if f[4] else "false", f[5]) for f in s.inputs)))
        if s.outputs:
            o.append("static const ox_formal out%d[] = {%s};" % (i, ", ".join(
                "{%s, %s, %s, %s, %s, %d}" % (c_str(f[0]), c_str(f[1]), f[2], "true" if f[3] else "false",
                                            "true" if f[4] else "false", f[5]) for f in s.outputs)))
        if s.constraints:
            o.append("static const ox_type_constraint tc%d[] = {%s};" % (i, ", ".join(
                "{%s, tl%d, %d}" % (c_str(n), tl_ids[tuple(t)], len(t)) for n, t in s.constraints)))
        if s.attrs:
            o.append("static const ox_attr_schema at%d[] = {%s};" % (i, ", ".join(
                "{%s, %s, %s, %s}" % (c_str(a[0]), a[1], "true" if a[2] else "false", c_str(a[3]))
                for a in s.attrs)))
        if i in by_schema_bodies:
            lst = sorted(by_schema_bodies[i])
            o.append("static const ox_function_body fb%d[] = {%s};" % (i, ", ".join(
                "{%d, %s}" % (v, c_str(t)) for v, t in lst)))
    o.append("")
    o.append("const ox_schema ox_schema_table[] = {")
    for i, s in enumerate(schemas):
        def arr(prefix, lst):
            return ("%s%d, %d" % (prefix, i, len(lst))) if lst else "NULL, 0"
        lst = sorted(by_schema_bodies.get(i, []))
        latest_body = lst[-1][1] if lst else None
        o.append("    {%s, %s, %d, %s, %s, %s, %s, %s, %s, %d, %d, %d, %d, %s, %s, %d}," % (
            c_str(s.domain), c_str(s.name), s.since, "true" if s.deprecated else "false",
            arr("in", s.inputs), arr("out", s.outputs), arr("tc", s.constraints), arr("at", s.attrs),
            c_str(latest_body), s.in_range[0], s.in_range[1], s.out_range[0], s.out_range[1],
            "true" if s.experimental else "false", ("fb%d" % i) if lst else "NULL", len(lst)))
    o.append("};")
    o.append("const size_t ox_schema_table_n = %d;" % len(schemas))
    o.append("")
    o.append("const ox_schema *const ox_schema_ptrs[] = {")
    for i in range(len(schemas)):
        o.append("    &ox_schema_table[%d]," % i)
    o.append("};")
    o.append("")
    # one entry per (domain, name): first index and count, same order
    ops = []
    for i, s in enumerate(schemas):
        if ops and ops[-1][0] == s.domain and ops[-1][1] == s.name:
            ops[-1][3] += 1
        else:
            ops.append([s.domain, s.name, i, 1])
    o.append("const ox_schema_op ox_schema_ops[] = {")
    for d, n, first, cnt in ops:
        o.append("    {%s, %s, %d, %d}," % (c_str(d), c_str(n), first, cnt))
    o.append("};")
    o.append("const size_t ox_schema_ops_n = %d;" % len(ops))
    o.append("")
    maxes = {}
    for s in schemas:
        maxes[s.domain] = max(maxes.get(s.domain, 0), s.since)
    o.append("const ox_schema_domain ox_schema_domains[] = {")
    for d in sorted(maxes):
        o.append("    {%s, %d}," % (c_str(d), maxes[d]))
    o.append("};")
    o.append("const size_t ox_schema_domains_n = %d;" % len(maxes))
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(o) + "\n")
    print("%d schemas, %d ops, %d function bodies -> %s" % (len(schemas), len(ops), n_bodies, out))


if __name__ == "__main__":
    main()
