"""NumPy semantics for traced arrays: every supported NumPy function and ufunc, registered in
one table (``_registry.FUNCTIONS``) and reached through NumPy's own dispatch protocols."""

from . import construction, creation, dtype_routines, fft, indexing, linalg, linalg_solvers, logic, mathematical  # noqa: F401  (register)
from . import ordering, quantiles, reductions, shape, statistics, ufuncs  # noqa: F401  (register)
from . import strides  # noqa: F401  (register)
from . import folds  # noqa: F401  (after the specialised ufunc methods: fills in the others)
from . import vectorize  # noqa: F401  (register apply_along_axis; guard np.vectorize)
from ._registry import DIRECT, FUNCTIONS, UFUNC_METHODS, dispatch_function, dispatch_ufunc, implements  # noqa: F401
from .convert import as_traced  # noqa: F401
from .ufuncs import inplace_ufunc  # noqa: F401
