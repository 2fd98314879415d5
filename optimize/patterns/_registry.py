"""The rewrite-pattern table and the greedy driver.

A pattern is a Python function ``fn(op, rewriter) -> bool`` registered under a unique name
with its family, root op and benefit; it returns True when it rewrote ``op`` (and False when
it does not apply). The usual last step is ``return replace(rewriter, op, new_value)``. The driver is MLIR's own greedy pattern driver (folding, dead-code
removal and worklist included) with an iteration cap, so it always terminates.

Conventions for pattern authors:
- build new ops with ``reactant.ir.build`` inside ``with rewriter.ip:`` (insertion point
  before the matched op) at the location ``op.location``; replace with ``replace``;
- never erase an op whose results still have uses (MLIR aborts the process);
- a pattern must strictly simplify under its family's measure, or its inverse must not be
  registered, so that the greedy fixpoint exists;
- a pattern is exact or fast-math by the one contract of ``reactant.optimize.exactness``
  (bit-identical results, NaN/Inf/signed zeros included), shared with the equality-saturation
  rules; anything else is registered with ``fast_math=True`` and runs only with
  ``PassOptions.fast_math``.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable

from jaxlib.mlir import ir
from ...ir._jaxlib import rewrite as rw
from ...ir.regions import walk_nested

from ..passes import PassOptions, register_pass

log = logging.getLogger("reactant.optimize.patterns")

PatternFn = Callable[[Any, Any], bool]


@dataclass(frozen=True)
class Pattern:
    name: str
    family: str
    root: str  # op name, e.g. "stablehlo.add"
    fn: PatternFn
    benefit: int = 1
    fast_math: bool = False  # not exact by ``optimize.exactness``: only with PassOptions.fast_math
    param: Any = None
    doc: str = ""


PATTERNS: dict[str, Pattern] = {}


def pattern(name: str, family: str, root: str | tuple[str, ...], *, benefit: int = 1,
            fast_math: bool = False, param: Any = None):
    """Register the decorated ``fn(op, rewriter) -> bool`` as pattern ``name``. ``root`` may
    be a tuple of op names (one pattern per name, suffixed ``@opname`` when more than one)."""

    def deco(fn: PatternFn) -> PatternFn:
        roots = (root,) if isinstance(root, str) else tuple(root)
        for r in roots:
            key = name if len(roots) == 1 else f"{name}@{r.split('.')[-1]}"
            if key in PATTERNS:
                raise ValueError(f"pattern {key!r} registered twice")
            PATTERNS[key] = Pattern(key, family, r, fn, benefit, fast_math, param,
                                    (fn.__doc__ or "").strip())
        return fn

    return deco


def identity_pattern(name: str, family: str, root: str, *, benefit: int, doc: str) -> None:
    """Register pattern ``name``: a ``root`` op whose result has its operand's type (a no-op
    convert or reshape) is replaced by its operand."""

    def fn(op, rewriter):
        x = op.operands[0]
        return replace(rewriter, op, x) if x.type == op.results[0].type else False

    fn.__doc__ = doc
    pattern(name, family, root, benefit=benefit)(fn)


def variant(name: str, family: str, root: str, fn, *args, benefit: int = 1, fast_math: bool = False,
            doc: str = "") -> None:
    """Register pattern ``name`` as ``fn(op, rewriter, *args)``: one rewrite written once and
    registered for several roots or conditions."""

    def cb(op, rewriter):
        return fn(op, rewriter, *args)

    cb.__doc__ = doc
    pattern(name, family, root, benefit=benefit, fast_math=fast_math)(cb)


def replace(rewriter, op, values) -> bool:
    """Replace ``op``'s results by ``values`` (one value, or a list for several results);
    returns True (the pattern matched)."""
    rewriter.replace_op(op, list(values) if isinstance(values, (list, tuple)) else [values])
    return True


_ENABLED: dict = {}  # (registry size, what selects) -> the patterns (asked at every pass and probe)


def enabled(options: PassOptions, *, families: set[str] | None = None,
            only: set[str] | None = None) -> list[Pattern]:
    key = (len(PATTERNS), options.disabled, options.fast_math,
           None if families is None else frozenset(families), None if only is None else frozenset(only))
    got = _ENABLED.get(key)
    if got is None:
        if len(_ENABLED) >= 64:  # (bounded: options sets a program makes up)
            _ENABLED.clear()
        got = _ENABLED[key] = tuple(_select(options, families, only))
    return list(got)


def _select(options: PassOptions, families, only) -> list[Pattern]:
    out = []
    for p in PATTERNS.values():
        if p.name in options.disabled or p.family in options.disabled:
            continue
        if p.fast_math and not options.fast_math:
            continue
        if families is not None and p.family not in families:
            continue
        if only is not None and p.name not in only:
            continue
        out.append(p)
    return out


class PatternError(Exception):
    """A rewrite pattern raised; the message names the pattern and the op (the original
    exception is the cause)."""


# Patterns rooted at these ops read a whole region (a loop's body, its trip count): the driver
# revisits such an op in every sweep, and most of those patterns fail on it every time (a
# recurrence never raises). A failure is remembered for the op as it stands (``_Memo.key``).
_MEMO_ROOTS = frozenset({"stablehlo.while"})


class _Memo:
    """The failures of region-reading patterns in one run of the driver, by the state of the op
    they failed on: its operands and, for every op nested in it, its name, operands and result
    count (a value, once replaced, is a new value: a rewrite inside the region or of a value it
    reads changes the key). Remembering a failure can only skip a rewrite, never make one."""

    def __init__(self):
        self.failed: set = set()

    @staticmethod
    def key(operation) -> tuple:
        parts = [operation.name, tuple(map(hash, operation.operands))]
        walk_nested(operation, lambda o: parts.append((o.operation.name, tuple(map(hash, o.operands)),
                                                       len(o.results))))
        return tuple(parts)


def _failure(name: str, op, e: Exception) -> PatternError:
    return PatternError(f"rewrite pattern {name!r} failed on {op.operation.name} at {op.location}: "
                        f"{type(e).__name__}: {e}")


def _adapt_group(group: list[Pattern], memo: _Memo | None = None):
    """One callback for every pattern of a root op, tried in order of benefit (MLIR's order for
    one op): the driver crosses into Python once per visit, not once per pattern, and the
    patterns share what they compute about the op (``visit_memo``) until one rewrites it. With
    ``memo`` (the ``_MEMO_ROOTS`` ops): the op's key is computed once per visit, and a pattern
    that failed on the op as it stands is not tried again."""
    group = sorted(group, key=lambda p: -p.benefit)

    def cb(op, rewriter):
        key = None if memo is None else memo.key(op.operation)
        outer, _VISIT.memo = visit_memo(), {}  # (a pattern may run a driver of its own)
        try:
            for p in group:
                if key is not None and (p.name, key) in memo.failed:
                    continue
                try:
                    ok = p.fn(op, rewriter)
                except Exception as e:
                    raise _failure(p.name, op, e) from e
                if ok:
                    return False  # MLIR: falsy return means "matched and rewritten"
                if key is not None:
                    memo.failed.add((p.name, key))
            return True
        finally:
            _VISIT.memo = outer

    return cb


_VISIT = threading.local()


def visit_memo() -> dict | None:
    """A dict for facts about the op the driver is visiting, shared by its patterns while none
    has rewritten anything (a failing pattern leaves the IR as it was); None outside a visit.
    Key entries by the op (``op.operation``) and what they describe."""
    return getattr(_VISIT, "memo", None)


def once_per_visit(fact: str, subject, compute: Callable[[], Any]) -> Any:
    """``compute()``, remembered for the visit as ``fact`` of ``subject`` (an op or a value)."""
    memo = visit_memo()
    if memo is None:
        return compute()
    key = (fact, subject)
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def apply_patterns(module: ir.Module, patterns: list[Pattern], *, max_iterations: int = 16,
                   max_rewrites: int = 100_000) -> None:
    """Apply ``patterns`` greedily to a fixpoint (capped) on the whole module, with folding."""
    ps = rw.RewritePatternSet(module.context)
    memo, groups = _Memo(), {}
    for p in patterns:
        groups.setdefault(p.root, []).append(p)
    for root, group in groups.items():
        cb = _adapt_group(group, memo if root in _MEMO_ROOTS else None)
        ps.add(root, cb, benefit=max(p.benefit for p in group))
    cfg = rw.GreedyRewriteConfig()
    cfg.max_iterations = max_iterations
    cfg.max_num_rewrites = max_rewrites
    try:
        rw.apply_patterns_and_fold_greedily(module, ps.freeze(), cfg)
    except PatternError:
        raise
    except RuntimeError:
        # The driver's only failure (a pattern's own exception is a PatternError): it stopped
        # at its caps before a fixpoint. Every rewrite it made is sound and the module valid.
        log.debug("patterns: stopped at the driver's caps (%d sweeps, %d rewrites) before a fixpoint",
                  max_iterations, max_rewrites)


@register_pass("patterns", idempotent=True)
def patterns_pass(module: ir.Module, options: PassOptions) -> None:
    """All enabled rewrite patterns, greedily to a fixpoint."""
    apply_patterns(module, enabled(options))
