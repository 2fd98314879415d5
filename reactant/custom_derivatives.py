"""User-defined derivatives, as in JAX: ``stop_gradient``, ``custom_vjp``, ``custom_jvp`` and
``checkpoint`` (alias ``remat``).

Inside a compiled function (or a function given to ``reactant.gradient`` and friends) each
records a marker op naming the traced rules; the AD pass uses the rules instead of
differentiating the function. Outside a trace they just call the function (there is nothing
to differentiate on device arrays): ``stop_gradient(x)`` is ``x``.

Arguments are pytrees. Traced array leaves are differentiated; Python numbers, NumPy arrays
and other values are constants of the traced rules. ``nondiff_argnums`` (custom_vjp /
custom_jvp) pass arguments that have no derivative (a function, a flag, an array held
constant): they are given to the rules first, as in JAX. Values a custom_vjp / custom_jvp
function reads from the enclosing function without receiving them as arguments have no
derivative either: differentiating with respect to them is an error (pass them as
arguments). Results are new arrays, as in JAX.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

from .tracing import active as _trace_active
from .tracing import custom_derivatives as _cd

__all__ = ["checkpoint", "custom_jvp", "custom_vjp", "remat", "stop_gradient"]


def stop_gradient(x: Any) -> Any:
    """``x`` (a pytree of arrays), with a zero derivative in forward and reverse mode."""
    if _trace_active() is None:
        return x
    return _cd.stop_gradient(x)


def _bind(fun: Callable, args: tuple, kwargs: dict) -> tuple:
    """Keyword arguments bound to positions by ``fun``'s signature (the rules take positions)."""
    if not kwargs:
        return args
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{getattr(fun, '__name__', fun)}: {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"{getattr(fun, '__name__', fun)}: keyword-only arguments ({', '.join(bound.kwargs)}) "
                        "cannot be given to a function with a custom derivative")
    return tuple(bound.args)


class custom_vjp:
    """A function with a custom reverse-mode derivative (JAX's ``jax.custom_vjp``)::

        @reactant.custom_vjp
        def f(x): ...
        def f_fwd(x): return f(x), residuals          # (output, residuals)
        def f_bwd(residuals, g): return (ct_x,)       # one cotangent per argument (None: zero)
        f.defvjp(f_fwd, f_bwd)

    With ``nondiff_argnums``, those arguments come first in ``bwd(*nondiff, residuals, g)``
    and get no cotangent. Forward mode through a custom_vjp function is an error (as in JAX).
    Without differentiation the result is ``f``'s."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        """Set the rules: ``fwd(*args) -> (output, residuals)``, ``bwd(*nondiff, residuals,
        cotangent) -> tuple of cotangents, one per differentiable argument``."""
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"no VJP defined for custom_vjp function {self.__name__}: call defvjp first")
        args = _bind(self.fun, args, kwargs)
        if _trace_active() is None or _cd.plain_call(self.fun):
            return self.fun(*args)
        return _cd.custom_vjp_call(self.fun, self.fwd, self.bwd, args, self.nondiff_argnums)

    def __get__(self, obj, objtype=None):  # methods: bind like a function
        return self if obj is None else functools.partial(self, obj)


class custom_jvp:
    """A function with a custom forward-mode derivative (JAX's ``jax.custom_jvp``)::

        @reactant.custom_jvp
        def f(x): ...
        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return f(x), tangent_out

    The rule must be linear in the tangents: reverse mode transposes it (the reverse-mode
    derivative of the rule with respect to its tangents). With ``nondiff_argnums`` those
    arguments come first: ``jvp(*nondiff, primals, tangents)``. Without differentiation the
    result is ``f``'s."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable | None = None

    def defjvp(self, jvp: Callable) -> Callable:
        """Set the rule ``jvp(primals, tangents) -> (output, tangent)``; returns it (a decorator)."""
        self.jvp = jvp
        return jvp

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"no JVP defined for custom_jvp function {self.__name__}: call defjvp first")
        args = _bind(self.fun, args, kwargs)
        if _trace_active() is None or _cd.plain_call(self.fun):
            return self.fun(*args)
        return _cd.custom_jvp_call(self.fun, self.jvp, args, self.nondiff_argnums)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


def checkpoint(fun: Callable | None = None, policy: str | Callable[[str], bool] | None = None) -> Callable:
    """``fun`` whose reverse-mode derivative recomputes its forward pass instead of storing
    its intermediates (JAX's ``jax.checkpoint`` / ``jax.remat``): memory for time.

    ``policy`` says which intermediates are stored after all:

    - ``None`` or ``"nothing_saveable"``: none, only the inputs;
    - ``"dots_saveable"`` (or ``"dots"``): the results of matrix products and convolutions
      (``dot_general``/``convolution``) at the top level of ``fun`` (not inside its loops or
      branches), so that the recomputation does only the cheap elementwise work;
    - a callable ``policy(op_name) -> bool``: the results of the top-level ops whose
      StableHLO name (``"stablehlo.dot_general"``, ``"stablehlo.exponential"``...) it accepts.

    Use as ``checkpoint(f)``, ``checkpoint(f, policy="dots")`` or as a decorator. Forward mode
    is not affected."""
    _cd.save_predicate(policy)  # an unknown policy fails here, not at the first call
    if fun is None:
        return lambda f: checkpoint(f, policy)

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        if _trace_active() is None:
            return fun(*args, **kwargs)
        return _cd.checkpoint_call(fun, args, kwargs, policy)

    return checkpointed


remat = checkpoint
