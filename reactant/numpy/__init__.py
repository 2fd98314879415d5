"""``reactant.numpy``: an Array API standard (2024.12) namespace for reactant's arrays, with
the ``linalg`` and ``fft`` extensions. ``x.__array_namespace__()`` of a device array
(``ConcreteRArray``) or a traced array (``TracedRArray``) returns it, so code written against
the standard runs eagerly on device arrays and inside ``reactant.compile``d functions:

    import reactant, reactant.numpy as xp
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]])      # a device array
    xp.linalg.vector_norm(xp.permute_dims(x, (1, 0)), axis=0)

Eagerly, creation functions give device arrays and operations run as compiled (cached)
programs; inside a compiled function they give traced values. Functions whose result shape
depends on the values (``nonzero``, ``unique_*``) work only eagerly. See docs/array_api.md.
"""

from __future__ import annotations

import math as _math

from ..tracing.namespace import register_array_namespace as _register
from ._creation import (
    arange, asarray, empty, empty_like, eye, from_dlpack, full, full_like, linspace, meshgrid, ones,
    ones_like, tril, triu, zeros, zeros_like,
)
from ._dtypes import (
    astype, bool, can_cast, complex64, complex128, finfo, float32, float64, iinfo, int8, int16, int32,
    int64, isdtype, result_type, uint8, uint16, uint32, uint64,
)
from ._elementwise import *  # noqa: F401,F403
from ._elementwise import _BINARY, _UNARY, ceil, clip, floor, imag, real, round, trunc  # noqa: F401
from ._info import __array_namespace_info__
from ._linear_algebra import matmul, matrix_transpose, tensordot, vecdot
from ._manipulation import (
    broadcast_arrays, broadcast_to, concat, expand_dims, flip, moveaxis, permute_dims, repeat, reshape,
    roll, squeeze, stack, tile, unstack,
)
from ._searching import (
    argmax, argmin, argsort, count_nonzero, nonzero, searchsorted, sort, take, take_along_axis, unique_all,
    unique_counts, unique_inverse, unique_values, where,
)
from ._statistics import (
    all, any, cumulative_prod, cumulative_sum, diff, max, mean, min, prod, std, sum, var,
)
from . import fft, linalg  # noqa: E402  (the extensions)

__array_api_version__ = "2024.12"

e = _math.e
inf = _math.inf
nan = _math.nan
pi = _math.pi
newaxis = None

_register(__import__(__name__, fromlist=["*"]))
