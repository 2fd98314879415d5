"""The family-A pattern cases re-typed from f32 to f16, bf16 and f64: every pattern must run
without raising and leave a verified module (all cases), and give the same results (the
algebraic cases, executed in bf16)."""

import pytest
import test_patterns_algebraic as alg
import test_patterns_dot as dot
import test_patterns_layout as lay
import test_patterns_reduce as red
from _harness import differential, parse, rewrite, to_text

ALL = [(m.__name__.split("_")[-1], c) for m in (alg, lay, dot, red) for c in m.CASES]
# hex float literals are f32 bit patterns: leave those cases out
RETYPABLE = [(fam, c) for fam, c in ALL if "f32" in c.text and "0x" not in c.text]


def _retype(text, dt):
    return text.replace("f32", dt)


@pytest.mark.parametrize("dt", ["f16", "bf16", "f64"])
def test_patterns_run_on_other_float_types(dt):
    failures = []
    for fam, c in RETYPABLE:
        text = to_text(parse(_retype(c.text, dt)))
        try:
            rewrite(text, (c.name,) + tuple(c.also))
        except Exception as e:  # noqa: BLE001 - collect them all
            failures.append((c.name, repr(e)[:200]))
    assert not failures, failures


TOL = {"bf16": dict(rtol=3e-2, atol=3e-2), "f64": dict(rtol=1e-12, atol=1e-12)}


@pytest.mark.parametrize("dt", ["bf16"])
def test_algebraic_same_results_in_other_float_types(dt):
    for fam, c in RETYPABLE:
        if fam != "algebraic" or not c.run:
            continue
        before = to_text(parse(_retype(c.text, dt)))
        after = rewrite(before, (c.name,) + tuple(c.also))
        if after == before:
            continue
        differential(before, after, inputs=c.inputs, zero_sign=c.zero_sign, what=f"{c.name} {dt}",
                     **TOL[dt])
