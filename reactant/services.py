"""What the layers below may ask of reactant (``reactant.ir.frontend.Runtime``): the sharding
layer reshards device arrays and runs ``shard_map`` on them outside a trace."""

from __future__ import annotations

from typing import Any, Callable

from .ir import frontend as F


class ReactantRuntime:
    def reshard(self, x: Any, sharding: Any) -> Any:
        from .arrays import to_rarray

        return to_rarray(x, sharding=sharding)

    def compiled(self, fn: Callable) -> Callable:
        from .compiler import CompiledFunction, Options

        return CompiledFunction(fn, Options(warn_scalars=False))


F.register_runtime(ReactantRuntime())
