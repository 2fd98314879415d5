"""The late scatter-tiling pass: a large scatter whose indices are computed per element runs
as a loop over chunks; results are unchanged; it leaves alone what would not pay."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "patterns"))
from _harness import execute, main_body, parse, to_text  # noqa: E402

from reactant.optimize import pipeline, run_pipeline  # noqa: E402

N, B = 1 << 18, 1000


def _module(index_expr: str, extra_use: bool = False, n: int = N) -> str:
    """segment sum of x*w into B bins; ``index_expr`` computes %idx (i32[n]) from %ids."""
    ret_t = f"tensor<{B}xf32>" + (f", tensor<{n}xf32>" if extra_use else "")
    extra = (f"""    %g = "stablehlo.gather"(%x, %i2) <{{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}}> : (tensor<{n}xf32>, tensor<{n}x1xi32>) -> tensor<{n}xf32>
    return %r, %g : {ret_t}""" if extra_use else f"    return %r : {ret_t}")
    return f"""func.func public @main(%x: tensor<{n}xf32>, %w: tensor<{n}xf32>, %ids: tensor<{n}xi32>) -> ({ret_t}) {{
    %z = stablehlo.constant dense<0.0> : tensor<{B}xf32>
    %nn = stablehlo.constant dense<{B}> : tensor<{n}xi32>
    %v = stablehlo.multiply %x, %w : tensor<{n}xf32>
{index_expr}
    %i2 = stablehlo.reshape %idx : (tensor<{n}xi32>) -> tensor<{n}x1xi32>
    %r = "stablehlo.scatter"(%z, %i2, %v) <{{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }}) : (tensor<{B}xf32>, tensor<{n}x1xi32>, tensor<{n}xf32>) -> tensor<{B}xf32>
{extra}
}}"""


WRAP = """    %a1 = stablehlo.add %ids, %nn : tensor<NxI32>
    %idx = stablehlo.remainder %a1, %nn : tensor<NxI32>"""


def _wrap(n=N):
    return WRAP.replace("NxI32", f"{n}xi32")


def _run(text, names):
    m = parse(text)
    run_pipeline(m, names)
    return to_text(m)


def _inputs(n=N):
    rng = np.random.default_rng(0)
    ids = rng.integers(-B, B, n).astype(np.int32)  # negative ids wrap
    return [rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32), ids]


def test_wrapped_indices_scatter_becomes_a_chunked_loop_with_the_same_result():
    before = to_text(parse(_module(_wrap())))
    after = _run(before, ["scatter_tiling", "cse"])
    body = main_body(after)
    assert "stablehlo.while" in body and "stablehlo.dynamic_slice" in body
    assert "tensor<16384x1xi32>" in body  # 2^18 updates in 16 chunks of 2^14
    args = _inputs()
    want = np.zeros(B, np.float32)
    np.add.at(want, args[2], args[0] * args[1])
    (got_before,), (got_after,) = execute(before, args), execute(after, args)
    np.testing.assert_allclose(got_before, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_after, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("why, text", [
    ("indices read from memory", _module(f"    %idx = stablehlo.reshape %ids : (tensor<{N}xi32>) -> tensor<{N}xi32>")),
    ("wrapped indices also used by a gather", _module(_wrap(), extra_use=True)),
    ("too few updates", _module(_wrap(4096), n=4096)),
])
def test_not_tiled(why, text):
    before = to_text(parse(text))
    after = _run(before, ["scatter_tiling"])
    assert "stablehlo.while" not in main_body(after), why


def test_levels_tile_only_after_autodiff():
    """The tiling pass is a late pass: never before the AD expansion of a compile."""
    from reactant.optimize import compile_pipeline

    names = compile_pipeline("O2", has_autodiff=True)
    assert names.index("scatter_tiling") > names.index("autodiff")
    assert pipeline("O2")[-2:] == ["scatter_tiling", "cse"]
    assert "scatter_tiling" not in pipeline("O0")
