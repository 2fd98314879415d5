"""A NumPy interpreter for the term language, to check e-graphs for soundness.

``check_classes(frozen, encoded, inputs)`` evaluates every node of every e-class bottom-up
(leaves from ``inputs``: slot -> array) and reports the classes whose nodes disagree. A
rule that unions non-equivalent terms shows up here on small random inputs, long before a
wrong program runs. Used by the tests; also handy when writing new rules.
"""

from __future__ import annotations

import numpy as np

from ...ir.evaluate import evaluate_op
from ...ir.kernels import iota
from ...ir.types import dtype_from_name


def evaluate(ctor: str, args: list, child, dense: dict):
    """Value of one node by the project's evaluator (``reactant.ir.evaluate``); floats are
    carried in float64 (rules hold up to rounding, which the tolerance of ``check_classes``
    absorbs); None where the op's result is not defined exactly. ``child(class_id)`` gives
    the children's values."""
    d, shape = args[-1]
    fdt = np.dtype(np.float64) if d in ("f16", "bf16", "f32", "f64") else dtype_from_name(d)
    if ctor == "SplatF":
        return np.full(shape, float(args[0]), np.float64)
    if ctor == "SplatI":
        return np.full(shape, args[0], fdt)
    if ctor == "Dense":
        return np.asarray(dense[args[0]], dtype=fdt).reshape(shape)
    if ctor == "Iota":
        return iota(shape, args[0], fdt)
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


def check_classes(fz, enc, inputs: dict, rtol: float = 1e-6, atol: float = 1e-8) -> list[str]:
    """Evaluate all nodes; return a description of every class whose nodes disagree."""
    by_class: dict[int, list[int]] = {}
    for i, nd in enumerate(fz.nodes):
        by_class.setdefault(nd.cls, []).append(i)
    leaf = {}
    for i, nd in enumerate(fz.nodes):
        if nd.ctor == "Leaf":
            slot = fz.decode(nd)[0]
            x = np.asarray(inputs[slot])
            leaf[i] = x.astype(np.float64) if x.dtype.kind == "f" else x
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
        v = leaf[i] if nd.ctor == "Leaf" else evaluate(nd.ctor, args, value.__getitem__, enc.dense_np)
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
            with np.errstate(all="ignore"):
                ok = ref.shape == v.shape and np.allclose(ref.astype(np.float64), v.astype(np.float64),
                                                          rtol=rtol, atol=atol, equal_nan=True)
            if not ok:
                problems.append(f"class {nd.cls}: {nd.ctor} {args[:-1]} disagrees with its class")
    return problems
