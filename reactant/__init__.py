"""reactant: trace unmodified NumPy code into StableHLO, optimize it, and run it with XLA.

    import numpy as np, reactant
    x = reactant.to_rarray(np.random.rand(256, 64).astype(np.float32))

    @reactant.compile
    def f(x):
        return np.tanh(x).sum(axis=1)

    f(x)                        # ConcreteRArray; np.asarray(...) gives the values
    reactant.code_hlo(f, x)     # the StableHLO that runs
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # XLA's startup INFO lines; before jax loads

from . import tracing  # noqa: F401  (reactant.tracing)
from . import distributed  # noqa: F401  (reactant.distributed: multi-process runs)
from .arrays import ConcreteRArray, ConcreteRNumber, to_rarray
from . import autodiff as _autodiff
from .autodiff import *  # noqa: F401,F403  (modes, activities, autodiff and its conveniences)
from . import custom_derivatives as _custom_derivatives
from .custom_derivatives import checkpoint, custom_jvp, custom_vjp, remat, stop_gradient  # noqa: F401
from .compiler import CompiledFunction, code_hlo, code_xla, compile, cost_analysis
from .export import Exported, ExportError, deserialize, export  # noqa: F401  (reactant.export: programs without their source)
from . import cache, config  # noqa: F401  (the persistent compile cache and its settings)
from . import services as _services  # noqa: F401  (what the sharding layer asks of reactant)
from . import random  # noqa: F401  (reactant.random: generators with device state)
from . import numpy  # noqa: F401  (reactant.numpy: the Array API namespace of our arrays)
from . import sharding  # noqa: F401  (reactant.sharding)
from .sharding import ShardingError
from .runtime import devices
from .profiler import annotate, profile
from .tracing.loop_rolling import keep, unroll
from .tracing.control_flow import cond, fori_loop, scan, switch, while_loop
from .tracing import TracedRArray, TracedRNumber
from .tracing.errors import (
    AliasError,
    ArgumentError,
    ConcretizationError,
    DTypeError,
    EscapedTracerError,
    NonUniformLoopError,
    PlatformError,
    ReactantError,
    ReadOnlyError,
    ShapeError,
    UnsupportedError,
)
from .tracing.errors import IndexError_ as IndexError  # noqa: A004
from .tracing.pytree import register_pytree_node

__all__ = _autodiff.__all__ + [
    "cond", "fori_loop", "keep", "scan", "switch", "unroll", "while_loop",
    "AliasError", "ArgumentError", "CompiledFunction", "EscapedTracerError", "NonUniformLoopError", "ConcreteRArray", "ConcreteRNumber", "ConcretizationError",
    "DTypeError", "IndexError", "ReactantError", "ShapeError", "ShardingError", "TracedRArray", "TracedRNumber",
    "UnsupportedError", "annotate", "profile", "PlatformError", "ReadOnlyError", "code_hlo", "code_xla", "compile", "cost_analysis", "devices", "distributed", "numpy", "random", "register_pytree_node",
    "to_rarray",
]
__all__ += ["ExportError", "Exported", "deserialize", "export"]  # (reactant.export)
__all__ += _custom_derivatives.__all__  # (stop_gradient, custom_vjp, custom_jvp, checkpoint, remat)
from .transforms import vmap  # noqa: E402  (reactant.vmap)
__all__ += ["vmap"]
__version__ = "0.1.0"
