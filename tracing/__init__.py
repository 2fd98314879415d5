"""reactant.tracing: traced arrays, the trace context, the StableHLO op builders (``ops``),
NumPy dispatch (``numpy_api``), pytrees and the function tracer."""

from . import frontend, numpy_api, ops  # noqa: F401
from .context import TraceContext, active, current, tracing  # noqa: F401
from .errors import (  # noqa: F401
    ArgumentError, ConcretizationError, DTypeError, IndexError_, ReactantError, ShapeError,
    UnsupportedError,
)
from .traced import TracedRArray, TracedRNumber  # noqa: F401
