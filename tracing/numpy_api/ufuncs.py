"""NumPy ufuncs on traced arrays: NumPy's own dtype resolution, broadcasting, then one
body per ufunc built from StableHLO ops (operands already in the loop dtype)."""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from .complex_special import COMPLEX_BODIES
from ..dtypes import canonical, is_complex, is_float, resolve_ufunc
from ..errors import DomainError, DTypeError, UnsupportedError, describe
from ..traced import TracedRArray, TracedRNumber
from ._registry import implements
from .convert import as_traced, broadcast_all, dtype_for_promotion, is_weak


# -- helpers on loop-dtype operands -----------------------------------------------------------
def _c(x: TracedRArray, v) -> TracedRArray:
    """A constant ``v`` of x's dtype and shape (splat)."""
    return ops.full(x.shape, v, x.dtype)


def _zero(x):
    return _c(x, 0)


def _isnan(x):
    return ops.compare(x, x, "NE")


def _bool(x):
    """NumPy truthiness: x != 0 (complex: either part non-zero)."""
    if x.dtype == np.bool_:
        return x
    return ops.compare(x, _zero(x), "NE")


def _where(c, a, b):
    return ops.select(c, a, b)


# -- integer / float division with NumPy's floor semantics ------------------------------------
def _int_floor_divmod(a, b):
    zero = _zero(a)
    bz = ops.compare(b, zero, "EQ")
    safe_b = _where(bz, _c(b, 1), b)  # XLA's x/0 is not NumPy's 0
    q = ops.divide(a, safe_b)
    r = ops.remainder(a, safe_b)
    if a.dtype.kind == "i":
        fix = ops.and_(ops.compare(r, zero, "NE"),
                       ops.compare(ops.compare(r, zero, "LT"), ops.compare(b, zero, "LT"), "NE"))
        q = _where(fix, ops.subtract(q, _c(q, 1)), q)
        r = _where(fix, ops.add(r, b), r)
    return _where(bz, zero, q), _where(bz, zero, r)


def _float_floor_divmod(a, b):
    # NumPy's npy_divmod: exact for the remainder, floor of the quotient.
    zero = _zero(a)
    mod = ops.remainder(a, b)  # fmod: sign of a
    div = ops.divide(ops.subtract(a, mod), b)
    fix = ops.and_(ops.compare(mod, zero, "NE"),
                   ops.compare(ops.compare(b, zero, "LT"), ops.compare(mod, zero, "LT"), "NE"))
    mod = _where(fix, ops.add(mod, b), mod)
    div = _where(fix, ops.subtract(div, _c(div, 1)), div)
    # mod == 0: copysign(0, b)
    mod = _where(ops.compare(mod, zero, "EQ"), _copysign(zero, b), mod)
    floordiv = ops.floor(div)
    floordiv = _where(ops.compare(ops.subtract(div, floordiv), _c(div, 0.5), "GT"),
                      ops.add(floordiv, _c(div, 1)), floordiv)
    # div == 0: copysign(0, a / b)
    floordiv = _where(ops.compare(div, zero, "EQ"), _copysign(zero, ops.divide(a, b)), floordiv)
    bz = ops.compare(b, zero, "EQ")
    q = _where(bz, ops.divide(a, b), floordiv)
    r = _where(bz, _c(a, np.nan), mod)
    return q, r


def _divmod(a, b):
    return _int_floor_divmod(a, b) if a.dtype.kind in "iu" else _float_floor_divmod(a, b)


def _floor_divide(a, b):
    if a.dtype == np.bool_:
        raise DTypeError("floor_divide is not defined for bool")
    return _divmod(a, b)[0]


def _remainder(a, b):
    return _divmod(a, b)[1]


def _fmod(a, b):
    if a.dtype.kind in "iu":
        bz = ops.compare(b, _zero(b), "EQ")
        return _where(bz, _zero(a), ops.remainder(a, _where(bz, _c(b, 1), b)))
    return ops.remainder(a, b)


def _true_divide(a, b):
    return ops.divide(a, b)


def _signbit_bits(x):
    bits = ops.bitcast_convert(x, np.dtype(f"i{x.dtype.itemsize}"))
    return ops.compare(bits, _zero(bits), "LT")


def _copysign(a, b):
    return _where(ops.compare(_signbit_bits(a), _signbit_bits(b), "EQ"), a, ops.negate(a))


def _power(a, b):
    """``a ** b``. Integers to a negative integer power: NumPy raises ValueError. An exponent
    known while tracing (a Python or NumPy number or array, a traced constant) is checked
    before this body runs (``_check_int_power``); a traced exponent's values are known only on
    the device, which cannot raise, so there a negative exponent gives ``trunc(a ** b)``: 1
    for ``a == 1``, 1 or -1 for ``a == -1`` (even or odd ``b``), and 0 for every other ``a``
    (0 included, as NumPy's integer division by zero gives 0). Non-negative exponents give
    NumPy's values (wrapping on overflow); an eager call raises NumPy's ValueError instead."""
    if a.dtype == np.bool_:
        raise DTypeError("power is not defined for bool")
    if a.dtype.kind != "i" or _known_nonneg(b):
        return ops.power(a, b)
    zero, one = _zero(b), _c(b, 1)
    neg = ops.compare(b, zero, "LT")
    pos = ops.power(a, _where(neg, zero, b))
    odd = ops.compare(ops.and_(b, one), one, "EQ")
    unit = _where(ops.compare(a, _c(a, 1), "EQ"), _c(a, 1),
                  _where(ops.compare(a, _c(a, -1), "EQ"), _where(odd, _c(a, -1), _c(a, 1)), _zero(a)))
    return _where(neg, unit, pos)


def _known_nonneg(b: TracedRArray) -> bool:
    """``b`` holds no negative value, as known while tracing."""
    from ..context import active
    from ...ir.attrs import read_constant

    from ...ir.values import defining_op

    tc = active()
    v = b.value
    for _ in range(4):  # a constant seen through the broadcasts of promotion
        if tc is not None and v in tc.nonneg_values:
            return True
        vals = read_constant(v, max_elements=1 << 16)
        if vals is not None:
            return not np.any(vals < 0)
        op = defining_op(v)
        if op is None or op.operation.name not in ("stablehlo.broadcast_in_dim", "stablehlo.reshape"):
            return False
        v = op.operands[0]
    return False


def _static_values(x):
    """The values of ``x`` when they are known while tracing, else None."""
    if isinstance(x, TracedRArray):
        from ...ir.attrs import read_constant

        return read_constant(x.value, max_elements=1 << 20)
    if getattr(x, "__reactant_concrete__", None) is not None:  # a device array: values on the device
        return None
    try:
        return np.asarray(x)
    except Exception:  # noqa: BLE001 - anything NumPy cannot read is not a static exponent
        return None


def _check_int_power(inputs, loop) -> None:
    """NumPy's refusal of integers to negative integer powers, for an exponent known now."""
    if loop[0].kind not in "iu" or len(inputs) != 2:
        return
    vals = _static_values(inputs[1])
    if vals is not None and vals.dtype.kind in "iu" and vals.size and np.any(vals < 0):
        raise DomainError("Integers to negative integer powers are not allowed.",
                          hint="use a float base or exponent (x ** -1.0, np.float_power), or non-negative exponents")


def _add(a, b):
    return ops.or_(a, b) if a.dtype == np.bool_ else ops.add(a, b)


def _multiply(a, b):
    return ops.and_(a, b) if a.dtype == np.bool_ else ops.multiply(a, b)


def _subtract(a, b):
    if a.dtype == np.bool_:
        raise DTypeError("numpy boolean subtract, the `-` operator, is not supported; use `^` or logical_xor")
    return ops.subtract(a, b)


def _complex_pick(a, b, direction: str):
    """NumPy's complex maximum ("GT") / minimum ("LT"): lexicographic on (real, imag), a NaN
    operand (either part) returned, the first when both are. Built from compares of the parts:
    XLA has no complex order (its min/max of complex constants aborts the process)."""
    ar, ai, br, bi = ops.real(a), ops.imag(a), ops.real(b), ops.imag(b)
    a_wins = ops.or_(ops.compare(ar, br, direction),
                     ops.and_(ops.compare(ar, br, "EQ"), ops.compare(ai, bi, direction[0] + "E")))
    a_nan = ops.or_(_isnan(ar), _isnan(ai))
    b_nan = ops.or_(_isnan(br), _isnan(bi))
    return _where(ops.or_(a_nan, ops.and_(a_wins, ops.not_(b_nan))), a, b)


def _extremum(bool_op, direction: str, op):
    """NumPy's maximum ("GT") / minimum ("LT"): ``bool_op`` on booleans, the complex order of
    ``_complex_pick``, else ``op``."""
    def pick(a, b):
        if a.dtype == np.bool_:
            return bool_op(a, b)
        if is_complex(a.dtype):
            return _complex_pick(a, b, direction)
        return op(a, b)
    return pick


_maximum = _extremum(ops.or_, "GT", ops.maximum)
_minimum = _extremum(ops.and_, "LT", ops.minimum)


def _nan_ignoring(pick):
    """fmax / fmin: ``pick`` of the operands that are not NaN (NaN only when both are)."""
    def f(a, b):
        if not (is_float(a.dtype) or is_complex(a.dtype)):
            return pick(a, b)
        return _where(_isnan(a), b, _where(_isnan(b), a, pick(a, b)))
    return f


_fmax = _nan_ignoring(_maximum)
_fmin = _nan_ignoring(_minimum)


def _negative(x):
    if x.dtype == np.bool_:
        raise DTypeError("the numpy boolean negative, the `-` operator, is not supported; use `~`")
    return ops.negate(x)


def _absolute(x):
    if x.dtype == np.bool_ or x.dtype.kind == "u":
        return x
    return ops.abs(x)


def _sign(x):
    if x.dtype == np.bool_:
        raise DTypeError("sign is not defined for bool")
    if x.dtype.kind == "u":
        return ops.convert(_bool(x), x.dtype)
    if is_float(x.dtype) or is_complex(x.dtype):
        return _where(_bool(x), ops.sign(x), _zero(x))  # NumPy's sign(-0.0) is +0.0
    return ops.sign(x)


def _square(x):
    return _multiply(x, x)


def _reciprocal(x):
    if x.dtype.kind in "iu":  # C integer division, and NumPy's 0 for 1/0
        zero = ops.compare(x, _zero(x), "EQ")
        return _where(zero, _zero(x), ops.divide(_c(x, 1), _where(zero, _c(x, 1), x)))
    return ops.divide(_c(x, 1), x)


def _exp2(x):
    return ops.power(_c(x, 2), x)


def _log2(x):
    return ops.divide(ops.log(x), _c(x, math.log(2)))


def _log10(x):
    return ops.divide(ops.log(x), _c(x, math.log(10)))


def _trunc(x):
    if x.dtype.kind in "iub":
        return x
    return _where(ops.compare(x, _zero(x), "LT"), ops.ceil(x), ops.floor(x))


def _int_identity(fn):
    """floor/ceil/rint/trunc are identities on integers (NumPy keeps the int dtype)."""

    def body(x):
        if x.dtype.kind in "iub":
            return x
        if is_complex(x.dtype):  # NumPy rounds both parts
            return ops.complex_(fn(ops.real(x)), fn(ops.imag(x)))
        return fn(x)

    return body


def _hypot(a, b):
    a, b = ops.abs(a), ops.abs(b)
    hi, lo = ops.maximum(a, b), ops.minimum(a, b)
    safe = _where(ops.compare(hi, _zero(hi), "EQ"), _c(hi, 1), hi)
    r = ops.divide(lo, safe)
    return ops.multiply(hi, ops.sqrt(ops.add(_c(r, 1), ops.multiply(r, r))))


def _logaddexp(a, b):
    m = ops.maximum(a, b)
    d = ops.negate(ops.abs(ops.subtract(a, b)))
    out = ops.add(m, ops.log1p(ops.exp(d)))
    # equal infinities: a + log(2) would be nan from inf - inf
    return _where(ops.compare(a, b, "EQ"), ops.add(a, _c(a, math.log(2))), out)


def _logaddexp2(a, b):
    ln2 = _c(a, math.log(2))
    return ops.divide(_logaddexp(ops.multiply(a, ln2), ops.multiply(b, ln2)), ln2)


def _isnan_body(x):
    if not (is_float(x.dtype) or is_complex(x.dtype)):
        return ops.full(x.shape, False, np.bool_)
    if is_complex(x.dtype):
        return ops.or_(_isnan(ops.real(x)), _isnan(ops.imag(x)))
    return _isnan(x)


def _isinf_body(x):
    if not (is_float(x.dtype) or is_complex(x.dtype)):
        return ops.full(x.shape, False, np.bool_)
    if is_complex(x.dtype):
        return ops.or_(_isinf_body(ops.real(x)), _isinf_body(ops.imag(x)))
    return ops.compare(ops.abs(x), _c(x, np.inf), "EQ")


def _isfinite_body(x):
    if not (is_float(x.dtype) or is_complex(x.dtype)):
        return ops.full(x.shape, True, np.bool_)
    if is_complex(x.dtype):
        return ops.and_(ops.is_finite(ops.real(x)), ops.is_finite(ops.imag(x)))
    return ops.is_finite(x)


def _signbit(x):
    if x.dtype.kind in "ub":
        return ops.full(x.shape, False, np.bool_)
    if x.dtype.kind == "i":
        return ops.compare(x, _zero(x), "LT")
    return _signbit_bits(x)


def _right_shift(a, b):
    sh = ops.shift_right_logical if a.dtype.kind == "u" else ops.shift_right_arithmetic
    return sh(a, b)


def _invert(x):
    return ops.not_(x)


def _logical(op):
    def body(a, b):
        return op(_bool(a), _bool(b))

    return body


def _logical_not(x):
    return ops.not_(_bool(x))


def _heaviside(x, h0):
    zero = _zero(x)
    return _where(ops.compare(x, zero, "LT"), zero,
                  _where(ops.compare(x, zero, "GT"), _c(x, 1), _where(_isnan(x), x, h0)))


def _deg2rad(x):
    return ops.multiply(x, _c(x, math.pi / 180))


def _rad2deg(x):
    return ops.multiply(x, _c(x, 180 / math.pi))


def _ldexp(x, n):
    return ops.multiply(x, ops.power(_c(x, 2), ops.convert(n, x.dtype)))


def _cmp(direction):
    def body(a, b):
        return ops.compare(a, b, direction)

    return body


def _conjugate(x):
    return ops.conj(x) if is_complex(x.dtype) else x


# ufunc -> body(*operands in loop dtype) -> result(s)
ELEMENTWISE = {
    np.add: _add, np.subtract: _subtract, np.multiply: _multiply,
    np.true_divide: _true_divide, np.floor_divide: _floor_divide,
    np.remainder: _remainder, np.fmod: _fmod, np.divmod: _divmod,
    np.power: _power, np.float_power: ops.power,
    np.negative: _negative, np.positive: lambda x: x, np.absolute: _absolute,
    np.fabs: ops.abs, np.sign: _sign, np.square: _square, np.reciprocal: _reciprocal,
    np.exp: ops.exp, np.exp2: _exp2, np.expm1: ops.expm1, np.log: ops.log,
    np.log2: _log2, np.log10: _log10, np.log1p: ops.log1p, np.sqrt: ops.sqrt, np.cbrt: ops.cbrt,
    np.sin: ops.sine, np.cos: ops.cosine, np.tan: ops.tan,
    np.arcsin: ops.asin, np.arccos: ops.acos, np.arctan: ops.atan,
    np.sinh: ops.sinh, np.cosh: ops.cosh, np.tanh: ops.tanh,
    np.arcsinh: ops.asinh, np.arccosh: ops.acosh, np.arctanh: ops.atanh,
    np.arctan2: ops.atan2, np.hypot: _hypot,
    np.deg2rad: _deg2rad, np.rad2deg: _rad2deg,
    np.floor: _int_identity(ops.floor), np.ceil: _int_identity(ops.ceil),
    np.rint: _int_identity(ops.round_nearest_even), np.trunc: _trunc,
    np.maximum: _maximum, np.minimum: _minimum, np.fmax: _fmax, np.fmin: _fmin,
    np.equal: _cmp("EQ"), np.not_equal: _cmp("NE"), np.less: _cmp("LT"),
    np.less_equal: _cmp("LE"), np.greater: _cmp("GT"), np.greater_equal: _cmp("GE"),
    np.logical_and: _logical(ops.and_), np.logical_or: _logical(ops.or_),
    np.logical_xor: _logical(ops.xor), np.logical_not: _logical_not,
    np.bitwise_and: ops.and_, np.bitwise_or: ops.or_, np.bitwise_xor: ops.xor,
    np.invert: _invert, np.left_shift: ops.shift_left, np.right_shift: _right_shift,
    np.isfinite: _isfinite_body, np.isinf: _isinf_body, np.isnan: _isnan_body,
    np.signbit: _signbit, np.copysign: _copysign, np.nextafter: ops.next_after,
    np.logaddexp: _logaddexp, np.logaddexp2: _logaddexp2, np.heaviside: _heaviside,
    np.conjugate: _conjugate, np.ldexp: _ldexp,
}


def _complex_special(ufunc, real_body):
    special = COMPLEX_BODIES[ufunc]

    def body(x):
        return special(x) if is_complex(x.dtype) else real_body(x)

    return body


for _uf in COMPLEX_BODIES:  # complex inputs: C99's values for infinite and NaN parts
    ELEMENTWISE[_uf] = _complex_special(_uf, ELEMENTWISE[_uf])


def apply_ufunc(ufunc: np.ufunc, *inputs, dtype=None, casting="same_kind", where=True, **kw):
    """Apply an elementwise ufunc with NumPy's promotion and broadcasting."""
    if where is not True:
        raise UnsupportedError(f"numpy.{ufunc.__name__}(..., where=...) is not supported inside a trace",
                               hint="use np.where(cond, np.{0}(...), other)".format(ufunc.__name__))
    if kw.pop("signature", None) is not None or kw.pop("order", "K") not in ("K", "C"):
        raise UnsupportedError(f"numpy.{ufunc.__name__}: signature=/order= are not supported")
    kw.pop("subok", None)
    if kw:
        raise UnsupportedError(f"numpy.{ufunc.__name__}: unsupported arguments {sorted(kw)}")
    if len(inputs) != ufunc.nin:
        raise TypeError(f"{ufunc.__name__} takes {ufunc.nin} arguments, got {len(inputs)}")
    body = ELEMENTWISE[ufunc]
    if dtype is not None:
        dt = canonical(dtype)
        loop = resolve_ufunc(ufunc, [dt] * ufunc.nin)
        if loop is None:
            loop = (dt,) * (ufunc.nin + ufunc.nout)
    else:
        loop = resolve_ufunc(ufunc, [dtype_for_promotion(x) for x in inputs])
    if loop is None:
        raise DTypeError(
            f"ufunc '{ufunc.__name__}' not supported for the input types "
            + ", ".join(_show(x) for x in inputs)
        )
    if ufunc is np.power:
        _check_int_power(inputs, loop)
    traced = broadcast_all(*[as_traced(x, loop[i]) for i, x in enumerate(inputs)])
    out = body(*traced)
    if isinstance(out, tuple):
        return tuple(ops.convert(o, d) for o, d in zip(out, loop[ufunc.nin:]))
    out = ops.convert(out, loop[ufunc.nin])
    return _weak_result(out, inputs)


def _weak_result(out: TracedRArray, inputs) -> TracedRArray:
    # An operation on traced Python scalars stays a weak Python scalar (NEP 50).
    if isinstance(out, TracedRNumber) and all(is_weak(x) for x in inputs):
        out.weak = True
    return out


def _show(x) -> str:
    return describe(x) if hasattr(x, "dtype") else type(x).__name__


for _uf in ELEMENTWISE:
    implements(_uf)(lambda *a, _uf=_uf, **k: apply_ufunc(_uf, *a, **k))


def astype(x, dtype) -> TracedRArray:
    """``x.astype(dtype)`` (NumPy's unsafe cast)."""
    return ops.convert(as_traced(x), canonical(dtype))


def inplace_ufunc(ufunc, target: TracedRArray, other):
    """``target op= other``: NumPy casts the result back with same_kind casting, then the
    traced handle is rebound (so argument mutation is seen by the compiler)."""
    result = ufunc(target, other)
    if not np.can_cast(result.dtype, target.dtype, casting="same_kind"):
        raise DTypeError(
            f"Cannot cast ufunc '{ufunc.__name__}' output from {result.dtype} to {target.dtype} "
            f"with casting rule 'same_kind' (in-place update of {describe(target)})"
        )
    from .indexing import setitem

    setitem(target, Ellipsis, result)
    return target

