"""The Ops layer: one function per StableHLO (and CHLO) op on traced arrays.

Each checks its operands (shapes, dtypes: clear errors naming the user's line) and runs the
op's one builder in ``reactant.ir.build`` (which holds the op's shape rule and attributes) at
the trace's insertion point and the user's location (``_core``). Functions take and return
``TracedRArray``s and emit exactly the op they are named after (or nothing, when the op would
be an identity). NumPy semantics (broadcasting, promotion, negative axes) live one level up,
in ``numpy_api``.
"""

from ._core import constant, full  # noqa: F401
from .elementwise import *  # noqa: F401,F403
from .elementwise import abs, complex_, compare, convert, bitcast_convert, select, clamp  # noqa: F401,A004
from .fft import fft  # noqa: F401
from .indexing import gather, scatter  # noqa: F401
from .linalg import cholesky, decomposition, dot_general  # noqa: F401
from .random import rng_bit_generator  # noqa: F401
from .reduction import reduce, reduce_window, sort  # noqa: F401
from .structural import (  # noqa: F401
    broadcast_in_dim, concatenate, dynamic_slice, dynamic_update_slice, iota, pad, reshape,
    reverse, slice, transpose,
)
