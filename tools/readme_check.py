#!/usr/bin/env python3
"""The README's worked examples, run: each shows what paraplan prints today.

  tools/readme_check.py --bin BUILD/paraplan [--root DIR] [--update]

A worked example is a ```console block of README.md whose first line is
`$ paraplan ARGS` (shell words); the lines after it are the output shown.  A
line `...` stands for lines left out: the lines after it must follow, in
order, somewhere later in the output (the search's Pareto front is long).
The command runs from the repository root (so `../shared` is the shared
folder), with stderr joined to stdout as a terminal would show it.
Exit 1 with the first differing line of each example that does not hold;
--update rewrites the blocks with what the commands print now (keeping each
block's `...` cut at the same place).  Python 3 standard library only.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

BLOCK = re.compile(r'```console\n\$ paraplan ([^\n]*)\n(.*?)```', re.S)


def run(binary, args, root):
    p = subprocess.run([binary] + shlex.split(args), cwd=root, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    return p.stdout.decode('utf-8', 'replace').rstrip('\n').split('\n')


def holds(shown, got):
    """None when the shown lines hold in `got`, else a one-line reason."""
    j = 0
    skipping = False
    for line in shown:
        if line == '...':
            skipping = True
            continue
        if skipping:
            while j < len(got) and got[j] != line:
                j += 1
            if j == len(got):
                return 'not printed: %r' % line
            skipping = False
        elif j >= len(got) or got[j] != line:
            return 'shown %r, printed %r' % (line, got[j] if j < len(got) else '(end)')
        j += 1
    if not skipping and j != len(got):
        return 'printed more lines than shown, from %r' % got[j]
    return None


def updated(shown, got):
    """The block for `got`, cut where `shown` was cut (head ... tail)."""
    if '...' not in shown:
        return got
    k = shown.index('...')
    tail = len(shown) - k - 1
    return got[:k] + ['...'] + (got[len(got) - tail:] if tail else [])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bin', required=True)
    ap.add_argument('--root', default=os.path.join(os.path.dirname(__file__), '..'))
    ap.add_argument('--update', action='store_true')
    a = ap.parse_args()
    path = os.path.join(a.root, 'README.md')
    with open(path, encoding='utf-8') as f:
        text = f.read()
    binary = os.path.abspath(a.bin)
    bad = 0
    n = 0

    def one(m):
        nonlocal bad, n
        n += 1
        args, body = m.group(1), m.group(2)
        shown = body.rstrip('\n').split('\n') if body.strip() else []
        got = run(binary, args, a.root)
        if a.update:
            return '```console\n$ paraplan %s\n%s\n```' % (args, '\n'.join(updated(shown, got)))
        why = holds(shown, got)
        if why:
            print('README.md: example %d (paraplan %s): %s' % (n, args, why))
            bad = 1
        return m.group(0)

    new = BLOCK.sub(one, text)
    if n == 0:
        print('README.md: no worked example (```console block starting `$ paraplan`)')
        return 1
    if a.update and new != text:
        with open(path + '.tmp', 'w', encoding='utf-8') as f:
            f.write(new)
        os.replace(path + '.tmp', path)
    if not bad and not a.update:
        print('tools/readme_check.py: %d examples hold' % n)
    return bad


if __name__ == '__main__':
    sys.exit(main())
