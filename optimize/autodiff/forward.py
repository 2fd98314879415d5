"""Forward mode (tangents / JVP), interleaved with the primal.

The primal ops of the (prepared) function are cloned at the marker, and after each op whose
operands carry tangents its forward rule emits the tangents of its results. With a marker
``width`` W > 1 each value carries W tangent lanes (vector forward mode); a rule is applied
once per lane. Loops carry their tangents as extra iteration arguments; branches return them
as extra results (zeros from a branch that has none).
"""

from __future__ import annotations

from jaxlib.mlir import ir

from ...ir import build as B
from ...ir.attrs import copy_attrs
from ...ir.loops import while_parts
from ...ir.manual import MANUAL, create_manual, manual_axes, per_value_shardings
from ...ir.markers import Activity as A, RETURNS_PRIMAL, WITH_TANGENT
from ...ir.regions import block_ops, captured_values, clone_op, terminator
from ...ir.types import element_type_of, i64, is_inexact_tensor, ranked, shape_of
from .activity import Activity
from .errors import ADError
from .rules import NONDIFF, RULES


class Env:
    """A chained map from source values to values at the current emission point."""

    __slots__ = ("m", "parent")

    def __init__(self, parent: "Env | None" = None):
        self.m = {}
        self.parent = parent

    def lookup(self, v, default=None):
        e = self
        while e is not None:
            r = e.m.get(v)
            if r is not None:
                return r
            e = e.parent
        return default

    def get(self, v):
        r = self.lookup(v)
        if r is None:
            raise KeyError(f"internal: no value for {v.get_name() if hasattr(v, 'get_name') else v}")
        return r

    def set(self, k, v):
        self.m[k] = v

    def update(self, keys, vals):
        for k, v in zip(keys, vals):
            self.m[k] = v


class Forward:
    def __init__(self, act: Activity, width: int, reuse_primal: bool = False):
        self.act = act
        self.W = width
        self.reuse_primal = reuse_primal  # primal values already in P (lane loop): clone only what has tangents

    def zeros_lanes(self, t: ir.Type):
        return [B.zeros(t) for _ in range(self.W)]

    # -- blocks ---------------------------------------------------------------------------------
    def block(self, ops, P: Env, T: Env) -> None:
        for op in ops:
            op = op.operation
            name = op.name
            if name == "stablehlo.while":
                self._while(op, P, T)
            elif name in ("stablehlo.if", "stablehlo.case"):
                self._branch(op, P, T)
            elif name == MANUAL:
                self._manual(op, P, T)
            else:
                self._op(op, P, T)

    def _plain(self, op, P: Env):
        with op.location:
            new = clone_op(op, P.get)
        P.update(op.results, new.results)
        return new

    def _op(self, op, P: Env, T: Env) -> None:
        tans = [T.lookup(v) for v in op.operands]
        caps = captured_values(op) if len(op.regions) else []
        if not (self.reuse_primal and all(P.lookup(r) is not None for r in op.results)):
            with op.location:
                new = clone_op(op, P.get, caps)
            P.update(op.results, new.results)
        cap_active = any(T.lookup(c) is not None for c in caps)
        if all(t is None for t in tans) and not cap_active:
            return
        if op.name in NONDIFF or not any(self.act.is_active(r) for r in op.results):
            return
        if cap_active:
            raise ADError(f"no derivative rule for {op.name} with a differentiated value captured by its region",
                          op)
        rule = RULES.get(op.name)
        if rule is None or rule.fwd is None:
            raise ADError(f"no derivative rule for {op.name}", op)
        n = len(op.results)
        lanes = [[] for _ in range(n)]
        with op.location:
            for lane in range(self.W):
                ts = [None if t is None else t[lane] for t in tans]
                outs = list(rule.fwd(P, op, ts))
                outs += [None] * (n - len(outs))
                for j in range(n):
                    lanes[j].append(outs[j])
            for j, r in enumerate(op.results):
                ls = lanes[j]
                if all(x is None for x in ls) or not is_inexact_tensor(r.type):
                    continue
                T.set(r, [x if x is not None else B.zeros(r.type) for x in ls])

    # -- loops ----------------------------------------------------------------------------------
    def _while(self, op, P: Env, T: Env) -> None:
        _, cond, body, _ = while_parts(op)
        n = len(op.operands)
        V = [j for j in range(n) if self.act.is_active(body.arguments[j]) or self.act.is_active(op.results[j])]
        if not V:
            if not (self.reuse_primal and P.lookup(op.results[0]) is not None):
                self._plain(op, P)
            return
        W = self.W
        with op.location:
            init = [P.get(v) for v in op.operands]
            tinit = []
            for j in V:
                t = T.lookup(op.operands[j])
                tinit += t if t is not None else self.zeros_lanes(op.operands[j].type)
            types = [v.type for v in op.operands] + [op.operands[j].type for j in V for _ in range(W)]
            new = B.create("stablehlo.while", init + tinit, types, copy_attrs(op) or None, regions=2)
            ccond = ir.Block.create_at_start(new.regions[0], types)
            cbody = ir.Block.create_at_start(new.regions[1], types)
        env = Env(P)
        env.update(cond.arguments, list(ccond.arguments)[:n])
        with ir.InsertionPoint(ccond), op.location:
            for o in block_ops(cond):
                c = clone_op(o, env.get)
                env.update(o.results, c.results)
            B.create("stablehlo.return", [env.get(terminator(cond).operands[0])], [])
        Pb, Tb = Env(P), Env(T)
        bargs = list(cbody.arguments)
        Pb.update(body.arguments, bargs[:n])
        for k, j in enumerate(V):
            Tb.set(body.arguments[j], bargs[n + k * W: n + (k + 1) * W])
        with ir.InsertionPoint(cbody), op.location:
            self._tangent_region(body, Pb, Tb, V, op.results)
        self._bind_results(op, new, V, P, T)

    # -- branches -------------------------------------------------------------------------------
    def _branch(self, op, P: Env, T: Env) -> None:
        n = len(op.results)
        V = [j for j in range(n) if self.act.is_active(op.results[j])]
        if not V:
            if not (self.reuse_primal and n and P.lookup(op.results[0]) is not None):
                self._plain(op, P)
            return
        W = self.W
        types = [r.type for r in op.results] + [op.results[j].type for j in V for _ in range(W)]
        with op.location:
            new = B.create(op.name, [P.get(op.operands[0])], types, copy_attrs(op) or None,
                           regions=len(op.regions))
        for i, region in enumerate(op.regions):
            src = region.blocks[0]
            blk = ir.Block.create_at_start(new.regions[i], [])
            Pb, Tb = Env(P), Env(T)
            with ir.InsertionPoint(blk), op.location:
                self._tangent_region(src, Pb, Tb, V, op.results)
        self._bind_results(op, new, V, P, T)

    # -- manual computations (shard_map) -------------------------------------------------------
    def _manual(self, op, P: Env, T: Env) -> None:
        """The primal and tangents in one manual computation: tangent lanes enter and leave
        sharded as their primals (collectives in the body have linear forward rules)."""
        n = len(op.results)
        V = [j for j in range(n) if self.act.is_active(op.results[j])]
        tans = [T.lookup(v) for v in op.operands]
        if not V:
            if not (self.reuse_primal and n and P.lookup(op.results[0]) is not None):
                self._plain(op, P)
            return
        W = self.W
        body = op.regions[0].blocks[0]
        ret = terminator(body)
        ins, outs = per_value_shardings(op, "in_shardings"), per_value_shardings(op, "out_shardings")
        I = [i for i, t in enumerate(tans) if t is not None]
        operands = [P.get(v) for v in op.operands] + [x for i in I for x in tans[i]]
        types = [r.type for r in op.results] + [op.results[j].type for j in V for _ in range(W)]
        block_types = [a.type for a in body.arguments] + [body.arguments[i].type for i in I for _ in range(W)]
        with op.location:
            new, blk = create_manual(operands, types, ins + [ins[i] for i in I for _ in range(W)],
                                     outs + [outs[j] for j in V for _ in range(W)], manual_axes(op), block_types)
        args = list(blk.arguments)
        Pb, Tb = Env(), Env()  # the body is isolated from above
        Pb.update(body.arguments, args[:len(body.arguments)])
        for k, i in enumerate(I):
            base = len(body.arguments) + k * W
            Tb.set(body.arguments[i], args[base:base + W])
        with ir.InsertionPoint(blk), op.location:
            self.block(block_ops(body), Pb, Tb)
            vals = [Pb.get(v) for v in ret.operands]
            for j in V:
                t = Tb.lookup(ret.operands[j])
                vals += t if t is not None else [B.zeros(ret.operands[j].type) for _ in range(W)]
            B.create("sdy.return", vals, [])
        self._bind_results(op, new, V, P, T)

    def _tangent_region(self, src: ir.Block, Pb: Env, Tb: Env, V: list, results) -> None:
        """The primal and tangent code of block ``src`` at the insertion point, returning its
        primal values and the tangent lanes of the values at positions ``V`` (zeros where
        none; ``results`` give their types)."""
        self.block(block_ops(src), Pb, Tb)
        ret = terminator(src)
        outs = [Pb.get(v) for v in ret.operands]
        for j in V:
            t = Tb.lookup(ret.operands[j])
            outs += t if t is not None else self.zeros_lanes(results[j].type)
        B.create("stablehlo.return", outs, [])

    def _bind_results(self, op, new, V: list, P: Env, T: Env) -> None:
        """``new``'s results: ``op``'s primal results, then W tangent lanes per value in V."""
        n, W = len(op.results), self.W
        res = list(new.results)
        P.update(op.results, res[:n])
        for k, j in enumerate(V):
            T.set(op.results[j], res[n + k * W: n + (k + 1) * W])


UNROLL_MAX_WIDTH = 4


def _vector_mode(options, W: int) -> str:
    mode = options.ad_vector_forward
    if mode == "auto":
        mode = "unroll" if W <= UNROLL_MAX_WIDTH else "loop"
    return mode


def expand_forward(spec, work, act: Activity, options) -> list:
    """Emit the forward-mode expansion of marker ``spec`` before it; returns its results.

    Width W > 1 (vector forward mode): up to ``UNROLL_MAX_WIDTH`` lanes (or with
    ``PassOptions.ad_vector_forward = "unroll"``) every rule is applied per lane;
    wider (or ``"loop"``) the primal is computed once and a loop over the W lanes runs the
    one-lane tangent code, so the code size does not grow with W."""
    W = spec.width
    if W > 1 and _vector_mode(options, W) == "loop":
        return _expand_forward_lane_loop(spec, work, act)
    body = work.regions[0].blocks[0]
    P, T = Env(), Env()
    marker = spec.op
    with ir.InsertionPoint(marker), marker.location:
        for i, a in enumerate(body.arguments):
            P.set(a, spec.args[i])
            if spec.activity[i] == A.DUP and act.is_active(a):
                sh = spec.shadows[i]
                if W == 1:
                    lanes = [sh]
                else:
                    lanes = [B.reshape(B.slice_in_dim(sh, l, l + 1, 0), list(shape_of(a))) for l in range(W)]
                T.set(a, lanes)
        Forward(act, W).block(block_ops(body), P, T)
        ret = terminator(body)
        outs = [P.get(ret.operands[j]) for j, a in enumerate(spec.ret_activity) if a in RETURNS_PRIMAL]
        for j, a in enumerate(spec.ret_activity):
            if a not in WITH_TANGENT:
                continue
            v = ret.operands[j]
            lanes = T.lookup(v)
            if lanes is None:
                lanes = [B.zeros(v.type) for _ in range(W)]
            if W == 1:
                outs.append(lanes[0])
            else:
                outs.append(B.concatenate([B.reshape(l, [1] + list(shape_of(v))) for l in lanes], 0))
    return outs


def _expand_forward_lane_loop(spec, work, act: Activity) -> list:
    W = spec.width
    body = work.regions[0].blocks[0]
    marker = spec.op
    P = Env()
    t64 = i64()
    with ir.InsertionPoint(marker), marker.location:
        for i, a in enumerate(body.arguments):
            P.set(a, spec.args[i])
        for op in block_ops(body):  # the primal, once
            with op.location:
                new = clone_op(op, P.get)
            P.update(op.results, new.results)
        ret = terminator(body)
        outs = [P.get(ret.operands[j]) for j, a in enumerate(spec.ret_activity) if a in RETURNS_PRIMAL]
        tres = [ret.operands[j] for j, a in enumerate(spec.ret_activity) if a in WITH_TANGENT]
        init = [B.scalar(0, t64)] + [B.zeros(ranked([W] + list(shape_of(v)), element_type_of(v))) for v in tres]
        types = [v.type for v in init]
        loop = B.create("stablehlo.while", init, types, regions=2)
        cb = ir.Block.create_at_start(loop.regions[0], types)
        bb = ir.Block.create_at_start(loop.regions[1], types)
        with ir.InsertionPoint(cb):
            B.create("stablehlo.return", [B.compare(cb.arguments[0], B.scalar(W, t64), "LT")], [])
        with ir.InsertionPoint(bb):
            k = bb.arguments[0]
            z = B.scalar(0, t64)
            Pl, Tl = Env(P), Env()
            for i, a in enumerate(body.arguments):
                if spec.activity[i] == A.DUP and act.is_active(a):
                    s = list(shape_of(a))
                    lane = B.reshape(B.dynamic_slice(spec.shadows[i], [k] + [z] * len(s), [1] + s), s)
                    Tl.set(a, [lane])
            Forward(act, 1, reuse_primal=True).block(block_ops(body), Pl, Tl)
            new_stacks = []
            for st, v in zip(list(bb.arguments)[1:], tres):
                t = Tl.lookup(v)
                t = t[0] if t is not None else B.zeros(v.type)
                s = list(shape_of(v))
                new_stacks.append(B.dynamic_update_slice(st, B.reshape(t, [1] + s), [k] + [z] * len(s)))
            B.create("stablehlo.return", [B.add(k, B.scalar(1, t64))] + new_stacks, [])
        outs += list(loop.results)[1:]
    return outs
