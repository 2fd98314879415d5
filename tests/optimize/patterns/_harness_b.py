"""Table-driven test harness for the rewrite-pattern families B (slicing, gather/scatter,
control flow, select) and the corpus tests.

A ``Case`` is one row: a small module, the pattern(s) to apply, what the IR must (and must
not) contain afterwards. ``check_rewrite`` applies just those patterns with
``apply_patterns(module, [PATTERNS[name]])`` and checks the IR; ``check_execution``
compiles the module before and after through PJRT and compares the results on random
inputs with ``numpy.testing``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pytest
from jaxlib.mlir import ir

from reactant.ir.context import parse_module, to_text
from reactant.ir.context import count_ops
from reactant.optimize.patterns import PATTERNS, apply_patterns


@dataclass
class Case:
    pattern: str                      # pattern name (a key of PATTERNS)
    before: str                       # module text with a public func.func @main
    present: Sequence[str] = ()       # regexes that must match the IR after
    absent: Sequence[str] = ()        # regexes that must not match after
    changed: bool = True              # False: the pattern must not apply
    also: Sequence[str] = ()          # more patterns applied together with `pattern`
    inputs: Callable | None = None    # rng -> list of numpy arrays
    id: str = ""                      # distinguishes several rows of one pattern
    int_range: tuple[int, int] = (0, 8)
    rtol: float = 1e-5
    atol: float = 1e-5
    run: bool = True                  # False: XLA cannot compile it (e.g. recursive calls)

    @property
    def test_id(self) -> str:
        return self.pattern + (f"-{self.id}" if self.id else "")


def params(cases: Sequence[Case]):
    return [pytest.param(c, id=c.test_id) for c in cases]


# -- IR -------------------------------------------------------------------------------------

def wrap(text: str) -> str:
    return text if "module" in text.split("func.func")[0] else f"module {{\n{text}\n}}"


def apply_named(text: str, names: Sequence[str], max_iterations: int = 16) -> ir.Module:
    module = parse_module(wrap(text))
    with module.context, ir.Location.unknown(module.context):
        apply_patterns(module, [PATTERNS[n] for n in names], max_iterations=max_iterations)
        module.operation.verify()
    return module


def ops_of(module: ir.Module) -> list[str]:
    names = []

    def visit(op):
        names.append(op.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return names


def check_rewrite(case: Case) -> ir.Module:
    assert case.pattern in PATTERNS, f"pattern {case.pattern!r} is not registered"
    for n in case.also:
        assert n in PATTERNS, f"pattern {n!r} is not registered"
    before = parse_module(wrap(case.before))
    before.operation.verify()
    # the greedy driver moves and uniques constants even when no pattern applies: compare
    # against the module after a driver run with no patterns
    before_txt = to_text(apply_named(case.before, []))
    after = apply_named(case.before, [case.pattern, *case.also])
    after_txt = to_text(after)
    if case.changed:
        assert after_txt != before_txt, f"{case.pattern} did not apply:\n{after_txt}"
    else:
        assert after_txt == before_txt, f"{case.pattern} must not apply here:\n{after_txt}"
    for rx in case.present:
        assert re.search(rx, after_txt), f"expected /{rx}/ after {case.pattern}:\n{after_txt}"
    for rx in case.absent:
        assert not re.search(rx, after_txt), f"unexpected /{rx}/ after {case.pattern}:\n{after_txt}"
    return after


# -- execution through PJRT -----------------------------------------------------------------

_backend = []


def backend():
    if not _backend:
        import jax
        import jax.extend  # noqa: F401

        b = jax.extend.backend.get_backend()
        _backend.append((b, b.devices()[0]))
    return _backend[0]


def compile_text(text: str):
    import jaxlib.xla_client as xc

    b, dev = backend()
    return b.compile_and_load(text, xc.DeviceList((dev,)), xc.CompileOptions())


def execute(text: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    import jax

    _, dev = backend()
    exe = compile_text(text)
    with jax.enable_x64(True):
        bufs = [jax.device_put(np.asarray(x), dev) for x in inputs]
        outs = exe.execute(bufs)
        return [np.asarray(o) for o in outs]




def main_arg_types(module: ir.Module) -> list[tuple[tuple[int, ...], np.dtype]]:
    from reactant.ir.context import main_arg_specs

    return main_arg_specs(module)


def random_inputs(module: ir.Module, rng: np.random.Generator, int_range=(0, 8)) -> list[np.ndarray]:
    xs = []
    for shape, dt in main_arg_types(module):
        if dt == np.bool_:
            xs.append(rng.random(shape) < 0.5)
        elif np.issubdtype(dt, np.integer):
            xs.append(rng.integers(int_range[0], int_range[1], size=shape).astype(dt))
        else:
            xs.append(rng.standard_normal(shape).astype(dt))
    return xs


def assert_same(a: Sequence[np.ndarray], b: Sequence[np.ndarray], rtol=1e-5, atol=1e-5, what=""):
    assert len(a) == len(b), f"{what}: {len(a)} vs {len(b)} results"
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.shape == y.shape and x.dtype == y.dtype, f"{what} result {i}: {x.shape}{x.dtype} vs {y.shape}{y.dtype}"
        if np.issubdtype(x.dtype, np.floating):
            np.testing.assert_allclose(y, x, rtol=rtol, atol=atol, err_msg=f"{what} result {i}")
        else:
            np.testing.assert_array_equal(y, x, err_msg=f"{what} result {i}")


def check_execution(case: Case, seed: int = 0) -> None:
    if not case.run:
        pytest.skip("not executable by XLA")
    before = parse_module(wrap(case.before))
    after = apply_named(case.before, [case.pattern, *case.also])
    rng = np.random.default_rng(seed)
    inputs = case.inputs(rng) if case.inputs else random_inputs(before, rng, case.int_range)
    want = execute(to_text(before), inputs)
    got = execute(to_text(after), inputs)
    assert_same(want, got, case.rtol, case.atol, case.test_id)


def op_count(text_or_module) -> int:
    m = parse_module(wrap(text_or_module)) if isinstance(text_or_module, str) else text_or_module
    return count_ops(m)
