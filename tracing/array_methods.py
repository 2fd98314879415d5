"""``NumpyArrayMethods``: ndarray's operators, properties and methods, each delegating to the
NumPy function or ufunc of the same meaning. Shared by traced arrays (which record ops) and
concrete device arrays (which run them eagerly): NumPy's dispatch picks the right one.

Subclasses provide ``_inplace(ufunc, other)`` (``x op= y``) and ``_fill(value)``
(``x[...] = value``).
"""

from __future__ import annotations

import numpy as np

from .namespace import TRACED_DEVICE, array_namespace  # noqa: F401  (TRACED_DEVICE re-exported)


class NumpyArrayMethods:
    __slots__ = ()

    # -- array attributes -------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        """Byte strides of a C-contiguous buffer: traced and device arrays are dense (what
        ``as_strided`` and ``sliding_window_view`` views are made of)."""
        out, step = [], self.dtype.itemsize
        for n in reversed(self.shape):
            out.append(step)
            step *= max(int(n), 1)
        return tuple(reversed(out))

    def __array_namespace__(self, /, *, api_version: str | None = None):
        """The Array API namespace of these arrays (``reactant.numpy``)."""
        return array_namespace(api_version)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # -- operators (NumPy semantics through the ufuncs) -------------------------------------
    def _binop(ufunc, reflected=False):  # noqa: N805 - class-body helper
        if reflected:
            def method(self, other):
                return ufunc(other, self)
        else:
            def method(self, other):
                return ufunc(self, other)
        method.__name__ = ufunc.__name__
        return method

    def _iop(ufunc):  # noqa: N805
        def method(self, other):
            return self._inplace(ufunc, other)

        return method

    __add__, __radd__, __iadd__ = _binop(np.add), _binop(np.add, True), _iop(np.add)
    __sub__, __rsub__, __isub__ = _binop(np.subtract), _binop(np.subtract, True), _iop(np.subtract)
    __mul__, __rmul__, __imul__ = _binop(np.multiply), _binop(np.multiply, True), _iop(np.multiply)
    __truediv__, __rtruediv__, __itruediv__ = (
        _binop(np.true_divide), _binop(np.true_divide, True), _iop(np.true_divide))
    __floordiv__, __rfloordiv__, __ifloordiv__ = (
        _binop(np.floor_divide), _binop(np.floor_divide, True), _iop(np.floor_divide))
    __mod__, __rmod__, __imod__ = _binop(np.remainder), _binop(np.remainder, True), _iop(np.remainder)
    __pow__, __rpow__, __ipow__ = _binop(np.power), _binop(np.power, True), _iop(np.power)
    __matmul__, __rmatmul__, __imatmul__ = _binop(np.matmul), _binop(np.matmul, True), _iop(np.matmul)
    __and__, __rand__, __iand__ = _binop(np.bitwise_and), _binop(np.bitwise_and, True), _iop(np.bitwise_and)
    __or__, __ror__, __ior__ = _binop(np.bitwise_or), _binop(np.bitwise_or, True), _iop(np.bitwise_or)
    __xor__, __rxor__, __ixor__ = _binop(np.bitwise_xor), _binop(np.bitwise_xor, True), _iop(np.bitwise_xor)
    __lshift__, __rlshift__, __ilshift__ = (
        _binop(np.left_shift), _binop(np.left_shift, True), _iop(np.left_shift))
    __rshift__, __rrshift__, __irshift__ = (
        _binop(np.right_shift), _binop(np.right_shift, True), _iop(np.right_shift))
    __lt__, __le__ = _binop(np.less), _binop(np.less_equal)
    __gt__, __ge__ = _binop(np.greater), _binop(np.greater_equal)
    __eq__, __ne__ = _binop(np.equal), _binop(np.not_equal)
    del _binop, _iop

    def __divmod__(self, other):
        return np.floor_divide(self, other), np.remainder(self, other)

    def __rdivmod__(self, other):
        return np.floor_divide(other, self), np.remainder(other, self)

    def __neg__(self):
        return np.negative(self)

    def __pos__(self):
        return np.positive(self)

    def __abs__(self):
        return np.absolute(self)

    def __invert__(self):
        return np.invert(self)

    # -- methods (ndarray's, delegating to the NumPy functions) -----------------------------
    @property
    def T(self):
        return np.transpose(self)

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError(f"mT needs an array of at least 2 dimensions, got {self.ndim}")
        return np.swapaxes(self, -1, -2)

    @property
    def real(self):
        return np.real(self)

    @property
    def imag(self):
        return np.imag(self)

    @property
    def flat(self):
        return np.ravel(self)

    def astype(self, dtype, copy=True, casting="unsafe"):
        return np.astype(self, dtype, copy=copy)

    def conj(self):
        return np.conjugate(self)

    conjugate = conj

    def copy(self, order="C"):
        return np.copy(self)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return np.reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            axes = axes[0]
        return np.transpose(self, axes or None)

    def swapaxes(self, a, b):
        return np.swapaxes(self, a, b)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis=axis)

    def ravel(self, order="C"):
        return np.ravel(self, order=order)

    def flatten(self, order="C"):
        return np.copy(np.ravel(self, order=order))  # always a copy (ravel may be a view)

    def repeat(self, repeats, axis=None):
        return np.repeat(self, repeats, axis=axis)

    def dot(self, other):
        return np.dot(self, other)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None):
        return np.trace(self, offset, axis1, axis2, dtype=dtype)

    def clip(self, min=None, max=None):
        return np.clip(self, min, max)

    def round(self, decimals=0):
        return np.round(self, decimals)

    def fill(self, value):
        self._fill(value)

    def sum(self, axis=None, dtype=None, keepdims=False, **kw):
        return np.sum(self, axis=axis, dtype=dtype, keepdims=keepdims, **kw)

    def prod(self, axis=None, dtype=None, keepdims=False, **kw):
        return np.prod(self, axis=axis, dtype=dtype, keepdims=keepdims, **kw)

    def mean(self, axis=None, dtype=None, keepdims=False, **kw):
        return np.mean(self, axis=axis, dtype=dtype, keepdims=keepdims, **kw)

    def var(self, axis=None, dtype=None, ddof=0, keepdims=False, **kw):
        return np.var(self, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, **kw)

    def std(self, axis=None, dtype=None, ddof=0, keepdims=False, **kw):
        return np.std(self, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, **kw)

    def max(self, axis=None, keepdims=False, **kw):
        return np.max(self, axis=axis, keepdims=keepdims, **kw)

    def min(self, axis=None, keepdims=False, **kw):
        return np.min(self, axis=axis, keepdims=keepdims, **kw)

    def argmax(self, axis=None, keepdims=False):
        return np.argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        return np.argmin(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False):
        return np.any(self, axis=axis, keepdims=keepdims)

    def all(self, axis=None, keepdims=False):
        return np.all(self, axis=axis, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None):
        return np.cumsum(self, axis=axis, dtype=dtype)

    def cumprod(self, axis=None, dtype=None):
        return np.cumprod(self, axis=axis, dtype=dtype)

    def sort(self, axis=-1):
        self._fill(np.sort(self, axis=axis))

    def argsort(self, axis=-1):
        return np.argsort(self, axis=axis)

    def nonzero(self):
        return np.nonzero(self)


