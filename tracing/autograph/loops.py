"""``while`` and ``for ... in range(...)`` loops: Python's loop while the test or the bounds
are concrete, one ``stablehlo.while`` when they are traced, and for plain-int bounds the
choice between unrolling and keeping the loop (``loop_rolling``, the trace's loop mode)."""

from __future__ import annotations

import numpy as np

from .. import control_flow as cf
from .. import loop_rolling as rolling
from ..context import active as _active
from ..context import current as current_tc
from ..errors import ConcretizationError, NonUniformLoopError, ReactantError
from ..aliases import PythonState
from ..loop_rolling import KeepLoop, UnrollLoop
from ..numpy_api.convert import PY_SCALARS, as_traced
from ..traced import TracedRArray
from .undefined import _is_undef, _undefined


def while_stmt(cond_fn, body_fn, init: tuple, names: tuple, where: str):
    vals = tuple(init)
    while True:  # Python semantics while the test is concrete
        t = cond_fn(*vals)
        if isinstance(t, TracedRArray):
            break
        if not t:
            return vals
        vals = tuple(body_fn(*vals))
    objects = PythonState.of_functions((cond_fn, body_fn))
    try:
        out = _staged_loop(lambda v: cond_fn(*v), lambda v: tuple(body_fn(*v)), vals, names, where)
    except ReactantError:
        objects.restore()  # (an error leaves the objects as they were)
        raise
    objects.refuse_changes(f"the body of the while at {where} runs as a traced loop",
                           "the program runs it at every iteration")
    return out


def _staged_loop(cond, body, vals, names, where, counter: bool = False, runs_once: bool = False,
                 live: tuple = ()):
    """The loop as one ``stablehlo.while``. Variables unbound before it stay unbound after it
    (an error on use), unless ``runs_once`` (a constant range: at least one iteration), they
    are read after the loop (``live``, per name; empty: all may be) and the body binds them on
    every path: then they are carried (``control_flow.while_loop``). The others (a temporary of
    the body) are not carried: no second attempt at the body to learn their types."""
    undef = [k for k, v in enumerate(vals) if _is_undef(v)]
    bind = [k for k in undef if not live or (k < len(live) and live[k])] if runs_once else []
    undef = [k for k in undef if k not in bind]
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

    res = cf.while_loop(lambda v: cond(full(v)), body_kept, tuple(vals[k] for k in kept), names=names_kept,
                        counter=counter, runs_once=bool(bind))
    out = list(full(res))
    kept_why = (f"it is assigned only inside the loop at {where}, kept as a loop (only arrays and numbers "
                "its body assigns on every path are carried out of it)")
    for k in undef:
        out[k] = _undefined(names[k], kept_why if runs_once else
                            f"it is assigned only inside the loop at {where}, whose condition is traced")
    for k in bind:
        if _is_undef(out[k]):
            out[k] = _undefined(names[k], kept_why)
    return tuple(out)


def for_range(args: tuple, body_fn, init: tuple, names: tuple, where: str, target: str,
              effects: str | None = None, live_after: tuple = (), before: tuple | None = None):
    """``for target in range(*args)``: unrolled, or one ``stablehlo.while`` (traced bounds,
    or plain-int bounds where ``loop_rolling`` decides so). ``effects``: why the body cannot
    run once for all iterations (from its source); ``live_after``: per carried name,
    whether it is read after the loop; ``before``: (the target's value before the loop,), what
    it keeps when the loop does not run (undefined when not given)."""
    start, stop, step = _range_args(args)
    traced = any(isinstance(a, TracedRArray) for a in (start, stop, step))
    if before is None:
        before = (_undefined(target, "the loop did not run"),)
    if not traced and int(step) != 0 and len(range(int(start), int(stop), int(step))) == 0:
        return tuple(init) + (before[0],)  # (as Python: the body never runs, in every loop mode)
    if not traced:
        tc = _active()
        mode = "keep" if any(isinstance(a, KeepLoop) for a in args) else \
            "unroll" if any(isinstance(a, UnrollLoop) for a in args) else (tc.loops if tc else "unroll")
        if mode == "auto":
            rolled = _try_roll(tc, start, stop, step, body_fn, init, names, where, target, effects,
                               live_after)
            if rolled is not None:
                return rolled
        if mode != "keep":
            vals = tuple(init)  # (the range is not empty: i is bound below)
            for i in range(int(start), int(stop), int(step)):
                vals = tuple(body_fn(i, *vals))
            return vals + (i,)
    if isinstance(step, TracedRArray):
        raise ReactantError(f"a traced step in range() at {where} is not supported",
                            hint="use a constant step")
    objects = PythonState.of_functions((body_fn,))
    try:
        out, _ = _stage_range(start, stop, int(step), body_fn, init, names, where, before[0], live_after)
    except ReactantError:
        objects.restore()  # (an error leaves the objects as they were)
        raise
    objects.refuse_changes(f"the body of the loop at {where} runs as a traced loop",
                           "the program runs it at every iteration", fix="unroll the loop (reactant.unroll(n) or "
                           "loops='unroll'; with traced bounds it cannot be)")
    return out


def for_iter(items, body_fn, init: tuple, names: tuple, where: str, target: str, effects: str | None,
             live_after: tuple, before: tuple):
    """``for target in items``. Over a traced array in "auto" mode: ``for i in range(len(items))``
    with ``target = items[i]`` (so the loop may stay a loop, see ``for_range``); over anything
    else (and in "keep" / "unroll" mode), Python's own iteration. Returns the carried values,
    then the target's value after the loop (``before``'s when the loop did not run)."""
    tc = _active()
    if isinstance(items, TracedRArray) and items.ndim >= 1 and tc is not None and tc.loops == "auto":
        # (items[i] as iter(items) gives it: a view of the row)
        out = for_range((items.shape[0],), lambda i, *vals: body_fn(items[i], *vals), init, names,
                        where, target, effects, live_after)
        last = out[-1]
        return tuple(out[:-1]) + (before[0] if _is_undef(last) else items[last],)
    vals, x = tuple(init), before[0]
    for x in items:
        vals = tuple(body_fn(x, *vals))
    return vals + (x,)


def _stage_range(start, stop, step: int, body_fn, init, names, where, before=None, live: tuple = ()):
    """The loop as a ``stablehlo.while`` over a counter; returns (carried values + the last
    index, the while op). With traced bounds the last index is ``before`` (an integer: the
    target's value before the loop) where the loop runs no iteration."""
    if step == 0:
        raise ValueError("range() arg 3 must not be zero")
    from .. import ops

    wide = any(isinstance(a, TracedRArray) and a.dtype.itemsize == 8 for a in (start, stop)) or \
        any(not isinstance(a, TracedRArray) and not -2**31 <= int(a) < 2**31 for a in (start, stop))
    dt = np.dtype(np.int64 if wide else np.int32)
    lo = ops.convert(as_traced(start), dt) if isinstance(start, TracedRArray) else ops.constant(np.asarray(start, dt))
    hi = ops.convert(as_traced(stop), dt) if isinstance(stop, TracedRArray) else ops.constant(np.asarray(stop, dt))
    static = not isinstance(start, TracedRArray) and not isinstance(stop, TracedRArray)
    if static:  # (the trip count and the index's terms as constants: no ops to fold later)
        n = ops.constant(np.asarray(len(range(int(start), int(stop), step)), dt))
    else:  # trip count max(0, ceil((hi - lo) / step))
        span = ops.subtract(hi, lo)
        if step < 0:
            span = ops.negate(span)
        a = abs(step)
        n = ops.divide(ops.add(span, ops.constant(np.asarray(a - 1, dt))), ops.constant(np.asarray(a, dt)))
        n = ops.maximum(n, ops.constant(np.asarray(0, dt)))

    def index(k):  # i = lo + k * step (a term that is 0 or a factor that is 1 left out; an
        # int64 counter keeps the sum: the index must be a value of its own, see _python_int)
        if static and step == 1 and dt != np.int64:
            return k if int(start) == 0 else ops.add(lo, k)
        return ops.add(lo, ops.multiply(k, ops.constant(np.asarray(step, dt))))

    state0 = (ops.constant(np.asarray(0, dt)),) + tuple(init)
    names0 = ("<loop counter>",) + tuple(names)

    def cond(v):
        return ops.compare(v[0], n, "LT")

    index_range = _index_range(lo, hi, step)

    def body(v):
        k = v[0]
        i = _python_int(index(k))
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

    runs = static and len(range(int(start), int(stop), step)) > 0
    out = _staged_loop(cond, body, state0, names0, where, counter=True, runs_once=runs,
                       live=(False,) + tuple(live) if live else ())
    last = _python_int(index(ops.subtract(out[0], ops.constant(np.asarray(1, dt)))))
    if not static and _is_int(before):  # (a zero-trip loop leaves the target as it was)
        ran = ops.compare(n, ops.constant(np.asarray(0, dt)), "GT")
        last = _python_int(ops.select(ran, last, ops.convert(as_traced(before), np.dtype(np.int64))))
    return tuple(out[1:]) + (last,), out[0].value.owner


def _try_roll(tc, start, stop, step, body_fn, init, names, where, target, effects, live_after):
    """The loop as one while when ``loop_rolling``'s conditions hold, else None (unroll). A
    body that rebinds attributes of objects to arrays (``self.value = ...`` in a method it
    calls: an EMA, an optimizer's state) is tried again with them carried like variables,
    after one iteration run first when it also sets a plain Python flag (``initialized``)."""
    start, stop, step = int(start), int(stop), int(step)
    trip = len(range(start, stop, step))
    if trip < 2:
        return None
    what = f"loop at {where} (range({start}, {stop}, {step}): {trip} iterations)"
    if effects:
        return _decided(tc, what, f"unrolled: the body changes a Python object ({effects})")
    carry, first = (), False
    for _ in range(2):
        got = _roll_attempt(tc, start, stop, step, trip, body_fn, init, names, where, live_after, carry, first)
        if got[0] != "carry" or carry:
            break
        carry, first = got[1], got[2]
    if got[0] == "carry":
        got = ("unroll", "unrolled: the body changes Python state (attributes of objects)")
    if got[0] == "unroll":
        return _decided(tc, what, got[1])
    _, out, body_ops, peeled, note = got
    _decided(tc, what, f"kept as stablehlo.while ({trip - peeled} iterations x {body_ops} ops"
                       + (", first iteration peeled" if peeled else "")
                       + (f"; carrying {', '.join(f'{type(o).__name__}.{a}' for o, a in carry)}" if carry else "")
                       + (f"; {note}" if note else "") + ")")
    return tuple(out[:-1]) + (start + (trip - 1) * step,)


def _roll_attempt(tc, start, stop, step, trip, body_fn, init, names, where, live_after, carry, first):
    """One try at the loop as a while, carrying the attributes ``carry`` ((object, name)) and
    after running the first iteration as it is when ``first``. Returns ("kept", values, body
    ops, iterations peeled, why a small loop was kept), ("unroll", why) or ("carry", attributes, first)."""
    vals = tuple(init)
    n_vars = len(vals)
    undef_live = [nm for nm, v, live in zip(names, vals, live_after) if _is_undef(v) and live]
    peeled = 0
    why = None  # why not: set inside the attempt, reported once it is thrown away
    state = None
    with rolling.attempt(tc) as att:
        try:
            if first:  # (the iteration that sets a plain flag runs as it is)
                vals = tuple(body_fn(start, *vals))
                peeled = 1
            # (what the loop changes: after the iteration run first, which changes as Python does)
            state = PythonState() if peeled else att.python_state
            fn, vnames, live = body_fn, names, live_after
            if carry:
                entry = tuple(getattr(o, a) for o, a in carry)
                if any(not _carriable(v) for v in entry):
                    return ("unroll", "unrolled: the body rebinds an attribute that holds no array before the loop")
                fn = _carrying(body_fn, carry, entry, n_vars)
                vals = vals + entry
                vnames = tuple(names) + tuple(f"{type(o).__name__}.{a}" for o, a in carry)
                live = tuple(live_after or (True,) * n_vars) + (True,) * len(carry)
            escapes = tc.loop_escapes
            out, loop = _stage_range(start + peeled * step, stop, step, fn, vals, vnames, where, live=live)
            moved = state.changed(places={(id(o), a) for o, a in carry})
            unbound = [nm for nm, v in zip(vnames, out) if nm in undef_live and _is_undef(v)]
            if unbound:  # (first assigned in the body, read after it, not bound on every path)
                why = f"unrolled: {unbound[0]!r} is read after the loop and not assigned on every path of its body"
            elif tc.loop_escapes != escapes or moved is not None:
                why = ("unrolled: the body keeps arrays it makes in a list or an attribute" if moved is None
                       else f"unrolled: the body changes Python state ({moved})")
        except (ReactantError, TypeError) as e:
            why = _why_unrolled(e)
            if why is None:  # not a reason to unroll: a bug, reported as it is
                raise
        if why is not None and not carry and state is not None:
            attrs, plain = state.rebound_attributes()
            arrays = [(o, a, v) for o, a, v in (attrs or ()) if isinstance(v, TracedRArray)]
            if attrs is not None and arrays:
                # the first iteration runs as it is when it sets plain values (a flag: unchanged
                # from the second on?) or gives an attribute its shape (``velocity = 0.0``)
                reshaped = any(np.shape(state.before(o, a)) != v.shape for o, a, v in arrays)
                return ("carry", tuple((o, a) for o, a, _ in arrays), bool(plain) or reshaped)
        if why is None:
            body_ops = rolling.body_op_count(loop)
            host = _host_slots(vals, vnames, live)
            small = trip * body_ops < rolling.ROLL_MIN_OPS and not (trip > 1 and rolling.updates_large_windows(loop))
            # (a small loop the optimizer turns into tensor operations stays a loop: one batched
            # op beats trip copies of the body, which XLA compiles one by one)
            raises = small and _raises(tc, loop, where, trip, body_ops)
            updates = trip * rolling.in_place_updates(loop, tc.raised_loops) if small and not raises else 0
            kernels = trip * rolling.own_kernels(loop) if small and not raises else 0
            if small and not raises and updates < rolling.ROLL_MAX_UPDATES and kernels < rolling.ROLL_MAX_KERNELS:
                why = f"unrolled: {trip} x {body_ops} ops is below {rolling.ROLL_MIN_OPS} unrolled ops"
            elif host and rolling.host_carries_stay_static(loop, host, 0):
                why = "unrolled: a carried variable would stay a Python/NumPy value when unrolled (e.g. a counter)"
            else:
                if raises:
                    tc.raised_loops.append(loop.operation)
                if callable(raises):  # (placed in the attempt's block, moved with the loop)
                    _adopt(tc, loop, raises)
                for (o, a), v in zip(carry, out[n_vars:n_vars + len(carry)]):
                    setattr(o, a, v)  # (after the loop: its last value, as NumPy leaves it)
                att.commit()
                note = ("small, but its iterations become tensor operations" if raises else
                        f"small, but unrolled its {updates} in-place updates and inner loops would each be compiled on their own"
                        if updates >= rolling.ROLL_MAX_UPDATES else
                        f"small, but unrolled its {kernels} reductions and products would each be compiled on their own"
                        if small else "")
                return ("kept", tuple(out[:n_vars]) + (out[-1],), body_ops, peeled, note)
    return ("unroll", why)


def _carriable(v) -> bool:
    """A value an attribute may carry through a while: an array or a number."""
    return isinstance(v, (TracedRArray, np.ndarray, np.generic)) or type(v) in PY_SCALARS


def _carrying(body_fn, carry: tuple, entry: tuple, n_vars: int):
    """``body_fn`` with the attributes ``carry`` set from the loop's carried values at the start
    of an iteration and read back at its end; then they hold their ``entry`` values again, so
    that no value of the body stays in an object."""

    def body(i, *v):
        for (o, a), x in zip(carry, v[n_vars:]):
            setattr(o, a, x)
        res = tuple(body_fn(i, *v[:n_vars]))
        new = tuple(getattr(o, a) for o, a in carry)
        for (o, a), x in zip(carry, entry):
            setattr(o, a, x)
        return res + new

    return body


def _raises(tc, loop, where, trip: int, body_ops: int):
    """Whether the optimizer turns the small loop ``loop`` into tensor operations (asked once
    per loop of the source, trip count and carried types: a loop inside an unrolled loop is
    the same loop every time). The first time it does: the function that places the raised
    ops (``_adopt``)."""
    if tc.loop_raises is None or not _inner_loops_small(loop):
        return False
    key = (where, trip, body_ops, tuple(str(r.type) for r in loop.results))
    got = tc.raise_answers.get(key)
    if got is None:
        got = tc.loop_raises(loop)
        tc.raise_answers[key] = bool(got)
    return got


def _adopt(tc, loop, place) -> None:
    """Continue the trace from the loop's raised ops (the optimizer's answer, placed after the
    loop) rather than from its results: every live handle on a result is rebound (recorded, so
    an enclosing attempt undoes it). The loop stays until the passes drop it unused; a value
    that still reads it reads the same numbers."""
    new = dict(zip(loop.results, place(tc._ips[-1])))
    for ref, _ in tc.handles:
        h = ref()
        if h is not None and h._root is None:
            v = new.get(h.value)
            if v is not None:
                tc.mutations.append((h, h.value))
                h.value = v


def _inner_loops_small(loop) -> bool:
    """Whether every loop nested in ``loop`` is small itself (a static trip count x its ops
    below ``ROLL_MIN_OPS``): an outer loop raises only once its inner loops have, and one kept
    for its size (a sweep holding a recurrence) makes asking the optimizer a waste."""
    from ...ir.loops import analyze
    from ...ir.regions import walk_nested

    inner = []
    walk_nested(loop, lambda o: inner.append(o) if o.operation.name == "stablehlo.while" else None)
    for w in inner:
        info = analyze(w.operation)
        if info is None or info.trip_count is None or \
                info.trip_count * rolling.body_op_count(w.operation) >= rolling.ROLL_MIN_OPS:
            return False
    return True


def _is_int(v) -> bool:
    """An integer scalar (Python, NumPy or traced), not a bool."""
    if isinstance(v, TracedRArray):
        return v.ndim == 0 and v.dtype.kind in "iu"
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _python_int(i: TracedRArray) -> TracedRArray:
    """A kept loop's index as the Python int it stands for: int64 when it is a value of its
    own (returned, stored: as NumPy makes a Python int), weakly typed in arithmetic
    (``x_f32 * i`` stays float32). The loop's counter itself may be narrower."""
    from .. import ops

    if i.dtype != np.int64:
        i = ops.convert(i, np.dtype(np.int64))
    i.weak = True
    return i


def _index_range(lo, hi, step: int):
    """(min, max) of a loop index running from ``lo`` towards ``hi`` by ``step``, when the
    ranges of the bounds are known (constants, or indices of enclosing loops); else None."""
    tc = current_tc()
    rlo, rhi = tc.known_range(lo.value), tc.known_range(hi.value)
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
    if getattr(e, "unroll_reason", None):
        return f"unrolled: {e.unroll_reason}"
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
