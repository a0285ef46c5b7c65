#!/usr/bin/env python3
"""paraplan's layering check: the modules use each other in one direction only.

    tools/layering.py [--root DIR] [--allow FILE] [--build DIR]
                      [--extra MODULE=FILE ...] [--extra-object MODULE=FILE.o ...]

A module is a folder of src/ (util, spec, place, ...) or cli/.  An edge A -> B
exists when a file of A includes a header of B (src/B/x.h, or a public header
include/paraplan/x.h that the allow-list gives to B), or when an object file
of A has an undefined symbol that an object of B defines (`nm`; the objects
are found under --build, the CMake build tree).  The allow-list (--allow,
default tools/layering.allow) names the modules in flow order and, for each,
the modules it may use; every one of those must come earlier in the list, so
the allowed graph has no cycle.

Exits 1, with one line per offending edge (file, the header or symbol,
A -> B), when an edge is not allowed or the edges form a cycle; 2 when the
allow-list itself is malformed (a module used before it is listed, a file in
no listed module, a public header nobody owns).  --extra and --extra-object
add a source file or an object as if it belonged to MODULE (the tests use
them to show that a back edge fails).
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


class AllowError(Exception):
    pass


def read_allow(path):
    """order: [module], may: {module: set}, headers: {public header: module},
    objects: {object file name: module} (generated sources)."""
    order, may, headers, objects = [], {}, {}, {}
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                raise AllowError(f"{path}:{n}: expected 'module: uses...', near '{line}'")
            head, rest = (s.strip() for s in line.split(":", 1))
            words = rest.split()
            if head.startswith("headers "):
                owner = head.split(None, 1)[1]
                for h in words:
                    if h in headers:
                        raise AllowError(f"{path}:{n}: header {h} owned twice")
                    headers[h] = owner
                continue
            if head.startswith("object "):
                objects[head.split(None, 1)[1]] = rest
                continue
            if head in may:
                raise AllowError(f"{path}:{n}: module {head} listed twice")
            if words == ["*"]:
                words = list(order)
            for w in words:
                if w not in may:
                    raise AllowError(
                        f"{path}:{n}: {head} may use {w}, which is not listed before it "
                        "(the allow-list must be in flow order)")
            order.append(head)
            may[head] = set(words)
    for h, owner in headers.items():
        if owner not in may:
            raise AllowError(f"{path}: header {h}: owner {owner} is not a listed module")
    for o, owner in objects.items():
        if owner not in may:
            raise AllowError(f"{path}: object {o}: owner {owner} is not a listed module")
    return order, may, headers, objects


def source_files(root):
    """(module, path) of every .c/.h of src/<module>/, cli/ and include/paraplan/."""
    out = []
    src = os.path.join(root, "src")
    for mod in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        d = os.path.join(src, mod)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if name.endswith((".c", ".h")):
                    out.append((mod, os.path.join(d, name)))
    cli = os.path.join(root, "cli")
    for name in sorted(os.listdir(cli)) if os.path.isdir(cli) else []:
        if name.endswith((".c", ".h")):
            out.append(("cli", os.path.join(cli, name)))
    return out


def header_owner(inc, including, root, headers):
    """The module of the header `inc` included from file `including`, or None
    for a header outside the project (a system header)."""
    pub = os.path.join(root, "include", "paraplan")
    cand = []
    if inc.startswith("paraplan/"):
        cand.append(os.path.join(root, "include", inc))
    else:
        cand.append(os.path.join(os.path.dirname(including), inc))
        cand.append(os.path.join(root, "src", inc))
        cand.append(os.path.join(pub, inc))
    for c in cand:
        if not os.path.isfile(c):
            continue
        c = os.path.normpath(c)
        if os.path.dirname(c) == os.path.normpath(pub):
            name = os.path.basename(c)
            if name not in headers:
                raise AllowError(f"public header {name} has no owner in the allow-list "
                                 f"(a 'headers MODULE: {name}' line)")
            return headers[name]
        rel = os.path.relpath(c, root).split(os.sep)
        if rel[0] == "src" and len(rel) == 3:
            return rel[1]
        if rel[0] == "cli":
            return "cli"
        return None
    return None


def include_edges(root, files, headers):
    """[(A, B, file, header)] for every include of another module's header."""
    edges = []
    pub = os.path.join(root, "include", "paraplan")
    allf = list(files)
    if os.path.isdir(pub):
        for name in sorted(os.listdir(pub)):
            if name.endswith(".h"):
                if name not in headers:
                    raise AllowError(f"public header {name} has no owner in the allow-list "
                                     f"(a 'headers MODULE: {name}' line)")
                allf.append((headers[name], os.path.join(pub, name)))
    for mod, path in allf:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            owner = header_owner(inc, path, root, headers)
            if owner and owner != mod:
                edges.append((mod, owner, os.path.relpath(path, root), inc))
    return edges


def find_objects(build, root, objects):
    """(module, path) of each object of the library and the CLI under `build`."""
    out = []
    for dirpath, _, names in os.walk(build):
        for name in names:
            if not name.endswith(".o"):
                continue
            path = os.path.join(dirpath, name)
            parts = path.split(os.sep)
            mod = None
            if "paraplan.dir" in parts:
                i = parts.index("paraplan.dir")
                rest = parts[i + 1:]
                if len(rest) == 3 and rest[0] == "src":
                    mod = rest[1]
                    # an object whose source is gone (moved) is stale: skip it
                    if not os.path.isfile(os.path.join(root, "src", mod, name[:-2])):
                        continue
                elif len(rest) == 1:
                    src_name = name.rsplit(".", 1)[0]
                    if src_name not in objects:
                        raise AllowError(f"object {path}: generated source {src_name} has no "
                                         f"owner in the allow-list (an 'object {src_name}: "
                                         "MODULE' line)")
                    mod = objects[src_name]
            elif "paraplan_cli.dir" in parts:
                mod = "cli"
                if not os.path.isfile(os.path.join(root, "cli", name[:-2])):
                    continue
            if mod:
                out.append((mod, path))
    return out


def nm_symbols(paths):
    """{path: (defined, undefined)} global symbols of the object files (one nm)."""
    out = {p: (set(), set()) for p in paths}
    if not paths:
        return out
    r = subprocess.run(["nm", "-A", "-P", "-g"] + list(paths), capture_output=True, text=True)
    if r.returncode != 0:
        raise AllowError(f"nm: {r.stderr.strip()}")
    for line in r.stdout.splitlines():
        path, _, rest = line.partition(": ")
        f = rest.split()
        if path not in out or len(f) < 2:
            continue
        defined, undefined = out[path]
        (undefined if f[1] in ("U", "w", "v") else defined).add(f[0])
    return out


def call_edges(objs, root):
    """[(A, B, object, symbol)] for every call (or data reference) into another module."""
    syms = nm_symbols([p for _, p in objs])
    owner = {}
    for mod, path in objs:
        for s in syms[path][0]:
            owner.setdefault(s, mod)
    edges = []
    for mod, path in objs:
        for s in sorted(syms[path][1]):
            b = owner.get(s)
            if b and b != mod:
                rel = os.path.relpath(path, root) if path.startswith(root) else path
                edges.append((mod, b, rel, s + "()"))
    return edges


def find_cycle(graph):
    """One cycle of `graph` (module -> set of modules) as a list, or None."""
    colour, stack = {}, []

    def visit(a):
        colour[a] = 1
        stack.append(a)
        for b in sorted(graph.get(a, ())):
            if colour.get(b) == 1:
                return stack[stack.index(b):] + [b]
            if not colour.get(b):
                c = visit(b)
                if c:
                    return c
        stack.pop()
        colour[a] = 2
        return None

    for a in sorted(graph):
        if not colour.get(a):
            c = visit(a)
            if c:
                return c
    return None


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("--allow", default=None)
    ap.add_argument("--build", help="CMake build tree with the objects (calls are checked)")
    ap.add_argument("--extra", action="append", default=[], metavar="MODULE=FILE")
    ap.add_argument("--extra-object", action="append", default=[], metavar="MODULE=FILE.o")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every edge found")
    a = ap.parse_args(argv)
    root = os.path.abspath(a.root)
    allow = a.allow or os.path.join(root, "tools", "layering.allow")
    try:
        order, may, headers, objects = read_allow(allow)
        files = source_files(root)
        for e in a.extra:
            m, _, p = e.partition("=")
            files.append((m, os.path.abspath(p)))
        for m, p in files:
            if m not in may:
                raise AllowError(f"{os.path.relpath(p, root)}: module {m} is not in {allow}")
        edges = include_edges(root, files, headers)
        objs = find_objects(a.build, root, objects) if a.build else []
        if a.build and not objs:
            raise AllowError(f"no object files of paraplan under {a.build} (build it first)")
        for e in a.extra_object:
            m, _, p = e.partition("=")
            objs.append((m, os.path.abspath(p)))
        for m, p in objs:
            if m not in may:
                raise AllowError(f"{p}: module {m} is not in {allow}")
        edges += call_edges(objs, root)
    except (AllowError, OSError) as e:
        print(f"layering: {e}", file=sys.stderr)
        return 2
    graph, bad = {}, 0
    for (x, y, f, what) in sorted(set(edges)):
        graph.setdefault(x, set()).add(y)
        if y not in may[x]:
            pos = "a back edge" if order.index(y) > order.index(x) else "not allowed"
            print(f"layering: {f}: {what}: {x} -> {y} ({pos})")
            bad += 1
        elif a.verbose:
            print(f"edge: {f}: {what}: {x} -> {y}")
    cycle = find_cycle(graph)
    if cycle:
        print("layering: cycle: " + " -> ".join(cycle))
    unused = sorted(f"{x} -> {y}" for x in may for y in may[x] if y not in graph.get(x, ()))
    if a.verbose and unused:
        print("allowed but unused: " + ", ".join(unused))
    if bad or cycle:
        print(f"layering: {bad} edge(s) against {os.path.relpath(allow, root)}"
              + (", and a cycle" if cycle else ""), file=sys.stderr)
        return 1
    print(f"layering: {len(order)} modules, {len(set((x, y) for x, y, _, _ in edges))} "
          f"module edges ({len(edges)} include/call sites"
          f"{', calls checked' if objs else ', includes only'}), one way")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
