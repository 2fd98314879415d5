"""Shrink a failing program while it keeps failing the same way in the same mode.

Statement-level reduction: repeatedly drop one statement (with its indented block), one term
of the final ``total = ... + ...`` sum, or one unused helper, keeping a candidate when NumPy
still runs it and the mode still gives the same kind of failure (the same exception type and
message for a crash or an error; a mismatch for a mismatch)."""

from __future__ import annotations

import dataclasses
import re

from .generator import Program
from .runner import Outcome, load, reference, run_mode, unload


def _outcome(program: Program, mode: str) -> Outcome | None:
    module = load(program)
    try:
        try:
            ref = reference(program, module)
        except Exception:  # noqa: BLE001 - NumPy rejects the candidate
            return None
        return run_mode(program, module, mode, ref)
    finally:
        unload(module)


def _same(a: Outcome | None, b: Outcome) -> bool:
    if a is None or a.status != b.status:
        return False
    return a.status == "mismatch" or a.signature() == b.signature()


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) of every statement with its indented block, the innermost last."""
    out = []
    for i, line in enumerate(lines):
        s = line.strip()
        if not s or s.startswith(("import ", "def ", "class ")) or line.startswith(("def ", "class ")):
            continue
        ind = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > ind
                                  or (len(lines[j]) - len(lines[j].lstrip()) == ind
                                      and lines[j].lstrip().startswith(("elif ", "else:")))):
            j += 1  # the block, and the elif/else branches of an if
        out.append((i, j))
    return out


def _parses(source: str) -> bool:
    try:
        compile(source, "<candidate>", "exec")
    except SyntaxError:
        return False
    return True


def _candidates(source: str):
    lines = source.split("\n")
    for start, end in reversed(_blocks(lines)):
        if lines[start].strip().startswith("return") and "total" in lines[start]:
            continue
        if lines[start].lstrip().startswith(("elif", "else")):
            continue
        if lines[start].strip() == "pass":
            continue
        cand = "\n".join(lines[:start] + lines[end:])
        if not _parses(cand):  # the block it was alone in needs a body
            ind = len(lines[start]) - len(lines[start].lstrip())
            cand = "\n".join(lines[:start] + [" " * ind + "pass"] + lines[end:])
        if _parses(cand):
            yield cand
    for i, line in enumerate(lines):  # terms of the final sum
        m = re.match(r"(\s*total = )(.*)$", line)
        if m:
            terms = m.group(2).split(" + ")
            for t in range(1, len(terms)):
                yield "\n".join(lines[:i] + [m.group(1) + " + ".join(terms[:t] + terms[t + 1:])] + lines[i + 1:])
    for name in re.findall(r"^def (helper\d+)\(", source, re.M):  # unused helpers
        if source.count(name) == 1:
            yield re.sub(rf"^def {name}\(.*?(?=^\S)", "", source, flags=re.M | re.S)


def minimize(program: Program, mode: str, target: Outcome | None = None, max_runs: int = 400) -> Program:
    """The smallest program found that fails like ``target`` (by default: as ``program`` does now)."""
    target = target or _outcome(program, mode)
    if target is None or target.status == "ok":
        return program
    best, runs, progress = program, 0, True
    while progress and runs < max_runs:
        progress = False
        for src in _candidates(best.source):
            runs += 1
            cand = dataclasses.replace(best, source=src)
            if _same(_outcome(cand, mode), target):
                best, progress = cand, True
                break
            if runs >= max_runs:
                break
    return best
