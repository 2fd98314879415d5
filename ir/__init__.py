"""reactant.ir: the StableHLO knowledge shared by the tracer, the optimizer and the sharding
layer (each imports this package; it imports none of them).

- ``context``: MLIR contexts with the dialects we use, parsing, printing, module functions;
- ``types``: NumPy dtypes <-> element types, tensor types and shapes of values;
- ``attrs``: op attributes and constants (``DenseElementsAttr``) in both directions;
- ``values``: the def-use graph (defining ops, uses, region membership);
- ``contracts``: discardable facts a producer tells the optimizer;
- ``markers``: the automatic-differentiation marker vocabulary.
"""

from . import attrs, context, contracts, markers, types, values  # noqa: F401
