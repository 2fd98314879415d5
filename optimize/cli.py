"""Command line of the optimizer: ``python -m reactant.optimize``.

    python -m reactant.optimize in.mlir -o out.mlir -p O2 --stats
    python -m reactant.optimize in.mlir -p inline,canonicalize,patterns --disable slice_elementwise
    python -m reactant.optimize --list-patterns

The input is any StableHLO module (text or bytecode; ``-`` reads stdin). It is parsed in a
fresh MLIR context, the named pipeline (a level ``O0``..``O3`` or a comma-separated list of
pass names) runs on it, and the result is written to ``-o`` (stdout by default).
``--disable`` takes pattern names, pattern families, base names of multi-root patterns
(``elementwise_of_pads`` disables every ``elementwise_of_pads@op``) and pass names.
``--stats`` prints per-pass time and op counts to stderr.
"""

from __future__ import annotations

import argparse
import sys
import time

from ..ir import context as irc
from ..ir.context import count_ops
from .passes import PASSES, PassOptions, PassStat, run_pipeline
from .patterns import PATTERNS
from .pipelines import LEVELS, pipeline


def _split(values) -> list[str]:
    out = []
    for v in values or ():
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def expand_disabled(names) -> tuple[set[str], set[str], list[str]]:
    """(pattern names/families to disable, pass names to drop, unknown names)."""
    families = {p.family for p in PATTERNS.values()}
    pats, passes, unknown = set(), set(), []
    for n in names:
        hit = False
        if n in PATTERNS or n in families:
            pats.add(n)
            hit = True
        multi = [k for k in PATTERNS if k.startswith(n + "@")]
        if multi:
            pats.update(multi)
            hit = True
        if n in PASSES:
            passes.add(n)
            hit = True
        if not hit:
            unknown.append(n)
    return pats, passes, unknown


def list_patterns(out=None, family: str | None = None) -> None:
    out = sys.stdout if out is None else out
    rows = sorted(PATTERNS.values(), key=lambda p: (p.family, p.name))
    if family:
        rows = [p for p in rows if p.family == family]
    w = max((len(p.name) for p in rows), default=4)
    fw = max((len(p.family) for p in rows), default=6)
    out.write(f"{'pattern':<{w}}  {'family':<{fw}}  {'root':<32} benefit  fast-math  description\n")
    for p in rows:
        doc = p.doc.splitlines()[0] if p.doc else ""
        out.write(f"{p.name:<{w}}  {p.family:<{fw}}  {p.root:<32} {p.benefit:>7}  "
                  f"{'yes' if p.fast_math else '':<9}  {doc}\n")
    fams = {}
    for p in rows:
        fams[p.family] = fams.get(p.family, 0) + 1
    out.write(f"\n{len(rows)} patterns: " + ", ".join(f"{k} {v}" for k, v in sorted(fams.items())) + "\n")


def format_stats(stats: list[PassStat], total: float, ops_in: int, ops_out: int) -> str:
    lines = [f"{'pass':<16} {'seconds':>9} {'ops before':>11} {'ops after':>10}"]
    for s in stats:
        lines.append(f"{s.name:<16} {s.seconds:>9.4f} {s.ops_before:>11} {s.ops_after:>10}"
                     + ("  (skipped: module unchanged since it last ran)" if s.skipped else ""))
    lines.append(f"{'total':<16} {total:>9.4f} {ops_in:>11} {ops_out:>10}")
    return "\n".join(lines)


def _func_ops(module):
    from jaxlib.mlir import ir

    for op in module.body.operations:
        if op.operation.name == "func.func":
            vis = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
            yield op, ir.StringAttr(op.attributes["sym_name"]).value, (
                ir.StringAttr(vis).value if vis is not None else "public")


def protect_private_entries(module) -> list[str]:
    """Modules whose entry is private (Enzyme-JaX names it ``main_N``): make the private
    functions nobody calls public for the duration of the pipeline, so that symbol DCE and
    dead-function removal keep them. Returns their names (see ``restore_private``)."""
    from jaxlib.mlir import ir

    funcs = list(_func_ops(module))
    if any(vis == "public" for _, _, vis in funcs):
        return []
    text = irc.to_text(module)
    names = []
    for op, name, vis in funcs:
        if text.count("@" + name) <= 1:  # only its own definition mentions it
            with module.context:
                op.attributes["sym_visibility"] = ir.StringAttr.get("public")
            names.append(name)
    return names


def restore_private(module, names) -> None:
    from jaxlib.mlir import ir

    for op, name, _ in _func_ops(module):
        if name in names:
            with module.context:
                op.attributes["sym_visibility"] = ir.StringAttr.get("private")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m reactant.optimize",
        description="Optimize a StableHLO module (rewrite patterns, equality saturation, ...).")
    ap.add_argument("input", nargs="?", help="input .mlir file (text or bytecode); '-' for stdin")
    ap.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    ap.add_argument("-p", "--pipeline", default="O2",
                    help=f"optimization level ({', '.join(LEVELS)}) or comma-separated pass names "
                         "(default: O2)")
    ap.add_argument("--stats", action="store_true", help="print per-pass time and op counts to stderr")
    ap.add_argument("--disable", action="append", metavar="NAME[,NAME]",
                    help="patterns, pattern families or passes to leave out (repeatable)")
    ap.add_argument("--fast-math", action="store_true",
                    help="also run patterns that may change NaN/Inf/signed-zero results")
    ap.add_argument("--list-patterns", action="store_true", help="list the rewrite patterns and exit")
    ap.add_argument("--family", help="with --list-patterns: only this family")
    ap.add_argument("--list-passes", action="store_true", help="list passes and levels and exit")
    ap.add_argument("--no-verify", action="store_true", help="do not verify after each pass")
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.list_patterns:
        list_patterns(family=args.family)
        return 0
    if args.list_passes:
        for n in sorted(PASSES):
            doc = (PASSES[n].__doc__ or "").strip().splitlines()
            print(f"{n:<20} {doc[0] if doc else ''}")
        print()
        for lvl, names in LEVELS.items():
            print(f"{lvl}: {', '.join(names) if names else '(nothing)'}")
        return 0
    if not args.input:
        ap.error("an input file is required (or --list-patterns / --list-passes)")

    disabled = _split(args.disable)
    pats, dropped, unknown = expand_disabled(disabled)
    if unknown:
        ap.error(f"--disable: unknown pattern, family or pass name(s): {', '.join(unknown)}")
    try:
        names = pipeline(_split([args.pipeline]) if "," in args.pipeline or args.pipeline in PASSES
                         else args.pipeline)
    except KeyError as e:
        ap.error(str(e))
    names = [n for n in names if n not in dropped]
    bad = [n for n in names if n not in PASSES]
    if bad:
        ap.error(f"unknown pass(es) {bad}; known: {sorted(PASSES)}")

    try:
        if args.input == "-":
            data = sys.stdin.buffer.read()
            if not data.startswith(b"ML\xefR"):
                data = data.decode("utf-8")
            module = irc.parse_module(data)
        else:
            module = irc.load(args.input)
    except Exception as e:  # parse errors carry MLIR's diagnostics
        print(f"error: cannot read {args.input}: {e}", file=sys.stderr)
        return 1

    options = PassOptions(disabled=frozenset(pats), fast_math=args.fast_math)
    stats: list[PassStat] = []
    ops_in = count_ops(module)
    t0 = time.perf_counter()
    entries = protect_private_entries(module)
    try:
        run_pipeline(module, names, options, stats=stats, verify=not args.no_verify)
    except Exception as e:  # a pass failed or produced invalid IR: say which, no traceback
        done = [s.name for s in stats]
        failed = names[len(done)] if len(done) < len(names) else "?"
        print(f"error: pass {failed!r} failed (after {', '.join(done) or 'no pass'}): {e}", file=sys.stderr)
        return 1
    restore_private(module, entries)
    total = time.perf_counter() - t0
    text = irc.to_text(module)
    if args.output == "-":
        sys.stdout.write(text)
        if not text.endswith("\n"):
            sys.stdout.write("\n")
    else:
        with open(args.output, "w") as f:
            f.write(text)
    if args.stats:
        print(format_stats(stats, total, ops_in, count_ops(module)), file=sys.stderr)
    return 0
