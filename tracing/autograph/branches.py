"""``if`` statements on traced values: both branches traced as one ``stablehlo.if``, the
variables (and attributes) they assign merged, and Python state they change refused."""

from __future__ import annotations

import os
import types

import numpy as np

from .. import control_flow as cf
from ..aliases import PythonState
from ..context import current as current_tc
from ..errors import ConcretizationError, ReactantError
from ..numpy_api.convert import as_traced
from ..state_reads import digest
from ..traced import TracedRArray, root_of
from .undefined import _is_undef, _undefined

_MISSING = object()  # an attribute an object does not have


def _set_attr(obj, name: str, value) -> None:
    if value is _MISSING:
        if hasattr(obj, name):
            delattr(obj, name)
    else:
        setattr(obj, name, value)


def _attr_or_undefined(obj, name: str, label: str):
    v = getattr(obj, name, _MISSING)
    if v is _MISSING:
        return _undefined(name, f"the {label} branch does not assign it")
    if hasattr(type(v), "__reactant_concrete__"):  # a device array of the state: read as an input
        return as_traced(v)
    return v


def if_stmt(test, true_fn, false_fn, init: tuple, params: tuple, names: tuple, where: str,
            attrs: tuple = ()):
    """``if test:`` whose branches take the variables ``params`` (values ``init``) and return
    those of ``names`` (the ones read afterwards). ``attrs``: (object, name) of attributes
    the branches assign, carried like variables (each branch starts from their values
    before the if; afterwards they hold the merged values)."""
    if not isinstance(test, TracedRArray):
        return true_fn(*init) if test else false_fn(*init)
    outs = {}
    attrs = tuple((o, a) for o, a in attrs if not isinstance(o, (type, types.ModuleType)))
    attr_before = [getattr(o, a, _MISSING) for o, a in attrs]
    rebound = [False] * len(attrs)  # whether some branch binds it to another object
    # NumPy arrays they held: a branch may also update one on the host before rebinding
    host = [(k, digest(v)) for k, v in enumerate(attr_before) if type(v) is np.ndarray]

    def branch(fn, label):
        def run():
            for (o, a), v in zip(attrs, attr_before):  # (the other branch may have set them)
                _set_attr(o, a, v)
            res = fn(*init)
            outs[label] = res
            for k, ((o, a), v) in enumerate(zip(attrs, attr_before)):
                rebound[k] = rebound[k] or getattr(o, a, _MISSING) is not v
            return tuple(res) + tuple(_attr_or_undefined(o, a, label) for o, a in attrs)

        run.__reactant_name__ = f"{label} branch"
        code = fn.__code__  # errors name the branch's own line
        run.__reactant_where__ = f"{os.path.abspath(code.co_filename)}:{code.co_firstlineno}"
        return run

    tc = current_tc()
    start = len(tc.handles)
    mark = tc.reads.mark()
    objects = PythonState.of_functions((true_fn, false_fn))
    try:
        result = cf.cond(test, branch(true_fn, "true"), branch(false_fn, "false"))
        objects.refuse_changes(f"a branch of the if at {where} has a traced condition", "the program runs one "
                               "branch", places={(id(o), a) for o, a in attrs})
    except BaseException:
        for (o, a), v in zip(attrs, attr_before):
            _set_attr(o, a, v)
        raise
    merged_attrs = list(result[len(names):])
    for k, ((o, a), v) in enumerate(zip(attrs, merged_attrs)):
        if not rebound[k]:  # the same object either way (an array updated in place: carried)
            _set_attr(o, a, attr_before[k])
            merged_attrs[k] = None
            continue
        if _is_undef(v):
            _set_attr(o, a, attr_before[attrs.index((o, a))])
            raise ReactantError(
                f"attribute {a!r} is assigned only in one branch of the if at {where} (traced condition) and "
                "has no value before it", hint="give it a value before the if, or assign it in both branches")
        _set_attr(o, a, v)
    result = result[:len(names)]
    # (attributes bound to another object are merged above; one updated in place on the host
    # in a branch is a change of state like any other)
    changed = tc.reads.changed_since(mark, [oa for oa, r in zip(attrs, rebound) if r])
    changed += [f"the NumPy array attribute {attrs[k][1]!r} held" for k, d in host if digest(attr_before[k]) != d]
    if changed:  # Python state changed while tracing: at run time only one branch would change it
        tc.reads.put_back(mark)  # (the error leaves the places as they were)
        raise cf._no_unroll(ConcretizationError(
            f"the if at {where} depends on a traced value and its branches change Python state "
            f"({', '.join(changed[:3])}): tracing runs both branches once, the program would run one",
            hint="compute the new state with traced values (np.where(cond, a, b), arrays updated in place "
            "inside the branches), or decide the if on a Python value"))
    before = dict(zip(params, init))
    out = []
    for k, name in enumerate(names):
        t_val, f_val = outs["true"][k], outs["false"][k]
        t_undef, f_undef = _is_undef(t_val), _is_undef(f_val)
        if t_undef and f_undef:
            out.append(t_val)
        elif t_undef or f_undef:
            side = "false" if t_undef else "true"
            raise ReactantError(
                f"variable {name!r} is assigned only in the {side} branch of the if at {where} (traced "
                "condition), and is used afterwards",
                hint=f"assign {name!r} before the if or in both branches",
            )
        elif isinstance(t_val, TracedRArray) and t_val is f_val:
            out.append(t_val)  # the same array either way (updated in place, or untouched)
        else:
            out.append(result[k])
            _mark_ambiguous(result[k], [v for v in (t_val, f_val, before.get(name))
                                        if isinstance(v, TracedRArray) and _is_old(v, result[k])],
                            name, where)
    # arrays made in a branch and kept by the user's code (a list, an attribute) name values
    # of that branch: using them afterwards is an error, not invalid IR
    outs = result = before = t_val = f_val = None  # (drop the references to branch values)
    from ..escape import kill_escaped

    kill_escaped(tc.handles, start, None, f"the branch of the if at {where} ended (it was kept in a list or "
                 "attribute; carry values out of ifs in variables)",
                 keep=_traced_leaves(out) + _traced_leaves(tuple(merged_attrs)))
    return tuple(out)


def _traced_leaves(values) -> list:
    out = []
    for v in values:
        out.extend(x for x in cf._leaves(v)[0] if isinstance(x, TracedRArray))
    return out


def _is_old(v: TracedRArray, result) -> bool:
    """Whether ``v`` (a branch's value of a variable) is an array that existed before the if."""
    return isinstance(result, TracedRArray) and v is not result and not _made_in_branch(v, result)


def _made_in_branch(v: TracedRArray, result: TracedRArray) -> bool:
    from ..control_flow import _inside

    op = result.value.owner
    op = op.operation if hasattr(op, "operation") else op
    try:
        return _inside(root_of(v).value, op)
    except Exception:  # noqa: BLE001 - a value without a defining op: a function argument
        return False


def _mark_ambiguous(result, olds: list, name: str, where: str) -> None:
    """``result`` is one of several arrays depending on a traced condition: writing through it
    is refused while any of the arrays it might be is still alive (NumPy would write into
    that one on one path only)."""
    if not olds or not isinstance(result, TracedRArray):
        return
    from weakref import ref

    result._nowrite = (f"variable {name!r} refers, after the if at {where} (traced condition), to an array "
                       "that depends on the condition: writing through it would update a different array on "
                       "each path", [ref(root_of(o)) for o in olds])
