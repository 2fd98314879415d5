"""What the array-likes whose length is only known when the program runs share
(``MaskedSelection``: ``x[mask]`` with a traced mask; ``Window``: a slice with a traced bound):
everything that needs the length raises their ``_shape_error``, and Python's operators and the
reduction methods go through NumPy's functions (so through their ``__array_ufunc__`` /
``__array_function__``)."""

from __future__ import annotations

import numpy as np

_BINARY = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("truediv", np.true_divide),
           ("floordiv", np.floor_divide), ("mod", np.remainder), ("pow", np.power), ("and", np.bitwise_and),
           ("or", np.bitwise_or), ("xor", np.bitwise_xor)]
_COMPARE = [("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
            ("eq", np.equal), ("ne", np.not_equal)]
REDUCTIONS = [("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min), ("prod", np.prod),
              ("any", np.any), ("all", np.all)]


class RunTimeLength:
    """Mixin: subclasses define ``_shape_error(what)`` (raises)."""

    __slots__ = ()

    def _shape_error(self, what: str):
        raise NotImplementedError

    @property
    def shape(self):
        self._shape_error("the shape")

    @property
    def size(self):
        self._shape_error("the size")

    def __len__(self):
        self._shape_error("len()")

    def __iter__(self):
        self._shape_error("iterating")

    def __array__(self, dtype=None, copy=None):
        self._shape_error("converting to an array")


def _binop(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


def install_operators(cls, binary=(), methods=()) -> None:
    """Python operators and reduction methods of ``cls`` through NumPy's functions
    (``binary``: more (name, ufunc) operators; ``methods``: more (name, function) methods)."""
    for name, uf in _BINARY + list(binary):
        setattr(cls, f"__{name}__", _binop(uf))
        setattr(cls, f"__r{name}__", _binop(uf, True))
        setattr(cls, f"__i{name}__", _binop(uf))
    for name, uf in _COMPARE:
        setattr(cls, f"__{name}__", _binop(uf))
    for name, f in REDUCTIONS + list(methods):
        setattr(cls, name, lambda self, *a, _f=f, **k: _f(self, *a, **k))
    cls.__neg__ = lambda self: np.negative(self)
    cls.__pos__ = lambda self: self
    cls.__abs__ = lambda self: np.absolute(self)
    cls.__invert__ = lambda self: np.invert(self)
    cls.__hash__ = None
