"""Truth values of traced values: ``and``/``or``/``not``, conditional expressions, ``assert``,
the guard of statements left as they are, and Python's ``max``/``min``."""

from __future__ import annotations

import numpy as np

from .. import control_flow as cf
from ..context import current as current_tc
from ..errors import ConcretizationError
from ..traced import TracedRArray
from .places import _has_traced


def assert_(test, msg_fn, where: str):
    """``assert test, msg``: Python's on a concrete ``test``; on a traced one the program
    checks it when it runs and the call raises ``AssertionError`` (the message is
    evaluated now: it must not need the traced values)."""
    if not isinstance(test, TracedRArray):
        if not test:
            msg = msg_fn()
            raise AssertionError(msg) if msg is not None else AssertionError()
        return
    msg = msg_fn()
    if isinstance(msg, TracedRArray) or _has_traced(msg):
        raise ConcretizationError(f"the message of the assert at {where} depends on traced values",
                                  hint="use a message made of Python values")
    if not current_tc().check_at_run(_truth(test, "assert"), msg, where):
        raise ConcretizationError(
            f"assert on a traced value at {where} inside a traced if or loop body (or a function traced "
            "apart): the program checks asserts of the compiled function's own body only",
            hint="move the assert out of the branch or loop, or check with np.all(...) after it")


def concrete_test(test, why: str, where: str):
    if isinstance(test, TracedRArray):
        raise ConcretizationError(
            f"this {why} at {where} depends on a traced value",
            hint="assign results to variables and return/break after the if/loop, or use "
            "reactant.cond / reactant.while_loop",
        )
    return test


def ifexp(test, true_fn, false_fn):
    """``a if test else b``: one of them when ``test`` is concrete; on a traced ``test``
    both are computed in the branches of one ``if`` (they must agree in structure)."""
    if not isinstance(test, TracedRArray):
        return true_fn() if test else false_fn()
    return cf.cond(test, true_fn, false_fn)


def and_(*fns):
    """``a and b and ...``: Python's short circuit while the values are concrete; from a
    traced truth value on, the logical and of the truth values (every operand is then
    computed)."""
    return _bool_chain(fns, True)


def or_(*fns):
    """``a or b or ...`` (see ``and_``)."""
    return _bool_chain(fns, False)


def not_(x):
    """``not x``: on a traced value, its logical not (one element, as Python's ``not``
    of a NumPy array needs)."""
    if not isinstance(x, TracedRArray):
        return not x
    return np.logical_not(_truth(x, "not"))


def _truth(x, what: str):
    """The truth value of traced ``x`` as a traced bool (``bool(x)`` in NumPy: one element)."""
    if x.size != 1:
        raise ValueError(f"The truth value of an array with more than one element is ambiguous "
                         f"(`{what}` on traced {x.dtype}{list(x.shape)}). Use a.any() or a.all()")
    x = x.reshape(())
    return x if x.dtype == np.bool_ else x != 0


def _bool_chain(fns, is_and: bool):
    word = "and" if is_and else "or"
    v = fns[0]()
    for k, f in enumerate(fns[1:], 1):
        if not isinstance(v, TracedRArray):
            if bool(v) != is_and:  # Python's short circuit: this operand is the result
                return v
            v = f()
            continue
        # a traced truth value: the result is one of the operands, chosen at run time; as a
        # value that is only NumPy's answer when every operand is a bool (then it is the
        # logical and/or), so other operands are refused rather than turned into bools
        rest = [v] + [g() for g in fns[k:]]
        if not all(_is_boolish(x) for x in rest):
            kinds = ", ".join(x.dtype.name if isinstance(x, TracedRArray) else type(x).__name__ for x in rest)
            raise ConcretizationError(
                f"`{word}` of a traced value with operands that are not all bools ({kinds}): its result is one "
                "of the operands, which one depends on the traced value",
                hint="compare explicitly (x > 0), or use np.logical_and / np.logical_or / np.where")
        acc = _truth(rest[0], word)
        for x in rest[1:]:
            t = _truth(x, word) if isinstance(x, TracedRArray) else bool(x)
            acc = np.logical_and(acc, t) if is_and else np.logical_or(acc, t)
        return acc
    return v


def _is_boolish(v) -> bool:
    return isinstance(v, (bool, np.bool_)) or (isinstance(v, TracedRArray) and v.dtype == np.bool_)


def _minmax(builtin, *args, **kwargs):
    """Python's ``max``/``min`` with traced operands: the first largest (smallest) item, as
    Python compares them (``b > a`` replaces ``a``), so NaN behaves as in Python."""
    items = list(args[0]) if len(args) == 1 else list(args)
    if not any(isinstance(a, TracedRArray) for a in items):
        return builtin(*args, **kwargs)
    if kwargs:
        raise ConcretizationError(f"{builtin.__name__}() with {', '.join(kwargs)}= on traced values",
                                  hint="use np.max / np.min / np.argmax on an array")
    if not items:
        return builtin(*args)
    best = items[0]
    for it in items[1:]:
        better = it > best if builtin is max else it < best
        if isinstance(better, TracedRArray):
            better = _truth(better, f"{builtin.__name__}()")
            best = np.where(better, it, best)
        elif better:
            best = it
    return best
