"""A NumPy interpreter for the term language, to check e-graphs for soundness.

``check_classes(frozen, encoded, inputs)`` evaluates every node of every e-class bottom-up
(leaves from ``inputs``: slot -> array) and reports the classes whose nodes disagree. A
rule that unions non-equivalent terms shows up here on small random inputs, long before a
wrong program runs. Used by the tests; also handy when writing new rules.
"""

from __future__ import annotations

import numpy as np

from .encode import np_dtype


def _bcast(x, dims, shape):
    tmp = [1] * len(shape)
    for j, d in enumerate(dims):
        tmp[d] = x.shape[j]
    return np.broadcast_to(x.reshape(tmp), shape)


def _pad(x, v, lo, hi, it):
    # interior padding first, then edges (negative edges crop)
    for d, k in enumerate(it):
        if k > 0 and x.shape[d] > 0:
            n = x.shape[d]
            shape = list(x.shape)
            shape[d] = n + (n - 1) * k
            y = np.full(shape, v, dtype=x.dtype)
            idx = [slice(None)] * x.ndim
            idx[d] = slice(0, None, k + 1)
            y[tuple(idx)] = x
            x = y
    for d, (a, b) in enumerate(zip(lo, hi)):
        if a < 0:
            idx = [slice(None)] * x.ndim
            idx[d] = slice(-a, None)
            x = x[tuple(idx)]
            a = 0
        if b < 0:
            idx = [slice(None)] * x.ndim
            idx[d] = slice(0, x.shape[d] + b)
            x = x[tuple(idx)]
            b = 0
        widths = [(0, 0)] * x.ndim
        widths[d] = (a, b)
        x = np.pad(x, widths, constant_values=v)
    return x


def _dot(a, b, lb, rb, lc, rc):
    lf = [i for i in range(a.ndim) if i not in lb and i not in lc]
    rf = [i for i in range(b.ndim) if i not in rb and i not in rc]
    at = np.transpose(a, list(lb) + lf + list(lc))
    bt = np.transpose(b, list(rb) + list(rc) + rf)
    bs = [a.shape[i] for i in lb]
    nb = int(np.prod(bs)) if bs else 1
    m = int(np.prod([a.shape[i] for i in lf])) if lf else 1
    k = int(np.prod([a.shape[i] for i in lc])) if lc else 1
    n = int(np.prod([b.shape[i] for i in rf])) if rf else 1
    out = np.matmul(at.reshape(nb, m, k), bt.reshape(nb, k, n))
    return out.reshape(bs + [a.shape[i] for i in lf] + [b.shape[i] for i in rf])


_UN = {
    "abs": np.abs, "ceil": np.ceil, "cosine": np.cos, "exponential": np.exp, "exponential_minus_one": np.expm1,
    "floor": np.floor, "log": np.log, "log_plus_one": np.log1p, "logistic": lambda x: 1 / (1 + np.exp(-x)),
    "negate": np.negative, "round_nearest_even": np.rint, "rsqrt": lambda x: 1 / np.sqrt(x), "sign": np.sign,
    "sine": np.sin, "sqrt": np.sqrt, "cbrt": np.cbrt, "tan": np.tan, "tanh": np.tanh, "is_finite": np.isfinite,
    "round_nearest_afz": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
}
_BIN = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
    "power": np.power, "atan2": np.arctan2, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "remainder": np.fmod,
}
_CMP = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
        "GE": np.greater_equal}
_RED = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
        "and": np.logical_and, "or": np.logical_or}


def evaluate(ctor: str, args: list, child, dense: dict):
    """Value of one node; ``child(class_id)`` gives the children's values (float64 for
    floating types)."""
    d, shape = args[-1]
    fdt = np.float64 if d in ("f16", "bf16", "f32", "f64") else np_dtype(d)
    if ctor == "SplatF":
        return np.full(shape, float(args[0]), np.float64)
    if ctor == "SplatI":
        return np.full(shape, args[0], fdt)
    if ctor == "Dense":
        return np.asarray(dense[args[0]], dtype=fdt).reshape(shape)
    if ctor == "Iota":
        return _bcast(np.arange(shape[args[0]]).astype(fdt), [args[0]], shape)
    if ctor == "Un":
        x = child(args[1])
        if args[0] == "not":
            return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)
        return _UN[args[0]](x).astype(fdt)
    if ctor == "Bin":
        x, y = child(args[1]), child(args[2])
        if args[0] == "divide" and np.issubdtype(fdt, np.integer):
            return (np.trunc(x / y)).astype(fdt)
        if args[0] in ("and", "or", "xor") and fdt == np.bool_:
            return {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[args[0]](x, y)
        if args[0] == "divide":
            return np.divide(x, y)
        return _BIN[args[0]](x, y).astype(fdt)
    if ctor == "Cmp":
        return _CMP[args[0]](child(args[2]), child(args[3]))
    if ctor == "Sel":
        return np.where(child(args[0]), child(args[1]), child(args[2]))
    if ctor == "Clamp":
        return np.minimum(np.maximum(child(args[1]), child(args[0])), child(args[2]))
    if ctor == "Cvt":
        return child(args[0]).astype(fdt)
    if ctor == "Bcast":
        return _bcast(child(args[0]), args[1], shape)
    if ctor == "Reshape":
        return child(args[0]).reshape(shape)
    if ctor == "Transpose":
        return np.transpose(child(args[0]), args[1])
    if ctor == "Reverse":
        return np.flip(child(args[0]), axis=tuple(args[1]))
    if ctor == "Slice":
        return child(args[0])[tuple(slice(a, b, c) for a, b, c in zip(args[1], args[2], args[3]))]
    if ctor == "Concat":
        return np.concatenate([child(args[0]), child(args[1])], axis=args[2])
    if ctor == "Pad":
        return _pad(child(args[0]), child(args[1]).reshape(()).item(), args[2], args[3], args[4])
    if ctor == "Dot":
        return _dot(child(args[0]), child(args[1]), *args[2:6])
    if ctor == "Reduce":
        x, init = child(args[1]), child(args[2])
        f = _RED[args[0]]
        r = f.reduce(x, axis=tuple(args[3])) if args[3] else x
        return f(r, init).astype(fdt).reshape(shape)
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
        try:
            v = leaf[i] if nd.ctor == "Leaf" else evaluate(nd.ctor, args, value.__getitem__, enc.dense_np)
        except Exception as e:  # pragma: no cover
            problems.append(f"class {nd.cls}: cannot evaluate {nd.ctor} {args[:-1]}: {e}")
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
