"""Attributes by which a producer of StableHLO (the tracer) tells the optimizer facts the IR
cannot express. They are discardable: a pass that rebuilds an op without them only loses the
fact, never correctness, and ``strip_contract_attrs`` removes them before XLA sees the module.
"""

from __future__ import annotations

from jaxlib.mlir import ir

# unit attribute on stablehlo.scatter: every update window lies inside the operand (NumPy
# indexing, where an out-of-range index is an error), so derivative rules need no bounds mask
IN_BOUNDS = "reactant.indices_in_bounds"

ALL = (IN_BOUNDS,)


def strip_contract_attrs(module: ir.Module) -> None:
    """Remove the contract attributes from every op of ``module``."""

    def visit(op):
        attrs = op.attributes
        for name in ALL:
            if name in attrs:
                del attrs[name]
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
