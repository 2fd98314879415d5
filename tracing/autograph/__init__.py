"""Ordinary Python control flow on traced values, by source transformation.

A compiled function (and every user function it calls) is rewritten, once, so that

    if test: ...  else: ...          ->  carried = _rt.if_stmt(test, true_fn, false_fn, carried)
    while test: ...                  ->  carried = _rt.while_stmt(cond_fn, body_fn, carried)
    for i in range(a, b, c): ...     ->  carried = _rt.for_range((a, b, c), body_fn, carried)

where ``carried`` are the variables the statement assigns that are read afterwards. At run
time (that is, while tracing) each helper keeps Python's semantics when the test or the
bounds are concrete (a ``for`` over a range of plain ints is unrolled), and emits
``stablehlo.if`` / ``while`` through ``control_flow`` when they are traced. Statements whose
bodies ``return``/``break``/``continue`` are left as they are, with a guard that raises a
clear error naming the line if their test turns out to be traced.

The modules: ``converter`` (``convert``: parse, rewrite, compile, cache) runs the rewrites
``early_returns``, ``host_writes`` and ``transformer`` (which reads blocks through
``analysis`` and builds nodes with ``nodes``); converted code calls ``runtime`` (``_rt``),
whose helpers live in ``branches``, ``loops``, ``places``, ``expressions`` and
``numpy_calls``; ``user_code`` says which functions are converted, ``undefined`` is the value
of a variable a traced statement could not define.
"""

from ..loop_rolling import KeepLoop, UnrollLoop, keep, unroll  # noqa: F401  (public markers)
from .converter import convert  # noqa: F401
from .undefined import Undefined  # noqa: F401
