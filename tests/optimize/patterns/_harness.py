"""The test harness for rewrite patterns: parse a small StableHLO module, apply one named
pattern, check the IR, and run the module before and after through PJRT on random inputs
(differential execution).

A test table row is ``case(pattern_name, module_text, has=..., lacks=..., **options)``
(or ``rcase(...)``, the same row written with regexes over the whole module):

- ``has`` / ``lacks``: substrings that must / must not appear in ``@main`` after the rewrite
  (op names such as ``"stablehlo.add"`` or bits of text);
- ``fires=False``: the pattern must not change the module (a negative case);
- ``inputs``: how to draw float inputs: ``"normal"`` (default), ``"pos"`` (0.5..2),
  ``"unit"`` (0.1..0.9), ``"int"`` (small integers as floats), or a callable
  ``(rng, shape, dtype) -> array``; integer inputs are drawn from -20..20 (0..40 unsigned),
  booleans uniformly;
- ``rtol`` / ``atol``: float tolerances; integer and boolean results compare exactly;
- ``present`` / ``absent``: regexes that must / must not match the whole module after;
- ``int_range``: draw integer inputs from this range instead (indices in bounds, say);
- ``also``: more pattern names applied together with the first (for rewrites that need a
  helper pattern to show their effect); ``fast_math``: enable fast-math-only patterns.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from jaxlib.mlir import ir

from reactant.optimize.patterns import PATTERNS, apply_patterns
from reactant.ir.context import make_context


@dataclass
class Case:
    name: str
    text: str
    has: tuple = ()
    lacks: tuple = ()
    fires: bool = True
    inputs: Any = "normal"
    rtol: float = 1e-5
    atol: float = 1e-6
    also: tuple = ()
    run: bool = True
    zero_sign: bool = True
    id: str = ""
    extra: dict = field(default_factory=dict)
    present: tuple = ()
    absent: tuple = ()
    int_range: tuple | None = None


def case(name: str, text: str, has=(), lacks=(), **kw) -> Case:
    has = (has,) if isinstance(has, str) else tuple(has)
    lacks = (lacks,) if isinstance(lacks, str) else tuple(lacks)
    c = Case(name, text, has, lacks, **kw)
    return c


def rcase(pattern: str, text: str, present=(), absent=(), changed: bool = True, also=(), *, id: str = "",
          int_range=(0, 8), rtol: float = 1e-5, atol: float = 1e-5, run: bool = True) -> Case:
    """A row checked with regexes over the whole module; integer inputs in ``int_range``;
    ``changed=False``: the pattern must not apply."""
    return Case(pattern, text, fires=changed, also=tuple(also), id=id, rtol=rtol, atol=atol, run=run,
                zero_sign=False, present=tuple(present), absent=tuple(absent), int_range=int_range)


def params(cases) -> list:
    """``pytest.param`` per row, with readable ids."""
    return [pytest.param(c, id=i) for c, i in zip(cases, case_ids(cases))]


def case_ids(cases) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for c in cases:
        base = c.id or c.name + ("" if c.fires else "-neg")
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.append(base if k == 0 else f"{base}-{k}")
    return out


# -- parsing and rewriting -------------------------------------------------------------------

def parse(text: str) -> ir.Module:
    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        return ir.Module.parse(text)


def to_text(module: ir.Module) -> str:
    return module.operation.get_asm(enable_debug_info=False)


def apply_named(text: str, names, *, max_iterations: int = 16) -> ir.Module:
    """``text`` with the named patterns applied (verified)."""
    m = parse(text)
    pats = [PATTERNS[n] for n in names]
    with m.context, ir.Location.unknown(m.context):
        apply_patterns(m, pats, max_iterations=max_iterations)
        assert m.operation.verify()
    return m


def rewrite(text: str, names, *, max_iterations: int = 16) -> str:
    """Apply the named patterns to ``text``; returns the verified result's text."""
    return to_text(apply_named(text, names, max_iterations=max_iterations))


def main_body(text: str) -> str:
    """The text of ``func.func @main`` (other functions excluded)."""
    i = text.find("@main(")
    assert i >= 0, text
    j = text.find("func.func", i)
    return text[i:] if j < 0 else text[i:j]


# -- PJRT ------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _backend():
    import jax
    import jax.extend  # noqa: F401

    b = jax.extend.backend.get_backend("cpu")
    return b, b.devices()[0]


@functools.lru_cache(maxsize=512)
def compile_text(text: str):
    from jaxlib import xla_client as xc

    b, dev = _backend()
    return b.compile_and_load(text, xc.DeviceList((dev,)), xc.CompileOptions())


_DT = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i1": np.bool_,
       "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
       "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64}


def main_arg_types(text: str) -> list[tuple[tuple[int, ...], Any]]:
    """(shape, numpy dtype) of each ``@main`` argument."""
    from reactant.ir.context import main_arg_specs

    return main_arg_specs(parse(text))


def draw(rng: np.random.Generator, shape, dtype, how="normal", int_range=None):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu" and int_range is not None:
        return rng.integers(int_range[0], int_range[1], size=shape).astype(dtype)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -20
        return rng.integers(lo, lo + 41, size=shape).astype(dtype)
    if callable(how):
        return np.asarray(how(rng, shape, dtype)).astype(dtype)
    if how == "pos":
        x = rng.uniform(0.5, 2.0, shape)
    elif how == "unit":
        x = rng.uniform(0.1, 0.9, shape)
    elif how == "int":
        x = rng.integers(-8, 9, size=shape)
    else:
        x = rng.standard_normal(shape)
    return np.asarray(x).astype(dtype)


def execute(text: str, args) -> list[np.ndarray]:
    import jax

    exe = compile_text(text)
    _, dev = _backend()
    with jax.enable_x64(True):  # keep 64-bit inputs 64-bit
        outs = exe.execute([jax.device_put(np.asarray(a), dev) for a in args])
        return [np.asarray(o) for o in outs]


def assert_same_results(before, after, *, rtol=1e-5, atol=1e-6, what="", zero_sign=True):
    """Same shapes and dtypes; floats to tolerance (NaN where NaN, and with ``zero_sign`` the
    same sign where both are zero); integers and booleans exactly."""
    assert len(before) == len(after), what
    for i, (x, y) in enumerate(zip(before, after)):
        assert x.shape == y.shape and x.dtype == y.dtype, (what, i, x.shape, y.shape, x.dtype, y.dtype)
        if x.dtype.name == "bfloat16":
            x, y = x.astype(np.float32), y.astype(np.float32)
        if x.dtype.kind in "fc":
            np.testing.assert_allclose(y, x, rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"{what} result {i}")
            if zero_sign and x.dtype.kind == "f":
                z = (x == 0) & (y == 0)
                assert (np.signbit(x[z]) == np.signbit(y[z])).all(), f"{what} result {i}: sign of zero"
        else:
            np.testing.assert_array_equal(y, x, err_msg=f"{what} result {i}")


def differential(before: str, after: str, *, inputs="normal", rtol=1e-5, atol=1e-6, seed=0,
                 what="", zero_sign=True, int_range=None):
    rng = np.random.default_rng(seed)
    args = [draw(rng, s, d, inputs, int_range) for s, d in main_arg_types(before)]
    assert_same_results(execute(before, args), execute(after, args), rtol=rtol, atol=atol, what=what,
                        zero_sign=zero_sign)


def check_case(c: Case) -> str:
    """Run one table row: rewrite, IR expectations, differential execution. Returns the
    rewritten text."""
    before = to_text(parse(c.text))
    baseline = rewrite(before, ())  # the driver alone (hoists constants, drops dead ops)
    after = rewrite(before, (c.name,) + tuple(c.also))
    body = main_body(after)
    if not c.fires:
        assert after == baseline, f"{c.name} should not fire:\n{after}"
    else:
        assert after != baseline, f"{c.name} did not fire:\n{before}"
    for s in c.has:
        assert s in body, f"{c.name}: expected {s!r} in\n{body}"
    for s in c.lacks:
        assert s not in body, f"{c.name}: did not expect {s!r} in\n{body}"
    for rx in c.present:
        assert re.search(rx, after), f"{c.name}: expected /{rx}/ in\n{after}"
    for rx in c.absent:
        assert not re.search(rx, after), f"{c.name}: did not expect /{rx}/ in\n{after}"
    if c.run and c.fires:
        differential(before, after, inputs=c.inputs, rtol=c.rtol, atol=c.atol, what=c.name,
                     zero_sign=c.zero_sign, int_range=c.int_range)
    return after


def fn(args: str, results: str, body: str) -> str:
    """Module text of ``func.func @main(args) -> results { body }``; ``body`` ends with the
    return op. Lines may be separated by ``;`` for compactness."""
    lines = [ln.strip() for ln in re.split(r"[;\n]", body) if ln.strip()]
    return ("func.func @main(" + args + ") -> " + results + " {\n  "
            + "\n  ".join(lines) + "\n}\n")


# -- a small inliner (MLIR's ``inline`` pass cannot inline func.call in jaxlib's build: no
#    func inliner extension is registered) --------------------------------------------------

def inline_calls(module: ir.Module) -> ir.Module:
    """Inline every ``func.call`` of a function defined in ``module`` and drop the private
    functions left unused (the optimizer's ``inline`` pass). In place; returns the module."""
    from reactant.optimize.inline import inline
    from reactant.optimize.passes import PassOptions

    with module.context, ir.Location.unknown(module.context):
        inline(module, PassOptions())
    return module
