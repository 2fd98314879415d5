"""Rewrite rules, as egglog text, over the term language of ``lang.py``.

Three rulesets; every rule names the one it belongs to:

- ``ana`` (``ANA``): analyses, run to saturation before every rewrite iteration: the type of
  every e-class (``tyof``), element counts, constant facts (``is-zero`` for either zero,
  ``is-pzero``/``is-nzero`` for +0.0/-0.0 (integer 0 is both), ``is-one``), identity-matrix
  masks and diagonal matrices (``is-eye``, ``diag-of``), and the cost of every node
  (``cost.py`` adds those).
- ``exact`` (``EXACT``): rewrites that are exact by the contract of ``optimize.exactness``
  (bit-identical results, NaN/Inf/signed zeros included; a reduction's terms may be regrouped,
  its init applied any number of times): commutativity, identities with the right zero,
  data-movement motion, slice pushdown, transposes through and into dot_general, reduce <->
  dot, reductions over unit dims, pads and concatenates of zero blocks.
- ``fast-math`` (``FAST``): rewrites that may round, overflow, cancel to the other zero or drop
  a ``0*Inf`` NaN differently; they run only with ``PassOptions.fast_math``: associativity and
  distributivity of float arithmetic and of dot_general (matrix-chain reassociation), scalar
  factors and negations moved across products and sums, diagonal-matrix and zero-padded
  products computed on the nonzero part only, ``x * 0 -> 0``, ``x - x -> 0``,
  ``-(a - b) -> b - a``, ``x / s -> x * (1/s)``, ``exp(log x) -> x``.

Every rule gets an egglog ``:name`` (``<ruleset>:<hash of its text>``), so a run's match counts
say which rules fired (``rule_name``). Rules that need to compute with shape vectors
(permutations, slice bounds) are generated per rank (up to ``lang.MAX_RANK``) using
``vec-get``/``vec-set``/``vec-of``, so they only fire on ranks they were generated for. Every
rule states the dtype and shape conditions it relies on; when a condition cannot be checked the
rule is not written.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

from ...ir.attrs import top_level_groups
from ..exactness import EXACT
from ..exactness import FAST_MATH as FAST
from .lang import ANA, CTORS, MAX_RANK, RULESETS

# ----------------------------------------------------------------------------- helpers


def _rule(query: list[str] | str, actions: list[str] | str, rs: str) -> str:
    """One rule of ruleset ``rs`` (``EXACT``, ``FAST`` or ``ANA``: no default, each rule
    states its tag), named after its text."""
    if rs not in RULESETS:
        raise ValueError(f"unknown ruleset {rs!r}")
    q = query if isinstance(query, str) else " ".join(query)
    a = actions if isinstance(actions, str) else " ".join(actions)
    body = f"({q}) ({a})"
    return f'(rule {body} :ruleset {rs} :name "{rule_name(rs, body)}")'


def rule_name(rs: str, body: str) -> str:
    return f"{rs}:{hashlib.sha1(body.encode()).hexdigest()[:12]}"


def ruleset_of(rule: str) -> str:
    """The ruleset a rule text names."""
    m = re.search(r":ruleset (\S+)", rule)
    if m is None:
        raise ValueError(f"rule without a ruleset: {rule[:80]}")
    return m.group(1)


def name_of(rule: str) -> str:
    m = re.search(r':name "([^"]+)"', rule)
    if m is None:
        raise ValueError(f"rule without a name: {rule[:80]}")
    return m.group(1)


def _vec(items) -> str:
    return "(vec-of " + " ".join(str(x) for x in items) + ")"


def _iota(r: int) -> str:
    return _vec(range(r))


def _get(v: str, i) -> str:
    return f"(vec-get {v} {i})"


def _ty(x: str, d: str, s: str) -> str:
    """Query fact binding the dtype ``d`` and shape ``s`` of e-class ``x``."""
    return f"(= (TT {d} {s}) (tyof {x}))"


def _rank(s: str, r: int) -> str:
    return f"(= {r} (vec-length {s}))"


def _vop(op: str, a: str, b: str, r: int) -> str:
    """Elementwise ``a op b`` of two length-``r`` vectors."""
    return _vec(f"({op} {_get(a, i)} {_get(b, i)})" for i in range(r))


def _chain_set(base: str, pairs: list[tuple[str, str]]) -> str:
    """``base`` with ``base[i] = v`` applied for each (i, v) in order."""
    out = base
    for i, v in pairs:
        out = f"(vec-set {out} {i} {v})"
    return out


# ----------------------------------------------------------------------------- analyses


def analysis_rules(ranks: tuple[int, ...]) -> list[str]:
    rules = []
    for name, sorts in CTORS.items():
        args = [f"x{i}" for i in range(len(sorts))]
        rules.append(_rule(f"(= e ({name} {' '.join(args)}))", f"(set (tyof e) {args[-1]})", ANA))
    for r in ranks:
        prod = "1"
        for i in range(r):
            prod = f"(* {prod} {_get('s', i)})" if i else _get("s", 0)
        rules.append(_rule(["(= t (TT d s))", _rank("s", r)], f"(set (numel t) {prod})", ANA))
    # constant facts: a float zero of either sign is-zero; +0.0 is-pzero, -0.0 is-nzero (the
    # exact identity of add: x + -0.0 == x for every x); an integer 0 is all three
    rules.append(_rule('(= e (SplatF "0.0" t))', ["(is-zero e)", "(is-pzero e)"], ANA))
    rules.append(_rule('(= e (SplatF "-0.0" t))', ["(is-zero e)", "(is-nzero e)"], ANA))
    rules.append(_rule('(= e (SplatF "1.0" t))', "(is-one e)", ANA))
    rules.append(_rule(["(= e (SplatI 0 t))", "(= (TT d s) t)", "(isint d)"],
                       ["(is-zero e)", "(is-pzero e)", "(is-nzero e)"], ANA))
    rules.append(_rule(["(= e (SplatI 1 t))", "(= (TT d s) t)", "(isint d)"], "(is-one e)", ANA))
    # iota-along: the class is an iota along the given dim (iota, or broadcast of an iota)
    rules.append(_rule("(= e (Iota k t))", "(iota-along e k)", ANA))
    rules.append(_rule(["(= e (Bcast x dims t))", "(iota-along x j)", "(< j (vec-length dims))"],
                       "(iota-along e (vec-get dims j))", ANA))
    # identity-matrix mask: iota(0) == iota(1) on a square matrix (either operand order)
    for a, b in ((0, 1), (1, 0)):
        rules.append(_rule(
            ['(= e (Cmp "EQ" ct x y t))', f"(iota-along x {a})", f"(iota-along y {b})", "(= (TT dt si) t)",
             _rank("si", 2), f"(= {_get('si', 0)} {_get('si', 1)})", _ty("x", "dx", "sx"), _ty("y", "dy", "sy"),
             "(isint dx)"],
            "(is-eye e)", ANA))
    # diag(v) as select(eye, broadcast(v), 0) or convert(eye) * broadcast(v)
    diag_q = ["(is-eye m)", "(= (TT dv sv) (tyof v))", _rank("sv", 1), "(= 1 (vec-length dims))"]
    rules.append(_rule(["(= e (Sel m (Bcast v dims tb) z t))", "(is-zero z)", *diag_q], "(diag-of e v)", ANA))
    rules.append(_rule(['(= e (Bin "multiply" (Cvt m tc) (Bcast v dims tb) t))', *diag_q],
                       "(diag-of e v)", ANA))
    return rules


# ----------------------------------------------------------------------------- main rules


def algebra_rules() -> list[str]:
    R = []
    # commutativity (exact for these ops; XLA's float max/min order -0 < +0 either way)
    R.append(_rule(["(= e (Bin o a b t))", "(commutative o)"], "(union e (Bin o b a t))", EXACT))
    # identities: x * 1, x / 1; x + (-0.0) and x - (+0.0) (x + (+0.0) is +0 for x = -0)
    R.append(_rule(['(= e (Bin "multiply" x c t))', "(is-one c)"], "(union e x)", EXACT))
    R.append(_rule(['(= e (Bin "divide" x c t))', "(is-one c)"], "(union e x)", EXACT))
    R.append(_rule(['(= e (Bin "add" x c t))', "(is-nzero c)"], "(union e x)", EXACT))
    R.append(_rule(['(= e (Bin "subtract" x c t))', "(is-pzero c)"], "(union e x)", EXACT))
    R.append(_rule(['(= e (Bin "subtract" c x t))', "(is-nzero c)", "(= (TT d s) t)", "(isfloat d)"],
                   '(union e (Un "negate" x t))', EXACT))
    R.append(_rule('(= e (Un "negate" (Un "negate" x t2) t))', "(union e x)", EXACT))
    # a + (-b) -> a - b (IEEE's definition of a - b; not the other way, which would make an add
    # of the constant +0.0 out of (+0.0) - b, and XLA folds x + (+0.0) to x); -(a*b) <-> (-a)*b
    # (rounding to nearest is symmetric); -(a - b) -> b - a only for integers (floats: a == b
    # gives -0 vs +0)
    num = ["(= (TT d s) t)", '(!= d "i1")']
    R.append(_rule(['(= e (Bin "add" a (Un "negate" b t2) t))', *num], '(union e (Bin "subtract" a b t))', EXACT))
    R.append(_rule(['(= e (Bin "subtract" a b t))', *num, "(isint d)"], '(union e (Bin "add" a (Un "negate" b t) t))',
                   EXACT))
    R.append(_rule(['(= e (Un "negate" (Bin "multiply" a b t2) t))', *num],
                   '(union e (Bin "multiply" (Un "negate" a t) b t))', EXACT))
    R.append(_rule(['(= e (Bin "multiply" (Un "negate" a t2) b t))', *num],
                   '(union e (Un "negate" (Bin "multiply" a b t) t))', EXACT))
    R.append(_rule(['(= e (Un "negate" (Bin "subtract" a b t2) t))', *num, "(isint d)"],
                   '(union e (Bin "subtract" b a t))', EXACT))
    # integer-only annihilators (exact for wrapping integer arithmetic)
    intq = ["(= (TT d s) t)", "(isint d)"]
    R.append(_rule(['(= e (Bin "multiply" x z t))', "(is-zero z)", *intq], "(union e z)", EXACT))
    R.append(_rule(['(= e (Bin "subtract" x x t))', *intq], "(union e (SplatI 0 t))", EXACT))
    # select / convert
    R.append(_rule("(= e (Sel p x x t))", "(union e x)", EXACT))
    R.append(_rule('(= e (Sel (Un "not" p tp) a b t))', "(union e (Sel p b a t))", EXACT))
    R.append(_rule(["(= e (Cvt x t))", "(= t (tyof x))"], "(union e x)", EXACT))
    R.append(_rule(["(= e (Cvt (Cvt x t1) t))", "(= t (tyof x))", "(= (TT d1 s1) t1)", "(= (TT d s) t)",
                    "(isfloat d)", '(= d1 "f64")'], "(union e x)", EXACT))  # f32 -> f64 -> f32 is exact
    return R


def motion_rules(ranks: tuple[int, ...]) -> list[str]:
    R = []
    # --- splat constants through data movement
    for S in ("SplatF", "SplatI"):
        R.append(_rule(f"(= e (Bcast ({S} v ts) dims t))", f"(union e ({S} v t))", EXACT))
        R.append(_rule(f"(= e (Reshape ({S} v ts) t))", f"(union e ({S} v t))", EXACT))
        R.append(_rule(f"(= e (Transpose ({S} v ts) p t))", f"(union e ({S} v t))", EXACT))
        R.append(_rule(f"(= e (Reverse ({S} v ts) p t))", f"(union e ({S} v t))", EXACT))
        R.append(_rule(f"(= e (Slice ({S} v ts) a b c t))", f"(union e ({S} v t))", EXACT))
        R.append(_rule(f"(= e (Pad ({S} v ts) ({S} v tv) a b c t))", f"(union e ({S} v t))", EXACT))
    # --- reshape
    R.append(_rule("(= e (Reshape (Reshape x t1) t))", "(union e (Reshape x t))", EXACT))
    R.append(_rule(["(= e (Reshape x t))", "(= t (tyof x))"], "(union e x)", EXACT))
    # --- broadcast_in_dim
    for r in ranks:
        R.append(_rule(["(= e (Bcast x dims t))", "(= t (tyof x))", f"(= dims {_iota(r)})"], "(union e x)", EXACT))
        if r >= 1:
            comp = _vec(_get("d2", _get("d1", j)) for j in range(r))
            R.append(_rule(["(= e (Bcast (Bcast x d1 t1) d2 t))", _rank("d1", r)],
                           f"(union e (Bcast x {comp} t))", EXACT))
    # reshape that inserts one unit dim == broadcast_in_dim
    for rx in ranks:
        if rx + 1 > MAX_RANK:
            continue
        for q in range(rx + 1):
            tgt = [_get("sx", j) for j in range(q)] + ["1"] + [_get("sx", j) for j in range(q, rx)]
            dims = [j for j in range(q)] + [j + 1 for j in range(q, rx)]
            R.append(_rule(["(= e (Reshape x t))", _ty("x", "dx", "sx"), _rank("sx", rx), "(= t (TT d st))",
                            f"(= st {_vec(tgt)})"], f"(union e (Bcast x {_vec(dims)} t))", EXACT))
    # elementwise of same-shaped broadcasts -> broadcast of elementwise (less work)
    same = [_ty("a", "da", "sa"), _ty("b", "db", "sb"), "(= sa sb)", "(= (TT d s) t)"]
    R.append(_rule(["(= e (Bin o (Bcast a dims ta) (Bcast b dims tb) t))", *same],
                   "(union e (Bcast (Bin o a b (TT d sa)) dims t))", EXACT))
    R.append(_rule(["(= e (Cmp o ct (Bcast a dims ta) (Bcast b dims tb) t))", *same],
                   "(union e (Bcast (Cmp o ct a b (TT d sa)) dims t))", EXACT))
    R.append(_rule(["(= e (Un o (Bcast a dims ta) t))", _ty("a", "da", "sa"), "(= (TT d s) t)"],
                   "(union e (Bcast (Un o a (TT d sa)) dims t))", EXACT))
    R.append(_rule(["(= e (Cvt (Bcast a dims ta) t))", _ty("a", "da", "sa"), "(= (TT d s) t)"],
                   "(union e (Bcast (Cvt a (TT d sa)) dims t))", EXACT))
    for S in ("SplatF", "SplatI"):
        sp = [_ty("a", "da", "sa"), "(= (TT dz sz) tz)", "(= (TT d s) t)"]
        R.append(_rule([f"(= e (Bin o (Bcast a dims ta) ({S} v tz) t))", *sp],
                       f"(union e (Bcast (Bin o a ({S} v (TT dz sa)) (TT d sa)) dims t))", EXACT))
        R.append(_rule([f"(= e (Bin o ({S} v tz) (Bcast a dims ta) t))", *sp],
                       f"(union e (Bcast (Bin o ({S} v (TT dz sa)) a (TT d sa)) dims t))", EXACT))
    # --- transpose
    for r in ranks:
        if r == 0:
            continue
        R.append(_rule(["(= e (Transpose x p t))", f"(= p {_iota(r)})"], "(union e x)", EXACT))
        comp = _vec(_get("p1", _get("p2", i)) for i in range(r))
        R.append(_rule(["(= e (Transpose (Transpose x p1 t1) p2 t))", _rank("p1", r)],
                       f"(union e (Transpose x {comp} t))", EXACT))
        # transpose(broadcast(x, dims), p) -> broadcast(x, pinv[dims]) when still increasing
        pinv = _chain_set("p", [(_get("p", i), str(i)) for i in range(r)])
        for rx in ranks:
            if rx > r:
                continue
            nd = [_get("pinv", _get("dims", j)) for j in range(rx)]
            q = ["(= e (Transpose (Bcast x dims tb) p t))", _rank("p", r), _rank("dims", rx),
                 f"(= pinv {pinv})"] + [f"(< {nd[j]} {nd[j + 1]})" for j in range(rx - 1)]
            R.append(_rule(q, f"(union e (Bcast x {_vec(nd)} t))", EXACT))
    # transpose <-> elementwise (both directions)
    R.append(_rule(["(= e (Transpose (Bin o a b tb) p t))", "(= (TT d s) t)", _ty("a", "da", "sa"),
                    _ty("b", "db", "sb")],
                   "(union e (Bin o (Transpose a p (TT da s)) (Transpose b p (TT db s)) t))", EXACT))
    R.append(_rule(["(= e (Bin o (Transpose a p ta) (Transpose b p tb) t))", "(= (TT d s) t)",
                    _ty("a", "da", "sa"), _ty("b", "db", "sb"), "(= sa sb)"],
                   "(union e (Transpose (Bin o a b (TT d sa)) p t))", EXACT))
    R.append(_rule(["(= e (Transpose (Un o a tu) p t))", "(= (TT d s) t)", _ty("a", "da", "sa")],
                   "(union e (Un o (Transpose a p (TT da s)) t))", EXACT))
    R.append(_rule(["(= e (Un o (Transpose a p ta) t))", "(= (TT d s) t)", _ty("a", "da", "sa")],
                   "(union e (Transpose (Un o a (TT d sa)) p t))", EXACT))
    R.append(_rule(["(= e (Transpose (Cvt a tu) p t))", _ty("a", "da", "sa"), "(= (TT d s) t)"],
                   "(union e (Cvt (Transpose a p (TT da s)) t))", EXACT))
    for S in ("SplatF", "SplatI"):
        R.append(_rule([f"(= e (Bin o (Transpose a p ta) ({S} v tz) t))", "(= (TT d s) t)",
                        _ty("a", "da", "sa"), "(= (TT dz sz) tz)"],
                       f"(union e (Transpose (Bin o a ({S} v (TT dz sa)) (TT d sa)) p t))", EXACT))
        R.append(_rule([f"(= e (Bin o ({S} v tz) (Transpose a p ta) t))", "(= (TT d s) t)",
                        _ty("a", "da", "sa"), "(= (TT dz sz) tz)"],
                       f"(union e (Transpose (Bin o ({S} v (TT dz sa)) a (TT d sa)) p t))", EXACT))
    return R


def slice_rules(ranks: tuple[int, ...]) -> list[str]:
    R = []
    S = "(Slice {x} st li sd {t})"
    t2 = ["(= (TT d s2) t)"]
    # elementwise
    R.append(_rule([f"(= e {S.format(x='(Bin o a b tb)', t='t')})", *t2, _ty("a", "da", "sa"), _ty("b", "db", "sb")],
                   "(union e (Bin o (Slice a st li sd (TT da s2)) (Slice b st li sd (TT db s2)) t))", EXACT))
    R.append(_rule([f"(= e {S.format(x='(Un o a tu)', t='t')})", *t2, _ty("a", "da", "sa")],
                   "(union e (Un o (Slice a st li sd (TT da s2)) t))", EXACT))
    R.append(_rule([f"(= e {S.format(x='(Cvt a tu)', t='t')})", *t2, _ty("a", "da", "sa")],
                   "(union e (Cvt (Slice a st li sd (TT da s2)) t))", EXACT))
    R.append(_rule([f"(= e {S.format(x='(Cmp o ct a b tb)', t='t')})", *t2, _ty("a", "da", "sa"),
                    _ty("b", "db", "sb")],
                   "(union e (Cmp o ct (Slice a st li sd (TT da s2)) (Slice b st li sd (TT db s2)) t))", EXACT))
    # select with a full-shaped predicate / a scalar predicate
    R.append(_rule([f"(= e {S.format(x='(Sel p a b tb)', t='t')})", *t2, _ty("p", "dp", "sp"),
                    _ty("a", "da", "sa"), "(= sp sa)"],
                   "(union e (Sel (Slice p st li sd (TT dp s2)) (Slice a st li sd (TT d s2)) "
                   "(Slice b st li sd (TT d s2)) t))", EXACT))
    R.append(_rule([f"(= e {S.format(x='(Sel p a b tb)', t='t')})", *t2, _ty("p", "dp", "sp"),
                    _rank("sp", 0), _ty("a", "da", "sa"), "(> (vec-length sa) 0)"],
                   "(union e (Sel p (Slice a st li sd (TT d s2)) (Slice b st li sd (TT d s2)) t))", EXACT))
    for r in ranks:
        if r == 0:
            continue
        # full slice -> x
        R.append(_rule([f"(= e {S.format(x='x', t='t')})", _ty("x", "dx", "sx"), _rank("sx", r),
                        f"(= st {_vec([0] * r)})", "(= li sx)", f"(= sd {_vec([1] * r)})"], "(union e x)", EXACT))
        # slice of slice
        ns, nl, nd = [], [], []
        for i in range(r):
            s1, d1 = _get("st1", i), _get("sd1", i)
            s2, l2, d2 = _get("st", i), _get("li", i), _get("sd", i)
            start = f"(+ {s1} (* {s2} {d1}))"
            cnt = f"(/ (+ (- {l2} {s2}) (- {d2} 1)) {d2})"
            ns.append(start)
            nd.append(f"(* {d1} {d2})")
            nl.append(f"(+ {start} (+ (* (- {cnt} 1) (* {d1} {d2})) 1))")
        R.append(_rule([f"(= e {S.format(x='(Slice x st1 li1 sd1 t1)', t='t')})", _rank("st", r),
                        "(= n (numel t))", "(> n 0)"],
                       f"(union e (Slice x {_vec(ns)} {_vec(nl)} {_vec(nd)} t))", EXACT))
        # slice of transpose -> transpose of slice
        p_pairs = lambda v: [(_get("p", i), _get(v, i)) for i in range(r)]  # noqa: E731
        R.append(_rule([f"(= e {S.format(x='(Transpose x p tt)', t='t')})", *t2, _rank("p", r), _ty("x", "dx", "sx")],
                       f"(union e (Transpose (Slice x {_chain_set('st', p_pairs('st'))} "
                       f"{_chain_set('li', p_pairs('li'))} {_chain_set('sd', p_pairs('sd'))} "
                       f"(TT dx {_chain_set('s2', p_pairs('s2'))})) p t))", EXACT))
        # slice of broadcast_in_dim -> broadcast_in_dim of slice (size-1 operand dims stay [0:1])
        for rx in ranks:
            if rx > r:
                continue
            if rx == 0:
                R.append(_rule([f"(= e {S.format(x='(Bcast x dims tb)', t='t')})", _rank("st", r),
                                _ty("x", "dx", "sx"), _rank("sx", 0)], "(union e (Bcast x dims t))", EXACT))
                continue
            xs, xl, xd, xsh = [], [], [], []
            for j in range(rx):
                dj = _get("dims", j)
                m = f"(min (- {_get('sx', j)} 1) 1)"
                xs.append(f"(* {_get('st', dj)} {m})")
                xl.append(f"(+ 1 (* (- {_get('li', dj)} 1) {m}))")
                xd.append(f"(+ 1 (* (- {_get('sd', dj)} 1) {m}))")
                xsh.append(f"(+ 1 (* (- {_get('s2', dj)} 1) {m}))")
            R.append(_rule([f"(= e {S.format(x='(Bcast x dims tb)', t='t')})", *t2, _rank("st", r),
                            _ty("x", "dx", "sx"), _rank("sx", rx), "(= nx (numel (tyof x)))", "(> nx 0)"],
                           f"(union e (Bcast (Slice x {_vec(xs)} {_vec(xl)} {_vec(xd)} (TT dx {_vec(xsh)})) dims t))", EXACT))
    # slice of concatenate (binary, along c)
    cq = [f"(= e {S.format(x='(Concat a b c tc)', t='t')})", *t2, _ty("a", "da", "sa"),
          "(= na (vec-get sa c))", "(= sc (vec-get st c))", "(= lc (vec-get li c))"]
    R.append(_rule(cq + ["(<= lc na)"], "(union e (Slice a st li sd t))", EXACT))
    R.append(_rule(cq + ["(>= sc na)"],
                   "(union e (Slice b (vec-set st c (- sc na)) (vec-set li c (- lc na)) sd t))", EXACT))
    R.append(_rule(cq + ["(< sc na)", "(> lc na)", "(= 1 (vec-get sd c))"],
                   "(union e (Concat (Slice a st (vec-set li c na) sd (TT d (vec-set s2 c (- na sc)))) "
                   "(Slice b (vec-set st c 0) (vec-set li c (- lc na)) sd (TT d (vec-set s2 c (- lc na)))) c t))", EXACT))
    # slice of dot_general: matrix x matrix, matrix x vector, vector x matrix (no batch dims)
    dq = [f"(= e {S.format(x='(Dot A B lb rb lc rc tx)', t='t')})", *t2, "(= lb (vec-of))", "(= rb (vec-of))",
          "(= 1 (vec-length lc))", "(= ca (vec-get lc 0))", "(= cb (vec-get rc 0))",
          _ty("A", "dA", "sA"), _ty("B", "dB", "sB")]

    def sl(v, sv, r_, f, o):  # slice operand v (shape sv, rank r_) along its dim f like output dim o
        start = f"(vec-set {_vec([0] * r_)} {f} {_get('st', o)})"
        lim = f"(vec-set {sv} {f} {_get('li', o)})"
        strd = f"(vec-set {_vec([1] * r_)} {f} {_get('sd', o)})"
        return start, lim, strd, f"(vec-set {sv} {f} {_get('s2', o)})"

    a = sl("A", "sA", 2, "(- 1 ca)", 0)
    b = sl("B", "sB", 2, "(- 1 cb)", 1)
    R.append(_rule(dq + [_rank("sA", 2), _rank("sB", 2)],
                   f"(union e (Dot (Slice A {a[0]} {a[1]} {a[2]} (TT dA {a[3]})) "
                   f"(Slice B {b[0]} {b[1]} {b[2]} (TT dB {b[3]})) lb rb lc rc t))", EXACT))
    R.append(_rule(dq + [_rank("sA", 2), _rank("sB", 1)],
                   f"(union e (Dot (Slice A {a[0]} {a[1]} {a[2]} (TT dA {a[3]})) B lb rb lc rc t))", EXACT))
    b1 = sl("B", "sB", 2, "(- 1 cb)", 0)
    R.append(_rule(dq + [_rank("sA", 1), _rank("sB", 2)],
                   f"(union e (Dot A (Slice B {b1[0]} {b1[1]} {b1[2]} (TT dB {b1[3]})) lb rb lc rc t))", EXACT))
    return R


def dot_rules() -> list[str]:
    R = []
    E = "(vec-of)"

    def mat(A, B, lc, rc, t):
        return f"(Dot {A} {B} {E} {E} (vec-of {lc}) (vec-of {rc}) {t})"

    def q_mat(name_e, A, B, ca, cb, t, lc="lc", rc="rc"):
        return [f"(= {name_e} (Dot {A} {B} lb{name_e} rb{name_e} {lc} {rc} {t}))", f"(= lb{name_e} {E})",
                f"(= rb{name_e} {E})", f"(= 1 (vec-length {lc}))", f"(= {ca} (vec-get {lc} 0))",
                f"(= {cb} (vec-get {rc} 0))"]

    def tys(*xs):
        out = []
        for x in xs:
            out += [f"(= (TT d s{x}) (tyof {x}))", _rank(f"s{x}", 2)]
        return out

    # transpose(A'B') == B'^T A'^T: swap operands and contracting dims (both directions)
    R.append(_rule(["(= e (Transpose X (vec-of 1 0) t))", *q_mat("X", "A", "B", "ca", "cb", "tx"),
                    *tys("A", "B"), "(= (TT d s) t)"], f"(union e {mat('B', 'A', 'cb', 'ca', 't')})", EXACT))
    R.append(_rule([*q_mat("e", "A", "B", "ca", "cb", "t"), *tys("A", "B"), "(= (TT d s) t)"],
                   f"(union e (Transpose {mat('B', 'A', 'cb', 'ca', '(TT d (vec-of (vec-get s 1) (vec-get s 0)))')}"
                   " (vec-of 1 0) t))", EXACT))
    # fold transposed operands into the contracting dims
    R.append(_rule([*q_mat("e", "(Transpose A (vec-of 1 0) ta)", "B", "ca", "cb", "t"), *tys("A", "B")],
                   f"(union e {mat('A', 'B', '(- 1 ca)', 'cb', 't')})", EXACT))
    R.append(_rule([*q_mat("e", "A", "(Transpose B (vec-of 1 0) tb)", "ca", "cb", "t"), *tys("A", "B")],
                   f"(union e {mat('A', 'B', 'ca', '(- 1 cb)', 't')})", EXACT))
    # reassociation (A'B')C' <-> A'(B'C') (fast-math: the products round and overflow
    # differently). Notation: a matrix dot D(X, Y, cx, cy) is X'Y' with
    # X' = X if cx = 1 else X^T (lhs role) and Y' = Y if cy = 0 else Y^T (rhs role); moving an
    # operand between roles flips its index (c -> 1 - c), transposing a product swaps its
    # operands (D(X,Y,cx,cy)^T = D(Y,X,cy,cx)). Each orientation was checked numerically.
    inner_q = q_mat("X", "A", "B", "ca", "cb", "tx", "lcx", "rcx")
    R.append(_rule([*q_mat("e", "X", "C", "cx", "cc", "t"), *inner_q, "(= cx 1)", *tys("A", "B", "C")],
                   f"(union e {mat('A', mat('B', 'C', '(- 1 cb)', 'cc', '(TT d (vec-of (vec-get sB cb) (vec-get sC (- 1 cc))))'), 'ca', '0', 't')})", FAST))
    R.append(_rule([*q_mat("e", "X", "C", "cx", "cc", "t"), *inner_q, "(= cx 0)", *tys("A", "B", "C")],
                   f"(union e {mat('B', mat('A', 'C', '(- 1 ca)', 'cc', '(TT d (vec-of (vec-get sA ca) (vec-get sC (- 1 cc))))'), 'cb', '0', 't')})", FAST))
    inner_q = q_mat("Y", "B", "C", "cb", "cc", "ty", "lcy", "rcy")
    R.append(_rule([*q_mat("e", "A", "Y", "ca", "cy", "t"), *inner_q, "(= cy 0)", *tys("A", "B", "C")],
                   f"(union e {mat(mat('A', 'B', 'ca', '(- 1 cb)', '(TT d (vec-of (vec-get sA (- 1 ca)) (vec-get sB cb)))'), 'C', '1', 'cc', 't')})", FAST))
    R.append(_rule([*q_mat("e", "A", "Y", "ca", "cy", "t"), *inner_q, "(= cy 1)", *tys("A", "B", "C")],
                   f"(union e {mat(mat('A', 'C', 'ca', '(- 1 cc)', '(TT d (vec-of (vec-get sA (- 1 ca)) (vec-get sC cc)))'), 'B', '1', 'cb', 't')})", FAST))
    # distributivity: dot(a,b) + dot(a,c) -> dot(a, b + c) (any dimension numbers, same dtypes;
    # fast-math: b + c rounds, overflows or cancels before the products)
    for op in ("add", "subtract"):
        for side in ("l", "r"):
            if side == "l":
                q = f'(= e (Bin "{op}" (Dot a b lb rb lc rc t) (Dot a c lb rb lc rc t) t))'
                act = f'(union e (Dot a (Bin "{op}" b c tb) lb rb lc rc t))'
                conds = ["(= tb (tyof b))", "(= tb (tyof c))"]
            else:
                q = f'(= e (Bin "{op}" (Dot b a lb rb lc rc t) (Dot c a lb rb lc rc t) t))'
                act = f'(union e (Dot (Bin "{op}" b c tb) a lb rb lc rc t))'
                conds = ["(= tb (tyof b))", "(= tb (tyof c))"]
            R.append(_rule([q, *conds, "(= (TT d s) t)", "(= (TT d sb) tb)"], act, FAST))
    # scalar factors move across a dot (both ways): exact for integers (wrapping arithmetic is
    # a ring), fast-math for floats (s * (a*b) rounds and overflows unlike (s*a) * b)
    for S, rs in (("SplatF", FAST), ("SplatI", EXACT)):
        x = f'(Bin "multiply" a ({S} v ta) ta)'
        for side in ("l", "r"):
            ab = "a b" if side == "l" else "b a"
            lhs = f"(Dot {x} b lb rb lc rc t)" if side == "l" else f"(Dot b {x} lb rb lc rc t)"
            R.append(_rule([f"(= e {lhs})", "(= (TT d s) t)", "(= (TT d sa) ta)"],
                           f'(union e (Bin "multiply" (Dot {ab} lb rb lc rc t) ({S} v t) t))', rs))
            R.append(_rule([f'(= e (Bin "multiply" (Dot {ab} lb rb lc rc t) ({S} v t) t))', "(= (TT d s) t)",
                            "(= ta (tyof a))", "(= (TT d sa) ta)"], f"(union e {lhs})", rs))
    R += _full_contraction_rules(E, tys)
    # a dot_general without contracting or batch dims of a scalar is a broadcast multiply
    R.append(_rule(["(= e (Dot a b E E E E t))", f"(= E {E})", _ty("a", "d", "sa"), _rank("sa", 0),
                    _ty("b", "d", "sb"), "(= t (TT d sb))"],
                   '(union e (Bin "multiply" (Bcast a (vec-of) t) b t))', EXACT))
    R.append(_rule(["(= e (Dot a b E E E E t))", f"(= E {E})", _ty("b", "d", "sb"), _rank("sb", 0),
                    _ty("a", "d", "sa"), "(= t (TT d sa))"],
                   '(union e (Bin "multiply" a (Bcast b (vec-of) t) t))', EXACT))
    # outer product of two vectors
    R.append(_rule(["(= e (Dot a b E E E E t))", f"(= E {E})", _ty("a", "d", "sa"), _rank("sa", 1),
                    _ty("b", "d", "sb"), _rank("sb", 1), "(= t (TT d s))"],
                   '(union e (Bin "multiply" (Bcast a (vec-of 0) t) (Bcast b (vec-of 1) t) t))', EXACT))
    # diag(v) @ A -> v[:, None] * A' ; A @ diag(v) -> A' * v[None, :] (fast-math: the dense
    # product's 0 * Inf terms are NaN, and its +0 terms turn a -0 product into +0)
    dq = ["(diag-of D v)", "(= lb (vec-of))", "(= rb (vec-of))", "(= 1 (vec-length lc))",
          "(= ca (vec-get lc 0))", "(= cb (vec-get rc 0))", "(= (TT d s) t)", _ty("v", "d", "sv")]
    R.append(_rule(["(= e (Dot D A lb rb lc rc t))", *dq, _ty("A", "d", "sA"), _rank("sA", 2), "(= cb 0)"],
                   '(union e (Bin "multiply" (Bcast v (vec-of 0) t) A t))', FAST))
    R.append(_rule(["(= e (Dot D A lb rb lc rc t))", *dq, _ty("A", "d", "sA"), _rank("sA", 2), "(= cb 1)"],
                   '(union e (Bin "multiply" (Bcast v (vec-of 0) t) (Transpose A (vec-of 1 0) t) t))', FAST))
    R.append(_rule(["(= e (Dot A D lb rb lc rc t))", *dq, _ty("A", "d", "sA"), _rank("sA", 2), "(= ca 1)"],
                   '(union e (Bin "multiply" A (Bcast v (vec-of 1) t) t))', FAST))
    R.append(_rule(["(= e (Dot A D lb rb lc rc t))", *dq, _ty("A", "d", "sA"), _rank("sA", 2), "(= ca 0)"],
                   '(union e (Bin "multiply" (Transpose A (vec-of 1 0) t) (Bcast v (vec-of 1) t) t))', FAST))
    return R


def _full_contraction_rules(E: str, tys) -> list[str]:
    """Full contractions <M, G> = sum(M * G) of two matrices (a scalar dot_general): they are
    symmetric, and a product inside one can be rotated onto the other operand,
    <P'Q', G> = <Q', P'^T G>. Pairings: "same" (lc = rc = [0, 1]) is <M, G>, "cross"
    (lc = [1, 0], rc = [0, 1]) is <M^T, G>. Gradients are full of these: the loss
    <(AB)^T C, G> becomes <C, (AB) G>, reusing a product the gradient needs anyway."""
    R = []
    SAME, CROSS = ("(vec-of 0 1)", "(vec-of 0 1)"), ("(vec-of 1 0)", "(vec-of 0 1)")
    full = ["(= (TT d st) t)", _rank("st", 0)]
    R.append(_rule(["(= e (Dot a b E E lc rc t))", f"(= E {E})", *full, _rank("lc", 2)],
                   "(union e (Dot b a E E rc lc t))", EXACT))
    R.append(_rule(["(= e (Dot a b E E (vec-of 1 0) (vec-of 1 0) t))", f"(= E {E})", *full],
                   f"(union e (Dot a b E E {SAME[0]} {SAME[1]} t))", EXACT))
    R.append(_rule(["(= e (Dot a b E E (vec-of 0 1) (vec-of 1 0) t))", f"(= E {E})", *full],
                   f"(union e (Dot a b E E {CROSS[0]} {CROSS[1]} t))", EXACT))
    # <G, X + Y> = <G, X> + <G, Y> (scalar adds: lets each term rotate onto its own operand;
    # fast-math, as any distributivity)
    for op in ("add", "subtract"):
        R.append(_rule([f'(= e (Dot a (Bin "{op}" x y tb) E E lc rc t))', f"(= E {E})", *full],
                       f'(union e (Bin "{op}" (Dot a x E E lc rc t) (Dot a y E E lc rc t) t))', FAST))
        R.append(_rule([f'(= e (Dot (Bin "{op}" x y ta) b E E lc rc t))', f"(= E {E})", *full],
                       f'(union e (Bin "{op}" (Dot x b E E lc rc t) (Dot y b E E lc rc t) t))', FAST))
    for pairing in ("same", "cross"):
        plc, prc = SAME if pairing == "same" else CROSS
        q = [f"(= e (Dot M G E E {plc} {prc} t))", f"(= E {E})", *full,
             "(= M (Dot P Q lbm rbm lcm rcm tm))", f"(= lbm {E})", f"(= rbm {E})", "(= 1 (vec-length lcm))",
             "(= cp (vec-get lcm 0))", "(= cq (vec-get rcm 0))", *tys("P", "Q", "G")]
        # write the contracted matrix as L' R' (lhs role L with contracting cl, rhs role R
        # with cr): M itself for "same"; M^T = Q'^T P'^T, i.e. L = Q (cl = cq), R = P (cr = cp),
        # for "cross". Then <L'R', G> = <R', Y> with Y = L'^T G = dot(L, G, [1 - cl], [0]),
        # and <R', Y> is a "same" contraction of R if cr = 0 (R' = R), else "cross".
        # (A reassociation: fast-math.)
        L, Rv, cl, cr = ("P", "Q", "cp", "cq") if pairing == "same" else ("Q", "P", "cq", "cp")
        y = f"(Dot {L} G {E} {E} (vec-of (- 1 {cl})) (vec-of 0) (TT d (vec-of (vec-get s{L} {cl}) (vec-get sG 1))))"
        R.append(_rule(q + [f"(= {cr} 0)"], f"(union e (Dot {Rv} {y} {E} {E} {SAME[0]} {SAME[1]} t))", FAST))
        R.append(_rule(q + [f"(= {cr} 1)"], f"(union e (Dot {Rv} {y} {E} {E} {CROSS[0]} {CROSS[1]} t))", FAST))
    return R


def pad_rules(ranks: tuple[int, ...]) -> list[str]:
    """Edge padding (no interior padding, non-negative edges)."""
    R = []
    for r in ranks:
        if r == 0:
            continue
        zeros, ones = _vec([0] * r), _vec([1] * r)
        # pad by nothing
        R.append(_rule(["(= e (Pad x v lo hi it t))", f"(= lo {zeros})", f"(= hi {zeros})", f"(= it {zeros})"],
                       "(union e x)", EXACT))
        nonneg = [f"(>= {_get(v, i)} 0)" for v in ("lo", "hi") for i in range(r)]
        base = ["(= e (Pad x pv lo hi it t))", f"(= it {zeros})", _rank("lo", r), *nonneg,
                _ty("x", "dx", "sx"), "(= (TT d s) t)"]
        # zero-padding along one dim == concatenation with zero blocks (XLA fuses the latter
        # much better when the padded value is computed; measured 2-3x on stencil gradients)
        for S in ("SplatF",) if r <= 3 else ():
            for dd in range(r):
                only = [f"(= {_get(v, i)} 0)" for v in ("lo", "hi") for i in range(r) if i != dd]
                lo_d, hi_d = _get("lo", dd), _get("hi", dd)
                blk_lo = f"({S} pv_ (TT d (vec-set s {dd} {lo_d})))"
                blk_hi = f"({S} pv_ (TT d (vec-set s {dd} {hi_d})))"
                q = [*base, f"(= pv ({S} pv_ tv))", *only]
                mid = f"(TT d (vec-set s {dd} (+ {lo_d} {_get('sx', dd)})))"
                R.append(_rule(q + [f"(> {lo_d} 0)", f"(> {hi_d} 0)"],
                               f"(union e (Concat (Concat {blk_lo} x {dd} {mid}) {blk_hi} {dd} t))", EXACT))
                R.append(_rule(q + [f"(> {lo_d} 0)", f"(= {hi_d} 0)"], f"(union e (Concat {blk_lo} x {dd} t))", EXACT))
                R.append(_rule(q + [f"(= {lo_d} 0)", f"(> {hi_d} 0)"], f"(union e (Concat x {blk_hi} {dd} t))", EXACT))
        # pad(pad(x)) with the same value -> one pad
        R.append(_rule(["(= e (Pad (Pad x pv lo1 hi1 it1 t1) pv lo hi it t))", f"(= it {zeros})", f"(= it1 {zeros})",
                        _rank("lo", r), *nonneg, *[f"(>= {_get(v, i)} 0)" for v in ("lo1", "hi1") for i in range(r)]],
                       f"(union e (Pad x pv {_vop('+', 'lo1', 'lo', r)} {_vop('+', 'hi1', 'hi', r)} it t))", EXACT))
        # slice of a pad that stays inside the original operand -> slice of the operand
        inside = [f"(>= {_get('st', i)} {_get('lo', i)})" for i in range(r)]
        inside += [f"(<= {_get('li', i)} (+ {_get('lo', i)} {_get('sx', i)}))" for i in range(r)]
        R.append(_rule(["(= e (Slice (Pad x pv lo hi it tp) st li sd t))", f"(= it {zeros})", _rank("lo", r),
                        _ty("x", "dx", "sx"), *inside],
                       f"(union e (Slice x {_vop('-', 'st', 'lo', r)} {_vop('-', 'li', 'lo', r)} sd t))", EXACT))
        # zero-padded x times y -> pad(x * y[inside]); the product is only needed where x is
        # (fast-math: the padding lanes were 0 * y, NaN for an infinite y, -0 for a negative one)
        sl_lim = _vop("-", "sy", "hi", r)
        R.append(_rule(['(= e (Bin "multiply" (Pad x pv lo hi it tp) y t))', "(is-zero pv)", f"(= it {zeros})",
                        _rank("lo", r), *nonneg, _ty("x", "dx", "sx"), _ty("y", "dy", "sy"), "(= (TT d s) t)"],
                       f'(union e (Pad (Bin "multiply" x (Slice y lo {sl_lim} {ones} (TT dy sx)) (TT d sx)) pv lo hi it t))', FAST))
        # sum of a zero-padded value over every dim == sum of the value: exact when the padding
        # adds -0.0s (nothing); +0.0s turn a -0 sum into +0 (fast-math)
        q = ['(= e (Reduce "add" (Pad x pv lo hi it tp) z dims t))', "(is-zero z)", f"(= it {zeros})",
             f"(= dims {_iota(r)})", _rank("lo", r), *nonneg]
        R.append(_rule(q + ["(is-nzero pv)"], '(union e (Reduce "add" x z dims t))', EXACT))
        R.append(_rule(q + ["(is-zero pv)"], '(union e (Reduce "add" x z dims t))', FAST))
        # elementwise op of two pads with the same edges -> pad of the op: exact when
        # op(pv, pv2) is pv bit for bit for the three ops, i.e. both +0.0 (or integer 0)
        for op in ("add", "subtract", "multiply"):
            for z, rs in (("(is-pzero {})", EXACT), ("(is-zero {})", FAST)):
                R.append(_rule([f'(= e (Bin "{op}" (Pad a pv lo hi it ta) (Pad b pv2 lo hi it tb) t))',
                                z.format("pv"), z.format("pv2"), f"(= it {zeros})", _rank("lo", r), *nonneg,
                                _ty("a", "da", "sa"), _ty("b", "db", "sb"), "(= sa sb)", "(= (TT d s) t)"],
                               f'(union e (Pad (Bin "{op}" a b (TT d sa)) pv lo hi it t))', rs))
    return R


def reduce_rules(ranks: tuple[int, ...]) -> list[str]:
    R = []
    # reduce over size-1 dims with the identity as init value == reshape
    ident = {"add": "(is-zero z)", "multiply": "(is-one z)", "maximum": '(= z (SplatF "-inf" tz))',
             "minimum": '(= z (SplatF "inf" tz))'}
    for kind, cond in ident.items():
        for nd in (1, 2):
            q = [f'(= e (Reduce "{kind}" x z dims t))', cond, _rank("dims", nd), _ty("x", "dx", "sx")]
            q += [f"(= 1 (vec-get sx {_get('dims', j)}))" for j in range(nd)]
            R.append(_rule(q, "(union e (Reshape x t))", EXACT))
    # diag(A'B')[i] = sum_k A'[i,k] B'[k,i]: only the diagonal of a masked product is needed.
    # Each masked row sum also adds n - 1 zeros z: -0.0 changes nothing; +0.0 turns a -0 sum
    # into +0 (fast-math: "+ 0.0" after the row sums would do the same, but XLA folds it away)
    for ca in (0, 1):
        for cb in (0, 1):
            P = "A" if ca == 1 else "(Transpose A (vec-of 1 0) (TT d (vec-of n k)))"
            Q = "B" if cb == 1 else "(Transpose B (vec-of 1 0) (TT d (vec-of n k)))"
            for rd in (0, 1):
                q = [f"(= e (Reduce \"add\" (Sel m X z tsel) zi (vec-of {rd}) t))", "(is-eye m)",
                     "(is-zero zi)", "(= X (Dot A B lb rb lc rc tx))", "(= lb (vec-of))", "(= rb (vec-of))",
                     "(= 1 (vec-length lc))", f"(= {ca} (vec-get lc 0))", f"(= {cb} (vec-get rc 0))",
                     _ty("A", "d", "sA"), _rank("sA", 2), _ty("B", "d", "sB"), _rank("sB", 2),
                     f"(= n (vec-get sA {1 - ca}))", f"(= k (vec-get sA {ca}))", "(> k 0)"]
                rows = f'(Reduce "add" (Bin "multiply" {P} {Q} (TT d (vec-of n k))) zi (vec-of 1) t)'
                R.append(_rule(q + ["(is-nzero z)"], f"(union e {rows})", EXACT))
                R.append(_rule(q + ["(is-zero z)"], f"(union e {rows})", FAST))
    # sum(a*b) over everything <-> dot_general (the cost model picks); batched row dots -> sums.
    # A dot's sum starts from +0.0 (XLA's, measured: the sum of -0.0 products is +0.0), so a
    # reduce becomes a dot only from a +0.0 init (or integer 0)
    for zq, rs in (("(is-pzero z)", EXACT), ("(is-zero z)", FAST)):
        zf = [zq, "(= (TT d st) t)"]
        R.append(_rule(['(= e (Reduce "add" (Bin "multiply" a b tm) z (vec-of 0) t))', *zf, _ty("a", "d", "sa"),
                        _rank("sa", 1), _ty("b", "d", "sb")],
                       "(union e (Dot a b (vec-of) (vec-of) (vec-of 0) (vec-of 0) t))", rs))
        R.append(_rule(['(= e (Reduce "add" (Bin "multiply" a b tm) z (vec-of 0 1) t))', *zf, _ty("a", "d", "sa"),
                        _rank("sa", 2), _ty("b", "d", "sb")],
                       "(union e (Dot a b (vec-of) (vec-of) (vec-of 0 1) (vec-of 0 1) t))", rs))
    # scalar factors and negations out of sums: reductions of the same product scaled
    # differently become one reduction (fast-math: s * sum(a) rounds and overflows unlike
    # sum(s * a), and -sum(a) is -0 where sum(-a) cancels to +0)
    sc = ["(= S (Bcast s E ts))", "(= E (vec-of))", _ty("s", "d", "ss"), _rank("ss", 0), "(is-zero z)",
          "(= (TT d st) t)"]
    R.append(_rule(['(= e (Reduce "add" (Bin "multiply" a S tm) z dims t))', *sc],
                   '(union e (Bin "multiply" (Reduce "add" a z dims t) (Bcast s E t) t))', FAST))
    R.append(_rule(['(= e (Reduce "add" (Bin "divide" a S tm) z dims t))', *sc],
                   '(union e (Bin "divide" (Reduce "add" a z dims t) (Bcast s E t) t))', FAST))
    R.append(_rule(['(= e (Reduce "add" (Un "negate" a tm) z dims t))', "(is-zero z)"],
                   '(union e (Un "negate" (Reduce "add" a z dims t) t))', FAST))
    # (a row-wise sum of products is *not* turned into a batched dot: XLA runs those slower
    # than its fused reduction; the other direction below is kept)
    for S, z in (("SplatF", '"0.0"'), ("SplatI", "0")):
        fl = "(isfloat d)" if S == "SplatF" else "(isint d)"
        R.append(_rule(["(= e (Dot a b E E (vec-of 0) (vec-of 0) t))", "(= E (vec-of))", _ty("a", "d", "sa"),
                        _rank("sa", 1), _ty("b", "d", "sb"), "(= (TT d st) t)", fl],
                       f'(union e (Reduce "add" (Bin "multiply" a b (TT d sa)) ({S} {z} t) (vec-of 0) t))', EXACT))
        R.append(_rule(["(= e (Dot a b E E (vec-of 0 1) (vec-of 0 1) t))", "(= E (vec-of))", _ty("a", "d", "sa"),
                        _rank("sa", 2), _ty("b", "d", "sb"), "(= sa sb)", "(= (TT d st) t)", fl],
                       f'(union e (Reduce "add" (Bin "multiply" a b (TT d sa)) ({S} {z} (TT d (vec-of))) (vec-of 0 1) t))', EXACT))
        for keep, red in ((0, 1), (1, 0)):
            R.append(_rule([f"(= e (Dot a b (vec-of {keep}) (vec-of {keep}) (vec-of {red}) (vec-of {red}) t))",
                            _ty("a", "d", "sa"), _rank("sa", 2), _ty("b", "d", "sb"), "(= sa sb)",
                            "(= (TT d st) t)", fl],
                           f'(union e (Reduce "add" (Bin "multiply" a b (TT d sa)) ({S} {z} (TT d (vec-of))) (vec-of {red}) t))', EXACT))
    return R


def fast_math_rules() -> list[str]:
    """Float rewrites that are fast-math only (the other families tag theirs in place)."""
    R = []
    fq = ["(= (TT d s) t)", "(isfloat d)"]
    # identities with the other zero: x + (+0.0) is +0 for x = -0; x - (-0.0) likewise;
    # (+0.0) - x is +0 for x = +0; -(a - b) is -0 but b - a is +0 for a == b
    R.append(_rule(['(= e (Bin "add" x c t))', "(is-zero c)", *fq], "(union e x)", FAST))
    R.append(_rule(['(= e (Bin "subtract" x c t))', "(is-zero c)", *fq], "(union e x)", FAST))
    R.append(_rule(['(= e (Bin "subtract" c x t))', "(is-zero c)", *fq], '(union e (Un "negate" x t))', FAST))
    R.append(_rule(['(= e (Un "negate" (Bin "subtract" a b t2) t))', *fq], '(union e (Bin "subtract" b a t))', FAST))
    # a - b -> a + (-b): exact, but (+0.0) - b would become an add of +0.0, which XLA folds
    R.append(_rule(['(= e (Bin "subtract" a b t))', *fq], '(union e (Bin "add" a (Un "negate" b t) t))', FAST))
    # a broadcast scalar factor floats to the top of a product: (a*S)*b -> (a*b)*S, and
    # (a/S)*b -> (a*b)/S (lets sums of differently scaled products share)
    scal = ["(= S (Bcast sv E ts))", "(= E (vec-of))", *fq]
    R.append(_rule(['(= e (Bin "multiply" (Bin "multiply" a S t2) b t))', *scal],
                   '(union e (Bin "multiply" (Bin "multiply" a b t) S t))', FAST))
    R.append(_rule(['(= e (Bin "multiply" (Bin "divide" a S t2) b t))', *scal],
                   '(union e (Bin "divide" (Bin "multiply" a b t) S t))', FAST))
    # associativity, distributivity, annihilators, inverse functions
    for op in ("add", "multiply"):
        R.append(_rule([f'(= e (Bin "{op}" (Bin "{op}" a b t) c t))', *fq], f'(union e (Bin "{op}" a (Bin "{op}" b c t) t))', FAST))
        R.append(_rule([f'(= e (Bin "{op}" a (Bin "{op}" b c t) t))', *fq], f'(union e (Bin "{op}" (Bin "{op}" a b t) c t))', FAST))
    R.append(_rule(['(= e (Bin "add" (Bin "multiply" a b t) (Bin "multiply" a c t) t))', *fq],
                   '(union e (Bin "multiply" a (Bin "add" b c t) t))', FAST))
    R.append(_rule(['(= e (Bin "multiply" x z t))', "(is-zero z)", *fq], '(union e (SplatF "0.0" t))', FAST))
    R.append(_rule(['(= e (Bin "subtract" x x t))', *fq], '(union e (SplatF "0.0" t))', FAST))
    R.append(_rule(['(= e (Bin "divide" x (Bcast sv E ts) t))', "(= E (vec-of))", "(= tv (tyof sv))", *fq],
                   '(union e (Bin "multiply" x (Bcast (Bin "divide" (SplatF "1.0" tv) sv tv) E t) t))', FAST))
    R.append(_rule(['(= e (Un "exponential" (Un "log" x t1) t))', *fq], "(union e x)", FAST))
    R.append(_rule(['(= e (Un "log" (Un "exponential" x t1) t))', *fq], "(union e x)", FAST))
    return R


@lru_cache(maxsize=64)
def all_rules(ranks: tuple[int, ...], fast_math: bool) -> tuple[str, ...]:
    """Every rule (analysis + rewrites) for a segment whose tensors have ``ranks``; the
    fast-math ones only with ``fast_math``."""
    ranks = tuple(sorted(set(ranks) | {0, 1, 2}))
    ranks = tuple(r for r in ranks if r <= MAX_RANK)
    rules = analysis_rules(ranks) + algebra_rules() + motion_rules(ranks) + slice_rules(ranks)
    rules += dot_rules() + reduce_rules(ranks) + pad_rules(ranks) + fast_math_rules()
    return tuple(r for r in rules if fast_math or ruleset_of(r) != FAST)


# -- the rules a segment can use --------------------------------------------------------------
_CTOR_REF = re.compile(r"\(([A-Z][A-Za-z0-9_]*)")


def _facts_and_actions(rule: str) -> tuple[str, str]:
    """The two top-level s-expressions of ``(rule (facts...) (actions...) ...)``."""
    parts = top_level_groups(rule[len("(rule"):], "(", ")", quote='"') if rule.startswith("(rule ") else []
    if len(parts) < 2:
        raise ValueError(f"not a (rule facts actions) command: {rule[:80]}")
    return parts[0], parts[1]


@lru_cache(maxsize=64)
def _rule_ctors(ranks: tuple[int, ...], fast_math: bool) -> tuple[tuple[frozenset, frozenset], ...]:
    """Per rule: the op constructors its pattern needs, and those its actions create."""
    out = []
    for rule in all_rules(ranks, fast_math):
        facts, actions = _facts_and_actions(rule)
        out.append((frozenset(_CTOR_REF.findall(facts)) & CTORS.keys(),
                    frozenset(_CTOR_REF.findall(actions)) & CTORS.keys()))
    return tuple(out)


@lru_cache(maxsize=256)
def rules_for(present: frozenset, ranks: tuple[int, ...], fast_math: bool) -> tuple[frozenset, tuple[str, ...]]:
    """The rules that can fire on a segment made of the op constructors ``present``: those
    whose patterns use only constructors that are present or created by such rules (a
    fixpoint). The others never match, so leaving them out changes no result, only the
    e-graph's size: egglog's push/pop clone it at a cost that grows with the rules (17 ms for
    all 288, 1.6 ms for 50). Returns (the constructors that can appear, the rules)."""
    info = _rule_ctors(ranks, fast_math)
    have = set(present)
    chosen = [False] * len(info)
    grew = True
    while grew:
        grew = False
        for i, (lhs, rhs) in enumerate(info):
            if not chosen[i] and lhs <= have:
                chosen[i] = True
                if not rhs <= have:
                    have |= rhs
                    grew = True
    rules = all_rules(ranks, fast_math)
    return frozenset(have), tuple(r for r, c in zip(rules, chosen) if c)
