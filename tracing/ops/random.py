"""``stablehlo.rng_bit_generator``: random bits from an explicit state (the state in, the
advanced state and the bits out; the same state always gives the same bits)."""

from __future__ import annotations

import numpy as np

from ...ir import build as B
from ..context import current
from ..errors import DTypeError, describe
from ..traced import TracedRArray
from ._core import build_n

ALGORITHM = "THREE_FRY"  # counter-based, the same bits on every backend; state: uint64[2]
STATE_SHAPE = (2,)


def rng_bit_generator(state: TracedRArray, shape: tuple[int, ...], dtype) -> tuple[TracedRArray, TracedRArray]:
    """(the next state, ``shape`` random bits of unsigned integer ``dtype``)."""
    dt = np.dtype(dtype)
    if state.shape != STATE_SHAPE or state.dtype != np.uint64:
        raise DTypeError(f"a generator state is uint64{list(STATE_SHAPE)}, got {describe(state)}")
    if dt.kind != "u":
        raise DTypeError(f"random bits are unsigned integers, not {dt}")
    new_state, bits = build_n(B.rng_bit_generator, state.value, tuple(shape), current().elem_type(dt), ALGORITHM)
    return new_state, bits
