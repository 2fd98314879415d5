"""Equality saturation over StableHLO with egglog.

The pass ``eqsat`` (and ``eqsat_o3``, with four times the budgets) encodes each function
body (and while/if/case region) segment by segment into an egglog e-graph (``encode``;
term language in ``lang``), runs the rewrite rules (``rules``) one iteration at a time
under node, time and iteration limits, extracts the cheapest equivalent program with a
fusion-aware cost model calibrated on this machine (``cost``; DAG-aware extraction in
``extract``) and rebuilds it in place (``rebuild``) when it is strictly cheaper.
``check`` is a NumPy interpreter of the term language that tests use to verify that every
e-class holds equivalent terms.

Rule families (``rules.py``), each rule tagged ``exact`` or ``fast-math`` by the contract of
``optimize.exactness`` (its ruleset is named after the tag; fast-math ones are loaded only
with ``PassOptions.fast_math``):

- algebra, exact: commutativity of add/mul/max/min/and/or/xor; ``x*1``, ``x/1``,
  ``x+(-0.0)``, ``x-(+0.0)``, ``(-0.0)-x``, ``--x``; ``a+(-b) -> a-b``; ``-(a*b) <-> (-a)*b``;
  integer ``-(a-b)``, ``x*0``, ``x-x``; ``select(p,x,x)``, ``select(not p,a,b)``; identity and
  f64 round-trip converts;
- data movement, exact: splats through broadcast/reshape/transpose/reverse/slice/pad;
  reshape∘reshape, identity reshape/broadcast/transpose, broadcast∘broadcast,
  transpose∘transpose, transpose(broadcast), unit-dim reshape == broadcast, elementwise of
  same broadcasts / of splats -> broadcast of elementwise, transposes pushed into and pulled
  out of elementwise ops;
- slice pushdown, exact: through elementwise/compare/select/convert, broadcast, transpose,
  slice, concatenate (either side or straddling), matmul / matvec / vecmat, pads; full slices
  removed;
- dot_general: exact: transpose(dot) <-> swapped dot, transposes folded into contracting dims,
  integer scalar factors, scalar/outer-product dots -> broadcast multiply, symmetric full
  contractions; fast-math: matrix-chain reassociation, distributivity, float scalar factors,
  diag(v) @ A and A @ diag(v) -> broadcast multiply, rotation of a product onto the other
  operand of a full contraction (<P'Q', G> = <Q', P'^T G>) and its distribution over sums;
- reduce: exact: over unit dims -> reshape, full sums of products <-> dot (from a +0.0 init),
  batched row dots -> fused sums, diag(A'B') -> row sums of products (-0.0 mask); fast-math:
  the same from a +0.0 mask or any zero init, scalar factors and negation out of sums;
- pads, exact: no-op pads, edge zero-pads <-> concatenates with zero blocks, pad∘pad, slices
  inside a pad, sums of -0.0-padded values, elementwise of equal +0.0 pads; fast-math:
  ``pad(x,0)*y -> pad(x*y[inside],0)``, sums of +0.0-padded values, other pads' elementwise;
- fast-math only: associativity of float add/mul, ``a*b+a*c -> a*(b+c)``, float ``x+(+0.0)``,
  ``x-(-0.0)``, ``(+0.0)-x``, ``-(a-b)``, ``x*0``, ``x-x``, ``a-b -> a+(-b)``,
  ``(a*S)*b -> (a*b)*S``, ``exp(log x)``, ``log(exp x)``, ``x/s -> x*(1/s)``.

Each rule has an egglog ``:name``; ``SegmentStat.matched`` counts the rules that fired.

Budgets come from ``PassOptions`` and count work, never time, so the optimized module is the
same on a loaded and an idle machine: ``saturation_node_limit`` (e-nodes per segment),
``saturation_iterations``, ``eqsat_max_segment_ops``, ``eqsat_dag_extract_limit``,
``eqsat_extract_steps`` (cost evaluations of the extraction's local search per segment),
``eqsat_pass_node_budget`` (e-nodes summed over a pass); ``eqsat_min_cost_ns`` leaves alone
the segments the cost model predicts to take less per call (times their loops' trip counts),
which have less to win than saturating them costs (``REACTANT_LOG=1`` says how many), and
``eqsat_calls`` bounds a segment's e-nodes by what it can win back over that many calls;
``fast_math`` adds the fast-math rules. ``last_report()`` returns the statistics of the latest run.
"""

from __future__ import annotations

from ..passes import PassOptions, register_pass
from .driver import EqsatReport, Limits, SegmentStat, run_eqsat  # noqa: F401

_last: list[EqsatReport | None] = [None]


def limits_from_options(options: PassOptions, scale: float = 1.0) -> Limits:
    """The budgets of a pass: ``options``' (``scale`` > 1: larger, for ``eqsat_o3``)."""
    more = 2 if scale > 1 else 1
    return Limits(
        node_limit=int(options.saturation_node_limit * scale),
        iterations=options.saturation_iterations * more,
        max_segment_ops=options.eqsat_max_segment_ops * more,
        pass_node_budget=int(options.eqsat_pass_node_budget * scale),
        fast_math=options.fast_math,
        dag_extract_limit=options.eqsat_dag_extract_limit,
        extract_steps=int(options.eqsat_extract_steps * scale),
        min_cost=options.eqsat_min_cost_ns * 1_000_000,
        calls=options.eqsat_calls,
    )


def last_report() -> EqsatReport | None:
    """Statistics of the most recent eqsat pass in this process."""
    return _last[0]


@register_pass("eqsat")
def eqsat_pass(module, options: PassOptions) -> bool:
    """Equality saturation with a calibrated cost model (default budgets)."""
    _last[0] = run_eqsat(module, limits_from_options(options))
    return _last[0].replaced > 0


@register_pass("eqsat_o3")
def eqsat_o3_pass(module, options: PassOptions) -> bool:
    """Equality saturation with four times the budgets of ``eqsat``."""
    _last[0] = run_eqsat(module, limits_from_options(options, scale=4.0))
    return _last[0].replaced > 0
