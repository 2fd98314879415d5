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


class EscapedTracerError(ReactantError, RuntimeError):
    """A traced value used after the trace (or the loop body / branch) that made it ended."""


class NonUniformLoopError(ReactantError, ValueError):
    """A loop whose iterations cannot all be one traced body: what a variable refers to (an
    array the caller can see, or a new one) changes from one iteration to the next."""


class AliasError(ReactantError, ValueError):
    """A write through an array whose aliasing the tracer cannot know (it is one of several
    arrays, depending on a traced condition)."""


class ReadOnlyError(ReactantError, ValueError):
    """A write through a read-only view (``np.diagonal``, ``np.broadcast_to``...), which NumPy
    refuses too (with ``ValueError``)."""


class DomainError(ReactantError, ValueError):
    """Operand values NumPy refuses with ValueError (integers to negative integer powers)."""


class PlatformError(ReactantError, RuntimeError):
    """A device platform (``"gpu"``, ``"tpu"``...) or device that this machine does not have."""
