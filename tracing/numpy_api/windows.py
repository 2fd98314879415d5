"""Slices whose bounds are traced: ``A[i, :i]``, ``A[i+1:, :i]``, ``x[j:]``.

Inside a loop kept as a ``stablehlo.while`` the index is traced, and a slice bounded by it
has a length only known when the program runs. Such a slice is a :class:`Window`: its
elements sit at the start of a fixed-size array (``values``, as long as the dimension
allows), and each dimension with a traced bound carries its run-time length. Elementwise
math (with scalars, arrays of size 1 there, or windows of the same length), reductions,
products that contract a window dimension (``A[i, :i] @ x[:i]``), transposes and writing a
window back (``A[i+1:, i] -= A[i+1:, :i] @ A[:i, i]``) compute over the fixed size with the
elements past the length masked out (zero in products, the identity in reductions, left
unchanged in writes). What needs the length as a number (its shape, ``len``, converting it
to an array, indexing it) raises :class:`WindowShapeError`; the loop-rolling attempt then
unrolls the loop instead.

Lengths are told equal when they come from the same bounds on dimensions of the same size
(bounds compared as computations: ``A[i+1:, i]`` and ``A[i+1:, :i] @ v`` both have
``n - (i+1)`` rows); anything else that would need equal lengths raises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ir.values import same_computation
from .. import ops
from ..errors import UnsupportedError
from ..traced import TracedRArray
from ._run_time_length import RunTimeLength, install_operators
from .convert import PY_SCALARS, as_traced, broadcast_to

_HINT = ("elementwise math, reductions, @/dot and writing it back work on a slice with a traced bound; "
         "for anything else the loop is unrolled (or use reactant.unroll(n))")


class WindowShapeError(UnsupportedError):
    """A slice with a traced bound was used where its length is needed as a number."""


class Length:
    """The run-time length of one window dimension: ``value`` (a traced int), and the bounds it
    was computed from (``key``: dimension size, start, stop; ints, None or IR values).
    ``off``: where the elements start in the fixed-size values (a ``Length`` holding the
    traced start, for a slice ``x[s:]`` kept in place: no shift is emitted), or None when they
    start at 0."""

    __slots__ = ("value", "key", "off")

    def __init__(self, value: TracedRArray, key: tuple, off: "Length | None" = None):
        self.value = value
        self.key = key
        self.off = off

    def aligned(self, other: "Length") -> bool:
        """Whether equal lengths also sit at the same place in their values."""
        if self.off is None or other.off is None:
            return self.off is None and other.off is None
        return self.off.same(other.off)

    def same(self, other: "Length") -> bool:
        if self is other:
            return True
        if len(self.key) != len(other.key):
            return False
        for a, b in zip(self.key[1:], other.key[1:]):
            if isinstance(a, (int, type(None))) or isinstance(b, (int, type(None))):
                if a != b:
                    return False
            elif not same_computation(a, b, depth=8):
                return False
        # the same bounds in dims of different sizes (``A[i, :i]`` and ``x[:i]``): the same
        # length when neither size clips them (the loop index's range lies within both)
        n = min(self.key[0], other.key[0])
        return self.key[0] == other.key[0] or all(_unclipped(k, n, stop=j == 2) for j, k in enumerate(self.key)
                                                  if j > 0)


def _unclipped(bound, n: int, stop: bool) -> bool:
    """Whether a slice bound (an int, None, or an IR value) provably lies in [0, n], so
    clipping to a dimension of size >= n leaves it as it is."""
    from ..context import current

    if bound is None:
        return not stop  # (a start of None is 0; a stop of None is the dimension's size)
    if isinstance(bound, int):
        return 0 <= bound <= n
    r = current().known_range(bound)
    return r is not None and r[0] >= 0 and r[1] <= n


def _static(d) -> bool:
    return isinstance(d, int)


class Window(RunTimeLength):
    """``values`` whose dims ``d`` with ``lens[d]`` a :class:`Length` hold only that many
    leading elements (``lens[d]`` an int: the whole, static dimension)."""

    __slots__ = ("_values", "lens", "view")
    __array_priority__ = 2000  # over traced arrays and ndarrays in mixed operators
    __reactant_defer__ = True  # traced arrays' NumPy dispatch lets this type handle mixed calls

    def __init__(self, values: TracedRArray, lens: tuple):
        self._values = values
        self.lens = tuple(lens)
        # (base array, index, the base root's value when read): a slice of ``base`` is a NumPy
        # view: it follows writes to the base and writes through (``w -= 1``, ``w[...] = v``)
        self.view = None

    @property
    def values(self) -> TracedRArray:
        view = self.view
        if view is not None:
            base, index, seen = view
            root = base._root if base._root is not None else base
            if root.value is not seen:  # the base was written since: read the slice again
                self._values = read(base, index).values
                self.view = (base, index, root.value)
        return self._values

    def _write(self, new) -> "Window":
        """``self[...] = new`` through to the base (a view), or a plain rebinding (a copy)."""
        if self.view is None:
            return new
        from .indexing import setitem

        base, index, _ = self.view
        setitem(base, index, new)
        self.values  # (read again from the written base)
        return self

    def __setitem__(self, index, value):
        items = index if isinstance(index, tuple) else (index,)
        if self.view is None or not all(it is Ellipsis or it == slice(None) for it in items):
            self._shape_error("writing part of it")
        self._write(value)

    def __repr__(self) -> str:
        dims = ", ".join(str(n) if _static(n) else f"<={b}" for n, b in zip(self.lens, self.values.shape))
        return f"Window<{self.values.dtype}[{dims}]>"

    # -- what needs the length ------------------------------------------------------------------
    def _shape_error(self, what: str):
        raise WindowShapeError(f"a slice with a traced bound ({self!r}): {what} needs its length, which is only "
                               "known when the program runs", hint=_HINT)

    def __bool__(self):
        self._shape_error("its truth value")

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    @property
    def ndim(self) -> int:
        return self.values.ndim

    def __getitem__(self, index):
        # only new unit axes: x[:, None] / x[None] (outer products are written this way)
        items = index if isinstance(index, tuple) else (index,)
        if not all(it is None or it is Ellipsis or it == slice(None) or it == slice(None, None, -1) for it in items):
            self._shape_error("indexing it")
        rev = [d for d, it in enumerate(i for i in _expand(items, self.ndim) if i is not None)
               if it == slice(None, None, -1)]
        if rev:  # x[::-1]: reverse, then the elements to the front again
            w = self
            for d in rev:
                w = _reversed(w, d)
            items = tuple(slice(None) if it == slice(None, None, -1) else it for it in items)
            return w[items]
        vals = self.values[index]
        lens, k = [], 0
        for it in _expand(items, self.ndim):
            if it is None:
                lens.append(1)
            else:
                lens.append(self.lens[k])
                k += 1
        return _make(vals, lens)

    # -- masks ----------------------------------------------------------------------------------
    def mask(self) -> TracedRArray | None:
        """Where the elements are (None when every dim is static)."""
        m = None
        shape = self.values.shape
        for d, n in enumerate(self.lens):
            if _static(n):
                continue
            idt = n.value.dtype
            pos = ops.iota(shape, idt, d)
            end = n.value
            if n.off is not None:
                off = ops.convert(n.off.value, idt)
                end = ops.add(off, end)
                here = ops.compare(pos, broadcast_to(off, shape), "GE")
                m = here if m is None else ops.and_(m, here)
            here = ops.compare(pos, broadcast_to(end, shape), "LT")
            m = here if m is None else ops.and_(m, here)
        return m

    def filled(self, fill) -> TracedRArray:
        """The values with the elements past the lengths replaced by ``fill``."""
        m = self.mask()
        if m is None:
            return self.values
        return ops.select(m, self.values, ops.full(self.values.shape, fill, self.values.dtype))

    # -- NumPy protocols --------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs.get("out") is not None or "where" in kwargs:
            self._shape_error(f"numpy.{ufunc.__name__}.{method}" if method != "__call__" else "out= or where=")
        if ufunc is np.matmul:
            return _matmul(*inputs)
        vals, lens = _align(inputs)
        res = ufunc(*vals, **kwargs)
        if isinstance(res, tuple):
            return tuple(_make(r, lens) for r in res)
        return _make(res, lens)

    def __array_function__(self, func, types, args, kwargs):
        impl = _FUNCTIONS.get(func)
        if impl is None:
            self._shape_error(f"numpy.{getattr(func, '__name__', func)}")
        if kwargs.get("out") is not None:
            self._shape_error("out=")
        return impl(*args, **kwargs)

    def astype(self, dtype, **kwargs) -> "Window":
        return Window(self.values.astype(dtype), self.lens)

    def copy(self) -> "Window":
        return self

    @property
    def T(self) -> "Window":
        return _transpose(self)

    def transpose(self, *axes) -> "Window":
        return _transpose(self, axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else (axes or None))


def relative(w: Window, d: int) -> Window:
    """``w`` with its elements along dim ``d`` moved to the front (a no-op when they are)."""
    n = w.lens[d]
    if _static(n) or n.off is None:
        return w
    b = w.values.shape[d]
    high = [0] * w.ndim
    high[d] = b
    v = ops.pad(w.values, ops.full((), 0, w.values.dtype), [0] * w.ndim, high, [0] * w.ndim)
    dt = n.off.value.dtype
    starts = [ops.full((), 0, dt)] * w.ndim
    starts[d] = n.off.value
    lens = list(w.lens)
    lens[d] = Length(n.value, n.key)
    return Window(ops.dynamic_slice(v, starts, list(w.values.shape)), lens)


def placed(w: Window, d: int, like: Length) -> Window:
    """``w`` with its elements along dim ``d`` starting where ``like``'s do."""
    n = w.lens[d]
    if like.off is None:
        return relative(w, d)
    if n.off is not None and n.off.same(like.off):
        return w
    w = relative(w, d)
    n = w.lens[d]
    b = w.values.shape[d]
    low = [0] * w.ndim
    low[d] = b
    v = ops.pad(w.values, ops.full((), 0, w.values.dtype), low, [0] * w.ndim, [0] * w.ndim)
    dt = like.off.value.dtype
    starts = [ops.full((), 0, dt)] * w.ndim
    starts[d] = ops.subtract(ops.full((), b, dt), ops.convert(like.off.value, dt))
    lens = list(w.lens)
    lens[d] = Length(n.value, n.key, like.off)
    return Window(ops.dynamic_slice(v, starts, list(w.values.shape)), lens)


def _reversed(w: Window, d: int) -> Window:
    """``w`` reversed along dim ``d``: element k is the old element ``len - 1 - k``."""
    n = w.lens[d]
    if _static(n):
        return Window(ops.reverse(w.values, [d]), w.lens)
    w = relative(w, d)
    n = w.lens[d]
    b = w.values.shape[d]
    r = ops.reverse(w.values, [d])  # r[k] = values[b - 1 - k]: shift by b - len
    pad = [0] * w.ndim
    pad[d] = b
    r = ops.pad(r, ops.full((), 0, r.dtype), [0] * w.ndim, pad, [0] * w.ndim)
    dt = n.value.dtype
    starts = [ops.full((), 0, dt)] * w.ndim
    starts[d] = ops.subtract(ops.full((), b, dt), n.value)
    return Window(ops.dynamic_slice(r, starts, list(w.values.shape)), w.lens)


def _expand(items: tuple, ndim: int) -> list:
    n_real = sum(1 for it in items if it is not None and it is not Ellipsis)
    out = []
    for it in items:
        if it is Ellipsis:
            out += [slice(None)] * (ndim - n_real)
        else:
            out.append(it)
    if Ellipsis not in items:
        out += [slice(None)] * (ndim - n_real)
    return out


def _make(values: TracedRArray, lens) -> Any:
    """A Window, or the plain array when no dim has a run-time length."""
    lens = tuple(lens)
    if all(_static(n) for n in lens):
        return values
    return Window(values, lens)


# -- operands ----------------------------------------------------------------------------------------
def _operand(x) -> tuple[Any, tuple]:
    if isinstance(x, Window):
        return x.values, x.lens
    if type(x) in PY_SCALARS or isinstance(x, np.generic):
        return x, ()
    if isinstance(x, (TracedRArray, np.ndarray)):
        return x, tuple(x.shape)
    if isinstance(x, (list, tuple)):
        a = np.asarray(x)
        return a, tuple(a.shape)
    raise WindowShapeError(f"a slice with a traced bound meets {type(x).__name__}", hint=_HINT)


def _aligned_windows(inputs: list) -> list:
    """Windows meeting on a dim where their elements sit at different places: moved to the
    front there (elementwise math pairs elements by position)."""
    wins = [k for k, x in enumerate(inputs) if isinstance(x, Window)]
    if len(wins) < 2:
        return inputs
    nd = max(inputs[k].ndim for k in wins)
    for j in range(nd):
        dims = []
        for k in wins:
            d = j - (nd - inputs[k].ndim)
            if d >= 0 and not _static(inputs[k].lens[d]):
                dims.append((k, d))
        if len(dims) < 2:
            continue
        first = inputs[dims[0][0]].lens[dims[0][1]]
        if all(inputs[k].lens[d].aligned(first) for k, d in dims[1:]):
            continue
        for k, d in dims:
            inputs[k] = relative(inputs[k], d)
    return inputs


def _align(inputs) -> tuple[list, tuple]:
    """Operands' values and the result's lengths under NumPy broadcasting, checking that dims
    with run-time lengths meet only equal lengths or size 1."""
    inputs = _aligned_windows(list(inputs))
    ops_ = [_operand(x) for x in inputs]
    nd = max(len(l) for _, l in ops_)
    lens: list = []
    for k in range(nd):
        got = None
        for _, l in ops_:
            j = k - (nd - len(l))
            if j < 0:
                continue
            n = l[j]
            if _static(n) and n == 1:
                continue
            if got is None:
                got = n
            elif _static(got) and _static(n):
                if got != n:
                    raise WindowShapeError(f"operands of sizes {got} and {n} do not broadcast")
            elif _static(got) or _static(n) or not got.same(n):
                raise WindowShapeError("slices with traced bounds of lengths not known to be equal meet "
                                       "in one operation", hint=_HINT)
        lens.append(1 if got is None else got)
    vals = [v for v, _ in ops_]
    # windows' fixed sizes must agree on shared dims: equal lengths come from equal bounds
    return vals, tuple(lens)


# -- reading ------------------------------------------------------------------------------------------
def has_traced_bound(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(it, slice) and (isinstance(it.start, TracedRArray) or isinstance(it.stop, TracedRArray))
               for it in items)


def _bound(v, n: int, dt) -> TracedRArray:
    """A traced slice bound normalized as NumPy does: negative counts from the end, then
    clipped to [0, n]."""
    v = ops.convert(as_traced(v), dt)
    zero, nn = ops.full((), 0, dt), ops.full((), n, dt)
    if v.dtype.kind == "i":
        v = ops.select(ops.compare(v, zero, "LT"), ops.add(v, nn), v)
    return ops.clamp(zero, v, nn)


class _Plan:
    """Where a window of ``x[index]`` sits in ``x``: per dim of x, a start (int or traced) and a
    size of the fixed-size block, whether the dim is dropped (an integer index), the run-time
    lengths of the kept dims (a traced start leaves the elements in place: an offset)."""

    def __init__(self, shape: tuple, index):
        from .indexing import _normalize_entry

        items = list(index if isinstance(index, tuple) else (index,))
        if any(it is None for it in items) or sum(1 for it in items if it is Ellipsis) > 1:
            raise WindowShapeError("None or several ellipses in an index with a traced slice bound", hint=_HINT)
        n_real = sum(1 for it in items if it is not Ellipsis)
        if n_real > len(shape):
            raise WindowShapeError(f"too many indices for an array of {len(shape)} dims")
        full: list = []
        for it in items:
            full += [slice(None)] * (len(shape) - n_real) if it is Ellipsis else [it]
        full += [slice(None)] * (len(shape) - len(full))
        wide = any(isinstance(b, TracedRArray) and b.dtype.itemsize == 8 for it in full if isinstance(it, slice)
                   for b in (it.start, it.stop)) or max(shape, default=0) > 2**31 - 1
        self.dt = dt = np.dtype(np.int64 if wide else np.int32)
        self.starts: list = []
        self.sizes: list[int] = []
        self.keep: list[bool] = []
        self.lens: list = []
        for d, (it, n) in enumerate(zip(full, shape)):
            if isinstance(it, slice):
                if it.step not in (None, 1):
                    raise WindowShapeError("a slice with a traced bound and a step other than 1", hint=_HINT)
                dyn_start = isinstance(it.start, TracedRArray)
                dyn_stop = isinstance(it.stop, TracedRArray)
                if not dyn_start and not dyn_stop:
                    a, b, _ = it.indices(n)
                    self.starts.append(a), self.sizes.append(max(0, b - a)), self.keep.append(True)
                    self.lens.append(max(0, b - a))
                    continue
                c = _static_length(it.start, it.stop, n)
                if c is not None:  # x[i:i+c] provably within the dim: a plain dynamic slice
                    s = it.start if isinstance(it.start, TracedRArray) else ops.full((), it.start, dt)
                    self.starts.append(s), self.sizes.append(c), self.keep.append(True)
                    self.lens.append(c)
                    continue
                if dyn_start:  # the elements stay where they are in x: offset s
                    s = _bound(it.start, n, dt)
                    size = n
                else:
                    s0 = slice(it.start, 0).indices(n)[0]
                    s = ops.full((), s0, dt)
                    size = n - s0
                t = _bound(it.stop, n, dt) if dyn_stop else ops.full((), slice(0, it.stop).indices(n)[1], dt)
                length = ops.maximum(ops.subtract(t, s), ops.full((), 0, dt))
                key = (n, _key(it.start), _key(it.stop))
                off = Length(s, (n, _key(it.start))) if dyn_start else None
                self.starts.append(0 if dyn_start else int(s0)), self.sizes.append(size), self.keep.append(True)
                self.lens.append(Length(length, key, off))
            else:
                e = _normalize_entry(it, n, d)
                if isinstance(e, TracedRArray) and e.ndim:
                    raise WindowShapeError("an array index together with a traced slice bound", hint=_HINT)
                self.starts.append(e), self.sizes.append(1), self.keep.append(False)

    def start_values(self) -> list[TracedRArray]:
        return [ops.convert(s, self.dt) if isinstance(s, TracedRArray) else ops.full((), s, self.dt)
                for s in self.starts]

    def block_shape(self) -> tuple[int, ...]:
        return tuple(s for s, k in zip(self.sizes, self.keep) if k)


def _static_length(start, stop, n: int) -> int | None:
    """``stop - start`` when it is a constant and ``start .. stop`` provably lies within
    ``[0, n]`` (from the ranges of the loop indices it is computed from); else None."""
    from ...ir.loops import affine_form
    from ..context import current

    if start is None or stop is None:
        return None

    def form(b):
        return ({}, int(b)) if not isinstance(b, TracedRArray) else affine_form(b.value)

    fa, fb = form(start), form(stop)
    if fa is None or fb is None or not _same_terms(fa[0], fb[0]):
        return None
    c = fb[1] - fa[1]
    if c < 0:
        return None
    if not isinstance(start, TracedRArray):
        r = (int(start), int(start))
    else:
        r = current().known_range(start.value)
    if r is None or r[0] < 0 or r[1] + c > n:
        return None
    return c


def _same_terms(ta: dict, tb: dict) -> bool:
    """Whether two affine forms' terms are equal: the same coefficients of leaves that compute
    the same value (``x[i % 3:i % 3 + 3]`` computes ``i % 3`` twice)."""
    if ta == tb:
        return True
    if len(ta) != len(tb):
        return False
    used: list = []
    for la, ca in ta.items():
        m = next((lb for lb, cb in tb.items() if cb == ca and all(lb is not u for u in used)
                  and same_computation(la, lb, depth=16)), None)
        if m is None:
            return False
        used.append(m)
    return True


def _key(b):
    if isinstance(b, TracedRArray):
        return b.value
    return b


def read(x: TracedRArray, index) -> Window | TracedRArray:
    """``x[index]`` where a slice of ``index`` has a traced bound."""
    plan = _Plan(x.shape, index)
    block = ops.dynamic_slice(x, plan.start_values(), plan.sizes)
    return _make(ops.reshape(block, plan.block_shape()), plan.lens)


def write(x: TracedRArray, index, value) -> TracedRArray:
    """``x`` with ``x[index] = value`` where a slice of ``index`` has a traced bound: the
    elements within the lengths replaced, the others (and the rest of x) unchanged."""
    plan = _Plan(x.shape, index)
    starts = plan.start_values()
    shape = plan.block_shape()
    old = ops.reshape(ops.dynamic_slice(x, starts, plan.sizes), shape)
    target = Window(old, plan.lens)
    if isinstance(value, Window):
        nd = len(shape)
        for j in range(value.ndim):  # the value's elements where the target's are
            d = j + nd - value.ndim
            if d >= 0 and not _static(value.lens[j]) and not _static(plan.lens[d]):
                if value.values.shape[j] != shape[d]:
                    value = _fit(relative(value, j), j, shape[d])
                value = placed(value, j, plan.lens[d])
            elif not _static(value.lens[j]):
                value = relative(value, j)
        vals, lens = _align([target, value])
        new = value.values
    else:
        v = value if isinstance(value, TracedRArray) else as_traced(value)
        vals, lens = _align([target, v])
        new = v
    new = broadcast_to(ops.convert(as_traced(new), x.dtype), shape)
    m = target.mask()
    merged = new if m is None else ops.select(m, new, old)
    return ops.dynamic_update_slice(x, ops.reshape(merged, plan.sizes), starts)


def _fit(w: Window, d: int, size: int) -> Window:
    """A window whose elements start at 0 along ``d``, with fixed size ``size`` there (cut or
    zero-padded at the end: its length fits either way when it equals the target's)."""
    b = w.values.shape[d]
    if b > size:
        limit = list(w.values.shape)
        limit[d] = size
        return Window(ops.slice(w.values, [0] * w.ndim, limit, [1] * w.ndim), w.lens)
    high = [0] * w.ndim
    high[d] = size - b
    return Window(ops.pad(w.values, ops.full((), 0, w.values.dtype), [0] * w.ndim, high, [0] * w.ndim), w.lens)


# -- products, reductions, transposes ------------------------------------------------------------------
def _contract_ok(a, b) -> None:
    if _static(a) and _static(b):
        if a != b:
            raise WindowShapeError(f"a product contracts dims of sizes {a} and {b}")
        return
    if _static(a) or _static(b) or not a.same(b):
        raise WindowShapeError("a product contracts slices with traced bounds of lengths not known to be equal",
                               hint=_HINT)


def _contract_aligned(a, b, da: int, db: int):
    """The two operands with their contracted dims' elements at the same places."""
    if isinstance(a, Window) and isinstance(b, Window) and not _static(a.lens[da]) and not _static(b.lens[db]) \
            and not a.lens[da].aligned(b.lens[db]):
        return relative(a, da), relative(b, db)
    if isinstance(a, Window) and not _static(a.lens[da]) and not isinstance(b, Window):
        return relative(a, da), b
    if isinstance(b, Window) and not _static(b.lens[db]) and not isinstance(a, Window):
        return a, relative(b, db)
    if isinstance(a, Window) and isinstance(b, Window) and a.values.shape[da] != b.values.shape[db] \
            and not _static(a.lens[da]) and not _static(b.lens[db]) and a.lens[da].same(b.lens[db]):
        # equal lengths in blocks of different sizes (slices of dims of different sizes): the
        # elements start at 0 in both, and the length fits the smaller block
        size = min(a.values.shape[da], b.values.shape[db])
        return _fit(a, da, size), _fit(b, db, size)
    return a, b


def _filled_operand(x) -> tuple[TracedRArray, tuple]:
    if isinstance(x, Window):
        return x.filled(0), x.lens
    t = as_traced(x)
    return t, tuple(t.shape)


def _matmul(a, b) -> Any:
    na = a.ndim if isinstance(a, Window) else np.ndim(a)
    nb = b.ndim if isinstance(b, Window) else np.ndim(b)
    if na and nb:
        a, b = _contract_aligned(a, b, na - 1, 0 if nb == 1 else nb - 2)
    va, la = _filled_operand(a)
    vb, lb = _filled_operand(b)
    if va.ndim == 0 or vb.ndim == 0:
        raise WindowShapeError("matmul of a scalar")
    _contract_ok(la[-1], lb[0] if vb.ndim == 1 else lb[-2])
    res = np.matmul(va, vb)
    if va.ndim == 1 and vb.ndim == 1:
        return res
    if va.ndim == 1:
        lens = tuple(lb[:-2]) + (lb[-1],)
    elif vb.ndim == 1:
        lens = tuple(la[:-1])
    else:
        if len(la) > 2 or len(lb) > 2:
            raise WindowShapeError("batched matmul of slices with traced bounds", hint=_HINT)
        lens = (la[0], lb[1])
    return _make(res, lens)


def _dot(a, b, out=None):
    if np.ndim(a.values if isinstance(a, Window) else a) == 0 or \
            np.ndim(b.values if isinstance(b, Window) else b) == 0:
        return np.multiply(a, b)
    va = a.values if isinstance(a, Window) else a
    vb = b.values if isinstance(b, Window) else b
    if np.ndim(va) > 2 or np.ndim(vb) > 2:
        raise WindowShapeError("np.dot of arrays with more than two dims and a traced slice bound", hint=_HINT)
    return _matmul(a, b)


def _vdot(a, b):
    return _dot(np.ravel(a) if not isinstance(a, Window) else _only_1d(a),
                np.ravel(b) if not isinstance(b, Window) else _only_1d(b))


def _only_1d(w: Window) -> Window:
    if w.ndim != 1:
        w._shape_error("flattening it")
    return w


def _inner(a, b):
    la = a.ndim if isinstance(a, Window) else np.ndim(a)
    lb = b.ndim if isinstance(b, Window) else np.ndim(b)
    if la == 1 and lb == 1:
        return _matmul(a, b)
    raise WindowShapeError("np.inner of more than one-dimensional slices with traced bounds", hint=_HINT)


def _outer(a, b):
    a = _only_1d(a) if isinstance(a, Window) else as_traced(a).reshape(-1)
    b = _only_1d(b) if isinstance(b, Window) else as_traced(b).reshape(-1)
    return np.multiply(a[:, None], b[None, :])


def _transpose(w: Window, axes=None) -> Window:
    axes = tuple(range(w.ndim))[::-1] if axes is None else tuple(int(a) % w.ndim for a in axes)
    return Window(ops.transpose(w.values, list(axes)), tuple(w.lens[a] for a in axes))


def _reduction(fn, fill_of):
    def impl(w, axis=None, dtype=None, keepdims=False, **kw):
        if not isinstance(w, Window):
            return fn(w, axis=axis, dtype=dtype, keepdims=keepdims, **kw) if dtype is not None else \
                fn(w, axis=axis, keepdims=keepdims, **kw)
        if kw:
            w._shape_error(f"numpy.{fn.__name__} with {sorted(kw)}")
        axes = tuple(range(w.ndim)) if axis is None else \
            tuple(a % w.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
        vals = w.filled(fill_of(w.values.dtype))
        args = {"axis": axis, "keepdims": keepdims}
        if dtype is not None:
            args["dtype"] = dtype
        res = fn(vals, **args)
        lens = [n for d, n in enumerate(w.lens) if d not in axes or keepdims]
        if keepdims:
            lens = [1 if d in axes else n for d, n in enumerate(w.lens)]
        return _make(res, lens)
    return impl


def _count(w: Window, axes) -> TracedRArray:
    c = None
    for d in axes:
        n = w.lens[d]
        v = ops.full((), n, np.dtype(np.int64)) if _static(n) else ops.convert(n.value, np.dtype(np.int64))
        c = v if c is None else ops.multiply(c, v)
    return c if c is not None else ops.full((), 1, np.dtype(np.int64))


def _mean(w, axis=None, dtype=None, keepdims=False):
    if not isinstance(w, Window):
        return np.mean(w, axis=axis, dtype=dtype, keepdims=keepdims)
    axes = tuple(range(w.ndim)) if axis is None else \
        tuple(a % w.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
    dt = dtype if dtype is not None else (np.float64 if w.dtype.kind in "biu" else w.dtype)
    s = _reduction(np.sum, lambda t: 0)(w.astype(dt), axis=axis, keepdims=keepdims)
    return np.true_divide(s, _count(w, axes).astype(np.dtype(dt)))


def _identity_max(dt):
    return -np.inf if dt.kind in "fc" else (np.iinfo(dt).min if dt.kind in "iu" else False)


def _identity_min(dt):
    return np.inf if dt.kind in "fc" else (np.iinfo(dt).max if dt.kind in "iu" else True)


def _where(cond, a, b):
    vals, lens = _align([cond, a, b])
    return _make(np.where(*vals), lens)


def _norm(x, ord=None, axis=None, keepdims=False):
    if ord not in (None, 2, "fro") or axis is not None or keepdims:
        x._shape_error("numpy.linalg.norm other than the 2-norm of the whole slice")
    return np.sqrt(_reduction(np.sum, lambda t: 0)(np.abs(x) * np.abs(x) if x.dtype.kind == "c" else x * x))


_FUNCTIONS = {
    np.sum: _reduction(np.sum, lambda t: 0),
    np.prod: _reduction(np.prod, lambda t: 1),
    np.max: _reduction(np.max, _identity_max),
    np.amax: _reduction(np.max, _identity_max),
    np.min: _reduction(np.min, _identity_min),
    np.amin: _reduction(np.min, _identity_min),
    np.any: _reduction(np.any, lambda t: False),
    np.all: _reduction(np.all, lambda t: True),
    np.mean: _mean,
    np.dot: _dot,
    np.vdot: _vdot,
    np.inner: _inner,
    np.outer: _outer,
    np.matmul: _matmul,
    np.transpose: lambda w, axes=None: _transpose(w, axes),
    np.where: _where,
    np.linalg.norm: _norm,
}


install_operators(Window, binary=[("matmul", np.matmul)], methods=[("dot", np.dot)])


def _inplace(ufunc):
    def method(self, other):
        return self._write(ufunc(self, other))  # a view: the base takes the new values

    return method


for _name, _uf in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.true_divide),
                   ("floordiv", np.floor_divide), ("mod", np.remainder), ("pow", np.power),
                   ("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor), ("matmul", np.matmul)]:
    setattr(Window, f"__i{_name}__", _inplace(_uf))
