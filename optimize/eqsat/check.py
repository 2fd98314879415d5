"""A NumPy interpreter for the term language, to check e-graphs for soundness.

``check_classes(frozen, encoded, inputs)`` evaluates every node of every e-class bottom-up
(leaves from ``inputs``: slot -> array) and reports the classes whose nodes disagree. A
rule that unions non-equivalent terms shows up here on small random inputs, long before a
wrong program runs. Used by the tests; also handy when writing new rules.

Two modes. The default carries floats in float64 and compares with a tolerance (every rule
holds up to rounding: fast-math ones too). ``exact=True`` checks the contract of exact rules
(``optimize.exactness``): every node in its own element type, IEEE arithmetic as XLA does it
(``maximum``/``minimum`` order -0 < +0 and propagate NaN), results compared bit for bit with
``same_bits``. Its reductions fold their terms in one order without the init value (XLA treats
the init as the body's identity; a dot's sum likewise), so they are exact only on inputs whose
sums do not depend on the order (``exactness.special_array(..., reductions=True)``).
"""

from __future__ import annotations

import numpy as np

from ...ir.evaluate import evaluate_op
from ...ir.kernels import convert, iota
from ...ir.types import dtype_from_name
from ..exactness import same_bits


def _ieee_minmax(fn, is_max: bool):
    """XLA's float maximum/minimum: NaN propagates, -0 < +0 (NumPy picks an operand on ties)."""

    def f(a, b):
        r = fn(a, b)
        if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
            z = (a == 0) & (b == 0)
            if z.any():
                neg = (np.signbit(a) & np.signbit(b)) if is_max else (np.signbit(a) | np.signbit(b))
                r = np.where(z, np.where(neg, -np.zeros_like(a), np.zeros_like(a)), r)
        return r

    return f


_EXACT_BIN = {"maximum": _ieee_minmax(np.maximum, True), "minimum": _ieee_minmax(np.minimum, False)}
_FOLD = {"add": np.add, "multiply": np.multiply, "maximum": _EXACT_BIN["maximum"],
         "minimum": _EXACT_BIN["minimum"], "and": np.bitwise_and, "or": np.bitwise_or}


def _fold(x: np.ndarray, init, dims, kind: str):
    """A reduction of ``x`` over ``dims`` folded left to right in x's own type, the init used
    only for an empty one (it is the body's identity); None for a body it does not know."""
    fn = _FOLD.get(kind)
    if fn is None or (x.dtype == np.bool_ and kind in ("add", "multiply")):
        return None
    if x.dtype == np.bool_:
        fn = np.logical_and if kind == "and" else np.logical_or if kind == "or" else fn
    dims = sorted(dims)
    kept = [i for i in range(x.ndim) if i not in dims]
    out_shape = [x.shape[i] for i in kept]
    flat = np.transpose(x, dims + kept).reshape((-1, *out_shape))
    if flat.shape[0] == 0:
        return np.full(out_shape, np.asarray(init).reshape(-1)[0], x.dtype)
    with np.errstate(all="ignore"):
        acc = flat[0]
        for row in flat[1:]:
            acc = fn(acc, row)
    return np.asarray(acc, dtype=x.dtype).reshape(out_shape)


def _exact_dot(a: np.ndarray, b: np.ndarray, lb, rb, lc, rc):
    """dot_general as the sum of the products (each rounded in the operands' type), folded
    like ``_fold``; +0 for an empty contraction."""
    lf = [i for i in range(a.ndim) if i not in lb and i not in lc]
    rf = [i for i in range(b.ndim) if i not in rb and i not in rc]
    nb = int(np.prod([a.shape[i] for i in lb], dtype=np.int64))
    m = int(np.prod([a.shape[i] for i in lf], dtype=np.int64))
    k = int(np.prod([a.shape[i] for i in lc], dtype=np.int64))
    n = int(np.prod([b.shape[i] for i in rf], dtype=np.int64))
    at = np.transpose(a, list(lb) + lf + list(lc)).reshape(nb, m, k)
    bt = np.transpose(b, list(rb) + list(rc) + rf).reshape(nb, k, n)
    with np.errstate(all="ignore"):
        prods = at[:, :, :, None] * bt[:, None, :, :]  # (nb, m, k, n)
    out = _fold(prods, np.zeros((), a.dtype), [2], "add")
    return out.reshape([a.shape[i] for i in lb] + [a.shape[i] for i in lf] + [b.shape[i] for i in rf])


def evaluate(ctor: str, args: list, child, dense: dict, *, exact: bool = False):
    """Value of one node by the project's evaluator (``reactant.ir.evaluate``); None where the
    op's result is not defined exactly. ``child(class_id)`` gives the children's values.
    Floats are carried in float64 (rules hold up to rounding, which the tolerance of
    ``check_classes`` absorbs), or with ``exact`` in the node's own type (see the module)."""
    d, shape = args[-1]
    own = dtype_from_name(d)
    fdt = own if exact else np.dtype(np.float64) if d in ("f16", "bf16", "f32", "f64") else own
    with np.errstate(all="ignore"):
        if ctor == "SplatF":
            return np.full(shape, float(args[0]), np.float64).astype(fdt)
        if ctor == "SplatI":
            return np.full(shape, args[0], fdt)
        if ctor == "Dense":
            return np.asarray(dense[args[0]], dtype=fdt).reshape(shape)
        if ctor == "Iota":
            return iota(shape, args[0], fdt)
        if exact and ctor == "Bin" and args[0] in _EXACT_BIN:
            return _EXACT_BIN[args[0]](child(args[1]), child(args[2]))
        if exact and ctor == "Cvt":
            x = child(args[0])
            return x.astype(fdt) if x.dtype.kind in "fV" and fdt.kind in "fV" else convert(x, fdt)
        if exact and ctor == "Dot":
            return _exact_dot(child(args[0]), child(args[1]), args[2], args[3], args[4], args[5])
        if exact and ctor == "Reduce":
            return _fold(child(args[1]), child(args[2]), args[3], args[0])
        if ctor == "Un":
            return evaluate_op("stablehlo." + args[0], [child(args[1])])
        if ctor == "Bin":
            return evaluate_op("stablehlo." + args[0], [child(args[1]), child(args[2])])
        if ctor == "Cmp":
            return evaluate_op("stablehlo.compare", [child(args[2]), child(args[3])], direction=args[0],
                               compare_type=args[1] or None)
        if ctor == "Sel":
            return evaluate_op("stablehlo.select", [child(args[0]), child(args[1]), child(args[2])])
        if ctor == "Clamp":
            return evaluate_op("stablehlo.clamp", [child(args[0]), child(args[1]), child(args[2])])
        if ctor == "Cvt":
            x = child(args[0])
            return x.astype(fdt) if fdt.kind == "f" or x.dtype.kind == "f" else \
                evaluate_op("stablehlo.convert", [x], result_dtype=fdt)
        if ctor == "Bcast":
            return evaluate_op("stablehlo.broadcast_in_dim", [child(args[0])], dims=args[1], result_shape=shape)
        if ctor == "Reshape":
            return evaluate_op("stablehlo.reshape", [child(args[0])], result_shape=shape)
        if ctor == "Transpose":
            return evaluate_op("stablehlo.transpose", [child(args[0])], permutation=args[1])
        if ctor == "Reverse":
            return evaluate_op("stablehlo.reverse", [child(args[0])], dims=args[1])
        if ctor == "Slice":
            return evaluate_op("stablehlo.slice", [child(args[0])], start=args[1], limit=args[2], strides=args[3])
        if ctor == "Concat":
            return evaluate_op("stablehlo.concatenate", [child(args[0]), child(args[1])], dimension=args[2])
        if ctor == "Pad":
            return evaluate_op("stablehlo.pad", [child(args[0]), child(args[1])], low=args[2], high=args[3],
                               interior=args[4])
        if ctor == "Dot":
            return evaluate_op("stablehlo.dot_general", [child(args[0]), child(args[1])], lb=args[2], rb=args[3],
                               lc=args[4], rc=args[5])
        if ctor == "Reduce":
            return evaluate_op("stablehlo.reduce", [child(args[1]), child(args[2])], dims=args[3], kind=args[0])
        raise ValueError(ctor)


def check_classes(fz, enc, inputs: dict, rtol: float = 1e-6, atol: float = 1e-8, *,
                  exact: bool = False) -> list[str]:
    """Evaluate all nodes; return a description of every class whose nodes disagree (within
    ``rtol``/``atol``, or with ``exact`` bit for bit in their own types)."""
    by_class: dict[int, list[int]] = {}
    for i, nd in enumerate(fz.nodes):
        by_class.setdefault(nd.cls, []).append(i)
    leaf = {}
    for i, nd in enumerate(fz.nodes):
        if nd.ctor == "Leaf":
            slot = fz.decode(nd)[0]
            x = np.asarray(inputs[slot])
            leaf[i] = x.astype(np.float64) if x.dtype.kind == "f" and not exact else x
    value: dict[int, np.ndarray] = {}
    problems = []
    parents: dict[int, list[int]] = {}
    for i, nd in enumerate(fz.nodes):
        for c in set(nd.children):
            parents.setdefault(c, []).append(i)
    ready = [i for i, nd in enumerate(fz.nodes) if not nd.children]
    done: set[int] = set()
    while ready:
        i = ready.pop()
        if i in done:
            continue
        nd = fz.nodes[i]
        if any(c not in value for c in nd.children):
            continue
        done.add(i)
        args = fz.decode(nd)
        v = leaf[i] if nd.ctor == "Leaf" else evaluate(nd.ctor, args, value.__getitem__, enc.dense_np, exact=exact)
        if v is None:  # not exactly defined (e.g. integer division by zero): the class stays unchecked
            continue
        if tuple(v.shape) != tuple(args[-1][1]):
            problems.append(f"class {nd.cls}: {nd.ctor} {args[:-1]} has shape {v.shape}, type says {args[-1]}")
            continue
        if nd.cls not in value:
            value[nd.cls] = v
            ready.extend(parents.get(nd.cls, ()))
        else:
            ref = value[nd.cls]
            if exact:
                ok = same_bits(ref, v)
            else:
                with np.errstate(all="ignore"):
                    ok = ref.shape == v.shape and np.allclose(ref.astype(np.float64), v.astype(np.float64),
                                                              rtol=rtol, atol=atol, equal_nan=True)
            if not ok:
                problems.append(f"class {nd.cls}: {nd.ctor} {args[:-1]} disagrees with its class")
    return problems
