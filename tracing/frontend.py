"""The tracer as ``reactant.ir.frontend`` describes it, for the layers that may not import it
(sharding's constraints, manual computations and collectives)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from jaxlib.mlir import ir

from ..ir import frontend as F
from ..ir.types import spec_of
from .context import active, current
from .numpy_api.convert import as_traced
from .pytree import flatten, unflatten
from .traced import TracedRArray, wrap


class TracingFrontend:
    def active(self) -> bool:
        return active() is not None

    def value(self, x: Any) -> ir.Value:
        return as_traced(x).value

    def wrap(self, value: ir.Value) -> TracedRArray:
        shape, dtype = spec_of(value.type)
        return wrap(value, shape, dtype)

    def emit(self, name: str, operands: Sequence[ir.Value], result_types: Sequence[ir.Type],
             attributes: dict | None = None, regions: int = 0) -> ir.Operation:
        tc = current()
        return ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                   attributes=attributes, regions=regions, loc=tc.location(), ip=tc.ip)

    @contextmanager
    def building(self) -> Iterator[None]:
        tc = current()
        with tc.ip, tc.location():
            yield

    def module(self) -> ir.Module:
        return current().module

    def call_traced(self, fn: Callable, args: Sequence[Any]) -> tuple[list[ir.Value], Callable[[list], Any], bool]:
        from .autograph import convert

        tc = current()
        mark = len(tc.mutations)
        out = convert(fn)(*args)
        leaves, tree = flatten(out, is_leaf=lambda x: isinstance(x, (TracedRArray, np.ndarray)))
        values = [as_traced(leaf).value for leaf in leaves]
        return values, lambda new: unflatten(tree, new), len(tc.mutations) > mark

    def trace_function(self, fn: Callable, arg_types: Sequence[ir.Type], make_args: Callable[[list], tuple],
                       name: str) -> tuple[str, list[ir.Type], Callable[[list], Any], list[ir.Value], bool]:
        from .functions import outline

        tc = current()
        sym = tc.unique_name(name)
        f = tc.new_function(sym, list(arg_types))
        with tc.insert_into(f.entry_block):
            leaves = [self.wrap(a) for a in f.entry_block.arguments]
            values, rebuild, mutated = self.call_traced(fn, make_args(leaves))
        tc.finish_function(f, values)
        captured = outline(f)
        return sym, [v.type for v in values], rebuild, [c.value for c in captured], mutated

    def flatten(self, tree: Any) -> tuple[list, Callable[[list], Any]]:
        leaves, td = flatten(tree, is_leaf=lambda x: isinstance(x, (TracedRArray, np.ndarray)))
        return leaves, lambda new: unflatten(td, new)

    def state(self) -> dict:
        return current().extensions


F.register_frontend(TracingFrontend())
