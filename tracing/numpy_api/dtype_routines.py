"""Data type routines (NumPy's "Data type routines" section) on traced arguments."""

from __future__ import annotations

import numpy as np

from ..dtypes import result_type
from ._registry import implements
from .convert import dtype_for_promotion


@implements(np.result_type)
def result_type_(*arrays_and_dtypes):
    return result_type(*[dtype_for_promotion(a) if not isinstance(a, (np.dtype, type, str)) else a
                         for a in arrays_and_dtypes])
