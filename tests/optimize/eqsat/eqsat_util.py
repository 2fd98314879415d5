"""Helpers for the eqsat tests: small modules, PJRT execution, e-graph soundness checks."""

from __future__ import annotations

import numpy as np
import jax
import jax.extend
import jaxlib.xla_client as xc

from reactant.ir import context as irc
from reactant.optimize import run_pipeline
from reactant.optimize.eqsat import Limits, check, run_eqsat

_backend = None


def backend():
    global _backend
    if _backend is None:
        _backend = jax.extend.backend.get_backend()
    return _backend


def parse(text: str):
    return irc.parse_module(text)


main_func = irc.main_func


def random_inputs(module, seed=0, *, positive=False):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dt in irc.main_arg_specs(module):
        if dt.kind == "f":
            a = rng.standard_normal(shape)
            out.append((np.abs(a) + 0.5 if positive else a).astype(dt))
        elif dt == np.bool_:
            out.append(rng.integers(0, 2, shape).astype(np.bool_))
        else:
            out.append(rng.integers(-50, 50, shape).astype(dt))
    return out


def execute(module, inputs):
    dev = backend().devices()[0]
    with jax.enable_x64(True):
        exe = backend().compile_and_load(irc.to_text(module), xc.DeviceList((dev,)), xc.CompileOptions())
        bufs = [jax.device_put(a, dev) for a in inputs]
        outs = exe.execute(bufs)
        return [np.asarray(o) for o in outs]


def assert_same(ref, out, rtol=1e-4, atol=1e-4):
    assert len(ref) == len(out)
    for a, b in zip(ref, out):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        if a.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b)
        else:
            scale = max(1.0, float(np.nanmax(np.abs(a.astype(np.float64)))) if a.size else 1.0)
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol * scale)


def eqsat_and_check(text: str, *, limits: Limits | None = None, seed=0, positive=False, rtol=1e-4,
                    check_classes=True, pre=("inline",), fast_math=False):
    """Run eqsat on a module given as text: every e-class must be consistent (NumPy
    interpreter on the module's random inputs) and the rewritten module must give the
    original's results through PJRT. ``fast_math`` loads the fast-math rules too (when
    ``limits`` is not given). Returns (module before, module after, report)."""
    before = parse(text)
    if pre:
        run_pipeline(before, list(pre))
    after = parse(irc.to_text(before))
    inputs = random_inputs(before, seed, positive=positive)
    problems = []

    def inspect(fz, enc):
        if not check_classes:
            return
        fn = main_func(after)
        args = list(fn.regions[0].blocks[0].arguments)
        vals = {}
        for slot in enc.leaf_slots:
            v = enc.slot_value[slot]
            if v in args:
                vals[slot] = inputs[args.index(v)]
            else:
                return  # leaves defined by opaque ops: cannot evaluate here
        problems.extend(check.check_classes(fz, enc, vals))

    # the rule tests check what the rules can reach: any predicted gain counts (the pass's own
    # threshold, Limits.min_gain, guards compiled programs against the cost model's error)
    rep = run_eqsat(after, limits or Limits(min_gain=1e-3, gainful_kinds=None, fast_math=fast_math), inspect=inspect)
    after.operation.verify()
    assert not problems, "\n".join(problems[:10])
    assert not any(s.error for s in rep.segments), [s.error for s in rep.segments]
    ref = execute(before, inputs)
    out = execute(after, inputs)
    assert_same(ref, out, rtol=rtol)
    return before, after, rep


def op_names(module) -> list[str]:
    fn = main_func(module)
    return [op.operation.name for op in fn.regions[0].blocks[0].operations]


def count(module, name: str) -> int:
    return sum(1 for n in op_names(module) if n == f"stablehlo.{name}")
