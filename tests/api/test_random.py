"""reactant.random: device-state generators. Streams (reproducible, advancing in place, the
same eagerly and compiled) and distributions tested statistically at fixed seeds: moments and
Kolmogorov-Smirnov tests against the exact distributions (scipy.stats)."""

import numpy as np
import pytest

import reactant
from reactant.random import default_rng


class _Stats:
    """``scipy.stats``, imported when a test first uses it (1.5 s: not at collection)."""

    def __getattr__(self, name):
        from scipy import stats as real

        return getattr(real, name)


stats = _Stats()

N = 20000
ALPHA = 1e-4  # KS significance: a correct sampler fails one seed in ten thousand


def ks_ok(sample, cdf) -> None:
    p = stats.kstest(np.asarray(sample).ravel(), cdf).pvalue
    assert p > ALPHA, p


def test_same_seed_same_stream_and_calls_advance_in_place():
    g1, g2 = default_rng(42), default_rng(42)
    a, b = np.asarray(g1.random(8)), np.asarray(g1.random(8))
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(np.asarray(g2.random(8)), a)
    np.testing.assert_array_equal(np.asarray(g2.random(8)), b)
    assert not np.array_equal(np.asarray(default_rng(43).random(8)), a)


def test_eager_and_compiled_give_the_same_stream():
    eager = default_rng(7)
    want = [np.asarray(eager.standard_normal((3, 2))), np.asarray(eager.integers(0, 100, 5))]
    g = default_rng(7)

    @reactant.compile
    def draw(g):
        return g.standard_normal((3, 2)), g.integers(0, 100, 5)

    got = draw(g)
    np.testing.assert_array_equal(np.asarray(got[0]), want[0])
    np.testing.assert_array_equal(np.asarray(got[1]), want[1])
    again = draw(g)  # the state advanced: new numbers, no recompilation
    assert not np.array_equal(np.asarray(again[0]), want[0]) and draw.compile_count == 1
    np.testing.assert_array_equal(np.asarray(again[0]), np.asarray(eager.standard_normal((3, 2))))


def test_draws_inside_a_traced_loop_advance_per_iteration():
    @reactant.compile
    def walk(g, n):
        x = np.zeros(4)
        for _ in range(reactant.keep(n)):
            x = x + g.standard_normal(4)
        return x

    g = default_rng(0)
    x = np.asarray(walk(g, 400))
    assert 0.2 < np.std(x) / np.sqrt(400) < 2.5  # a random walk, not 400 times one step


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_uniform_and_normal(dtype):
    g = default_rng(1)
    u = np.asarray(g.random(N, dtype=dtype))
    assert u.dtype == dtype and u.min() >= 0 and u.max() < 1
    ks_ok(u, "uniform")
    z = np.asarray(g.standard_normal(N, dtype=dtype))
    assert z.dtype == dtype
    ks_ok(z, "norm")
    ks_ok(np.asarray(g.normal(3.0, 2.0, N)), stats.norm(3.0, 2.0).cdf)
    ks_ok(np.asarray(g.uniform(-2.0, 5.0, N)), stats.uniform(-2.0, 7.0).cdf)


def test_exponential_gamma_beta():
    # every draw in one compiled program (eagerly, each would compile its sampler on its own)
    @reactant.compile
    def draws(g):
        return ([g.exponential(2.5, N)] + [g.gamma(a, 2.0, N) for a in (0.3, 1.0, 4.5)]
                + [g.beta(2.0, 5.0, N), g.beta(0.5, 0.5, N), g.gamma(np.array([1.0, 9.0]), size=(N, 2))])

    ex, g03, g1, g45, b25, b05, x = draws(default_rng(2))
    ks_ok(ex, stats.expon(scale=2.5).cdf)
    for a, s in zip((0.3, 1.0, 4.5), (g03, g1, g45)):
        ks_ok(s, stats.gamma(a, scale=2.0).cdf)
    ks_ok(b25, stats.beta(2.0, 5.0).cdf)
    ks_ok(b05, stats.beta(0.5, 0.5).cdf)
    # array parameters broadcast like NumPy's
    np.testing.assert_allclose(np.asarray(x).mean(0), [1.0, 9.0], rtol=0.05)


@pytest.mark.parametrize("lam", [0.5, 4.0, 30.0, 400.0])
def test_poisson(lam):
    x = np.asarray(default_rng(3).poisson(lam, N))
    assert x.dtype == np.int64
    np.testing.assert_allclose([x.mean(), x.var()], [lam, lam], rtol=0.06)
    # discrete: compare the empirical pmf with the exact one where it has mass
    ks = np.arange(x.min(), x.max() + 1)
    freq = np.array([(x == k).mean() for k in ks])
    assert np.abs(freq - stats.poisson(lam).pmf(ks)).max() < 5 * np.sqrt(stats.poisson(lam).pmf(ks).max() / N)


@pytest.mark.parametrize("n,p", [(10, 0.2), (25, 0.9), (200, 0.3), (5000, 0.6)])
def test_binomial(n, p):
    x = np.asarray(default_rng(4).binomial(n, p, N))
    np.testing.assert_allclose([x.mean(), x.var()], [n * p, n * p * (1 - p)], rtol=0.06)
    assert x.min() >= 0 and x.max() <= n
    ks = np.arange(x.min(), x.max() + 1)
    freq = np.array([(x == k).mean() for k in ks])
    pmf = stats.binom(n, p).pmf(ks)
    assert np.abs(freq - pmf).max() < 5 * np.sqrt(pmf.max() / N)


def test_integers_choice_permutation_shuffle():
    g = default_rng(5)
    x = np.asarray(g.integers(-3, 4, N))
    assert x.dtype == np.int64 and set(np.unique(x)) == set(range(-3, 4))
    assert set(np.unique(np.asarray(g.integers(5, size=1000, dtype=np.int32, endpoint=True)))) == set(range(6))
    c = np.asarray(g.choice(4, size=N, p=[0.1, 0.2, 0.3, 0.4]))
    np.testing.assert_allclose(np.bincount(c) / N, [0.1, 0.2, 0.3, 0.4], atol=0.015)
    s = np.asarray(g.choice(np.arange(10.0) * 2, size=5, replace=False))
    assert len(set(s)) == 5 and set(s) <= set(np.arange(10.0) * 2)
    assert sorted(np.asarray(g.permutation(12))) == list(range(12))
    a = np.arange(20.0).reshape(10, 2)
    perm = np.asarray(g.permutation(a))
    assert sorted(map(tuple, perm)) == sorted(map(tuple, a))
    y = reactant.to_rarray(np.arange(9.0))
    g.shuffle(y)  # a device array, in place
    assert sorted(np.asarray(y)) == list(range(9)) and not np.array_equal(np.asarray(y), np.arange(9.0))
    h = np.arange(9.0)
    g.shuffle(h)  # a host array, in place
    assert sorted(h) == list(range(9))

    @reactant.compile
    def shuffled(g, x):
        g.shuffle(x)
        return x.sum()

    z = reactant.to_rarray(np.arange(30.0))
    assert float(shuffled(g, z)) == np.arange(30.0).sum() and not np.array_equal(np.asarray(z), np.arange(30.0))


def test_multivariate_normal():
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    mean = np.array([1.0, -2.0, 0.5])
    x = np.asarray(default_rng(6).multivariate_normal(mean, cov, N))
    assert x.shape == (N, 3)
    np.testing.assert_allclose(x.mean(0), mean, atol=0.05)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


def test_gradient_through_reparameterised_samples():
    def loss(mu, sigma, g):
        z = mu + sigma * g.standard_normal(1000)
        return np.mean(z ** 2)

    f = reactant.compile(lambda mu, sigma, g: reactant.gradient(loss, mu, sigma, g, argnums=(0, 1)))
    mu, sigma = reactant.to_rarray(np.float64(0.5)), reactant.to_rarray(np.float64(2.0))
    g, twin = default_rng(9), default_rng(9)
    dmu, dsigma = f(mu, sigma, g)
    eps = np.asarray(twin.standard_normal(1000))  # the same draws
    np.testing.assert_allclose(float(dmu), np.mean(2 * (0.5 + 2.0 * eps)), rtol=1e-12)
    np.testing.assert_allclose(float(dsigma), np.mean(2 * (0.5 + 2.0 * eps) * eps), rtol=1e-12)


def test_numpy_random_inside_a_compiled_function_is_refused():
    x = reactant.to_rarray(np.ones(3))
    rng = np.random.default_rng(0)
    for body in (lambda x: np.random.rand(3) + x, lambda x: rng.normal(size=3) + x,
                 lambda x: np.random.default_rng(1).random() + x):
        with pytest.raises(reactant.UnsupportedError, match="reactant.random.default_rng"):
            reactant.compile(body)(x)
    # code the tracer does not convert (no source: library code, a REPL lambda) is guarded too
    unconverted = eval("lambda x: np.random.normal(size=3) + x")  # noqa: S307
    with pytest.raises(reactant.UnsupportedError, match="reactant.random.default_rng"):
        reactant.compile(unconverted)(x)
    np.random.seed(3)  # outside a trace NumPy is untouched
    assert np.random.rand() == np.random.RandomState(3).rand()


def _library(src: str, name: str):
    """A function without source the tracer could read (as library code it does not convert)."""
    ns: dict = {"np": np}
    exec(src, ns)  # noqa: S102
    return ns[name]


def test_numpy_generators_drawn_by_library_code_are_refused_and_restored():
    x = reactant.to_rarray(np.ones(3))
    g = np.random.default_rng(0)
    draws = _library("def draws(a, g):\n    return a + g.standard_normal(3)\n", "draws")
    before = g.bit_generator.state
    with pytest.raises(reactant.UnsupportedError, match="drawn from while tracing"):
        reactant.compile(lambda a: draws(a, g))(x)  # a closure variable
    assert g.bit_generator.state == before  # the failed trace took no numbers from it
    with pytest.raises(reactant.UnsupportedError, match="drawn from while tracing"):
        reactant.compile(draws)(x, g)  # a static argument
    legacy = _library("def legacy(a):\n    return a + np.random.mtrand._rand.normal(size=3)\n", "legacy")
    state = np.random.get_state(legacy=False)
    with pytest.raises(reactant.UnsupportedError, match="RandomState"):
        reactant.compile(legacy)(x)
    assert np.random.get_state(legacy=False)["state"]["pos"] == state["state"]["pos"]


def test_lexsort_of_a_list_in_library_code():
    keys = _library("def keys(a, b):\n    return np.lexsort([a, b])\n", "keys")
    a, b = np.array([3.0, 1.0, 2.0, 1.0]), np.array([1.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(reactant.compile(keys)(*reactant.to_rarray((a, b)))), np.lexsort([a, b]))
    assert np.lexsort([a, b]).tolist() == np.lexsort((a, b)).tolist()  # NumPy itself is unchanged
