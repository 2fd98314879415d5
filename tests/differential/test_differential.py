"""Differential tests: random NumPy programs give NumPy's answer in reactant, in every mode.

The CI part runs ``CI_PROGRAMS`` programs of the small profile (seeds 0..CI_PROGRAMS-1) in
every mode, in chunks of ``CHUNK`` seeds (one test each, so that xdist spreads them), and
fails on any mismatch or crash, printing each failing program's seed, mode and source. The
saved regression cases (``cases/``) run in every mode too. The long form is
``benchmarks/differential.py`` (and the ``slow`` tests here, run with REACTANT_SLOW=1; the README's
test command runs the first ``FAST_CHUNKS`` chunks only, ``.ci/run`` all of them).

Reproduce a failure: ``python -c "from tests.differential.runner import run_seed;
print(run_seed(SEED, 'small'))"`` from the repository root.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from .generator import ALL_FEATURES, ROLL_MIN_OPS, ArgSpec, Program, generate
from .regressions import cases, dump, parse
from .runner import (ALL_MODES, CLEAR_ERRORS, Reference, _Diff, _is_product_error, _max_moves, _trees, compare,
                     failure_report, load, reference, run_mode, run_pool, run_program, summary_line, unload)

# 300 programs x 7-9 modes: ~520 s of CPU (~4.5 min on 2 xdist workers), most of it XLA
# compilations (6 per program, fewer where modes trace the same program) and eager operations
CI_PROGRAMS = int(os.environ.get("REACTANT_DIFF_PROGRAMS", "300"))
CHUNK = 10
FAST_CHUNKS = 1  # 10 programs in the default tier (besides the saved cases); all CI_PROGRAMS with REACTANT_SLOW=1 (.ci/run)
# The CI part runs each chunk in a worker process, so that a crash is reported as one (with the
# seed and source) instead of killing the test session; a chunk whose worker died is run again
# program by program (a warning names it: a crash that needs the history of the process), and a
# mode whose own process dies fails the test. (Found this way: egglog's
# (push)/(pop) corrupted the heap, shown as an abort in a later compile.)


def _fail_on(results) -> None:
    bad = [o for r in results for o in r.outcomes if o.status in ("mismatch", "crash")]
    if bad:
        shown = "\n".join(failure_report(o) for o in bad[:4])
        more = f"\n... and {len(bad) - 4} more" if len(bad) > 4 else ""
        pytest.fail(f"{summary_line(results)}\n{shown}{more}", pytrace=False)


# -- the generator ------------------------------------------------------------------------------
def test_programs_are_deterministic_valid_numpy_and_mix_every_feature():
    seen, trips, invalid, kinds = set(), [], 0, set()
    for seed in range(150):
        for profile in ("small", "full"):
            p = generate(seed, profile)
            assert generate(seed, profile).source == p.source
            assert [a.shape for a in p.inputs()] == [a.shape for a in generate(seed, profile).inputs()]
            np.testing.assert_array_equal(p.inputs()[0], generate(seed, profile).inputs()[0])
            seen.update(p.features)
            kinds.add(p.kind + ("-grad" if p.grad else ""))
            trips += [int(t) for t in re.findall(r"for i in range\((\d+)\)", p.source)]
            assert all(max(a.shape) <= 16 for a in p.args)
            module = load(p)
            try:
                reference(p, module)
            except Exception:  # noqa: BLE001 - counted: the runner discards these
                invalid += 1
            finally:
                unload(module)
    assert seen == set(ALL_FEATURES)
    assert kinds == {"function", "function-grad", "class"}
    # trip counts from 1 to ~70: with bodies of 1..20 ops, across ROLL_MIN_OPS unrolled ops
    assert min(trips) == 1 and max(trips) >= 60 and ROLL_MIN_OPS >= 500
    assert invalid <= 3, f"{invalid} of 300 programs fail in NumPy"


def test_compare_finds_each_kind_of_difference():
    compare((np.float64(1.0), np.arange(3.0)), (1.0 + 1e-12, np.arange(3.0)), "r")  # within tolerance
    cases_ = [
        ((np.zeros(3),), (np.zeros(3), np.zeros(3)), "structure"),
        (np.zeros(3), np.zeros(4), "shape"),
        (np.zeros(3, np.int32), np.zeros(3, np.int64), "dtype"),
        (np.zeros(3), np.zeros(3, np.int64), "dtype"),
        (np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 2.001]), "values differ at 1 of 3"),
        (np.array([1, 2]), np.array([1, 3]), "values differ at 1 of 2"),
        ("text", np.zeros(2), "want an array"),
    ]
    for got, want, what in cases_:
        with pytest.raises(_Diff, match=what):
            compare(got, want, "r")


def test_a_program_that_amplifies_rounding_is_compared_within_its_own_spread():
    # NumPy's own result moved by 2e-7 with inputs one ulp away: a difference up to ten times
    # that is rounding the program amplifies (a sum in another order), more is a difference
    want = np.array([1.5, 2.0])
    compare(want + 1e-6, want, "r", 2e-7)
    for got, spread in ((want + 1e-6, None), (want + 1e-5, 2e-7), (want + 1e-6, -1.0)):
        with pytest.raises(_Diff, match="values differ"):
            compare(got, want, "r", spread)
    # a move that is not small (a branch flipped by an ulp) gives no tolerance, whatever the
    # other runs moved; integers none at all
    ref = Reference([(want, np.arange(2))], [[want.copy()]], {})
    acc = _max_moves(_trees(ref), _trees(ref), None)
    assert acc == [[[0.0, None]], [[0.0]], {}]
    far = Reference([(want + 1.0, np.arange(2))], [[want.copy()]], {})
    acc = _max_moves(_trees(far), _trees(ref), acc)
    near = Reference([(want + 1e-9, np.arange(2))], [[want.copy()]], {})
    assert _max_moves(_trees(near), _trees(ref), acc)[0][0][0] == -1.0


def test_exceptions_are_classified_as_clear_errors_or_crashes():
    import reactant

    assert _is_product_error(reactant.ShapeError("operands do not broadcast")) == "error"
    assert _is_product_error(ValueError("operands could not be broadcast")) == "error"
    assert all(issubclass(t, Exception) for t in CLEAR_ERRORS)
    for e in (ValueError(), KeyError("k"), AttributeError("a"), AssertionError(), RuntimeError("r")):
        assert _is_product_error(e) == "crash", e


def test_a_wrong_answer_is_a_mismatch_naming_what_differs():
    p = Program(5, "import numpy as np\n\n\ndef prog(x, A):\n    x[1] = A[0, 0]\n    return np.sum(A, axis=0)\n",
                [ArgSpec("x", (4,), "float64"), ArgSpec("A", (2, 3), "float64")], ["test"])
    module = load(p)
    try:
        ref = reference(p, module)
        assert run_mode(p, module, "eager", ref).status == "ok"
        wrong = Reference([ref.returns[0] + 1.0], [[ref.args[0][0], ref.args[0][1]]], {})
        wrong.args[0][0] = wrong.args[0][0].copy()
        wrong.args[0][0][3] += 0.5
        out = run_mode(p, module, "eager", wrong)
    finally:
        unload(module)
    assert out.status == "mismatch" and out.seed == 5 and "def prog" in out.source
    assert out.detail.splitlines()[0].startswith("return: values differ at 3 of 3")
    assert out.detail.splitlines()[1].startswith("argument x: values differ at 1 of 4")


def test_a_case_file_round_trips():
    p = generate(7, "small", kind="class")
    q = parse(dump(p, "note"))
    assert (q.source, q.args, q.kind, q.calls, q.init, q.grad) == (p.source, p.args, p.kind, p.calls, p.init, p.grad)
    np.testing.assert_array_equal(q.inputs(1)[0], p.inputs(1)[0])


# -- the CI part: every program in every mode ----------------------------------------------------
# (the first FAST_CHUNKS chunks run in the default tier, the rest with the slow tier)
@pytest.mark.parametrize("chunk", [c if c < FAST_CHUNKS else pytest.param(c, marks=pytest.mark.slow)
                                   for c in range(max(1, CI_PROGRAMS // CHUNK))])
def test_generated_programs_in_every_mode(chunk):
    seeds = list(range(chunk * CHUNK, min((chunk + 1) * CHUNK, CI_PROGRAMS)))
    results = run_pool(seeds, ALL_MODES, jobs=1, profile="small")
    died = sorted({r.seed for r in results for o in r.outcomes if o.exc_type == "WorkerDied"})
    if died:  # which program: each alone, in a process of its own (its crash then fails the test)
        import warnings

        warnings.warn(f"differential: a worker died at seeds {died}; run again one per process", stacklevel=1)
        again = {s: run_pool([s], ALL_MODES, jobs=1, profile="small")[0] for s in died}
        results = [again.get(r.seed, r) for r in results]
    assert sum(not r.valid for r in results) <= 1, [r.invalid for r in results if not r.valid]
    _fail_on(results)


SAVED = cases()


@pytest.mark.parametrize("name", sorted(SAVED) or [pytest.param(None, marks=pytest.mark.skip(reason="no saved case"))])
def test_saved_case_in_every_mode(name):
    res = run_program(SAVED[name], ALL_MODES)
    assert res.valid, res.invalid
    _fail_on([res])


# -- the long form -----------------------------------------------------------------------------
@pytest.mark.slow
def test_a_dead_worker_is_a_crash_of_that_mode_and_the_run_goes_on(monkeypatch):
    monkeypatch.setenv("REACTANT_DIFF_ABORT", "1:keep-O0")
    results = run_pool([0, 1, 2], ("auto-O0", "keep-O0", "eager"), jobs=1, profile="small")
    assert [r.seed for r in results] == [0, 1, 2]
    dead = [o for o in results[1].outcomes if o.mode == "keep-O0"]
    assert len(dead) == 1 and dead[0].status == "crash" and "signal 6" in dead[0].detail
    assert {o.mode for o in results[1].outcomes} == {"auto-O0", "keep-O0", "eager"}
    assert all(len(r.outcomes) == 3 for r in results)


@pytest.mark.skipif("REACTANT_DIFF_LONG" not in os.environ,
                    reason="the long form: REACTANT_DIFF_LONG=N runs N full-profile programs")
def test_long_form_full_programs_in_every_mode():
    count = int(os.environ["REACTANT_DIFF_LONG"])
    _fail_on(run_pool(range(10_000, 10_000 + count), ALL_MODES, jobs=2, profile="full"))
