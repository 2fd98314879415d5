"""Function transformations of the public API: ``reactant.vmap``.

Inside a compiled function ``vmap`` traces the mapped function once, in a counted loop over
the batch, which the optimizer turns into batched operations (``reactant.tracing.vmap``);
outside, on device arrays, the mapped call is compiled automatically and cached, as eager
NumPy and ``reactant.autodiff`` are.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from .compiler import CompiledFunction, Options
from .tracing import active as _trace_active
from .tracing import vmap as _vm

__all__ = ["vmap"]


def _entry(f, in_axes, out_axes, args, kwargs):
    return _vm.map_call(f, in_axes, out_axes, args, kwargs)


_COMPILED = CompiledFunction(_entry, Options(warn_scalars=False))


def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0) -> Callable:
    """``f`` vectorized over a batch axis, with ``jax.vmap``'s semantics.

    ``in_axes``: the axis of each positional argument that is mapped: an int (every
    argument), None (not mapped: passed to every call as it is), or a tuple with one entry
    per positional argument, each an int/None or a pytree prefix of that argument with
    ints/None at its leaves. Keyword arguments are mapped over axis 0. ``out_axes``: where
    the batch axis goes in each result (same forms, for the result's structure; None: a
    result that does not depend on the mapped arguments, returned once). Negative axes count
    from the end. Every mapped axis must have the same length.

    Works inside ``reactant.compile`` (and inside other transformations: nested ``vmap``,
    ``gradient``/``vjp``/``jacobian`` of a mapped function or mapped over them), and on
    device arrays outside, where the call is compiled once per function and signature.
    """
    _vm.check_axes_spec(in_axes, "in_axes")
    _vm.check_axes_spec(out_axes, "out_axes")

    @functools.wraps(f)
    def mapped(*args, **kwargs):
        if _trace_active() is not None:
            return _vm.map_call(f, in_axes, out_axes, args, kwargs)
        return _COMPILED(f, in_axes, out_axes, args, kwargs)

    return mapped
