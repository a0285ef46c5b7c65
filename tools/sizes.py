#!/usr/bin/env python3
"""The structure issue's size bars (issue 21), checked on the sources.

  tools/sizes.py [--root DIR]

- no file of src/ (.c or .h) over MAX_FILE_LINES lines;
- no function of src/ or cli/ over MAX_FUNCTION_LINES lines, counted from the
  line of its opening brace to the line of its closing brace (the sources are
  clang-formatted: a function's braces sit in column 0, and nothing else's do);
- cli/ (every file in it) at most MAX_CLI_LINES lines in all: the CLI parses
  flags, calls the library and hands results to a format; logic that grows
  there belongs in a module of src/.

One line per breach (path:line: what), exit 1 if any; exit 0 and a summary
line otherwise (CI runs it, and ctest as tools.sizes).  The cli/ bar holds
since 2026-11-27 (5,837 lines at 431fcf1, 2,987 once every verb's flags were
a cli_flag table and their logic library calls).  Why these numbers: issue 21's "Must show" (a file a new
engineer can read in one sitting, a function that fits a screen and a half).
"""
import argparse
import os
import re
import sys

MAX_FILE_LINES = 900
MAX_FUNCTION_LINES = 120
MAX_CLI_LINES = 3000

# A definition's first line: starts in column 0 with an identifier, has a
# parenthesis, and is not a declaration (ends in ';') or a macro.
DEF = re.compile(r'^[A-Za-z_][\w\s\*]*?\b(\w+)\s*\(')


def functions(path):
    """Yield (name, first_line, n_lines) for each function defined in path."""
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    name, start, pending = None, None, None
    for i, line in enumerate(lines):
        if start is None:
            m = DEF.match(line)
            if m and not line.rstrip().endswith(';') and not line.startswith(('typedef', 'struct', 'enum', 'union', '#')):
                pending = (m.group(1), i)
            elif pending and line.rstrip().endswith(';'):
                pending = None
            if line == '{' and pending and i - pending[1] <= 8:
                name, start = pending[0], i
                pending = None
        elif line == '}':
            yield name, start + 1, i - start + 1
            name, start = None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=os.path.join(os.path.dirname(__file__), '..'))
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    bad = []
    nfun = 0
    for top in ('src', 'cli'):
        for d, _, names in sorted(os.walk(os.path.join(root, top))):
            for n in sorted(names):
                if not n.endswith(('.c', '.h')):
                    continue
                p = os.path.join(d, n)
                rel = os.path.relpath(p, root)
                with open(p, encoding='utf-8', errors='replace') as f:
                    count = sum(1 for _ in f)
                if top == 'src' and count > MAX_FILE_LINES:
                    bad.append(f'{rel}:1: {count} lines (at most {MAX_FILE_LINES} a file)')
                if n.endswith('.c'):
                    for name, line, size in functions(p):
                        nfun += 1
                        if size > MAX_FUNCTION_LINES:
                            bad.append(f'{rel}:{line}: {name} is {size} lines '
                                       f'(at most {MAX_FUNCTION_LINES} a function)')
    cli_lines = 0
    for d, _, names in os.walk(os.path.join(root, 'cli')):
        for n in names:
            with open(os.path.join(d, n), encoding='utf-8', errors='replace') as f:
                cli_lines += sum(1 for _ in f)
    if cli_lines > MAX_CLI_LINES:
        bad.append(f'cli/: {cli_lines} lines in all (at most {MAX_CLI_LINES})')
    for b in bad:
        print(f'tools/sizes.py: {b}')
    if bad:
        return 1
    print(f'tools/sizes.py: ok ({nfun} functions, cli/ {cli_lines} lines)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
