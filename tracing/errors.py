"""Errors raised while tracing: subclasses of ``ReactantError`` (``reactant.ir.errors``), each
naming the user's source line."""

from __future__ import annotations

from ..ir.errors import ReactantError, describe, format_location, user_frame, user_location  # noqa: F401


class ShapeError(ReactantError, ValueError):
    """Operand shapes that do not fit an operation (broadcasting, matmul, concatenate...)."""


class DTypeError(ReactantError, TypeError):
    """A dtype XLA cannot hold, or an operation that does not accept the operands' dtypes."""


class IndexError_(ReactantError, IndexError):
    """An index out of range, or an index form that cannot be traced."""


class ConcretizationError(ReactantError, TypeError):
    """A traced value was used where Python needs a concrete value (``if``, ``float()``...)."""


class UnsupportedError(ReactantError, NotImplementedError):
    """A NumPy function or argument that has no traced implementation."""


class ArgumentError(ReactantError, TypeError):
    """An argument of a compiled function that can be neither an input nor a constant."""


class OptionError(ReactantError, ValueError):
    """An option value NumPy rejects with ValueError (an unknown ``norm=``, a size below 1)."""


class DomainError(ReactantError, ValueError):
    """Operand values NumPy refuses with ValueError (integers to negative integer powers)."""
