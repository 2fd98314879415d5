"""Saved regression cases: programs the generator found failing, kept as named files.

Each case is ``tests/differential/cases/<name>.py``: the program's source, whose first line
is a comment holding how to call it (argument specs, the seed its inputs come from, the kind
and number of calls) and what it did when it was saved. ``test_differential.py`` runs every
case in every mode. Save one (minimized first, by default) with

    python -m tests.differential.regressions add SEED NAME [--mode auto-O0] [--profile full] [--no-minimize]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

from .generator import ArgSpec, Program, generate

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
_HEADER = "# differential case: "


def dump(program: Program, note: str = "") -> str:
    """The case file's text for ``program``."""
    meta = {"seed": program.seed, "kind": program.kind, "grad": program.grad, "calls": program.calls,
            "args": [[a.name, list(a.shape), a.dtype] for a in program.args],
            "init": [[a.name, list(a.shape), a.dtype] for a in program.init], "note": note}
    return _HEADER + json.dumps(meta) + "\n" + program.source


def parse(text: str) -> Program:
    """A case file's program."""
    first, _, source = text.partition("\n")
    if not first.startswith(_HEADER):
        raise ValueError("not a differential case (no header line)")
    meta = json.loads(first[len(_HEADER):])
    spec = lambda a: ArgSpec(a[0], tuple(a[1]), a[2])  # noqa: E731
    return Program(meta["seed"], source, [spec(a) for a in meta["args"]], ["saved"], meta["kind"], meta["grad"],
                   [spec(a) for a in meta["init"]], meta["calls"])


def cases() -> dict[str, Program]:
    """Every saved case by name."""
    if not os.path.isdir(CASES):
        return {}
    out = {}
    for fn in sorted(os.listdir(CASES)):
        if fn.endswith(".py") and not fn.startswith("_"):
            with open(os.path.join(CASES, fn)) as f:
                out[fn[:-3]] = parse(f.read())
    return out


def save(program: Program, name: str, note: str = "") -> str:
    """Write ``program`` as the case ``name``; returns its path."""
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise ValueError("a case name is lower-case letters, digits and underscores")
    os.makedirs(CASES, exist_ok=True)
    path = os.path.join(CASES, name + ".py")
    with open(path, "w") as f:
        f.write(dump(program, note))
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="save a generated program as a regression case")
    sub = ap.add_subparsers(dest="cmd", required=True)
    add = sub.add_parser("add")
    add.add_argument("seed", type=int)
    add.add_argument("name")
    add.add_argument("--profile", default="full")
    add.add_argument("--mode", help="the failing mode to minimize for (default: the first failing one)")
    add.add_argument("--no-minimize", action="store_true")
    args = ap.parse_args(argv)
    from .runner import ALL_MODES, run_program

    program = generate(args.seed, args.profile)
    res = run_program(program, [args.mode] if args.mode else ALL_MODES)
    bad = [o for o in res.outcomes if o.status in ("mismatch", "crash")]
    note = f"seed {args.seed} ({args.profile}): " + (f"{bad[0].mode} {bad[0].status}" if bad else "no failure")
    if bad and not args.no_minimize:
        from .minimize import minimize

        program = minimize(program, bad[0].mode, bad[0])
    print(save(program, args.name, note))
    return 0


if __name__ == "__main__":
    sys.exit(main())
