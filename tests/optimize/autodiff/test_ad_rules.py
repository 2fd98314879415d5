"""Every derivative rule in both modes: a small JAX function that lowers to the op is
differentiated by the pass (reverse and forward marker in one module, one compile) and
compared with jax.vjp / jax.jvp and central finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest

from adtest_util import check_function, jax, jnp

from jax import lax
import jax.scipy.special as sp

R = np.random.default_rng(1234)


def rn(*shape):
    return R.standard_normal(shape)


def pos(*shape, lo=0.5, hi=2.0):
    return R.uniform(lo, hi, shape)


def uni(*shape, lo=-0.8, hi=0.8):
    return R.uniform(lo, hi, shape)


S = (3, 4)


def _sharded_sin(x):
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    return jax.lax.with_sharding_constraint(jnp.sin(x), NamedSharding(mesh, PartitionSpec("x"))) * x


# name: (function, args, options)
UNARY = {
    "exponential": (jnp.exp, [rn(*S)]),
    "exponential_minus_one": (jnp.expm1, [rn(*S)]),
    "log": (jnp.log, [pos(*S)]),
    "log_plus_one": (jnp.log1p, [pos(*S, lo=-0.5, hi=2.0)]),
    "logistic": (lax.logistic, [rn(*S)]),
    "tanh": (jnp.tanh, [rn(*S)]),
    "sine": (jnp.sin, [rn(*S)]),
    "cosine": (jnp.cos, [rn(*S)]),
    "tan": (jnp.tan, [uni(*S)]),
    "sqrt": (jnp.sqrt, [pos(*S)]),
    "rsqrt": (lax.rsqrt, [pos(*S)]),
    "cbrt": (jnp.cbrt, [pos(*S)]),
    "negate": (jnp.negative, [rn(*S)]),
    "abs": (jnp.abs, [rn(*S)]),
    "chlo.erf": (sp.erf, [rn(*S)]),
    "chlo.erfc": (sp.erfc, [rn(*S)]),
    "chlo.erf_inv": (sp.erfinv, [uni(*S)]),
    "chlo.lgamma": (lax.lgamma, [pos(*S)]),
    "chlo.digamma": (lax.digamma, [pos(*S)]),
    "chlo.polygamma": (lambda x: sp.polygamma(1, x), [pos(*S)]),
    "chlo.zeta": (lambda q: sp.zeta(3.0, q), [pos(*S)]),
    "chlo.sinh": (jnp.sinh, [rn(*S)]),
    "chlo.cosh": (jnp.cosh, [rn(*S)]),
    "chlo.asin": (jnp.arcsin, [uni(*S)]),
    "chlo.acos": (jnp.arccos, [uni(*S)]),
    "chlo.atan": (jnp.arctan, [rn(*S)]),
    "chlo.asinh": (jnp.arcsinh, [rn(*S)]),
    "chlo.acosh": (jnp.arccosh, [pos(*S, lo=1.2, hi=3.0)]),
    "chlo.atanh": (jnp.arctanh, [uni(*S)]),
    "chlo.square": (jnp.square, [rn(*S)]),
    "reduce_precision": (lambda x: lax.reduce_precision(x, 11, 52), [rn(*S)]),
}

BINARY = {
    "add": (jnp.add, [rn(*S), rn(*S)]),
    "subtract": (jnp.subtract, [rn(*S), rn(*S)]),
    "multiply": (jnp.multiply, [rn(*S), rn(*S)]),
    "divide": (jnp.divide, [rn(*S), pos(*S)]),
    "power": (lax.pow, [pos(*S), rn(*S)]),
    "atan2": (jnp.arctan2, [rn(*S), rn(*S)]),
    "maximum": (jnp.maximum, [rn(*S), rn(*S)]),
    "minimum": (jnp.minimum, [rn(*S), rn(*S)]),
    "remainder": (lax.rem, [pos(*S, lo=2.1, hi=5.0), pos(*S, lo=0.7, hi=0.9)]),
    "select": (lambda p, a, b: jnp.where(p > 0, a, b), [rn(*S), rn(*S), rn(*S)]),
    "clamp": (lambda lo, x, hi: lax.clamp(lo, x, hi), [-np.abs(rn(*S)) - 0.1, rn(*S), np.abs(rn(*S)) + 0.1]),
    "optimization_barrier": (lambda x, y: sum(lax.optimization_barrier((x * y, y))), [rn(*S), rn(*S)]),
    "sdy.sharding_constraint": (_sharded_sin, [rn(*S)]),
    "convert_f32": (lambda x: (x.astype(jnp.float32) * 2).astype(jnp.float64), [rn(*S)], dict(fd=False, rtol=1e-6)),
    "complex_real_imag": (lambda x, y: jnp.real(lax.complex(x, y) * lax.complex(y, x) + jnp.exp(lax.complex(x, y)))
                          + jnp.imag(lax.complex(x, y) ** 2), [rn(*S), rn(*S)]),
}

SHAPE = {
    "broadcast_in_dim": (lambda x, y: jnp.broadcast_to(x[:, None], (3, 4)) * y + jnp.broadcast_to(y[:1], (3, 4)),
                         [rn(3), rn(*S)]),
    "reshape": (lambda x: jnp.reshape(x, (2, 6)) ** 2, [rn(*S)]),
    "transpose": (lambda x: jnp.transpose(x, (2, 0, 1)) * jnp.arange(24.0).reshape(4, 2, 3), [rn(2, 3, 4)]),
    "slice": (lambda x: x[1:3, ::2] * 3 + x[:1, 1:4:2], [rn(*S)]),
    "dynamic_slice": (lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)) ** 2, [rn(*S), np.int64(2)]),
    "dynamic_update_slice": (lambda x, u, i: lax.dynamic_update_slice(x, u * u, (i, 1)) * x,
                             [rn(*S), rn(2, 2), np.int64(1)]),
    "pad": (lambda x, v: lax.pad(x, v, [(1, -1, 1), (-1, 2, 0)]) ** 2, [rn(*S), np.float64(0.7)]),
    "concatenate": (lambda x, y: jnp.concatenate([x, y * y, x], axis=1), [rn(*S), rn(3, 2)]),
    "reverse": (lambda x: jnp.flip(x, (0, 1)) * x, [rn(*S)]),
}

INDEX = {
    "gather": (lambda x: x[np.array([2, 0, 2, 1])] * 2.0, [rn(*S)]),
    "gather_take_along": (lambda x: jnp.take_along_axis(x, np.array([[0, 3], [1, 1], [2, 0]]), axis=1) ** 2,
                          [rn(*S)]),
    "gather_dynamic_index": (lambda x, i: x[i, 1:3] ** 2, [rn(*S), np.int32(1)]),
    "scatter_add": (lambda x, u: x.at[np.array([1, 0, 1])].add(u * u), [rn(*S), rn(3, 4)]),
    "scatter_set": (lambda x, u: x.at[np.array([2, 0])].set(u * u) * x, [rn(*S), rn(2, 4)]),
    "scatter_set_duplicates": (lambda x, u: x.at[np.array([1, 0, 1])].set(u) * x, [rn(*S), rn(3, 4)]),
    "scatter_add_out_of_bounds": (lambda x, u: x.at[np.array([1, 5, 0])].add(u, mode="drop") * x,
                                  [rn(*S), rn(3, 4)]),
    "gather_2d_points": (lambda x: x[np.array([0, 2, 1, 2]), np.array([3, 0, 3, 3])] ** 2, [rn(*S)]),
    "scatter_add_2d_points": (lambda x, u: x.at[np.array([0, 2, 0]), np.array([1, 3, 1])].add(u * x[0, :3]),
                              [rn(*S), rn(3)]),
    "scatter_set_rows_of_columns": (lambda x, u: x.at[:, np.array([3, 1])].set(jnp.sin(u)) * x,
                                    [rn(*S), rn(3, 2)]),
    "sort": (lambda x: jnp.sort(x, axis=1) * jnp.arange(4.0), [rn(*S)]),
    "sort_multi": (lambda x, y: lax.sort((x, y), dimension=0, num_keys=1)[1] * x, [rn(*S), rn(*S)]),
    "argsort_gather": (lambda x: x[jnp.argsort(x)] * jnp.arange(5.0), [rn(5)]),
    "chlo.top_k": (lambda x: lax.top_k(x, 2)[0] ** 2, [rn(*S)]),
}

REDUCE = {
    "reduce_add": (lambda x: jnp.sum(x, axis=1) ** 2 + jnp.sum(x), [rn(*S)]),
    "reduce_max": (lambda x: jnp.max(x, axis=0) * jnp.arange(4.0), [rn(*S)]),
    "reduce_min": (lambda x: jnp.min(x, axis=(0, 1)), [rn(*S)]),
    "reduce_mul": (lambda x: jnp.prod(x, axis=1), [rn(*S)]),
    "reduce_mul_zeros": (lambda x: jnp.prod(x * np.array([[0, 1, 1, 1], [0, 1, 0, 1], [1, 1, 1, 1.]]), axis=1),
                         [rn(*S)]),
    "reduce_window_add": (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2), [(1, 0), (0, 1)]) ** 2,
                          [rn(5, 6)]),
    "reduce_window_add_dilated": (
        lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 3), (2, 1), [(0, 1), (2, 0)], base_dilation=(2, 1),
                                    window_dilation=(1, 2)) ** 2, [rn(4, 6)]),
    "reduce_window_max": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 1), [(0, 1), (1, 0)]) ** 2,
                          [rn(5, 6)]),
    "reduce_window_min": (lambda x: lax.reduce_window(x, jnp.inf, lax.min, (3, 2), (1, 2), [(1, 1), (0, 0)]),
                          [rn(5, 6)]),
}


def _argmax_value(x):
    idx = lax.broadcasted_iota(jnp.int32, x.shape, 1)

    def comp(a, b):
        (av, ai), (bv, bi) = a, b
        pick = av >= bv
        return jnp.where(pick, av, bv), jnp.where(pick, ai, bi)

    v, _ = lax.reduce((x, idx), (-jnp.inf, np.int32(0)), comp, (1,))
    return v * 2.0


FD_ONLY = {
    # JAX's vjp fails on scalar bounds; with lo > hi its hi-slope is 0 where XLA returns hi
    "clamp_scalar_bounds": (lambda lo, x, hi: lax.clamp(lo, x, hi), [np.float64(-0.3), rn(*S), np.float64(0.4)]),
    "clamp_crossed_bounds": (lambda lo, x, hi: lax.clamp(lo, x, hi), [rn(*S), rn(*S), rn(*S)]),
    # JAX cannot differentiate these formulations (or uses other semantics); finite differences decide
    "reduce_argmax_value": (_argmax_value, [rn(*S)]),
    "gather_clamped_indices": (lambda x: x.at[np.array([3, -2, 1])].get(mode="promise_in_bounds") * 2.0,
                               [rn(*S)]),
    "cholesky_lower_triangle_only": (lambda a: lax.linalg.cholesky(a, symmetrize_input=False),
                                     [None], dict(platform="tpu")),
}


def _spd(n, batch=()):
    a = R.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


FD_ONLY["cholesky_lower_triangle_only"] = (FD_ONLY["cholesky_lower_triangle_only"][0],
                                           [_spd(3) + np.triu(R.standard_normal((3, 3)), 1)],
                                           dict(platform="tpu"))

TPU = dict(platform="tpu")  # stablehlo.cholesky / triangular_solve instead of LAPACK calls
LINALG = {
    "dot_general_matmul": (lambda a, b: a @ b, [rn(3, 4), rn(4, 2)]),
    "dot_general_batched": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [rn(2, 3, 4), rn(2, 4, 5)]),
    "dot_general_multi_contract": (lambda a, b: jnp.einsum("ijk,kjl->il", a, b), [rn(2, 3, 4), rn(4, 3, 2)]),
    "dot_general_batch_middle": (lambda a, b: lax.dot_general(a, b, (((2,), (0,)), ((1,), (2,)))),
                                 [rn(3, 2, 4), rn(4, 5, 2)]),
    "dot_general_vector": (lambda a, b: jnp.dot(a, b), [rn(4), rn(4)]),
    "cholesky": (lambda a: jnp.linalg.cholesky(a), [_spd(4)], TPU),
    "cholesky_batched_upper": (lambda a: jnp.linalg.cholesky(a, upper=True), [_spd(3, (2,))], TPU),
}

for _left in (True, False):
    for _lower in (True, False):
        for _ta in (False, True):
            for _unit in (False, True):
                if _ta and _unit:
                    continue
                _name = f"triangular_solve_{'L' if _left else 'R'}{'lo' if _lower else 'up'}" \
                        f"{'_T' if _ta else ''}{'_unit' if _unit else ''}"
                _a = R.standard_normal((3, 3)) + 4 * np.eye(3)
                _b = R.standard_normal((3, 2) if _left else (2, 3))
                LINALG[_name] = (
                    (lambda l, lo, t, u: lambda a, b: lax.linalg.triangular_solve(
                        a, b, left_side=l, lower=lo, transpose_a=t, unit_diagonal=u))(_left, _lower, _ta, _unit),
                    [_a, _b], TPU)

DN = ("NCHW", "OIHW", "NCHW")
CONV = {
    "conv_basic": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID"), [rn(2, 3, 6, 5), rn(4, 3, 3, 2)]),
    "conv_strided_padded": (lambda x, w: lax.conv_general_dilated(x, w, (2, 1), [(1, 2), (0, 1)]),
                            [rn(2, 3, 7, 5), rn(4, 3, 3, 2)]),
    "conv_dilated": (lambda x, w: lax.conv_general_dilated(x, w, (1, 2), [(1, 0), (2, 1)], lhs_dilation=(1, 2),
                                                           rhs_dilation=(2, 1)), [rn(1, 2, 6, 5), rn(3, 2, 2, 3)]),
    "conv_nhwc_hwio": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                             dimension_numbers=("NHWC", "HWIO", "NHWC")),
                       [rn(2, 5, 4, 3), rn(3, 2, 3, 4)]),
    "conv_feature_groups": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=2),
                            [rn(2, 4, 5, 5), rn(6, 2, 2, 2)]),
    "conv_batch_groups": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", batch_group_count=2),
                          [rn(4, 3, 5, 5), rn(4, 3, 2, 2)]),
    "conv_1d": (lambda x, w: lax.conv_general_dilated(x, w, (2,), [(2, 1)], rhs_dilation=(2,)),
                [rn(2, 3, 9), rn(2, 3, 3)]),
}

_Z = R.standard_normal((2, 8)) + 1j * R.standard_normal((2, 8))
FFT = {
    "fft": (lambda z: jnp.fft.fft(z * z), [_Z], dict(fd=False)),
    "ifft2": (lambda z: jnp.fft.ifft2(z) * z, [_Z], dict(fd=False)),
    "rfft": (lambda x: jnp.abs(jnp.fft.rfft(x * x)) ** 2, [rn(2, 8)]),
    "irfft_even": (lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * jnp.arange(1.0, 6.0), n=8) ** 2, [rn(2, 8)]),
    "irfft_odd": (lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * jnp.arange(1.0, 5.0), n=7) ** 2, [rn(2, 7)]),
}

ALL = {}
for _tab in (UNARY, BINARY, SHAPE, INDEX, REDUCE, LINALG, CONV, FFT):
    ALL.update(_tab)


def _case(name, table):
    entry = table[name]
    f, args = entry[0], entry[1]
    opts = entry[2] if len(entry) > 2 else {}
    return f, args, opts


@pytest.mark.parametrize("name", sorted(ALL))
def test_rule(name):
    f, args, opts = _case(name, ALL)
    check_function(f, args, **opts)


@pytest.mark.parametrize("name", sorted(FD_ONLY))
def test_rule_finite_differences_only(name):
    f, args, opts = _case(name, FD_ONLY)
    check_function(f, args, jax_ref=False, **opts)


def test_every_rule_is_exercised():
    """Every op of the rule table appears in some case above (or in the hand-written modules),
    so each rule runs in both modes."""
    import re

    from test_ad_text_ops import CASES

    from adtest_util import lower
    from reactant.optimize.autodiff import RULES

    seen = set()
    for table in (ALL, FD_ONLY):
        for name in table:
            f, args, opts = _case(name, table)
            text = lower(f, *[np.asarray(a) for a in args], platform=opts.get("platform"))
            seen |= set(re.findall(r"\b((?:stablehlo|chlo|sdy)\.[a-z_0-9]+)", text))
    for text, _ in CASES.values():
        seen |= set(re.findall(r"\b((?:stablehlo|chlo|sdy)\.[a-z_0-9]+)", text))
    seen |= set(re.findall(r'"((?:stablehlo|chlo)\.[a-z_0-9]+)"', " ".join(t for t, _ in CASES.values())))
    # collectives need a mesh: tests/sharding/test_shard_map.py runs each in both modes
    seen |= {"stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.reduce_scatter",
             "stablehlo.collective_permute", "stablehlo.all_to_all"}
    missing = sorted(n for n, r in RULES.items() if r.kind != "control" and n not in seen)
    assert not missing, missing
