"""reactant.ir: the StableHLO knowledge shared by the tracer, the optimizer and the sharding
layer (each imports this package; it imports none of them).

- ``context``: MLIR contexts with the dialects we use, parsing, printing, module functions;
- ``types``: NumPy dtypes <-> element types, tensor types and shapes of values;
- ``attrs``: op attributes and constants (``DenseElementsAttr``) in both directions;
- ``values``: the def-use graph (defining ops, uses, region membership);
- ``shapes`` and ``build``: one shape rule and one builder per StableHLO op;
- ``opinfo``, ``kernels`` and ``evaluate``: the table of op facts, exact NumPy kernels, the
  evaluator built on them;
- ``regions`` and ``loops``: walking, cloning and inlining regions; the while-loop analysis;
- ``contracts`` and ``markers``: facts a producer tells the optimizer; the AD marker vocabulary.
"""

from . import (attrs, build, context, contracts, evaluate, kernels, loops, markers, opinfo,  # noqa: F401
               regions, shapes, types, values)
