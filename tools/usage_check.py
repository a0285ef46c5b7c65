#!/usr/bin/env python3
"""The verbs' help texts (docs/usage/VERB.txt) against the options they accept.

    tools/usage_check.py [--root DIR]

Reads the CLI's sources (cli/*.c) for what each verb accepts: the option table
its parser is given (`cli_verb NAME = {"verb", usage_fn, table, ...}`, which
also takes the shared flags: the table cli_only_flags of cli/options.c and the
job's and plan's fields of src/spec/fields.c, or `cli_args NAME =
{"verb", usage_fn, table, ...}`, which takes its own only) and the text its
usage function prints (`cli_usage(f, "verb")`, docs/usage/verb.txt).  A verb
parsed without a table (paraplan itself, list) accepts the "--name" literals
of the file that prints its text (BY_HAND).  Then, for each verb:
  - every option it accepts appears as "--name" in its text (-h/--help is
    every verb's and need not); a verb whose text sends the reader to
    'paraplan estimate' for the shared options (DELEGATES) may leave those to
    docs/usage/estimate.txt;
  - every "--name" of its text is an option it accepts (or --help, or another
    program's flag the text quotes: FOREIGN; the overview, paraplan.txt, may
    name any verb's);
  - a number the text states is the constant the code enforces (CONSTANTS),
    and the names the code defines are named (NAMES: the schedule types);
  - every docs/usage/*.txt is printed by some verb, and every text a verb
    prints exists.
Exits 1 with one line per finding (file: what), 0 when the texts agree.
"""
import argparse
import glob
import os
import re
import sys

# Verbs whose text says every 'paraplan estimate' option applies (and points
# at 'paraplan estimate --help'): the shared options are documented there.
DELEGATES = {"sweep": "estimate", "place": "estimate"}

# Other programs' flags that a text names (Megatron-LM's, in estimate's).
FOREIGN = {"decoder-first", "account-for-embedding-in-pipeline-split"}

# The command's own text, an overview of the verbs, may name any verb's option.
OVERVIEW = "paraplan"

# Verbs parsed by hand (strcmp in cli/main.c, cli/list.c), without an option
# table: they accept the "--name" literals of the file that prints their text.
BY_HAND = {"paraplan", "list"}

# Usage functions that print no docs/usage/ text, and why.
EXEMPT = {
    # calibrate --step-times parses each record's flags as estimate's; a
    # record asking for --help gets this one line (cli/calibrate_system.c).
    "steps_usage",
}

# (verb, macro, phrase): the text says the phrase with the value of the macro
# (#define in cli/ or include/paraplan/), its lines joined.
CONSTANTS = [
    ("calibrate", "MAX_GPUS", "at most {})"),
    ("calibrate", "CLI_NCCL_MAX_LOGS", "at most {} logs"),
    ("search", "PP_SEARCH_MAX_VALUES", "at most {} values"),
    ("estimate", "CLI_LARGE_OUTPUT_GPUS", "above {:,} GPUs"),
    ("estimate", "CLI_LARGE_CHARTS_GPUS", "above {:,} (refused"),
    ("search", "CLI_LARGE_CHARTS_GPUS", "above {:,} GPUs"),
    ("place", "CLI_LARGE_OUTPUT_GPUS", "above {:,} GPUs"),
]

# (verb, source glob, pattern, what): every name the sources define is a word
# of the text: a new schedule type is documented where --schedule is.
NAMES = [
    ("estimate", "src/spec/sched_*.c", r'^\s*\.name = "([^"]+)"', "schedule type"),
]

TABLE = re.compile(r"struct option (\w+)\[\]\s*=\s*\{(.*?)\};", re.S)
ENTRY = re.compile(r'\{\s*"([^"]+)",\s*(?:no|required|optional)_argument')
BINDING = re.compile(r'\b(cli_verb|cli_args)\s+\w+\s*=\s*\{\s*"([\w-]+)",\s*(\w+),([^;]*)\};', re.S)
# A cli_flag table (cli/options.h): rows CLI_ROW("name", ...) and groups of
# rows (#define CLI_..._FLAGS(T, m) ...), expanded by group_rows.
FLAG_TABLE = re.compile(r"cli_flag (\w+)\[\]\s*=\s*\{(.*?)\};", re.S)
ROW = re.compile(r'CLI_ROW\(\s*"([^"]+)"')
GROUP_USE = re.compile(r"\b(CLI_\w+_FLAGS)\(")
GROUP_DEF = re.compile(r"#define\s+(CLI_\w+_FLAGS)\(T, m\)((?:[^\n]*\\\n)*[^\n]*)")
USAGE_FN = re.compile(r'static void (\w+)\(FILE \*f\)\s*\{(.*?)\n\}', re.S)
CLI_USAGE = re.compile(r'cli_usage\(\s*\w+,\s*"([\w-]+)"\s*\)')
LITERAL_FLAG = re.compile(r'"--([a-z0-9][a-z0-9-]*)"')
TEXT_FLAG = re.compile(r"(?<![\w-])--([a-z0-9][a-z0-9-]*)")
FIELD = re.compile(r'\b(?:PLAN|JOB)_[A-Z]+\(\s*"([\w-]+)"')
DEFINE = re.compile(r"#define\s+(\w+)\s+(\d+)\b")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def check(root):
    cli = os.path.join(root, "cli")
    usage_dir = os.path.join(root, "docs", "usage")
    sources = {n: read(os.path.join(cli, n)) for n in sorted(os.listdir(cli))
               if n.endswith((".c", ".h"))}
    errors = []
    tables, defines = {}, {}
    groups = {}
    for text in sources.values():
        groups.update(GROUP_DEF.findall(text))

    def rows(body, depth=0):
        names = ROW.findall(body)
        for g in GROUP_USE.findall(body):
            if g in groups and depth < 8:
                names += rows(groups[g], depth + 1)
        return names

    for text in sources.values():
        for name, body in TABLE.findall(text):
            tables[name] = ENTRY.findall(body)
        for name, body in FLAG_TABLE.findall(text):
            tables[name] = rows(body)
        defines.update(DEFINE.findall(text))
    for path in glob.glob(os.path.join(root, "include", "paraplan", "*.h")):
        defines.update(DEFINE.findall(read(path)))
    if "cli_only_flags" not in tables:
        return ["cli/options.c: no cli_only_flags table"]
    fields_c = os.path.join(root, "src", "spec", "fields.c")
    fields = FIELD.findall(read(fields_c)) if os.path.exists(fields_c) else []
    if not fields:
        return ["src/spec/fields.c: no fields (PLAN_INT(\"tp\", ...))"]
    tables["common_opts"] = tables["cli_only_flags"] + fields

    # verb -> (accepted option names, shared?); verb -> the file that prints it
    accepts, shared, printed_by = {}, {}, {}
    for fname, text in sources.items():
        fns = {}
        for fn, body in USAGE_FN.findall(text):
            m = CLI_USAGE.search(body)
            if m:
                fns[fn] = m.group(1)
            elif fn not in EXEMPT:
                errors.append(f"cli/{fname}: {fn} prints no docs/usage/ text (cli_usage)")
        for verb in CLI_USAGE.findall(text):
            printed_by.setdefault(verb, fname)
        for kind, verb, fn, rest in BINDING.findall(text):
            if fn in EXEMPT:
                continue
            # the option tables among the initializer's other members
            named = [t for t in re.findall(r"\w+", rest) if t in tables]
            table = named[0] if named else rest.split(",")[0].strip()
            if fn not in fns:
                errors.append(f"cli/{fname}: {verb}'s usage function {fn} is not "
                              "'cli_usage(f, \"VERB\")'")
                continue
            if fns[fn] != verb:
                errors.append(f"cli/{fname}: verb {verb} prints docs/usage/{fns[fn]}.txt")
            if table not in tables:
                errors.append(f"cli/{fname}: {verb}: option table {table} not found")
                continue
            names = set().union(*(tables[t] for t in named))
            if kind == "cli_verb":
                names |= set(tables["common_opts"])
                shared[verb] = True
            accepts.setdefault(verb, set()).update(names)
    for verb, fname in printed_by.items():
        if verb in BY_HAND:  # the flags its file compares
            accepts[verb] = set(LITERAL_FLAG.findall(sources[fname]))
        elif verb not in accepts:
            errors.append(f"cli/{fname}: prints docs/usage/{verb}.txt but no cli_verb or "
                          f"cli_args initializer of {verb} was found")

    files = sorted(n[:-4] for n in os.listdir(usage_dir) if n.endswith(".txt"))
    for verb in files:
        if verb not in printed_by:
            errors.append(f"docs/usage/{verb}.txt: no verb prints it")
    common = set(tables["common_opts"])
    for verb in sorted(accepts):
        rel = f"docs/usage/{verb}.txt"
        if verb not in files:
            errors.append(f"{rel}: missing (cli/{printed_by.get(verb, '?')} prints it)")
            continue
        text = read(os.path.join(root, rel))
        said = set(TEXT_FLAG.findall(text))
        need = accepts[verb] - {"help"}
        delegate = DELEGATES.get(verb)
        if delegate and shared.get(verb):
            if f"paraplan {delegate}" not in text:
                errors.append(f"{rel}: leaves the shared options to 'paraplan {delegate}' "
                              "but does not say so")
            need -= common
        for name in sorted(need - said):
            errors.append(f"{rel}: --{name} is an option of {verb} but the text does not "
                          "mention it")
        known = set().union(*accepts.values()) if verb == OVERVIEW else accepts[verb]
        for name in sorted(said - known - {"help"} - FOREIGN):
            errors.append(f"{rel}: --{name} is not an option of {verb}")
    for verb, macro, phrase in CONSTANTS:
        if macro not in defines:
            errors.append(f"cli/: #define {macro} not found")
            continue
        want = phrase.format(int(defines[macro]))
        path = os.path.join(usage_dir, f"{verb}.txt")
        if os.path.exists(path) and want not in " ".join(read(path).split()):
            errors.append(f"docs/usage/{verb}.txt: should say '{want}' ({macro})")
    for verb, pattern, regex, what in NAMES:
        path = os.path.join(usage_dir, f"{verb}.txt")
        words = set(re.findall(r"[\w-]+", read(path))) if os.path.exists(path) else set()
        for src in sorted(glob.glob(os.path.join(root, pattern))):
            for name in re.findall(regex, read(src), re.M):
                if name not in words:
                    errors.append(f"docs/usage/{verb}.txt: does not name the {what} "
                                  f"'{name}' ({os.path.relpath(src, root)})")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = ap.parse_args()
    errors = check(os.path.abspath(args.root))
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
