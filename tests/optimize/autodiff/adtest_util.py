"""Test harness for the AD pass: JAX functions lowered to StableHLO become the differentiated
function ``@f`` of a module whose ``@main`` holds ``enzyme.autodiff`` / ``enzyme.fwddiff``
markers; the pass expands them, XLA compiles the result through PJRT, and the outputs are
compared against ``jax.vjp``/``jax.jvp`` and central finite differences (float64)."""

from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.extend  # noqa: E402
import jax.numpy as jnp  # noqa: E402,F401
import jaxlib.xla_client as xc  # noqa: E402
import numpy as np  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from reactant.ir.context import make_context  # noqa: E402

jax.config.update("jax_enable_x64", True)

from reactant.optimize.autodiff import expand_all  # noqa: E402
from reactant.optimize.passes import PassOptions  # noqa: E402


_BACKEND = None


def backend():
    global _BACKEND
    if _BACKEND is None:
        _BACKEND = jax.extend.backend.get_backend()
    return _BACKEND


def lower(f, *args, platform=None) -> str:
    """StableHLO text of ``f``; ``platform="tpu"`` lowers linear algebra to stablehlo ops
    (cholesky, triangular_solve) instead of CPU LAPACK custom calls (XLA:CPU runs both)."""
    if platform is None:
        return jax.jit(f, keep_unused=True).lower(*args).as_text()
    return jax.jit(f, keep_unused=True).trace(*args).lower(lowering_platforms=(platform,)).as_text()


def _ftype(fn) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)


def _funcs(m):
    return {ir.StringAttr(o.attributes["sym_name"]).value: o for o in m.body.operations
            if o.operation.name == "func.func"}


def _with_width(t, w):
    if w == 1:
        return t
    tt = ir.RankedTensorType(t)
    return ir.RankedTensorType.get([w] + list(tt.shape), tt.element_type)


class Marker:
    """One marker for ``build``: mode "rev"/"fwd", activities, width."""

    def __init__(self, mode, activity, ret_activity, width=1, fn="f"):
        self.mode, self.activity, self.ret_activity, self.width, self.fn = mode, activity, ret_activity, width, fn

    def operand_types(self, ftype):
        ins, outs = list(ftype.inputs), list(ftype.results)
        ts = []
        for a, t in zip(self.activity, ins):
            ts.append(t)
            if a == "dup":
                ts.append(_with_width(t, self.width) if self.mode == "fwd" else t)
        if self.mode == "rev":
            ts += [t for a, t in zip(self.ret_activity, outs) if a in ("active", "activenoneed")]
        return ts

    def result_types(self, ftype):
        ins, outs = list(ftype.inputs), list(ftype.results)
        if self.mode == "rev":
            r = [t for a, t in zip(self.ret_activity, outs) if a in ("active", "const")]
            r += [t for a, t in zip(self.activity, ins) if a in ("active", "dup")]
        else:
            r = [t for a, t in zip(self.ret_activity, outs) if a in ("dup", "const")]
            r += [_with_width(t, self.width) for a, t in zip(self.ret_activity, outs) if a in ("dup", "dupnoneed")]
        return r


def build(jax_text: str, markers: list[Marker], ctx=None, loc=None, name="f") -> ir.Module:
    """A module with the JAX function as private ``@f`` and a ``@main`` applying ``markers``
    (main's arguments are all markers' operands in order; its results all their results)."""
    ctx = ctx or make_context()
    with ctx, ir.Location.unknown():
        m = ir.Module.parse(jax_text)
        funcs = _funcs(m)
        f = funcs["main"]
        f.attributes["sym_name"] = ir.StringAttr.get(name)
        f.attributes["sym_visibility"] = ir.StringAttr.get("private")
        for k in ("arg_attrs", "res_attrs"):
            if k in f.attributes:
                del f.attributes[k]
        funcs = _funcs(m)
        arg_types, res_types, spans = [], [], []
        for mk in markers:
            ft = _ftype(funcs[mk.fn])
            ot, rt = mk.operand_types(ft), mk.result_types(ft)
            spans.append((len(arg_types), len(ot), rt))
            arg_types += ot
            res_types += rt
        with ir.InsertionPoint(m.body):
            from jaxlib.mlir.dialects import func

            main = func.FuncOp("main", ir.FunctionType.get(arg_types, res_types))
            main.attributes["sym_visibility"] = ir.StringAttr.get("public")
            entry = main.add_entry_block()
        outs = []
        with ir.InsertionPoint(entry):
            args = list(entry.arguments)
            for mk, (s, k, rt) in zip(markers, spans):
                attrs = {"fn": ir.FlatSymbolRefAttr.get(mk.fn),
                         "activity": ir.ArrayAttr.get([ir.StringAttr.get(a) for a in mk.activity]),
                         "ret_activity": ir.ArrayAttr.get([ir.StringAttr.get(a) for a in mk.ret_activity])}
                if mk.width != 1:
                    attrs["width"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), mk.width)
                name = "enzyme.autodiff" if mk.mode == "rev" else "enzyme.fwddiff"
                op = ir.Operation.create(name, results=rt, operands=args[s:s + k], attributes=attrs,
                                         loc=loc or ir.Location.unknown())
                outs += list(op.results)
            func.ReturnOp(outs)
    return m


def expand(m: ir.Module, **extra) -> ir.Module:
    expand_all(m, PassOptions(**extra))
    m.operation.verify()
    text = str(m)
    assert "enzyme." not in text, "marker left after the pass"
    return m


# tests care about values, not speed: XLA's cheap backend settings halve compile times
FAST = (("xla_backend_optimization_level", 0), ("xla_llvm_disable_expensive_passes", True))


def compile_options(fast=True):
    o = xc.CompileOptions()
    if fast:
        o.env_option_overrides = list(FAST)
    return o


def jit_fast(f, *args):
    """``jax.jit(f)`` compiled with the fast settings, called on ``args``."""
    return jax.jit(f).lower(*args).compile(compiler_options=dict(FAST))(*args)


def run(m: ir.Module, *args, fast=True):
    be = backend()
    dev = be.devices()[0]
    exe = be.compile_and_load(str(m), xc.DeviceList((dev,)), compile_options(fast))
    outs = exe.execute([jax.device_put(np.asarray(a), dev) for a in args])
    return [np.asarray(o) for o in outs]


def compile_exe(m: ir.Module, fast=False):
    be = backend()
    dev = be.devices()[0]
    return be.compile_and_load(str(m), xc.DeviceList((dev,)), compile_options(fast))


def as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def check_function(f, args, *, active=None, rtol=1e-9, atol=1e-11, fd_rtol=1e-5, fd_atol=1e-7, seed=0,
                   fd=True, extra=None, modes=("rev", "fwd"), jax_ref=True,
                   platform=None):
    """Differentiate ``f`` at ``args`` with the pass in both modes (one module, one compile)
    and compare with jax.vjp / jax.jvp and central finite differences.

    ``active``: indices of the differentiated (float) arguments (default: all float args).
    """
    rng = np.random.default_rng(seed)
    args = [np.asarray(a) for a in args]
    if active is None:
        active = [i for i, a in enumerate(args) if np.issubdtype(a.dtype, np.inexact)]
    text = lower(f, *args, platform=platform)
    x0 = [args[i] for i in active]
    scale = max([1.0] + [float(np.max(np.abs(x))) for x in x0 if x.size])
    h = 1e-6 * scale

    def fa(*xs):
        return as_tuple(f(*[xs[active.index(i)] if i in active else args[i] for i in range(len(args))]))

    # all references in one jitted computation: primal, vjp, jvp, f(x + h v), f(x - h v)
    def refs(xs, sd, tv):
        outs = fa(*xs)
        r = {"outs": outs}
        if fd:
            r["fp"] = fa(*[x + h * t for x, t in zip(xs, tv)])
            r["fm"] = fa(*[x - h * t for x, t in zip(xs, tv)])
        if jax_ref and "rev" in modes:
            _, vjp_fn = jax.vjp(fa, *xs)
            r["grads"] = vjp_fn(tuple(sd))
        if jax_ref and "fwd" in modes:
            r["tans"] = jax.jvp(fa, list(xs), list(tv))[1]
        return r

    outs0 = jax.eval_shape(fa, *x0)
    nres = len(outs0)
    diff_res = [j for j, o in enumerate(outs0) if np.issubdtype(o.dtype, np.inexact)]
    seeds = [rng.standard_normal(o.shape).astype(o.dtype) if j in diff_res else None for j, o in enumerate(outs0)]
    outs0 = [np.zeros(o.shape, o.dtype) for o in outs0]
    tans = [rng.standard_normal(a.shape).astype(a.dtype) if i in active else None for i, a in enumerate(args)]
    jseeds = [seeds[j] if j in diff_res else np.zeros(outs0[j].shape, jax.dtypes.float0) for j in range(nres)]
    ref = jit_fast(refs, x0, jseeds, [tans[i] for i in active])
    outs = [np.asarray(o) for o in ref["outs"]]
    act_rev = ["active" if i in active else "const" for i in range(len(args))]
    act_fwd = ["dup" if i in active else "const" for i in range(len(args))]
    markers, margs = [], []
    if "rev" in modes:
        markers.append(Marker("rev", act_rev, ["active" if j in diff_res else "const" for j in range(nres)]))
        margs += list(args) + [seeds[j] for j in diff_res]
    if "fwd" in modes:
        markers.append(Marker("fwd", act_fwd, ["dup" if j in diff_res else "const" for j in range(nres)]))
        for i, a in enumerate(args):
            margs.append(a)
            if i in active:
                margs.append(tans[i])
    m = build(text, markers)
    expand(m, **(extra or {}))
    res = run(m, *margs)
    pos = 0
    report = {}
    if "rev" in modes:
        prim = res[pos:pos + nres]
        pos += nres
        grads = res[pos:pos + len(active)]
        pos += len(active)
        for o, p in zip(outs, prim):
            np.testing.assert_allclose(p, o, rtol=rtol, atol=atol, err_msg="primal (rev)")
        if jax_ref:
            for i, (g, jg) in enumerate(zip(grads, ref["grads"])):
                np.testing.assert_allclose(g, np.asarray(jg), rtol=rtol, atol=atol,
                                           err_msg=f"grad of arg {active[i]}")
        report["grads"] = grads
    if "fwd" in modes:
        prim = res[pos:pos + nres]
        pos += nres
        tout = res[pos:pos + len(diff_res)]
        for o, p in zip(outs, prim):
            np.testing.assert_allclose(p, o, rtol=rtol, atol=atol, err_msg="primal (fwd)")
        if jax_ref:
            for k, j in enumerate(diff_res):
                np.testing.assert_allclose(tout[k], np.asarray(ref["tans"][j]), rtol=rtol, atol=atol,
                                           err_msg=f"tangent {j}")
        report["tangents"] = tout
    if fd:
        fdd = [(np.asarray(a) - np.asarray(b)) / (2 * h) for a, b in zip(ref["fp"], ref["fm"])]
        if "fwd" in modes:
            for k, j in enumerate(diff_res):
                np.testing.assert_allclose(report["tangents"][k], fdd[j], rtol=fd_rtol, atol=fd_atol,
                                           err_msg=f"tangent {j} vs finite differences")
        if "rev" in modes:
            lhs = sum(float(np.real(np.sum(seeds[j] * fdd[j]))) for j in diff_res)
            rhs = sum(float(np.real(np.sum(g * tans[i]))) for g, i in zip(report["grads"], active))
            assert abs(lhs - rhs) <= fd_atol * 10 + fd_rtol * max(abs(lhs), abs(rhs), 1.0), (lhs, rhs)
    return report


def check_text(text: str, args, *, active=None, fd_rtol=1e-5, fd_atol=1e-7, seed=0, extra=None):
    """Like ``check_function`` for a hand-written module (``@main`` is the function): both
    modes against central finite differences of the module itself."""
    rng = np.random.default_rng(seed)
    args = [np.asarray(a) for a in args]
    if active is None:
        active = [i for i, a in enumerate(args) if np.issubdtype(a.dtype, np.inexact)]
    ctx = make_context()
    with ctx, ir.Location.unknown():
        prim_mod = ir.Module.parse(text)
    expand(prim_mod)  # markers inside the function itself (nested differentiation)
    outs = run(prim_mod, *args)
    nres = len(outs)
    diff_res = [j for j, o in enumerate(outs) if np.issubdtype(o.dtype, np.inexact)]
    seeds = {j: rng.standard_normal(outs[j].shape).astype(outs[j].dtype) for j in diff_res}
    tans = {i: rng.standard_normal(args[i].shape).astype(args[i].dtype) for i in active}
    x0 = [args[i] for i in active]
    h = 1e-6 * max([1.0] + [float(np.max(np.abs(x))) for x in x0 if x.size])
    xp = [a + h * tans[i] if i in active else a for i, a in enumerate(args)]
    xm = [a - h * tans[i] if i in active else a for i, a in enumerate(args)]
    fdd = [(a - b) / (2 * h) for a, b in zip(run(prim_mod, *xp), run(prim_mod, *xm))]
    markers = [Marker("rev", ["active" if i in active else "const" for i in range(len(args))],
                      ["active" if j in diff_res else "const" for j in range(nres)]),
               Marker("fwd", ["dup" if i in active else "const" for i in range(len(args))],
                      ["dup" if j in diff_res else "const" for j in range(nres)])]
    margs = list(args) + [seeds[j] for j in diff_res]
    for i, a in enumerate(args):
        margs.append(a)
        if i in active:
            margs.append(tans[i])
    m = build(text, markers)
    expand(m, **(extra or {}))
    res = run(m, *margs)
    grads = res[nres:nres + len(active)]
    tout = res[2 * nres + len(active):]
    for a, b in zip(res[:nres], outs):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for k, j in enumerate(diff_res):
        np.testing.assert_allclose(tout[k], fdd[j], rtol=fd_rtol, atol=fd_atol, err_msg=f"tangent {j} vs FD")
    lhs = sum(float(np.sum(seeds[j] * fdd[j])) for j in diff_res)
    rhs = sum(float(np.sum(g * tans[i])) for g, i in zip(grads, active))
    assert abs(lhs - rhs) <= fd_atol * 10 + fd_rtol * max(abs(lhs), abs(rhs), 1.0), (lhs, rhs)
    return grads, tout, [seeds[j] for j in diff_res]
