#!/usr/bin/env python3
"""--help and docs/CLI.md agree: every option a command's --help lists appears in docs/CLI.md's
options table with that command named in its row, and every option of the table is in the --help
of each command its row names (the docs and the program cannot drift apart again).

Usage: test_help_docs.py --diaseg PATH --data DIR
"""
import os
import re
import sys

from checks import check, report, run_tool, test_args

COMMANDS = ["segment", "eigs", "affinity", "bench", "contours", "devices"]
HERE = os.path.dirname(os.path.abspath(__file__))
CLI_MD = os.path.join(HERE, "..", "..", "docs", "CLI.md")


def help_options(diaseg, command):
    """The long options (without --) of `diaseg COMMAND --help`."""
    p = run_tool([diaseg, command, "--help"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"{command} --help: exit {p.returncode}")
    found = set()
    for line in p.stdout.splitlines():
        m = re.match(r"^  (?:-\w, )?\s*--([a-z0-9-]+)", line)
        if m:
            found.add(m.group(1))
    return found, p.stdout


def docs_rows():
    """option -> the commands its row in CLI.md's options table names."""
    rows = {}
    text = open(CLI_MD, encoding="utf-8").read()
    table = text.split("## Options", 1)[1].split("\n## ", 1)[0]
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 4 or not cells[1].startswith("`"):
            continue
        names = re.findall(r"--([a-z0-9-]+)", cells[1])
        cmds = cells[2]
        commands = set(COMMANDS) - {"devices"} if "all but devices" in cmds else \
            set(COMMANDS) if cmds.strip() == "all" else \
            {c for c in COMMANDS if re.search(r"\b%s\b" % c, cmds)}
        for n in names:
            rows[n] = commands
    return rows


def main():
    opts = test_args()
    rows = docs_rows()
    check(len(rows) > 30, f"CLI.md's options table: {len(rows)} options read")
    for command in COMMANDS:
        listed, text = help_options(opts.diaseg, command)
        for name in sorted(listed - {"help", "version"}):
            check(name in rows, f"{command} --help lists --{name}, which docs/CLI.md's options "
                  "table lacks")
            if name in rows:
                check(command in rows[name], f"docs/CLI.md's row of --{name} does not name "
                      f"{command}, whose --help lists it (row: {sorted(rows[name])})")
        for name, commands in rows.items():
            if command in commands:
                check(name in listed, f"docs/CLI.md says --{name} works for {command}, but "
                      f"`diaseg {command} --help` does not list it")
        # exit code 3 (not converged) only where a solve runs
        solves = command in ("segment", "eigs")
        check(("3 not converged" in text) == solves,
              f"{command} --help: exit code 3 {'missing' if solves else 'listed'}")
    return report("test_help_docs")


if __name__ == "__main__":
    sys.exit(main())
