"""Ordinary Python control flow on traced values, by source transformation.

A compiled function (and every user function it calls) is rewritten, once, so that

    if test: ...  else: ...          ->  carried = _rt.if_stmt(test, true_fn, false_fn, carried)
    while test: ...                  ->  carried = _rt.while_stmt(cond_fn, body_fn, carried)
    for i in range(a, b, c): ...     ->  carried = _rt.for_range((a, b, c), body_fn, carried)

where ``carried`` are the variables the statement assigns that are read afterwards. At run
time (that is, while tracing) each helper keeps Python's semantics when the test or the
bounds are concrete (a ``for`` over a range of plain ints is unrolled), and emits
``stablehlo.if`` / ``while`` through ``control_flow`` when they are traced. Statements whose
bodies ``return``/``break``/``continue`` are left as they are, with a guard that raises a
clear error naming the line if their test turns out to be traced.
"""

from __future__ import annotations

import ast
import copy
import operator
import functools
import inspect
import os
import sys
import textwrap
import types
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from . import control_flow as cf
from .errors import ConcretizationError, NonUniformLoopError, ReactantError
from .numpy_api.convert import PY_SCALARS, as_traced, contains_traced
from .functions import cached_call
from .host_random import guard_numpy_random, refuse_numpy_random
from .state_reads import digest
from .aliases import is_reactant as _is_reactant
from .aliases import refuse_aliased as _refuse_aliased
from .library_calls import guard_as_strided, guard_lexsort
from .state_writes import state_array_handle
from .context import active as _active
from .context import current as current_tc
from .traced import TracedRArray, root_of
from . import loop_rolling as rolling
from .loop_rolling import KeepLoop, UnrollLoop, keep, unroll  # noqa: F401  (public markers)

# -- the Undefined sentinel -------------------------------------------------------------------------


class Undefined:
    """The value of a variable that a traced statement could not define (e.g. assigned in only
    one branch); any use raises an error naming it."""

    __slots__ = ("name", "why")
    __reactant_undefined__ = True

    def __init__(self, name: str, why: str):
        self.name = name
        self.why = why

    def _fail(self, *a, **k):
        raise ReactantError(f"variable {self.name!r} is undefined here: {self.why}",
                            hint="assign it before the if/loop (or in every branch)")

    __getattr__ = __call__ = __getitem__ = __iter__ = __len__ = __bool__ = __float__ = __int__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _fail
    __matmul__ = __rmatmul__ = __pow__ = __neg__ = __lt__ = __gt__ = __le__ = __ge__ = _fail
    __array__ = __array_ufunc__ = __array_function__ = _fail

    def __repr__(self) -> str:
        return f"<undefined {self.name}>"


def _undefined(name: str, why: str) -> Undefined:
    return Undefined(name, why)


def _is_undef(v) -> bool:
    return type(v) is Undefined


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


# -- runtime helpers called by transformed code ---------------------------------------------------
class _Runtime:
    """The object transformed code calls as ``_rt`` (one for every converted function: the
    loop mode comes from the active trace)."""

    NO_RESULT = cf.NO_RESULT  # the result of a path that has not returned yet (early returns)

    # variable access -------------------------------------------------------------------------
    @staticmethod
    def ld(getter: Callable[[], Any], name: str) -> Any:
        try:
            return getter()
        except NameError:  # UnboundLocalError too
            return _undefined(name, "it is not assigned before this point")

    # if ----------------------------------------------------------------------------------------
    def if_stmt(self, test, true_fn, false_fn, init: tuple, params: tuple, names: tuple, where: str,
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
        try:
            result = cf.cond(test, branch(true_fn, "true"), branch(false_fn, "false"))
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
        from .escape import kill_escaped

        kill_escaped(tc.handles, start, None, f"the branch of the if at {where} ended (it was kept in a list or "
                     "attribute; carry values out of ifs in variables)",
                     keep=_traced_leaves(out) + _traced_leaves(tuple(merged_attrs)))
        return tuple(out)

    # while -------------------------------------------------------------------------------------
    def while_stmt(self, cond_fn, body_fn, init: tuple, names: tuple, where: str):
        vals = tuple(init)
        while True:  # Python semantics while the test is concrete
            t = cond_fn(*vals)
            if isinstance(t, TracedRArray):
                break
            if not t:
                return vals
            vals = tuple(body_fn(*vals))
        return self._staged_loop(lambda v: cond_fn(*v), lambda v: tuple(body_fn(*v)), vals, names, where)

    def _staged_loop(self, cond, body, vals, names, where):
        undef = [k for k, v in enumerate(vals) if _is_undef(v)]
        kept = [k for k in range(len(vals)) if k not in undef]
        names_kept = [names[k] for k in kept]

        def full(v):
            out = list(vals)
            for k, x in zip(kept, v):
                out[k] = x
            return tuple(out)

        def body_kept(v):
            res = body(full(v))
            return tuple(res[k] for k in kept)

        body_kept.__reactant_where__ = where

        res = cf.while_loop(lambda v: cond(full(v)), body_kept, tuple(vals[k] for k in kept), names=names_kept)
        out = list(full(res))
        for k in undef:
            out[k] = _undefined(names[k], f"it is assigned only inside the loop at {where}, whose condition is traced")
        return tuple(out)

    # for ---------------------------------------------------------------------------------------
    def for_range(self, args: tuple, body_fn, init: tuple, names: tuple, where: str, target: str,
                  effects: str | None = None, live_after: tuple = ()):
        """``for target in range(*args)``: unrolled, or one ``stablehlo.while`` (traced bounds,
        or plain-int bounds where ``loop_rolling`` decides so). ``effects``: why the body cannot
        run once for all iterations (from its source); ``live_after``: per carried name,
        whether it is read after the loop."""
        start, stop, step = _range_args(args)
        traced = any(isinstance(a, TracedRArray) for a in (start, stop, step))
        if not traced:
            tc = _active()
            mode = "keep" if any(isinstance(a, KeepLoop) for a in args) else \
                "unroll" if any(isinstance(a, UnrollLoop) for a in args) else (tc.loops if tc else "unroll")
            if mode == "auto":
                rolled = self._try_roll(tc, start, stop, step, body_fn, init, names, where, target, effects,
                                        live_after)
                if rolled is not None:
                    return rolled
            if mode != "keep":
                vals = tuple(init)
                i = _undefined(target, "the loop did not run")
                for i in range(int(start), int(stop), int(step)):
                    vals = tuple(body_fn(i, *vals))
                return vals + (i,)
        if isinstance(step, TracedRArray):
            raise ReactantError(f"a traced step in range() at {where} is not supported",
                                hint="use a constant step")
        out, _ = self._stage_range(start, stop, int(step), body_fn, init, names, where)
        return out

    def _stage_range(self, start, stop, step: int, body_fn, init, names, where):
        """The loop as a ``stablehlo.while`` over a counter; returns (carried values + the last
        index, the while op)."""
        if step == 0:
            raise ValueError("range() arg 3 must not be zero")
        from . import ops

        wide = any(isinstance(a, TracedRArray) and a.dtype.itemsize == 8 for a in (start, stop)) or \
            any(not isinstance(a, TracedRArray) and not -2**31 <= int(a) < 2**31 for a in (start, stop))
        dt = np.dtype(np.int64 if wide else np.int32)
        lo = ops.convert(as_traced(start), dt) if isinstance(start, TracedRArray) else ops.constant(np.asarray(start, dt))
        hi = ops.convert(as_traced(stop), dt) if isinstance(stop, TracedRArray) else ops.constant(np.asarray(stop, dt))
        # trip count max(0, ceil((hi - lo) / step)), then i = lo + k * step
        span = ops.subtract(hi, lo)
        if step < 0:
            span = ops.negate(span)
        a = abs(step)
        n = ops.divide(ops.add(span, ops.constant(np.asarray(a - 1, dt))), ops.constant(np.asarray(a, dt)))
        n = ops.maximum(n, ops.constant(np.asarray(0, dt)))
        state0 = (ops.constant(np.asarray(0, dt)),) + tuple(init)
        names0 = ("<loop counter>",) + tuple(names)

        def cond(v):
            return ops.compare(v[0], n, "LT")

        index_range = _index_range(lo, hi, step)

        def body(v):
            k = v[0]
            i = _python_int(ops.add(lo, ops.multiply(k, ops.constant(np.asarray(step, dt)))))
            if index_range is None:
                res = tuple(body_fn(i, *v[1:]))
            else:  # lets slices like x[i:i+3] keep a static size; only while the body is traced
                ranges = current_tc().int_ranges  # (the body's values may be erased afterwards)
                ranges[i.value] = index_range
                try:
                    res = tuple(body_fn(i, *v[1:]))
                finally:
                    del ranges[i.value]
            return (ops.add(k, ops.constant(np.asarray(1, dt))),) + res

        out = self._staged_loop(cond, body, state0, names0, where)
        last = _python_int(ops.add(lo, ops.multiply(ops.subtract(out[0], ops.constant(np.asarray(1, dt))),
                                                    ops.constant(np.asarray(step, dt)))))
        return tuple(out[1:]) + (last,), out[0].value.owner

    def _try_roll(self, tc, start, stop, step, body_fn, init, names, where, target, effects, live_after):
        """The loop as one while when ``loop_rolling``'s conditions hold, else None (unroll)."""
        start, stop, step = int(start), int(stop), int(step)
        trip = len(range(start, stop, step))
        if trip < 2:
            return None
        what = f"loop at {where} (range({start}, {stop}, {step}): {trip} iterations)"
        if effects:
            return _decided(tc, what, f"unrolled: the body changes a Python object ({effects})")
        vals = tuple(init)
        undef_live = [nm for nm, v, live in zip(names, vals, live_after) if _is_undef(v) and live]
        peeled = 0
        why = None  # why not: set inside the attempt, reported once it is thrown away
        with rolling.attempt(tc) as att:
            try:
                if undef_live:  # first assigned in the body and read afterwards: peel one iteration
                    vals = tuple(body_fn(start, *vals))
                    peeled = 1
                out, loop = self._stage_range(start + peeled * step, stop, step, body_fn, vals, names, where)
            except (ReactantError, TypeError) as e:
                why = _why_unrolled(e)
                if why is None:  # not a reason to unroll: a bug, reported as it is
                    raise
            if why is None:
                body_ops = rolling.body_op_count(loop)
                host = _host_slots(vals, names, live_after)
                if trip * body_ops < rolling.ROLL_MIN_OPS and not (trip > 1 and rolling.updates_large_windows(loop)):
                    why = f"unrolled: {trip} x {body_ops} ops is below {rolling.ROLL_MIN_OPS} unrolled ops"
                elif host and rolling.host_carries_stay_static(loop, host, 0):
                    why = "unrolled: a carried variable would stay a Python/NumPy value when unrolled (e.g. a counter)"
                else:
                    att.commit()
        if why is not None:
            return _decided(tc, what, why)
        _decided(tc, what, f"kept as stablehlo.while ({trip - peeled} iterations x {body_ops} ops"
                           + (", first iteration peeled" if peeled else "") + ")")
        return tuple(out[:-1]) + (start + (trip - 1) * step,)

    # guards for statements left as they are ----------------------------------------------------
    @staticmethod
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

    @staticmethod
    def concrete_test(test, why: str, where: str):
        if isinstance(test, TracedRArray):
            raise ConcretizationError(
                f"this {why} at {where} depends on a traced value",
                hint="assign results to variables and return/break after the if/loop, or use "
                "reactant.cond / reactant.while_loop",
            )
        return test

    # NumPy arrays made in the traced code meeting traced values ---------------------------------
    slice = staticmethod(slice)

    @staticmethod
    def getitem(obj, index):
        """``obj[index]``; a NumPy array indexed by a traced index is traced first; a ``range``
        index is the integer array it holds (as NumPy reads it); ``np.r_[...]`` / ``np.c_[...]``
        of traced arrays concatenate them."""
        if type(index) is range or (type(index) is tuple and any(type(i) is range for i in index)):
            index = tuple(np.arange(i.start, i.stop, i.step) if type(i) is range else i for i in index) \
                if type(index) is tuple else np.arange(index.start, index.stop, index.step)
        if (obj is np.r_ or obj is np.c_) and _has_traced(index):
            return _concat_items(obj is np.c_, index if type(index) is tuple else (index,))
        if type(obj) is np.ndarray and _has_traced(index):
            return as_traced(obj)[index]
        return _read_item(obj, index, obj[index])

    # reads of Python state (recorded for the compiled function's guards: state_reads) ------------
    @staticmethod
    def attr(obj, name: str, owner: bool = False):
        """``obj.name`` (``owner``: return ``obj``, for ``obj.name op= v``, which reads it)."""
        value = getattr(obj, name)
        tc = _active()
        if tc is not None:
            tc.reads.attr(obj, name, value)
        return obj if owner else value

    @staticmethod
    def setitem(obj, index, value):
        """``obj[index] = value``, returning what the name should hold: a NumPy array that
        receives a traced value (or a traced index) becomes a traced array."""
        if type(obj) is np.ndarray and (_has_traced(value) or _has_traced(index)):
            _refuse_aliased(obj)
            t = as_traced(obj)
            t[index] = value
            return t
        obj[index] = value
        return obj

    @staticmethod
    def store(obj, index, value) -> None:
        """``obj[index] = value`` where ``obj`` is not a plain name (``d["a"][0] = v``): a NumPy
        array there cannot be rebound, so a traced value is a clear error."""
        if type(obj) is np.ndarray and (_has_traced(value) or _has_traced(index)):
            h = state_array_handle(obj)
            if h is not None:  # an array of the Python state: updated through its handle
                h[index] = value
                return
            raise ConcretizationError(
                "a NumPy array reached through an expression (an item of a list or dict, an attribute) "
                "receives a traced value: it cannot become a traced array there",
                hint="create it from a traced array (np.zeros_like(x, shape=...)), or bind it to a name first")
        obj[index] = value

    @staticmethod
    def store_in(holder, key, index, value, is_attr: bool, op: str | None = None) -> None:
        """``holder[key][index] = value`` (``holder.key[...]`` when ``is_attr``; ``op=`` for
        ``op=``): a NumPy array there receiving a traced value is updated as a traced array
        (``_traced_for``) that then stands in its place."""
        cur = _place_value(holder, key, is_attr)
        if type(cur) is np.ndarray and not isinstance(holder, np.ndarray) and (_has_traced(value) or _has_traced(index)):
            t = _traced_for(holder, key, cur, is_attr)
            t[index] = value if op is None else getattr(operator, op)(t[index], value)
            _set_place(holder, key, is_attr, t)
        elif op is None:
            _Runtime.store(cur, index, value)
        else:
            _Runtime.aug_store(cur, index, op, value)

    @staticmethod
    def aug_store(obj, index, op: str, value) -> None:
        """``obj[index] op= value`` where ``obj`` is not a plain name (``self.count[0] += v``)."""
        if type(obj) is np.ndarray and (_has_traced(value) or _has_traced(index)):
            h = state_array_handle(obj)
            if h is None:
                raise ConcretizationError(
                    "a NumPy array reached through an expression (an item of a list or dict, an attribute) "
                    "receives a traced value: it cannot become a traced array there",
                    hint="create it from a traced array (np.zeros_like(x, shape=...)), or bind it to a name first")
            h[index] = getattr(operator, op)(h[index], value)
            return
        obj[index] = _combine_item(obj, index, obj[index], op, value)

    @staticmethod
    def aug_setitem(obj, index, op: str, value):
        """``obj[index] op= value`` (``op``: the operator's name, e.g. ``iadd``)."""
        if type(obj) is np.ndarray and (_has_traced(value) or _has_traced(index)):
            _refuse_aliased(obj)
            t = as_traced(obj)
            t[index] = getattr(operator, op)(t[index], value)
            return t
        obj[index] = _combine_item(obj, index, obj[index], op, value)
        return obj

    @staticmethod
    def aug_attr(obj, name: str, op: str, value) -> None:
        """``obj.name op= value``: a NumPy array there combined with a traced value."""
        cur = getattr(obj, name)
        tc = _active()
        if tc is not None:
            tc.reads.attr(obj, name, cur)
        setattr(obj, name, _combine_item(obj, name, cur, op, value, attr=True))

    @staticmethod
    def aug_assign(obj, op: str, value):
        """``obj op= value``: a NumPy array combined in place with a traced value becomes the
        traced result."""
        if type(obj) is np.ndarray and _has_traced(value):
            _refuse_aliased(obj)
            # (the in-place operator: NumPy's casting, w's dtype kept or a clear error)
            return getattr(operator, op)(as_traced(obj), value)
        return getattr(operator, op)(obj, value)

    @staticmethod
    def unpack(value, n: int) -> tuple:
        """``value`` as ``n`` items, as a tuple assignment would unpack it."""
        items = tuple(value)
        if len(items) != n:
            raise ValueError(f"{'too many' if len(items) > n else 'not enough'} values to unpack "
                             f"(expected {n}, got {len(items)})")
        return items

    def call_with_out(self, fn, out, *args, **kwargs):
        """``fn(*args, out=out, **kwargs)`` as a statement, returning what the name ``out``
        should hold: a NumPy ``out`` written with traced inputs becomes a traced array."""
        if type(out) is np.ndarray and (_has_traced(args) or _has_traced(list(kwargs.values()))):
            _refuse_aliased(out)
            out = as_traced(out)
        self.call(fn)(*args, out=out, **kwargs)
        return out

    def ufunc_at(self, method, target, *args, **kwargs):
        """The statement ``np.add.at(target, ...)`` (any ufunc's ``at``), returning what the
        name ``target`` should hold: a NumPy array updated with traced values becomes traced."""
        if type(target) is np.ndarray and (_has_traced(args) or _has_traced(list(kwargs.values()))):
            _refuse_aliased(target)
            target = as_traced(target)
        self.call(method)(target, *args, **kwargs)
        return target

    # expressions -----------------------------------------------------------------------------------
    @staticmethod
    def ifexp(test, true_fn, false_fn):
        """``a if test else b``: one of them when ``test`` is concrete; on a traced ``test``
        both are computed in the branches of one ``if`` (they must agree in structure)."""
        if not isinstance(test, TracedRArray):
            return true_fn() if test else false_fn()
        return cf.cond(test, true_fn, false_fn)

    @staticmethod
    def and_(*fns):
        """``a and b and ...``: Python's short circuit while the values are concrete; from a
        traced truth value on, the logical and of the truth values (every operand is then
        computed)."""
        return _bool_chain(fns, True)

    @staticmethod
    def or_(*fns):
        """``a or b or ...`` (see ``and_``)."""
        return _bool_chain(fns, False)

    @staticmethod
    def not_(x):
        """``not x``: on a traced value, its logical not (one element, as Python's ``not``
        of a NumPy array needs)."""
        if not isinstance(x, TracedRArray):
            return not x
        return np.logical_not(_truth(x, "not"))

    # calls ---------------------------------------------------------------------------------------
    def call(self, fn):
        refuse_numpy_random(fn)
        numpy_call = _numpy_call(fn)
        if numpy_call is not None:
            return numpy_call
        if fn is max or fn is min:
            return functools.partial(_minmax, fn)
        if not isinstance(fn, (types.FunctionType, types.MethodType, functools.partial, type)) and \
                _convertible(getattr(type(fn), "__call__", None)):
            fn = fn.__call__  # an object called like a function (an optimizer's update): its method
        conv = convert(fn, strict=False)
        if not _convertible(getattr(fn, "__func__", fn)):
            return conv  # library code: called as it is
        return functools.partial(cached_call, conv)


def _concat_items(columns: bool, items: tuple):
    """``np.r_[a, b, ...]`` (``columns``: ``np.c_``) with traced items: arrays and numbers
    concatenated along the first axis (``np.c_``: 1-D items as columns, along the last axis).
    Slices and directive strings stay NumPy's (refused for traced items)."""
    if any(isinstance(i, (slice, str)) for i in items):
        raise ConcretizationError(
            f"np.{'c_' if columns else 'r_'}[...] with slices or directives and traced values",
            hint="build it with np.concatenate / np.column_stack / np.arange")
    arrs = [as_traced(i) if not isinstance(i, TracedRArray) else i for i in items]
    if not columns:
        return np.concatenate([a.reshape(1) if a.ndim == 0 else a for a in arrs], axis=0)
    arrs = [a.reshape(1, 1) if a.ndim == 0 else a.reshape(-1, 1) if a.ndim == 1 else a for a in arrs]
    return np.concatenate(arrs, axis=-1)


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


_SIZED = frozenset({np.unique, np.nonzero, np.argwhere, np.flatnonzero})
_DISPATCHED = type(np.concatenate)  # NumPy functions with __array_function__ dispatch
# ufunc method -> positions of its array operands (``at``'s indices: see _ufunc_method_call)
_UFUNC_METHOD_ARRAYS = {"reduce": (0,), "accumulate": (0,), "reduceat": (0, 1), "outer": (0, 1), "at": (0, 2)}


def _numpy_call(fn):
    """A NumPy function or ufunc called from traced code, where NumPy alone would go wrong:
    data holding traced values inside a list/tuple, which NumPy's dispatch does not see (it
    would ask each tracer for ``__array__``). Constructors (``np.array``, ``np.asarray``...)
    of such data, or of a traced array, build the traced array; other functions and ufuncs
    get such list arguments as traced arrays, except functions whose lists are sequences of
    arrays (``np.stack``...): those go straight to their traced implementation, which reads
    them. ``size=`` (which NumPy's signature refuses) goes to the traced implementation too,
    and so do functions NumPy does not dispatch (``DIRECT``: ``as_strided``). None for anything
    else."""
    from .numpy_api import DIRECT, FUNCTIONS, UFUNC_METHODS, dispatch_function
    from .numpy_api.construction import CONSTRUCTORS, STRUCTURED_LISTS, hides_traced, lists_as_arrays

    fn = getattr(fn, "__reactant_guarded__", fn)  # NumPy's own function behind our guard
    try:
        build = CONSTRUCTORS.get(fn)
        impl = FUNCTIONS.get(fn)
    except TypeError:  # unhashable callable
        return None
    if build is not None:
        return build
    if isinstance(fn, np.ufunc):
        return _ufunc_call(fn)
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, np.ufunc) and (owner, getattr(fn, "__name__", None)) in UFUNC_METHODS:
        return _ufunc_method_call(fn, _UFUNC_METHOD_ARRAYS.get(fn.__name__, (0,)))
    if impl is None and type(fn) is not _DISPATCHED:
        return None
    if fn in DIRECT:  # NumPy would not dispatch it (as_strided): the implementation decides
        return impl
    structured = fn in STRUCTURED_LISTS

    def call(*args, **kwargs):
        if fn in _SIZED and "size" in kwargs:
            return impl(*args, **kwargs)
        if not structured:  # then NumPy sees the traced arrays and dispatches
            args, kwargs = lists_as_arrays(args, kwargs)
        elif (any(hides_traced(a) for a in args) or any(hides_traced(v) for v in kwargs.values())) \
                and not _defers((args, tuple(kwargs.values()))):
            out = dispatch_function(fn, args, dict(kwargs))  # (UnsupportedError without an impl)
            if out is not NotImplemented:
                return out
        return fn(*args, **kwargs)

    return call


def _defers(x) -> bool:
    """Whether a (nested) list/tuple holds a value whose type handles mixed NumPy calls itself
    (a ``Window``): NumPy's own dispatch, which sees the items of a sequence, then decides."""
    if isinstance(x, (list, tuple)):
        return any(_defers(e) for e in x)
    return getattr(type(x), "__reactant_defer__", False)


def _as_array(x):
    """A list/tuple holding traced values as one traced array; anything else as it is."""
    from .numpy_api.construction import from_data, hides_traced

    return from_data(x) if hides_traced(x) else x


def _ufunc_call(uf: np.ufunc):
    def call(*args, **kwargs):
        args = tuple(_as_array(a) if k < uf.nin else a for k, a in enumerate(args))  # (then outputs)
        if "where" in kwargs:
            kwargs["where"] = _as_array(kwargs["where"])
        return uf(*args, **kwargs)

    return call


def _ufunc_method_call(method, arrays: tuple[int, ...]):
    def call(*args, **kwargs):
        args = [_as_array(a) if k in arrays else a for k, a in enumerate(args)]
        if method.__name__ == "at" and len(args) > 1:  # indices: a tuple is one index per axis
            idx = args[1]
            args[1] = tuple(_as_array(i) for i in idx) if isinstance(idx, tuple) else _as_array(idx)
        if "where" in kwargs:
            kwargs["where"] = _as_array(kwargs["where"])
        return method(*args, **kwargs)

    return call


def _read_item(obj, index, value):
    tc = _active()
    if tc is not None:
        tc.reads.item(obj, index, value)
    return value


def _has_traced(x) -> bool:
    if isinstance(x, tuple) and any(isinstance(e, slice) for e in x):  # an index: look into slices
        x = tuple((e.start, e.stop, e.step) if isinstance(e, slice) else e for e in x)
    elif isinstance(x, slice):
        x = (x.start, x.stop, x.step)
    return contains_traced((x,))


def _python_int(i: TracedRArray) -> TracedRArray:
    """A kept loop's index as the Python int it stands for: int64 when it is a value of its
    own (returned, stored: as NumPy makes a Python int), weakly typed in arithmetic
    (``x_f32 * i`` stays float32). The loop's counter itself may be narrower."""
    from . import ops

    if i.dtype != np.int64:
        i = ops.convert(i, np.dtype(np.int64))
    i.weak = True
    return i


def _place_value(holder, key, is_attr: bool):
    """``holder.key`` (a read recorded for the guards) or ``holder[key]``."""
    if is_attr:
        return _Runtime.attr(holder, key)
    return _Runtime.getitem(holder, key)


def _set_place(holder, key, is_attr: bool, value) -> None:
    if is_attr:
        setattr(holder, key, value)
    else:
        holder[key] = value


def _traced_for(holder, key, cur: np.ndarray, is_attr: bool):
    """The traced array that receives the traced values written into NumPy array ``cur``, held
    at ``holder[key]`` (``holder.key`` when ``is_attr``): a state array's handle (updated in
    place, state_writes), else a traced copy for that place, when nothing else holds the
    array (anything else would keep the old values: refused)."""
    h = state_array_handle(cur, item=None if is_attr else (holder, key))
    if h is not None:
        return h
    _refuse_aliased(cur, slot=(holder, key))
    return as_traced(cur)


def _combine_item(obj, key, cur, op: str, value, attr: bool = False):
    """What ``obj[key] op= value`` (``obj.key`` when ``attr``) leaves in that place, ``cur``
    being its value: for a NumPy array meeting a traced value, the in-place operator applied
    to its traced stand-in (NumPy's casting rules: its dtype is kept)."""
    if type(cur) is np.ndarray and _has_traced(value) and not isinstance(obj, np.ndarray):
        return getattr(operator, op)(_traced_for(obj, key, cur, attr), value)
    return getattr(operator, op)(cur, value)


def _traced_leaves(values) -> list:
    out = []
    for v in values:
        out.extend(x for x in cf._leaves(v)[0] if isinstance(x, TracedRArray))
    return out


def _is_old(v: TracedRArray, result) -> bool:
    """Whether ``v`` (a branch's value of a variable) is an array that existed before the if."""
    return isinstance(result, TracedRArray) and v is not result and not _made_in_branch(v, result)


def _made_in_branch(v: TracedRArray, result: TracedRArray) -> bool:
    from .control_flow import _inside

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


def _index_range(lo, hi, step: int):
    """(min, max) of a loop index running from ``lo`` towards ``hi`` by ``step``, when the
    ranges of the bounds are known (constants, or indices of enclosing loops); else None."""
    from ..ir.loops import int_range

    known = current_tc().int_ranges
    rlo, rhi = int_range(lo.value, env=known), int_range(hi.value, env=known)
    if rlo is None or rhi is None:
        return None
    if step > 0:
        return (rlo[0], max(rlo[0], rhi[1] - 1))
    return (min(rlo[1], rhi[0] + 1), rlo[1])


def _host_slots(vals: tuple, names: tuple, live_after: tuple) -> list[int]:
    """The while slots (after the counter, slot 0) holding Python/NumPy values of carried
    variables read after the loop: if such a value would stay one when unrolled, rolling
    would turn it into a traced value under the user's feet."""
    slots, k = [], 1
    for v, live in zip(vals, live_after or (True,) * len(vals)):
        if _is_undef(v):
            continue
        for leaf in cf._leaves(v)[0]:
            if isinstance(leaf, TracedRArray):
                k += 1
            elif type(leaf) in PY_SCALARS or isinstance(leaf, (np.ndarray, np.generic)):
                if live:
                    slots.append(k)
                k += 1
    return slots


def _why_unrolled(e: Exception) -> str | None:
    """Why a loop whose body failed when traced once is unrolled instead, or None when the
    failure is not one that unrolling answers. (Unrolled, the user's own errors are raised
    again at the right iteration.)"""
    if getattr(e, "no_unroll", False):
        return None
    first = str(e).splitlines()[0] if str(e) else ""
    detail = f"({type(e).__name__}: {first})"
    if isinstance(e, ConcretizationError) or (isinstance(e, TypeError) and not isinstance(e, ReactantError) and any(
            k in first for k in ("unhashable", "must be integers", "interpreted as an integer", "Traced"))):
        # (a TypeError naming a traced type: Python or NumPy wanted a concrete value there)
        return f"unrolled: the body needs the index as a Python int {detail}"
    if isinstance(e, NonUniformLoopError):
        return f"unrolled: what a variable refers to changes between iterations {detail}"
    if isinstance(e, ReactantError):
        return f"unrolled: the body cannot be traced once for all iterations {detail}"
    return None


def _decided(tc, what: str, decision: str) -> None:
    """Report a loop decision (when the trace logs them); None: the caller unrolls."""
    if tc is not None and tc.log is not None:
        tc.log(f"{what}: {decision}")
    return None


def _range_args(args: tuple):
    if len(args) == 1:
        return 0, args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    if len(args) == 3:
        return args
    raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")


# -- analysis ---------------------------------------------------------------------------------------
class _Names(ast.NodeVisitor):
    """Names stored / loaded in a statement list, not descending into nested scopes."""

    def __init__(self):
        self.stored: list[str] = []
        self.loaded: set[str] = set()

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            if node.id not in self.stored:
                self.stored.append(node.id)
        else:
            self.loaded.add(node.id)

    def visit_FunctionDef(self, node):
        if node.name not in self.stored:
            self.stored.append(node.name)
        for d in node.decorator_list + node.args.defaults + node.args.kw_defaults:
            if d is not None:
                self.visit(d)
        self._free(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        if node.name not in self.stored:
            self.stored.append(node.name)

    def visit_Lambda(self, node):
        self._free(node)

    def _free(self, node):
        # names a nested function reads from this scope count as loads
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                self.loaded.add(n.id)

    def visit_ListComp(self, node):
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                self.loaded.add(n.id)

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp


def _attr_targets(nodes: list, stored: list) -> list[tuple[str, str]]:
    """``name.attr`` assigned in ``nodes`` (``self.total = ...``, ``self.n += 1``), not in
    nested scopes, on a name the statements do not themselves rebind: the attributes an if on
    a traced value carries like variables."""
    out: list[tuple[str, str]] = []

    def visit(n):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
            n, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            for e in ast.walk(t) if isinstance(t, (ast.Tuple, ast.List)) else [t]:
                if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id not in stored:
                    key = (e.value.id, e.attr)
                    if key not in out:
                        out.append(key)
        for c in ast.iter_child_nodes(n):
            visit(c)

    for n in nodes:
        visit(n)
    return out


def _names(nodes) -> _Names:
    v = _Names()
    for n in nodes if isinstance(nodes, list) else [nodes]:
        v.visit(n)
    return v


def _exposed(stmts: list) -> set:
    """Names a statement list may read before assigning them (upward-exposed uses): a name
    counts as assigned only after a plain assignment to it at this level, in both branches of
    an if, or as the target of a for loop within that loop's body."""
    exposed: set = set()
    defined: set = set()
    for s in stmts:
        if isinstance(s, ast.For) and isinstance(s.target, ast.Name):
            uses = _names(s.iter).loaded | (_exposed(s.body) - {s.target.id}) | _exposed(s.orelse)
            sure: set = set()
        elif isinstance(s, ast.If):
            uses = _names(s.test).loaded | _exposed(s.body) | _exposed(s.orelse)
            sure = _assigned_surely(s.body) & _assigned_surely(s.orelse)
        elif isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
            uses = _names(s.value).loaded
            sure = {t.id for t in s.targets}
        else:
            uses = _names(s).loaded
            sure = set()
        exposed |= uses - defined
        defined |= sure
    return exposed


def _assigned_surely(stmts: list) -> set:
    out: set = set()
    for s in stmts:
        if isinstance(s, ast.Assign):
            out |= {t.id for t in s.targets if isinstance(t, ast.Name)}
        elif isinstance(s, ast.If):
            out |= _assigned_surely(s.body) & _assigned_surely(s.orelse)
    return out


class _Escapes(ast.NodeVisitor):
    """Whether a statement list returns/breaks/continues/yields out of a converted body."""

    def __init__(self, loop_level: bool):
        self.found: str | None = None
        self.in_loop = 0
        self.loop_level = loop_level

    def visit_Return(self, node):
        self.found = self.found or "return"

    def visit_Yield(self, node):
        self.found = self.found or "yield"

    visit_YieldFrom = visit_Await = visit_Yield

    def visit_Break(self, node):
        if not self.in_loop:
            self.found = self.found or "break"

    def visit_Continue(self, node):
        if not self.in_loop:
            self.found = self.found or "continue"

    def visit_Global(self, node):
        self.found = self.found or "global statement"

    visit_Nonlocal = visit_Global

    def _loop(self, node):
        self.in_loop += 1
        self.generic_visit(node)
        self.in_loop -= 1

    visit_For = visit_While = visit_AsyncFor = _loop

    def visit_FunctionDef(self, node):
        pass

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def _escape(nodes) -> str | None:
    v = _Escapes(False)
    for n in nodes:
        v.visit(n)
    return v.found


# -- early returns from ifs ------------------------------------------------------------------------------
_RET = "__rt_return"


class _IfReturns(ast.NodeVisitor):
    """A ``return`` reached through ifs only (not inside loops, try/with, or nested defs)."""

    found = False

    def visit_Return(self, node):
        self.found = True

    def _stop(self, node):
        pass

    visit_For = visit_While = visit_AsyncFor = visit_With = visit_AsyncWith = visit_Try = _stop
    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _stop


def _if_returns(node) -> bool:
    v = _IfReturns()
    v.visit(node)
    return v.found


def _always_returns(stmts: list) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)


def _lower_returns(stmts: list) -> list:
    """``if c: return a`` + rest  ->  ``if c: return a else: rest``: the statements after an if
    that may return move into its branches that do not, so every return ends a path."""
    for i, s in enumerate(stmts):
        if isinstance(s, ast.If) and _if_returns(s):
            rest = stmts[i + 1:]
            s.body = _lower_returns(s.body if _always_returns(s.body) else s.body + copy.deepcopy(rest))
            s.orelse = _lower_returns(s.orelse if _always_returns(s.orelse) else s.orelse + copy.deepcopy(rest))
            return stmts[:i] + [s]
    return stmts


def _assign_returns(stmts: list, node) -> None:
    """Returns ending the paths of if-chains become assignments of the result variable; a path
    that ends without one assigns None (the function's implicit result)."""
    last = stmts[-1] if stmts else None
    if isinstance(last, ast.Return):
        value = last.value if last.value is not None else ast.Constant(None)
        stmts[-1] = ast.copy_location(ast.Assign(targets=[ast.Name(_RET, ast.Store())], value=value), last)
    elif isinstance(last, ast.If):
        _assign_returns(last.body, last)
        _assign_returns(last.orelse, last)
    elif not isinstance(last, ast.Raise):
        stmts.append(ast.copy_location(ast.Assign(targets=[ast.Name(_RET, ast.Store())],
                                                  value=ast.Constant(None)), last or node))


_LIVE = "__rt_live"


class _LoopReturns(ast.NodeVisitor):
    """Whether a loop body returns, and whether only through ifs (and inner ``for`` loops
    whose returns are lifted first): no ``break``/``continue`` of this loop, no return inside
    ``while``, ``try`` or ``with`` (those stay as they are)."""

    def __init__(self):
        self.returns = False
        self.other = False
        self.depth = 0

    def visit_Return(self, node):
        self.returns = True
        if self.depth:
            self.other = True

    def visit_Break(self, node):
        self.other = self.other or not self.depth

    visit_Continue = visit_Break

    def _inside(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_While = visit_With = visit_AsyncWith = visit_Try = visit_AsyncFor = _inside
    visit_For = _inside

    def _stop(self, node):
        pass

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _stop


def _returns_to_flag(stmts: list) -> list:
    """In a loop body whose paths end in returns (``_lower_returns`` already applied): each
    ``return v`` -> ``__rt_return = v; __rt_live = False``."""
    out = []
    for st in stmts:
        if isinstance(st, ast.Return):
            value = st.value if st.value is not None else ast.Constant(None)
            out.append(ast.copy_location(ast.Assign(targets=[ast.Name(_RET, ast.Store())], value=value), st))
            out.append(ast.copy_location(ast.Assign(targets=[ast.Name(_LIVE, ast.Store())],
                                                    value=ast.Constant(False)), st))
        elif isinstance(st, ast.If):
            st.body = _returns_to_flag(st.body) or [ast.Pass()]
            st.orelse = _returns_to_flag(st.orelse)
            out.append(st)
        else:
            out.append(st)
    return out


def _lift_loop_returns(stmts: list) -> list:
    """``for i in range(...): ... if c: return v ...`` -> a flag: the body runs while no
    iteration has returned (``if __rt_live:``), a return sets the result and clears the flag,
    and after the loop ``if __rt_live: pass else: return __rt_return`` (which ``_single_exit``
    then lowers like any early return). With a traced ``c`` the flag and the result become
    traced values merged by the ifs (the result of a path that has not returned yet is a
    placeholder, ``control_flow.NO_RESULT``)."""
    out = []
    for st in stmts:
        if isinstance(st, ast.If):
            st.body = _lift_loop_returns(st.body)
            st.orelse = _lift_loop_returns(st.orelse)
        elif isinstance(st, ast.For) and not st.orelse:
            st.body = _lift_loop_returns(st.body)  # inner loops first
            v = _LoopReturns()
            for b in st.body:
                v.visit(b)
            if v.returns and not v.other:
                st.body = [ast.copy_location(ast.If(test=ast.Name(_LIVE, ast.Load()),
                                                    body=_returns_to_flag(_lower_returns(st.body)), orelse=[]), st)]
                out.append(ast.copy_location(ast.Assign(targets=[ast.Name(_LIVE, ast.Store())],
                                                        value=ast.Constant(True)), st))
                out.append(st)
                out.append(ast.copy_location(ast.If(test=ast.Name(_LIVE, ast.Load()), body=[ast.Pass()],
                                                    orelse=[ast.Return(ast.Name(_RET, ast.Load()))]), st))
                continue
        out.append(st)
    return out


def _single_exit(body: list) -> list:
    """A function body whose ifs (or ``for`` loops) return early, as one ending in a single
    ``return`` (so ifs on traced values convert: each branch computes the result); unchanged
    when nothing returns early."""
    body = _lift_loop_returns(body)
    if not any(isinstance(s, ast.If) and _if_returns(s) for s in body):
        return body
    body = _lower_returns(body)
    _assign_returns(body, body[0])
    init = ast.copy_location(ast.Assign(targets=[ast.Name(_RET, ast.Store())],
                                        value=ast.Attribute(ast.Name("__reactant_rt__", ast.Load()), "NO_RESULT",
                                                            ast.Load())), body[0])
    ret = ast.copy_location(ast.Return(ast.Name(_RET, ast.Load())), body[-1])
    return [init] + body + [ret]


# -- the transformer --------------------------------------------------------------------------------
class _Transformer:
    def __init__(self, filename: str):
        self.filename = filename
        self.counter = 0

    def where(self, node) -> str:
        return f"{self.filename}:{node.lineno}"

    def fresh(self, kind: str) -> str:
        self.counter += 1
        return f"__rt_{kind}_{self.counter}"

    def block(self, stmts: list, live_after: set) -> list:
        out: list = []
        live = set(live_after)
        for stmt in reversed(stmts):
            new = self.stmt(stmt, live)
            out[:0] = new
            live |= _names(stmt).loaded
        return out

    def stmt(self, node, live: set) -> list:
        if isinstance(node, ast.Assert):
            msg = self.calls(node.msg) if node.msg is not None else ast.Constant(None)
            call = ast.Call(func=_attr("assert_"), args=[self.calls(node.test), _thunk(msg),
                                                         ast.Constant(self.where(node))], keywords=[])
            return [ast.copy_location(ast.Expr(call), node)]
        if isinstance(node, ast.If):
            return self.if_(node, live)
        if isinstance(node, ast.While):
            return self.while_(node, live)
        if isinstance(node, ast.For):
            return self.for_(node, live)
        if isinstance(node, (ast.With, ast.AsyncWith, ast.Try, ast.TryStar)):
            for field in ("body", "orelse", "finalbody"):
                if getattr(node, field, None):
                    setattr(node, field, self.block(getattr(node, field), live))
            if hasattr(node, "handlers"):
                for h in node.handlers:
                    h.body = self.block(h.body, live)
            return [self.calls(node)]
        return [self.calls(node)]

    # calls to user functions go through _rt.call so they get converted too
    def calls(self, node):
        return _CallRewriter().visit(node)

    def _guard(self, node, why):
        node.test = ast.Call(func=_attr("concrete_test"), args=[self.calls(node.test), ast.Constant(why),
                                                                   ast.Constant(self.where(node))], keywords=[])

    def if_(self, node: ast.If, live: set) -> list:
        escape = _escape(node.body + node.orelse)
        if escape:
            self._guard(node, f"if containing {escape}")
            node.body = self.block(node.body, live)
            node.orelse = self.block(node.orelse, live)
            return [node]
        # the branches take every variable they assign (one may read it first: ``out[i] = v``
        # is ``out = setitem(out, i, v)``) and return those read afterwards
        params = [n for n in _names(node.body + node.orelse).stored]
        assigned = [n for n in params if n in live]
        attrs = _attr_targets(node.body + node.orelse, params)
        body = self.block(node.body, live)
        orelse = self.block(node.orelse, live)
        tname, fname = self.fresh("if_true"), self.fresh("if_false")
        tdef = _func(tname, params, body, assigned, node)
        fdef = _func(fname, params, orelse, assigned, node.orelse[0] if node.orelse else node)
        keywords = [] if not attrs else [ast.keyword("attrs", ast.Tuple(
            [ast.Tuple([ast.Name(b, ast.Load()), ast.Constant(a)], ast.Load()) for b, a in attrs], ast.Load()))]
        call = ast.Call(func=_attr("if_stmt"),
                        args=[self.calls(node.test), ast.Name(tname, ast.Load()), ast.Name(fname, ast.Load()),
                              _loads(params), _strs(params), _strs(assigned), ast.Constant(self.where(node))],
                        keywords=keywords)
        return [tdef, fdef, _assign(assigned, call, node)]

    def while_(self, node: ast.While, live: set) -> list:
        escape = _escape(node.body) or ("else clause" if node.orelse else None)
        if escape:
            self._guard(node, f"while loop containing {escape}")
            node.body = self.block(node.body, live | _names(node).loaded)
            return [node]
        inner_live = live | _names(node.body).loaded | _names(node.test).loaded
        assigned = [n for n in _names(node.body).stored if n in inner_live]
        body = self.block(node.body, inner_live)
        cname, bname = self.fresh("while_cond"), self.fresh("while_body")
        cdef = _func(cname, assigned, [], None, node, ret_expr=self.calls(node.test))
        bdef = _func(bname, assigned, body, assigned, node)
        call = ast.Call(func=_attr("while_stmt"),
                        args=[ast.Name(cname, ast.Load()), ast.Name(bname, ast.Load()), _loads(assigned),
                              _strs(assigned), ast.Constant(self.where(node))], keywords=[])
        return [cdef, bdef, _assign(assigned, call, node)]

    def for_(self, node: ast.For, live: set) -> list:
        is_range = (isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name)
                    and node.iter.func.id == "range" and not node.iter.keywords
                    and isinstance(node.target, ast.Name))
        escape = _escape(node.body) or ("else clause" if node.orelse else None)
        if not is_range or escape:
            node.iter = self.calls(node.iter)
            node.body = self.block(node.body, live | _names(node).loaded)
            if is_range and escape:  # traced bounds would fail in range(): say why
                node.iter.args = [ast.Call(func=_attr("concrete_test"),
                                           args=[a, ast.Constant(f"range() bound of a for loop containing {escape}"),
                                                 ast.Constant(self.where(node))], keywords=[])
                                  for a in node.iter.args]
            return [node]
        target = node.target.id
        # names the next iteration reads before assigning them (not every name the body reads:
        # a temporary assigned first in each iteration is not carried)
        inner_live = live | _exposed(node.body)
        assigned = [n for n in _names(node.body).stored if n in inner_live and n != target]
        effects = rolling.python_effects(node.body)  # before the body is transformed
        body = self.block(node.body, inner_live)
        bname = self.fresh("for_body")
        bdef = _func(bname, [target] + assigned, body, assigned, node)
        call = ast.Call(func=_attr("for_range"),
                        args=[ast.Tuple([self.calls(a) for a in node.iter.args], ast.Load()),
                              ast.Name(bname, ast.Load()), _loads(assigned), _strs(assigned),
                              ast.Constant(self.where(node)), ast.Constant(target), ast.Constant(effects),
                              ast.Tuple([ast.Constant(n in live) for n in assigned], ast.Load())], keywords=[])
        return [bdef, _assign(assigned + [target], call, node)]


class _CallRewriter(ast.NodeTransformer):
    """``f(...)`` -> ``_rt.call(f)(...)``, ``a[i]`` -> ``_rt.getitem(a, i)`` and ``a.b`` ->
    ``_rt.attr(a, "b")`` (reads only; not into nested function bodies)."""

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or (isinstance(node.value, ast.Name)
                                                  and node.value.id == "__reactant_rt__"):
            return node
        return ast.copy_location(ast.Call(func=_attr("attr"), args=[node.value, ast.Constant(node.attr)],
                                          keywords=[]), node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        t = node.target
        if isinstance(t, ast.Attribute) and type(node.op) in _AUG_OPS:  # a.b op= v
            call = ast.Call(func=_attr("aug_attr"), args=[t.value, ast.Constant(t.attr),
                                                          ast.Constant(_AUG_OPS[type(node.op)]), node.value],
                            keywords=[])
            return ast.copy_location(ast.Expr(call), node)
        if isinstance(t, ast.Attribute):  # a.b op= v reads a.b first
            t.value = ast.copy_location(ast.Call(func=_attr("attr"), args=[t.value, ast.Constant(t.attr),
                                                                          ast.Constant(True)], keywords=[]), t)
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(ast.Call(func=_attr("getitem"), args=[node.value, _index_expr(node.slice)],
                                          keywords=[]), node)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.Call(func=_attr("ifexp"), args=[node.test, _thunk(node.body), _thunk(node.orelse)],
                                          keywords=[]), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        return ast.copy_location(ast.Call(func=_attr(name), args=[_thunk(v) for v in node.values], keywords=[]), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        return ast.copy_location(ast.Call(func=_attr("not_"), args=[node.operand], keywords=[]), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("range", "super", "locals", "globals", "vars"):
            return node
        node.func = ast.Call(func=_attr("call"), args=[node.func], keywords=[])
        return node

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def _thunk(expr: ast.expr) -> ast.Lambda:
    """``lambda: expr`` (evaluated only when the runtime needs it: short circuits)."""
    return ast.copy_location(ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                                           kw_defaults=[], kwarg=None, defaults=[]), body=expr), expr)


_TYPE_PARAMS = {"type_params": []} if sys.version_info >= (3, 12) else {}

_AUG_OPS = {ast.Add: "iadd", ast.Sub: "isub", ast.Mult: "imul", ast.Div: "itruediv", ast.FloorDiv: "ifloordiv",
            ast.Mod: "imod", ast.Pow: "ipow", ast.MatMult: "imatmul", ast.BitAnd: "iand", ast.BitOr: "ior",
            ast.BitXor: "ixor", ast.LShift: "ilshift", ast.RShift: "irshift"}


def _index_expr(sl: ast.expr) -> ast.expr:
    """The index of a subscript as an expression (slices become ``slice(...)`` calls)."""
    if isinstance(sl, ast.Slice):
        parts = [sl.lower, sl.upper, sl.step]
        return ast.Call(func=_attr("slice"),  # the builtin, whatever the user's code calls "slice"
                        args=[p if p is not None else ast.Constant(None) for p in parts], keywords=[])
    if isinstance(sl, ast.Tuple):
        return ast.Tuple([_index_expr(e) for e in sl.elts], ast.Load())
    return sl


class _HostArrayWrites(ast.NodeTransformer):
    """Applies ``_host_array_writes`` to every statement (before the control-flow transform, so
    the names it assigns are carried through converted loops and branches)."""

    counter = 0

    def __init__(self, local_names=None):
        # names local to the function: only those can be rebound (``n = _rt.setitem(n, ...)``);
        # a global or closure variable keeps its binding (``_rt.store``)
        self.local_names = local_names

    def visit_FunctionDef(self, node):
        return node  # a nested function is converted on its own when it is called

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_body(self, body: list) -> list:
        out = []
        for s in body:
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r])
        return out

    def generic_visit(self, node):
        node = super().generic_visit(node)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)) \
                and any(isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) for e in node.targets[0].elts) \
                and not any(isinstance(e, ast.Starred) for e in node.targets[0].elts):
            # a, b[i] = u, v  ->  t = tuple(...); a = t[0]; b = _rt.setitem(b, i, t[1])
            _HostArrayWrites.counter += 1
            tmp = f"__rt_unpack_{_HostArrayWrites.counter}"
            elts = node.targets[0].elts
            first = ast.copy_location(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=ast.Call(
                func=_attr("unpack"), args=[node.value, ast.Constant(len(elts))], keywords=[])), node)
            parts = [first]
            for k, e in enumerate(elts):
                item = ast.Subscript(value=ast.Name(tmp, ast.Load()), slice=ast.Constant(k), ctx=ast.Load())
                parts.append(_host_array_writes(ast.copy_location(ast.Assign(targets=[e], value=item), node),
                                                self.local_names))
            return parts
        return _host_array_writes(node, self.local_names) if isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr)) \
            else node


def _host_array_writes(node, local_names=None):
    """``n[i] = v`` -> ``n = _rt.setitem(n, i, v)``, ``n[i] op= v`` -> ``n = _rt.aug_setitem(...)``,
    ``n op= v`` -> ``n = _rt.aug_assign(n, op, v)`` and the statement ``f(..., out=n)`` ->
    ``n = _rt.call_with_out(f, n, ...)`` for a plain name ``n``: a NumPy array that receives a
    traced value becomes a traced array under that name."""
    def name_store(n):
        return ast.Name(n, ast.Store())

    def local(t) -> bool:
        return isinstance(t, ast.Name) and (local_names is None or t.id in local_names)

    if isinstance(node, ast.Assign) and len(node.targets) > 1 and any(isinstance(t, ast.Subscript)
                                                                       for t in node.targets):
        # a[i:, i] = a[i, i:] = v: the value once, then each target from left to right
        tmp = ast.copy_location(ast.Assign(targets=[name_store("__rt_chained")], value=node.value), node)
        out = [tmp]
        for t in node.targets:
            one = ast.copy_location(ast.Assign(targets=[t], value=ast.Name("__rt_chained", ast.Load())), node)
            r = _host_array_writes(one, local_names)
            out.extend(r if isinstance(r, list) else [r])
        return out
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
            and local(node.targets[0].value):
        t = node.targets[0]
        call = ast.Call(func=_attr("setitem"), args=[ast.Name(t.value.id, ast.Load()), _index_expr(t.slice),
                                                     node.value], keywords=[])
        return ast.copy_location(ast.Assign(targets=[name_store(t.value.id)], value=call), node)
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
            and _holder_parts(node.targets[0].value) is not None:
        t = node.targets[0]  # d["a"][i] = v, obj.buf[i] = v: the array's place can be rebound
        holder, key, is_attr = _holder_parts(t.value)
        call = ast.Call(func=_attr("store_in"), args=[holder, key, _index_expr(t.slice), node.value,
                                                      ast.Constant(is_attr)], keywords=[])
        return ast.copy_location(ast.Expr(call), node)
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
        t = node.targets[0]  # a subscript of an expression: checked, not rebound
        call = ast.Call(func=_attr("store"), args=[t.value, _index_expr(t.slice), node.value], keywords=[])
        return ast.copy_location(ast.Expr(call), node)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
            and node.value.func.attr == "at" and node.value.args and local(node.value.args[0]):
        call = node.value  # np.add.at(buf, i, v): a NumPy buf receiving traced values is rebound
        name = call.args[0].id
        new = ast.Call(func=_attr("ufunc_at"), args=[call.func, *call.args], keywords=call.keywords)
        return ast.copy_location(ast.Assign(targets=[name_store(name)], value=new), node)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        outs = [k for k in call.keywords if k.arg == "out" and local(k.value)]
        if outs:
            name = outs[0].value.id
            rest = [k for k in call.keywords if k is not outs[0]]
            new = ast.Call(func=_attr("call_with_out"), args=[call.func, ast.Name(name, ast.Load()), *call.args],
                           keywords=rest)
            return ast.copy_location(ast.Assign(targets=[name_store(name)], value=new), node)
    if isinstance(node, ast.AugAssign) and type(node.op) in _AUG_OPS:
        op = ast.Constant(_AUG_OPS[type(node.op)])
        t = node.target
        if isinstance(t, ast.Subscript) and local(t.value):
            call = ast.Call(func=_attr("aug_setitem"), args=[ast.Name(t.value.id, ast.Load()), _index_expr(t.slice),
                                                             op, node.value], keywords=[])
            return ast.copy_location(ast.Assign(targets=[name_store(t.value.id)], value=call), node)
        if local(t):
            call = ast.Call(func=_attr("aug_assign"), args=[ast.Name(t.id, ast.Load()), op, node.value], keywords=[])
            return ast.copy_location(ast.Assign(targets=[name_store(t.id)], value=call), node)
        if isinstance(t, ast.Subscript) and _holder_parts(t.value) is not None:  # self.count[0] += v
            holder, key, is_attr = _holder_parts(t.value)
            call = ast.Call(func=_attr("store_in"), args=[holder, key, _index_expr(t.slice), node.value,
                                                          ast.Constant(is_attr), op], keywords=[])
            return ast.copy_location(ast.Expr(call), node)
        if isinstance(t, ast.Subscript):  # a subscript of another expression (f()[0] += v)
            call = ast.Call(func=_attr("aug_store"), args=[t.value, _index_expr(t.slice), op, node.value],
                            keywords=[])
            return ast.copy_location(ast.Expr(call), node)
    return node


def _holder_parts(e):
    """(holder, key, is attribute) when ``e`` is ``holder[key]`` or ``holder.key`` (a place an
    array can be rebound in), else None."""
    if isinstance(e, ast.Subscript) and not isinstance(e.slice, ast.Slice):
        return e.value, _index_expr(e.slice), False
    if isinstance(e, ast.Attribute):
        return e.value, ast.Constant(e.attr), True
    return None


def _attr(name: str) -> ast.expr:
    return ast.Attribute(value=ast.Name("__reactant_rt__", ast.Load()), attr=name, ctx=ast.Load())


def _strs(names: Sequence[str]) -> ast.expr:
    return ast.Tuple([ast.Constant(n) for n in names], ast.Load())


def _loads(names: Sequence[str]) -> ast.expr:
    return ast.Tuple([ast.Call(func=_attr("ld"), args=[ast.Lambda(args=_noargs(), body=ast.Name(n, ast.Load())),
                                                       ast.Constant(n)], keywords=[]) for n in names], ast.Load())


def _noargs() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


def _func(name: str, params: Sequence[str], body: list, returns: Sequence[str] | None, where,
          ret_expr: ast.expr | None = None) -> ast.FunctionDef:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    ret = ret_expr if ret_expr is not None else ast.Tuple([ast.Name(n, ast.Load()) for n in returns], ast.Load())
    fn = ast.FunctionDef(name=name, args=args, body=list(body) + [ast.Return(ret)], decorator_list=[],
                         returns=None, **_TYPE_PARAMS)
    return ast.copy_location(fn, where)


def _assign(names: Sequence[str], value: ast.expr, where) -> ast.stmt:
    if not names:
        return ast.copy_location(ast.Expr(value), where)
    target = ast.Tuple([ast.Name(n, ast.Store()) for n in names], ast.Store())
    return ast.copy_location(ast.Assign(targets=[target], value=value), where)


# -- converting functions ---------------------------------------------------------------------------
_SKIP_DIRS = tuple({os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                    for m in (np, os, ast)} | {sys.prefix + os.sep + "lib", os.path.dirname(__file__) + os.sep})
_cache: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def _convertible(fn) -> bool:
    if not isinstance(fn, types.FunctionType):
        return False
    code = fn.__code__
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return False
    f = os.path.abspath(code.co_filename)
    if f.startswith("<") or "site-packages" in f or f.startswith(_SKIP_DIRS) or _is_reactant(f):
        return False
    return True


def convert(fn: Any, *, strict: bool = True) -> Any:
    """The converted version of a user function (itself when it cannot or need not be). In a
    trace, the Python state the function reads is recorded (state_reads: its globals...)."""
    tc = _active()
    if tc is not None:
        tc.reads.function(fn)
    if isinstance(fn, types.MethodType):
        conv = convert(fn.__func__, strict=strict)
        return fn if conv is fn.__func__ else types.MethodType(conv, fn.__self__)
    if isinstance(fn, functools.partial):
        conv = convert(fn.func, strict=strict)
        return fn if conv is fn.func else functools.partial(conv, *fn.args, **fn.keywords)
    if not _convertible(fn):
        return fn
    got = _cache.get(fn)
    if got is None:
        try:
            got = _convert(fn)
        except (OSError, TypeError, SyntaxError, IndentationError):
            got = fn  # no source available: run it as it is
        _cache[fn] = got
    return got


def _convert(fn: types.FunctionType) -> types.FunctionType:
    filename = fn.__code__.co_filename
    if fn.__name__ == "<lambda>":
        fdef = _lambda_def(fn)
        if fdef is None:
            return fn
    else:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        fdef = tree.body[0]
        if not isinstance(fdef, ast.FunctionDef):
            return fn
        ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
        fdef.decorator_list = []
    tr = _Transformer(os.path.abspath(filename))
    local_names = set(fn.__code__.co_varnames) | set(fn.__code__.co_cellvars)
    fdef.body = tr.block(_HostArrayWrites(local_names).visit_body(_single_exit(fdef.body)), set())
    if tr.counter == 0 and not _has_calls(fdef):
        return fn
    freevars = fn.__code__.co_freevars
    factory = ast.FunctionDef(
        name="__reactant_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg("__reactant_rt__")] + [ast.arg(v) for v in freevars],
                           vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], decorator_list=[], returns=None, **_TYPE_PARAMS)
    ast.copy_location(factory, fdef)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec")
    ns: dict = {}
    exec(code, fn.__globals__, ns)
    cells = []
    for c in fn.__closure__ or ():
        try:
            cells.append(c.cell_contents)
        except ValueError:
            cells.append(_undefined("<closure>", "a closure variable that is not yet assigned"))
    made = ns["__reactant_factory__"](_RUNTIME, *cells)
    # read the original closure cells, not copies of their values: a variable the enclosing
    # scope rebinds later (nonlocal) is seen by the cached converted function too
    live = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(live.get(name, cell) for name, cell in zip(made.__code__.co_freevars, made.__closure__ or ()))
    new = types.FunctionType(made.__code__, made.__globals__, made.__name__, fn.__defaults__, closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__wrapped__ = fn
    functools.update_wrapper(new, fn, updated=())
    return new


def _lambda_def(fn) -> ast.FunctionDef | None:
    """The lambda as ``def (params): return <body>`` (only its calls get converted: a lambda
    has no statements). The body's source span comes from the code object's instruction
    positions, so several lambdas on one line are told apart."""
    code = fn.__code__
    pos = [p for p in code.co_positions()  # (line, end line, col, end col); skip empty spans
           if None not in p and (p[1] > p[0] or p[3] > p[2])]
    if not pos:
        return None
    (l0, c0), (l1, c1) = min((p[0], p[2]) for p in pos), max((p[1], p[3]) for p in pos)
    lines, _ = inspect.findsource(fn)
    if l0 == l1:
        text = lines[l0 - 1][c0:c1]
    else:
        text = lines[l0 - 1][c0:] + "".join(lines[l0:l1 - 1]) + lines[l1 - 1][:c1]
    try:
        body = ast.parse("(" + text + ")", mode="eval").body
    except SyntaxError:
        return None
    ast.increment_lineno(body, l0 - 1)
    n = code.co_argcount
    params = list(code.co_varnames[:n])
    kwonly = list(code.co_varnames[n:n + code.co_kwonlyargcount])
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None,
                         kwonlyargs=[ast.arg(k) for k in kwonly], kw_defaults=[None] * len(kwonly), kwarg=None,
                         defaults=[])
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    fdef = ast.FunctionDef(name="__reactant_lambda__", args=args, body=[ast.Return(body)],
                           decorator_list=[], returns=None, **_TYPE_PARAMS)
    fdef.lineno, fdef.col_offset, fdef.end_lineno, fdef.end_col_offset = l0, 0, l1, c1
    return fdef


def _has_calls(fdef) -> bool:
    return any(isinstance(n, (ast.Call, ast.Subscript, ast.AugAssign, ast.Attribute)) for n in ast.walk(fdef))


_RUNTIME = _Runtime()
guard_numpy_random(lambda: _active() is not None)
guard_lexsort(lambda: _active() is not None, lambda x: isinstance(x, TracedRArray))
guard_as_strided(lambda: _active() is not None)
