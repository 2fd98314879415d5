"""Automatic differentiation, Enzyme-style: ``reactant.autodiff(mode, f, *annotated_args)``
and the conveniences built on it (gradient, value_and_gradient, jvp, vjp, jacobian).

Inside a compiled function these record an ``enzyme.autodiff``/``enzyme.fwddiff`` marker
(expanded into derivative code by the optimizer after the module has been optimized);
outside, on device arrays, they are compiled automatically and cached.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .compiler import CompiledFunction, Options
from .tracing import active as _trace_active
from .tracing import autodiff as _ad
from .tracing.autodiff import (Active, BatchDuplicated, Const, Duplicated, Forward, ForwardWithPrimal,  # noqa: F401
                                Mode, Reverse, ReverseWithPrimal)

__all__ = ["Active", "BatchDuplicated", "Const", "Duplicated", "Forward", "ForwardWithPrimal", "Reverse",
           "ReverseWithPrimal", "autodiff", "gradient", "jacobian", "jvp", "value_and_gradient", "vjp"]


def _entry(mode, f, *args, seed=None):
    return _ad.autodiff(mode, f, *args, seed=seed)


_COMPILED = CompiledFunction(_entry, Options(warn_scalars=False))


def autodiff(mode: Mode, f: Callable, *args, seed=None) -> Any:
    """Differentiate ``f`` at ``args``.

    Each argument is ``Active(x)`` (reverse: its gradient is returned), ``Const(x)`` (or a
    plain value: no derivative), ``Duplicated(x, dx)`` (reverse: the gradient is added into
    the device array ``dx`` in place; forward: ``dx`` is the tangent) or
    ``BatchDuplicated(x, (dx1, dx2, ...))`` (vector forward mode). Arguments may be pytrees.

    - ``Reverse``: returns a tuple with, per argument, its gradient (Active) or None.
      ``f`` must return one scalar (or pass ``seed=`` with the cotangent of its result).
    - ``ReverseWithPrimal``: ``(gradients, value)``.
    - ``Forward``: the tangent of ``f``'s result (a tuple of tangents with BatchDuplicated).
    - ``ForwardWithPrimal``: ``(tangent, value)``.
    """
    if _trace_active() is not None:
        return _ad.autodiff(mode, f, *args, seed=seed)
    return _COMPILED(mode, f, *args, seed=seed)


def _argnums(argnums, n: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    return tuple(a % n for a in nums)


def gradient(f: Callable, *args, argnums: int | Sequence[int] = 0) -> Any:
    """Gradient of scalar ``f`` with respect to the arguments ``argnums`` (a single gradient
    for an int, a tuple for a sequence)."""
    nums = _argnums(argnums, len(args))
    grads = autodiff(Reverse, f, *[Active(a) if i in nums else Const(a) for i, a in enumerate(args)])
    return grads[nums[0]] if isinstance(argnums, int) else tuple(grads[i] for i in nums)


def value_and_gradient(f: Callable, *args, argnums: int | Sequence[int] = 0) -> tuple[Any, Any]:
    """``(f(*args), gradient)``; see ``gradient``."""
    nums = _argnums(argnums, len(args))
    grads, value = autodiff(ReverseWithPrimal, f,
                            *[Active(a) if i in nums else Const(a) for i, a in enumerate(args)])
    g = grads[nums[0]] if isinstance(argnums, int) else tuple(grads[i] for i in nums)
    return value, g


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``(f(*primals), J·tangents)`` by forward mode."""
    tangent, value = autodiff(ForwardWithPrimal, f, *[Duplicated(p, t) for p, t in zip(primals, tangents)])
    return value, tangent


def vjp(f: Callable, *primals, cotangent) -> tuple[Any, tuple]:
    """``(f(*primals), cotangent·J)`` by reverse mode: one gradient per primal."""
    grads, value = autodiff(ReverseWithPrimal, f, *[Active(p) for p in primals], seed=cotangent)
    return value, grads


def jacobian(f: Callable, x: Any, *, mode: str = "forward") -> Any:
    """Jacobian of ``f`` at array ``x``, of shape ``f(x).shape + x.shape``.

    ``mode="forward"``: one vector forward-mode pass with the identity as tangents;
    ``mode="reverse"``: one reverse pass per output element."""
    if _trace_active() is None:
        return _JACOBIAN(f, x, mode=mode)
    return _jacobian_traced(f, x, mode)


def _jacobian_traced(f, x, mode):
    from .tracing.numpy_api import as_traced

    xt = as_traced(x)
    n = xt.size
    if mode == "forward":
        basis = np.eye(n, dtype=xt.dtype).reshape((n,) + xt.shape)
        tangent = _ad.autodiff(Forward, f, BatchDuplicated(xt, (basis,), stacked=True))
        out_shape = tangent.shape[1:]
        j = tangent.reshape((n,) + out_shape)
        j = np.moveaxis(j, 0, -1)
        return j.reshape(out_shape + xt.shape)
    if mode == "reverse":
        out = f(xt)
        out_shape = np.shape(out)
        m = int(np.prod(out_shape, dtype=np.int64))
        rows = []
        for k in range(m):
            seed = np.zeros(m, dtype=xt.dtype)
            seed[k] = 1
            (g,) = _ad.autodiff(Reverse, f, Active(xt), seed=seed.reshape(out_shape))
            rows.append(g)
        return np.stack(rows).reshape(out_shape + xt.shape)
    raise ValueError(f"mode must be 'forward' or 'reverse', got {mode!r}")


_JACOBIAN = CompiledFunction(lambda f, x, mode: _jacobian_traced(f, x, mode), Options(warn_scalars=False))
