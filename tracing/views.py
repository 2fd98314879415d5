"""Views of traced arrays, as NumPy defines them.

A traced array is either a *base* (it owns its current value: ``x.value``) or a *view*: a
root base plus a chain of steps (basic index, transpose, reshape, flip, or a read-only
function such as a diagonal). A view has no value of its own: reading it applies the chain
to the root's *current* value, so a view read after its base was written sees the new
values; writing it pushes the new view value back through the chain into the root, so every
other view of that root sees the write too. This is the model of Reactant.jl's traced
``SubArray`` and of NumPy's own (base, offset, strides) views, without memory.

Strides (in elements, relative to the root, which is C-contiguous) are tracked only to
decide what NumPy decides from memory layout: whether ``reshape``/``ravel`` return a view.
"""

from __future__ import annotations

from typing import Callable

import numpy as np



class Step:
    """One link of a view chain: ``read(parent) -> view`` and ``write(parent, new_view) ->
    new parent`` (None for a read-only view); both take and give traced arrays."""

    __slots__ = ("read", "write", "what")

    def __init__(self, read: Callable, write: Callable | None, what: str):
        self.read = read
        self.write = write
        self.what = what


def c_strides(shape) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(int(n), 1)
    return tuple(reversed(out))


def strides_of(x) -> tuple[int, ...]:
    s = getattr(x, "_strides", None)
    return s if s is not None else c_strides(x.shape)


def is_c_contiguous(shape, strides) -> bool:
    if int(np.prod(shape, dtype=np.int64)) <= 1:
        return True
    want = c_strides(shape)
    return all(n == 1 or s == w for n, s, w in zip(shape, strides, want))


def index_strides(shape, strides, entries, none_dims) -> tuple[int, ...]:
    """Strides of ``x[entries]`` for a parsed basic index (``_Index.entries`` over the shape
    with None dims expanded: those have stride 0)."""
    out = []
    src = iter(zip(shape, strides))
    for d, e in enumerate(entries):
        if d in none_dims:
            out.append(0)
            continue
        n, s = next(src)
        if isinstance(e, slice):
            out.append(s * e.indices(n)[2])
        # an int (static or traced) drops the dim
    return tuple(out)


def nocopy_reshape_strides(shape, strides, new_shape) -> tuple[int, ...] | None:
    """The strides of ``x.reshape(new_shape)`` as a view (C order), or None when NumPy has to
    copy. Groups of old dims whose sizes multiply to groups of new dims must be contiguous
    among themselves; unit dims do not matter."""
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return c_strides(new_shape)
    old = [(int(n), int(s)) for n, s in zip(shape, strides) if n != 1]
    new = [int(n) for n in new_shape]
    new_strides = [0] * len(new)
    nonunit = [k for k, n in enumerate(new) if n != 1]
    oi = 0
    ni = 0
    while oi < len(old) and ni < len(nonunit):
        oj, nj = oi + 1, ni + 1
        po, pn = old[oi][0], new[nonunit[ni]]
        while po != pn:
            if po < pn:
                po *= old[oj][0]
                oj += 1
            else:
                pn *= new[nonunit[nj]]
                nj += 1
        for k in range(oi, oj - 1):  # the old group must be contiguous
            if old[k][1] != old[k + 1][1] * old[k + 1][0]:
                return None
        acc = old[oj - 1][1]
        for k in reversed(range(ni, nj)):
            new_strides[nonunit[k]] = acc
            acc *= new[nonunit[k]]
        oi, ni = oj, nj
    # unit dims of the result: any stride (NumPy uses the neighbour's), 0 here
    return tuple(new_strides)


# -- making views -------------------------------------------------------------------------------
def _make(parent, step: Step, result, strides):
    from .traced import make_view

    return make_view(parent, step, result, strides)


def transpose_view(x, perm):
    """``x.transpose(perm)``: always a view."""
    from . import ops

    perm = [int(p) for p in perm]
    if perm == list(range(x.ndim)):
        return _make(x, Step(lambda p: p, lambda p, v: v, "transpose"), x, strides_of(x))
    inv = [int(i) for i in np.argsort(perm)]
    step = Step(lambda p: ops.transpose(p, perm), lambda p, v: ops.transpose(v, inv), "transpose")
    s = strides_of(x)
    return _make(x, step, step.read(x), [s[p] for p in perm])


def reshape_view(x, shape, *, what: str = "reshape"):
    """``x.reshape(shape)``: a view when NumPy can reshape without copying, else a copy."""
    from . import ops

    shape = tuple(int(n) for n in shape)
    strides = nocopy_reshape_strides(x.shape, strides_of(x), shape)
    result = ops.reshape(x, shape)
    if strides is None:
        return result if result is not x else copy_of(x)
    old = x.shape
    step = Step(lambda p: ops.reshape(p, shape), lambda p, v: ops.reshape(v, old), what)
    return _make(x, step, result, strides)


def ravel_view(x):
    """``x.ravel()``: a view of a C-contiguous array, else a copy (NumPy's rule)."""
    from . import ops

    if is_c_contiguous(x.shape, strides_of(x)):
        return reshape_view(x, (x.size,), what="ravel")
    return ops.reshape(x, (x.size,)) if x.ndim != 1 else copy_of(x)


def flip_view(x, axes):
    from . import ops

    axes = [int(a) for a in axes]
    if not axes:
        return _make(x, Step(lambda p: p, lambda p, v: v, "flip"), x, strides_of(x))
    step = Step(lambda p: ops.reverse(p, axes), lambda p, v: ops.reverse(v, axes), "flip")
    s = list(strides_of(x))
    for a in axes:
        s[a] = -s[a]
    return _make(x, step, step.read(x), s)


def readonly_view(x, fn: Callable, what: str, strides):
    """A view NumPy makes read-only (``np.diagonal``, ``np.broadcast_to``): it follows writes
    to its base, and refuses writes itself."""
    step = Step(fn, None, what)
    return _make(x, step, fn(x), strides)


def index_view(x, read: Callable, write: Callable, result, strides):
    return _make(x, Step(read, write, "indexing"), result, strides)


def copy_of(x):
    """A new base holding ``x``'s current value (a copy, in NumPy's terms)."""
    from .traced import wrap

    t = wrap(x.value, x.shape, x.dtype)
    return t
