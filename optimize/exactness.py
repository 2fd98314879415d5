"""The exactness contract of every rewrite the optimizer makes (greedy patterns, equality
saturation rules): one definition, two tags.

A rewrite is **exact** when, for every input of the element types it accepts, the rewritten
program gives bit-identical results to the original: NaN, ±Inf, ±0, subnormals and integer
overflow (which wraps) included, with IEEE-754 arithmetic rounding to nearest even. Otherwise
it is **fast-math**: it runs only with ``PassOptions.fast_math``. Exact rewrites run at every
level, so O1, O2 and O3 give O0's results bit for bit (through XLA: see its caveats below).

What "bit-identical" leaves out, and why:

- NaN payloads and the sign of a NaN: NumPy does not keep them either (``np.negative`` of a
  NaN, a NaN through ``np.add``...), and XLA does not promise them. A NaN must stay a NaN and a
  number must stay that number, bits and sign of zero included; *which* NaN is not observed.
- The schedule of a reduction: StableHLO leaves the order in which ``reduce`` (and the sum of
  ``dot_general``, which XLA starts from +0.0: measured) combines its terms to the
  implementation, and lets it apply the init value any number of times at any place (XLA
  treats it as the body's identity, so ``+0.0`` and ``-0.0`` are both an add's identity). A reduction's result is any result of such a
  schedule; a rewrite of a reduction is exact when every result the rewritten program can give
  is one the original could give. Regrouping the terms of one sum (nested reductions merged,
  ``sum(a*b)`` as a dot, a reduction over size-1 dims as a reshape) is exact; changing the
  terms themselves (moving a factor, a negation or a zero-padding in or out of a sum,
  reassociating a product of matrices, distributing a dot over an add) is not: it rounds,
  overflows, cancels to a zero of the other sign or drops a ``0*Inf`` NaN differently.
- Transcendental functions (exp, log, sin, tanh, pow, ...) mean their correctly rounded
  value, and linear-algebra routines (solves, decompositions) their exact mathematical
  result; XLA's and LAPACK's implementations stay within their error bounds of it. So a
  triangular solve in place of a general one of the same system is exact.
- Subnormals are IEEE's: XLA's CPU code flushes subnormal results and operands of arithmetic
  to zero (measured), so an exact rewrite that removes an op (``x * 1 -> x``) can keep a
  subnormal the original's XLA code would have flushed, as NumPy keeps it.

XLA's own simplifier folds ``x + (+0.0)`` and ``x - (-0.0)`` to ``x`` (measured: -0.0 stays
-0.0, where IEEE and NumPy give +0.0), at every level, O0 included. A rewrite must therefore not
*create* such an op from one XLA computes exactly: ``(+0.0) - b -> (+0.0) + (-b)`` and
``d -> d + 0.0`` (to turn a -0 into +0) are exact on paper and not in XLA's hands; ``(+0.0) -
(-d)`` does the latter and survives.

A product with a diagonal matrix as a broadcast multiply is exact only with what the dense
sum adds put back: NaN where another entry of the contracted line is infinite or NaN (its
``0 * Inf`` term), and +0 for a -0 product (the +0.0 the sum starts from); the greedy
``dot_diag_*`` patterns do that in O(n²), their ``_fast`` variants and the e-graph's rule do not.

Examples: ``x * 1 -> x``, ``x + (-0.0) -> x``, ``x - (+0.0) -> x``, ``-(-x) -> x``,
``a - b <-> a + (-b)``, ``-(a*b) <-> (-a)*b``, ``x / 2^k -> x * 2^-k`` and all data movement are
exact; ``x + (+0.0) -> x`` (-0 + 0 = +0), ``-(a - b) -> b - a`` on floats (a == b: -0 vs +0),
``x * 0 -> 0`` (Inf, NaN, -0), ``x - x -> 0``, ``x / c -> x * (1/c)``, ``sum(-x) -> -sum(x)``
(1 + -1 = +0 but -(+0) = -0), ``sum(x * s) -> sum(x) * s`` and float reassociation are
fast-math. Integer rewrites are exact when they hold in wrapping arithmetic.

``same_bits`` is the comparison this contract means (``eqsat.check`` and the tests use it);
``special_array`` draws the inputs that tell exact rewrites from inexact ones.
"""

from __future__ import annotations

import numpy as np

EXACT = "exact"
FAST_MATH = "fast-math"

# float inputs that tell exact rewrites from inexact ones: the zeros, the infinities, a NaN,
# small integers and halves (sums of them are exact, so any reduction schedule gives the same
# bits); rounding-sensitive values (thirds, tenths), values that overflow when multiplied or
# added, and subnormals. The second half only suits programs without reductions (sums of them
# depend on the schedule).
SPECIAL_VALUES = (0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -3.0, 0.5, -0.5)
ROUNDING_VALUES = (0.1, -1 / 3, 3.0e38, -3.0e38, 1.0e-40, -1.0e-40, 1.0e-45, 1.17549435e-38)


def same_bits(a, b) -> bool:
    """``a`` and ``b`` are the same result under the contract: same shape and dtype, equal
    bits everywhere, except that any NaN equals any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    if a.dtype.kind == "c":
        return same_bits(a.real, b.real) and same_bits(a.imag, b.imag)
    # floats, bfloat16 included (a NumPy kind of its own): NaN where either is, bits elsewhere
    na, nb = np.isnan(a.astype(np.float64)), np.isnan(b.astype(np.float64))
    if not np.array_equal(na, nb):
        return False
    u = np.dtype(f"u{a.dtype.itemsize}")
    ra, rb = np.ascontiguousarray(a).view(u), np.ascontiguousarray(b).view(u)
    return bool(np.array_equal(ra[~na], rb[~nb]))


def special_array(rng: np.random.Generator, shape, dtype, *, reductions: bool = True) -> np.ndarray:
    """An array of ``dtype`` drawn from the contract's test values (``reductions``: only those
    whose sums do not depend on the schedule); integers small or at the type's extremes (so
    that sums and products wrap); booleans uniformly."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [v for v in (0, 1, 2, -1, -3, int(info.min), int(info.max), int(info.max) // 3)
                if info.min <= v <= info.max]
        return np.asarray(np.array(vals, dtype=dt)[rng.integers(0, len(vals), size=shape)])
    pool = SPECIAL_VALUES if reductions else SPECIAL_VALUES + ROUNDING_VALUES
    with np.errstate(all="ignore"):
        return np.asarray(rng.choice(np.array(pool, dtype=np.float64), size=shape)).astype(dt)
