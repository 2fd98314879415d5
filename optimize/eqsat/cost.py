"""The cost model: constants calibrated on this machine through PJRT, and egglog cost rules.

XLA fuses elementwise work, so the cost of a program is not a sum of op counts. Per node:

- elementwise ops (and compare/select/convert): ``ew`` (or ``tr`` for transcendental
  ones) per output element; they are assumed fused into their consumer, so no memory
  traffic is charged for their results;
- data movement that fuses (broadcast_in_dim, reshape, slice, reverse, iota,
  concatenate, pad): ``move`` per output element; transpose: ``transpose`` per element
  (a strided read);
- materializing ops pay a kernel overhead and memory traffic: dot_general costs
  ``kernel + flop * 2*M*N*K + mat * (|lhs| + |rhs| + |out|)`` (its operands must be
  materialized) plus ``lhs_t * |lhs|`` when the lhs contracts its leading dimension (XLA
  copies it) and ``rhs_t * |rhs|`` when the rhs contracts its trailing one (``max(lhs_t,
  rhs_t)`` when the lhs is transposed too); reduce costs ``kernel + red * |in| + mat * |out|``;
- leaves and constants cost nothing.

Constants are in femtoseconds per unit. They are measured once per machine by timing small
programs through PJRT (``calibrate()``) and cached in ``~/.cache/reactant/eqsat_cost.json``
keyed by platform, CPU and jax version. ``REACTANT_EQSAT_CALIBRATE=0`` (tests) uses the
default table below without measuring. Costs go into the e-graph with ``set-cost`` from
rules (``cost_rules``), never through a Python callback.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import threading
from typing import Callable

from jaxlib.mlir import ir

from ...ir.build import dot_dims
from .lang import BINARY, TRANSCENDENTAL, UNARY

# femtoseconds; measured on the 2-core development machine (see calibrate())
DEFAULTS: dict[str, int] = {
    "flop": 10_000,  # per dot FLOP
    "ew": 35_000,  # per element of a cheap fused elementwise op
    "tr": 1_500_000,  # per element of a transcendental elementwise op
    "move": 9_000,  # per element of fused data movement
    "transpose": 450_000,  # per element of a fused transpose
    "mat": 280_000,  # per element written by a materializing op (or read by a dot)
    "red": 330_000,  # per input element of a reduce
    "kernel": 1_000_000_000,  # per materializing kernel (1 us)
    "lhs_t": 1_500_000,  # per lhs element when a dot contracts the lhs's leading dim
    "rhs_t": 700_000,  # per rhs element when a dot contracts the rhs's trailing dim
}

_lock = threading.Lock()
_cached: dict[str, int] | None = None
_timer: tuple | None = None  # (timer, runtime key) registered by the runtime

log = logging.getLogger("reactant.optimize.eqsat")


def register_program_timer(timer: Callable[[dict, int], dict[str, list[float]]], runtime_key: str) -> None:
    """Install how calibration runs programs (the optimizer does not own a runtime):
    ``timer(progs, rounds)`` compiles every ``name -> (StableHLO text, NumPy inputs)`` program,
    runs them round-robin ``rounds`` times and returns the seconds of every run per name.
    ``runtime_key`` names the runtime (platform, jax version) in the calibration cache."""
    global _timer, _cached
    with _lock:
        _timer = (timer, runtime_key)
        _cached = None


def _cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "reactant", "eqsat_cost.json")


def _machine_key() -> str:
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    if cpu is None:  # (only then: platform.processor() runs ``uname -p``, ~13 ms of a first call)
        cpu = platform.processor() or platform.machine()
    return f"cpu|{cpu}|{os.cpu_count()}|{_timer[1] if _timer else '?'}"


def constants() -> dict[str, int]:
    """The cost constants: cached calibration for this machine, measured on first use
    (unless ``REACTANT_EQSAT_CALIBRATE=0``), else the defaults."""
    global _cached
    with _lock:
        if _cached is not None:
            return _cached
        if os.environ.get("REACTANT_EQSAT_CALIBRATE", "1") in ("0", "false", "no", "off"):
            _cached = dict(DEFAULTS)
            return _cached
        if _timer is None:
            log.warning("eqsat: no runtime registered to calibrate the cost model; using the defaults")
            _cached = dict(DEFAULTS)
            return _cached
        key = _machine_key()
        path = _cache_path()
        table = {}
        try:
            with open(path) as f:
                table = json.load(f)
        except (OSError, ValueError):
            table = {}
        if key in table and set(table[key]) >= set(DEFAULTS):
            _cached = {k: int(table[key][k]) for k in DEFAULTS}
            return _cached
        try:
            measured = calibrate()
        except Exception as e:  # any failure of the runtime: the defaults, said once
            log.warning("eqsat: cost-model calibration failed (%s: %s); using the defaults", type(e).__name__, e)
            _cached = dict(DEFAULTS)
            return _cached
        table[key] = measured
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                json.dump(table, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            pass
        _cached = measured
        return _cached


def set_constants(c: dict[str, int] | None) -> None:
    """Override (or with None, forget) the constants of this process (tests, experiments)."""
    global _cached
    with _lock:
        _cached = None if c is None else {**DEFAULTS, **c}


# ----------------------------------------------------------------------------- calibration


def _time_programs(progs: dict, rounds: int = 15) -> tuple[dict[str, float], dict]:
    """Run every program ``rounds`` times round-robin through the registered timer; the
    result per program is the mean of its fastest quarter (robust against a loaded machine),
    plus the raw timings."""
    if _timer is None:
        raise RuntimeError("no program timer registered (reactant registers one when imported)")
    raw = _timer[0](progs, rounds)
    out = {}
    for k, ts in raw.items():
        ts = sorted(ts)
        q = max(1, len(ts) // 5)
        out[k] = sum(ts[:q]) / q  # the fastest runs: what the machine does when not disturbed
    return out, raw


def _module(args: list[str], results: list[str], body: list[str]) -> str:
    sig = ", ".join(f"%a{i}: {t}" for i, t in enumerate(args))
    return (f"module {{\n func.func public @main({sig}) -> ({', '.join(results)}) {{\n  "
            + "\n  ".join(body) + "\n }\n}\n")


def calibrate() -> dict[str, int]:
    """Measure the cost constants by timing small programs through PJRT (a few seconds)."""
    import numpy as np

    rng = np.random.default_rng(0)
    FS = 1e15

    def rand(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    progs = {}
    n = 512
    M = f"tensor<{n}x{n}xf32>"
    for name, dims in (("dot", "[1] x [0]"), ("dotT", "[0] x [0]"), ("dotRT", "[1] x [1]")):
        progs[name] = (_module([M, M], [M], [f"%r = stablehlo.dot_general %a0, %a1, contracting_dims = {dims} : ({M}, {M}) -> {M}",
                                             f"return %r : {M}"]), [rand(n, n), rand(n, n)])
    # per-kernel overhead: 1 vs 9 dependent small matmuls
    s = 8
    Sm = f"tensor<{s}x{s}xf32>"

    def dots(k):
        body, cur = [], "%a0"
        for i in range(k):
            body.append(f"%d{i} = stablehlo.dot_general {cur}, %a1, contracting_dims = [1] x [0] : ({Sm}, {Sm}) -> {Sm}")
            cur = f"%d{i}"
        return _module([Sm, Sm], [Sm], body + [f"return {cur} : {Sm}"])

    progs["k1"] = (dots(1), [rand(s, s), rand(s, s) * 0.1])
    progs["k9"] = (dots(9), [rand(s, s), rand(s, s) * 0.1])
    # elementwise chains on N elements (fused): 1 op vs 17 ops
    N = 1 << 20
    V = f"tensor<{N}xf32>"

    def chain(k, op):
        body, cur = [], "%a0"
        for i in range(k):
            body.append(f"%c{i} = stablehlo.{op} {cur}, %a1 : {V}" if op in BINARY else f"%c{i} = stablehlo.{op} {cur} : {V}")
            cur = f"%c{i}"
        body.append(f"return {cur} : {V}")
        return _module([V, V], [V], body)

    x, y = rand(N), rand(N) * 0.01 + 1.0
    progs["ew1"] = (chain(1, "multiply"), [x, y])
    progs["ew17"] = (chain(17, "multiply"), [x, y])
    progs["tr17"] = (chain(17, "tanh"), [x * 0.01, y])
    # transpose fused into an add, vs a plain add (1024 x 1024)
    m = 1024
    Q = f"tensor<{m}x{m}xf32>"
    qa, qb = rand(m, m), rand(m, m)
    progs["addp"] = (_module([Q, Q], [Q], [f"%r = stablehlo.add %a0, %a1 : {Q}", f"return %r : {Q}"]), [qa, qb])
    progs["addt"] = (_module([Q, Q], [Q], [f"%t = stablehlo.transpose %a0, dims = [1, 0] : ({Q}) -> {Q}",
                                           f"%r = stablehlo.add %t, %a1 : {Q}", f"return %r : {Q}"]), [qa, qb])
    progs["red"] = (_module([V], ["tensor<f32>"], ["%z = stablehlo.constant dense<0.0> : tensor<f32>",
                                                   f"%r = stablehlo.reduce(%a0 init: %z) applies stablehlo.add across dimensions = [0] : ({V}, tensor<f32>) -> tensor<f32>",
                                                   "return %r : tensor<f32>"]), [x])
    t, raw = _time_programs(progs)
    def ratio(a, b):  # median of per-round ratios (pairs run back to back)
        rs = sorted(x / y for x, y in zip(raw[a], raw[b]))
        return rs[len(rs) // 2]

    dot_t_ratio, dot_rt_ratio = ratio("dotT", "dot"), ratio("dotRT", "dot")

    out: dict[str, int] = {}
    out["kernel"] = max(int(1e-6 * FS), int(max(t["k9"] - t["k1"], 0.0) / 8 * FS))
    out["flop"] = max(1, int(t["dot"] / (2.0 * n ** 3) * FS))
    base = t["ew1"] / N  # read 2 + write 1 elements, one multiply
    out["mat"] = max(1, int(base / 2.0 * FS))
    # elementwise compute hides behind memory traffic; keep a floor so less work still wins
    out["ew"] = max(int(max(t["ew17"] - t["ew1"], 0.0) / (16.0 * N) * FS), out["mat"] // 8)
    out["tr"] = max(out["ew"], int(max(t["tr17"] - t["ew1"], 0.0) / (17.0 * N) * FS))
    out["move"] = max(1, out["ew"] // 4)
    out["transpose"] = max(out["ew"], int(max(t["addt"] - t["addp"], 0.0) / (m * m) * FS))
    out["red"] = max(1, int(t["red"] / N * FS))
    # both estimates of each penalty (ratio of paired runs, difference of the fastest runs)
    # are noisy on a loaded machine: take the larger
    out["lhs_t"] = max(0, int(max(dot_t_ratio - 1.0, (t["dotT"] - t["dot"]) / t["dot"], 0.0) * t["dot"] / (n * n) * FS))
    out["rhs_t"] = max(0, int(max(dot_rt_ratio - 1.0, (t["dotRT"] - t["dot"]) / t["dot"], 0.0) * t["dot"] / (n * n) * FS))
    return out


# ----------------------------------------------------------------------------- rules


def rhs_both(c: dict[str, int]) -> int:
    """Per rhs element: the penalty of a dot contracting its rhs's trailing dim when its lhs
    contracts its leading dim too."""
    return max(c["lhs_t"], c["rhs_t"])


def dot_penalty(c: dict[str, int], na: int, la: int, nb: int, lb: int) -> int:
    """The Dot cost rule's transposed-operand penalty of a matrix dot whose lhs (``na``
    elements) contracts dim ``la`` and whose rhs (``nb``) contracts dim ``lb``."""
    return c["lhs_t"] * na * (1 - la) + (c["rhs_t"] if la == 1 else rhs_both(c)) * nb * lb


def _tbl(name: str, items: dict[str, int]) -> list[str]:
    return [f'(set ({name} "{k}") {v})' for k, v in items.items()]


# data movement, priced ``move`` per element (with the constructors' argument names)
MOVES = {"Bcast": "x d t", "Reshape": "x t", "Slice": "x a b s t", "Reverse": "x d t", "Concat": "x y d t",
         "Pad": "x v l h i t"}


def cost_commands(c: dict[str, int]) -> list[str]:
    """Facts (per-op-name costs) and ``ana`` rules that ``set-cost`` every node."""
    cmds = _tbl("ucost", {o: c["tr"] if o in TRANSCENDENTAL else c["ew"] for o in sorted(UNARY)})
    cmds += _tbl("bcost", {o: c["tr"] if o in TRANSCENDENTAL else c["ew"] for o in sorted(BINARY)})

    def rule(q, ctor, args, expr):
        return f"(rule ({q}) ((set-cost ({ctor} {args}) {expr})) :ruleset ana)"

    for ctor, args in (("Leaf", "i t"), ("SplatF", "v t"), ("SplatI", "v t"), ("Dense", "v t")):
        cmds.append(rule(f"(= e ({ctor} {args}))", ctor, args, "0"))
    nq = "(= n (numel t))"
    cmds.append(rule(f"(= e (Iota i t)) {nq}", "Iota", "i t", f"(* {c['move']} n)"))
    cmds.append(rule(f"(= e (Un o x t)) {nq} (= k (ucost o))", "Un", "o x t", "(* k n)"))
    cmds.append(rule(f"(= e (Bin o x y t)) {nq} (= k (bcost o))", "Bin", "o x y t", "(* k n)"))
    for ctor, args in (("Cmp", "o ct x y t"), ("Sel", "p x y t"), ("Clamp", "a x b t"), ("Cvt", "x t")):
        cmds.append(rule(f"(= e ({ctor} {args})) {nq}", ctor, args, f"(* {c['ew']} n)"))
    for ctor, args in MOVES.items():
        cmds.append(rule(f"(= e ({ctor} {args})) {nq}", ctor, args, f"(* {c['move']} n)"))
    cmds.append(rule(f"(= e (Transpose x p t)) {nq}", "Transpose", "x p t", f"(* {c['transpose']} n)"))
    # dot_general: K = product of the lhs's contracting dims
    for nc in range(4):
        k = "1"
        for i in range(nc):
            g = f"(vec-get sa (vec-get lc {i}))"
            k = g if i == 0 else f"(* {k} {g})"
        base = (f"(+ {c['kernel']} (+ (* {c['flop']} (* 2 (* n {k}))) "
                f"(* {c['mat']} (+ na (+ nb n)))))")
        q = (f"(= e (Dot a b lb rb lc rc t)) {nq} (= {nc} (vec-length lc)) (= (TT da sa) (tyof a)) "
             f"(= na (numel (tyof a))) (= nb (numel (tyof b)))")
        if nc >= 1:
            # a full contraction to a scalar: XLA CPU runs it as a fused multiply-reduce
            cmds.append(rule(f"{q} (= 0 (vec-length lb)) (= {nc} (vec-length sa)) (= (TT dt st) t) (= 0 (vec-length st))",
                             "Dot", "a b lb rb lc rc t", f"(+ {c['kernel']} (* {c['red'] + c['ew']} na))"))
            q += " (= (TT dt st) t) (> (vec-length st) 0)"
        if nc == 1:
            # rank-2 operands contracted on the "wrong" dim (lhs leading, rhs trailing) are
            # slower: XLA transposes them first (measured per element of the operand)
            for a2 in (True, False):
                for b2 in (True, False):
                    ok = f"({'=' if a2 else '!='} 2 (vec-length sa)) ({'=' if b2 else '!='} 2 (vec-length sb))"
                    pen_a = f"(* {c['lhs_t']} (* na (- 1 (vec-get lc 0))))" if a2 else "0"
                    # a transposed rhs costs rhs_t beside a plain lhs (XLA CPU's YNNPACK dot
                    # takes it), but as much as a transposed lhs beside a transposed lhs (the
                    # Eigen dot: measured 512^3, A^T B^T - A^T B = 0.77 (A^T B - A B))
                    rb = (f"(+ {c['rhs_t']} (* {rhs_both(c) - c['rhs_t']} (- 1 (vec-get lc 0))))" if a2
                          else str(c['rhs_t']))
                    pen_b = f"(* {rb} (* nb (vec-get rc 0)))" if b2 else "0"
                    cmds.append(rule(f"{q} (= (TT db sb) (tyof b)) {ok}", "Dot", "a b lb rb lc rc t",
                                     f"(+ {base} (+ {pen_a} {pen_b}))"))
        else:
            cmds.append(rule(q, "Dot", "a b lb rb lc rc t", base))
    cmds.append(rule(f"(= e (Reduce o x z d t)) {nq} (= nx (numel (tyof x)))", "Reduce", "o x z d t",
                     f"(+ {c['kernel']} (+ (* {c['red']} nx) (* {c['mat']} n)))"))
    return cmds


def _numel(t) -> int:
    n = 1
    for d in ir.RankedTensorType(t).shape:
        n *= d
    return n


_FREE = ("Leaf", "SplatF", "SplatI", "Dense")  # constants: cost 0 in the rules, never a fusion's root


def upper_bound(ops: list, c: dict[str, int]) -> int:
    """A cost no lower than the cost rules and the extraction's fusion traffic give the ops
    ``ops`` (femtoseconds), from their types and uses alone. Each op: its own cost rule at its
    highest (a dot with both transposed-operand penalties where its rule has them, twice when a
    transpose beside it may fold into it; constants free), its result written once, and each
    operand that is not a splat or an iota (recomputed in every fusion) read (or copied inside
    a reduction: ``2 mat`` per element) by every fusion that can
    reach it: the op's own, and one for each op it reaches through fusible users (a broadcast
    shared by several fusions is read by each). When it is already small, weighing the program
    in an e-graph (~10-40 ms) cannot find a cost above it. Ops are classified as the encoder
    does and fusions pass through the extraction's ``FUSIBLE`` kinds: one definition of each."""
    from .encode import classify
    from .extract import FUSIBLE, NEVER_MATERIALIZED

    kinds, shorts = {}, {}
    for op in ops:
        k = classify(op)
        kinds[op.operation] = None if k is None else k[0]
        if k is not None and k[0] in ("Un", "Bin"):
            shorts[op.operation] = k[1][0]
    # per op: the ops through whose fusions it may be read beyond its own (bit i: ops[i]): its
    # fusible users and theirs. A fusion holds an op once, so each of these ops, were it a
    # fusion's root, reads the op's operands once more: counted as a set, not along every path
    # (paths grow as 2^depth through reconverging elementwise chains)
    index = {op.operation: i for i, op in enumerate(ops)}
    reach: dict = {}
    walks: dict = {}
    for op in reversed(ops):
        op = op.operation
        bits = 0
        for r in op.results:
            for use in r.uses:
                u = use.owner
                u = getattr(u, "operation", u)
                if u in kinds and kinds[u] in FUSIBLE:
                    bits |= (1 << index[u]) | reach[u]
        reach[op] = bits
        walks[op] = bits.bit_count()
    total = 0
    for op in ops:
        op = op.operation
        kind = kinds[op]
        if kind in _FREE:  # priced 0 by the rules, never written (splats: inside each fusion)
            continue
        try:
            ins = [_numel(v.type) for v in op.operands]
            outs = [_numel(r.type) for r in op.results]
        except ValueError:  # an operand that is not a ranked tensor: no bound
            return -1
        n = sum(outs)
        # (a fusion stops at an op that is not fusible, a dot or a reduction: it reads the
        # result; through a slice it reads only what the slice keeps; a splat or an iota is
        # recomputed inside each fusion that reads it: never read)
        if kind == "Slice":
            read = n
        else:
            read = sum(k for k, v in zip(ins, op.operands)
                       if kinds.get(getattr(v.owner, "operation", None)) not in NEVER_MATERIALIZED)
        total += c["mat"] * n + 2 * c["mat"] * read * (1 + (walks[op] if kind in FUSIBLE else 0))
        if kind == "Dot":
            a = ir.RankedTensorType(op.operands[0].type).shape
            b = ir.RankedTensorType(op.operands[1].type).shape
            lc = dot_dims(op)[2]
            k = 1
            for d in lc:
                k *= a[d]
            na, nb = ins[0], ins[1]
            near = [v.owner for v in op.operands] + [use.owner for r in op.results for use in r.uses]
            folds = 2 if any(getattr(x, "name", None) == "stablehlo.transpose" for x in near) else 1
            # the rule's transposed-operand penalties: one contracted dim of a matrix operand, or
            # a transpose beside the dot that the extraction may fold into it
            pen = folds * (c["lhs_t"] * na + rhs_both(c) * nb) if (len(lc) == 1 and 2 in (len(a), len(b))) \
                or folds == 2 else 0
            total += (c["kernel"] + c["flop"] * 2 * n * k + c["mat"] * (na + nb + n) + pen
                      + (c["red"] + c["ew"]) * na)
        elif kind == "Reduce":
            total += c["kernel"] + c["red"] * sum(ins) + c["mat"] * n
        elif kind == "Transpose":
            total += c["transpose"] * n
        elif kind in MOVES or kind == "Iota":
            total += c["move"] * n
        elif kind in ("Un", "Bin"):  # the rule's price of the op
            total += (c["tr"] if shorts[op] in TRANSCENDENTAL else c["ew"]) * n
        elif kind in ("Cmp", "Sel", "Clamp", "Cvt"):
            total += c["ew"] * n
        else:  # anything unmodelled: as a transcendental op
            total += max(c["tr"], c["ew"]) * n
    return total
