"""NumPy kernels in the styles that trip tracers: NumPy arrays filled with computed values,
traced indices into constant tables, lists of traced scalars, traced boolean masks, early
returns, captured device arrays, random numbers, and the statistics/ordering functions. Each
entry: the NumPy function (run unmodified by reactant), a jax.numpy version of the same
algorithm, and its inputs. ``check`` says how results are compared ("exact" or "stats" for
random kernels, whose streams differ from NumPy's). ``inplace`` kernels update their arguments
(directly, through views, with ``out=``, by in-place methods) and return None, as NumPy users
write them: they are checked on every argument's final state; their jax version is the
functional equivalent (it returns what the arguments become)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import reactant

KERNELS: dict[str, dict] = {}


def kernel(name: str, inputs, jax_fn, check: str = "exact", tol: float = 0.0, inplace: bool = False):
    def deco(fn):
        KERNELS[name] = {"numpy": fn, "jax": jax_fn, "inputs": inputs, "check": check, "tol": tol,
                         "inplace": inplace}
        return fn
    return deco


R = np.random.default_rng(0)
N = 256


# -- NumPy arrays receiving traced values -----------------------------------------------------------
@kernel("fill_rows", lambda: (R.standard_normal((N, 64)),),
        lambda x: jnp.sin(x) * jnp.cos(x).sum(axis=1, keepdims=True))
def fill_rows(x):
    out = np.empty_like(np.zeros((x.shape[0], x.shape[1])))
    for i in range(x.shape[0] // 32):
        out[i * 32:(i + 1) * 32] = np.sin(x[i * 32:(i + 1) * 32]) * np.cos(x[i * 32:(i + 1) * 32]).sum(
            axis=1, keepdims=True)
    return out


@kernel("jacobi_out_array", lambda: (R.standard_normal((N, N)),),
        lambda u: u.at[1:-1, 1:-1].set(0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])))
def jacobi_out_array(u):
    new = np.zeros((u.shape[0], u.shape[1]))
    new[0], new[-1], new[:, 0], new[:, -1] = u[0], u[-1], u[:, 0], u[:, -1]
    new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return new


@kernel("accumulate_into_zeros", lambda: (R.standard_normal((N, 32)), R.standard_normal((32, 32))),
        lambda x, w: x @ w + 2 * x @ w.T)
def accumulate_into_zeros(x, w):
    c = np.zeros((x.shape[0], w.shape[1]))
    c += x @ w
    c += 2 * x @ w.T
    return c


@kernel("out_argument", lambda: (R.standard_normal((N, N)),), lambda x: (jnp.exp(-x * x) + 1) ** 2)
def out_argument(x):
    out = np.zeros(x.shape)
    np.exp(-x * x, out=out)
    np.add(out, 1.0, out=out)
    np.square(out, out=out)
    return out


@kernel("one_hot_labels", lambda: (R.integers(0, 10, 512), R.standard_normal((10, 16))),
        lambda labels, w: jax.nn.one_hot(labels, 10) @ w)
def one_hot_labels(labels, w):
    return np.eye(10)[labels] @ w


@kernel("table_lookup", lambda: (R.integers(0, 100, 4096),), lambda idx: (jnp.arange(100.0) ** 2 / 7)[idx])
def table_lookup(idx):
    table = np.arange(100.0) ** 2 / 7
    return table[idx]


@kernel("list_of_scalars", lambda: (R.standard_normal((16, 64)),), lambda x: jnp.sum(x, axis=1) / jnp.max(x, axis=1))
def list_of_scalars(x):
    return np.asarray([np.sum(x[i]) / np.max(x[i]) for i in range(x.shape[0])])


@kernel("nested_lists", lambda: (R.standard_normal(4),),
        lambda v: jnp.array([[v[0], 0.0, v[1]], [0.0, v[2], 1.0], [v[3], 1.0, 0.0]]) @ v[:3])
def nested_lists(v):
    m = np.array([[v[0], 0.0, v[1]], [0.0, v[2], 1.0], [v[3], 1.0, 0.0]])
    return m @ v[:3]


# -- traced boolean masks -----------------------------------------------------------------------------
@kernel("mask_writes", lambda: (R.standard_normal((N, N)),),
        lambda x: jnp.where(x < -1, -1.0, jnp.where(x > 1, x * 0.5 + 0.5, x)))
def mask_writes(x):
    y = x.copy()
    y[y < -1] = -1.0
    y[y > 1] = y[y > 1] * 0.5 + 0.5
    return y


@kernel("mask_statistics", lambda: (R.standard_normal(10000),),
        lambda x: jnp.stack([jnp.sum(jnp.where(x > 0, x, 0)) / jnp.sum(x > 0),
                             jnp.max(jnp.where(x < 0, x, -jnp.inf)), jnp.sum(x > 1.5) * 1.0]))
def mask_statistics(x):
    return np.array([x[x > 0].mean(), x[x < 0].max(), np.count_nonzero(x[x > 1.5]) * 1.0])


@kernel("putmask_place", lambda: (R.standard_normal(1000),),
        lambda x: jnp.where(x < 0, 0.0, x))
def putmask_place(x):
    y = x.copy()
    np.putmask(y, y < 0, 0.0)
    return y


# -- control flow and captures ------------------------------------------------------------------------
@kernel("early_return", lambda: (R.standard_normal(1000),),
        lambda x: jax.lax.cond(jnp.sum(x) > 0, lambda v: v / jnp.sum(v), lambda v: -v, x))
def early_return(x):
    if x.sum() > 0:
        return x / x.sum()
    return -x


_W = R.standard_normal((64, 64))
_W_DEVICE = None


def _w_device():
    global _W_DEVICE
    if _W_DEVICE is None:
        _W_DEVICE = reactant.to_rarray(_W)
    return _W_DEVICE


@kernel("captured_device_array", lambda: (R.standard_normal((N, 64)),), lambda x: jnp.tanh(x @ _W))
def captured_device_array(x):
    w = _w_device() if not isinstance(x, np.ndarray) else _W  # NumPy runs on the host copy
    return np.tanh(x @ w)


# -- random numbers -------------------------------------------------------------------------------------
@kernel("monte_carlo_pi", lambda: (100000,), None, check="stats", tol=0.05)
def monte_carlo_pi(n, g=None):
    g = g if g is not None else np.random.default_rng(1)
    p = g.random((n, 2))
    return 4.0 * np.mean(np.sum(p * p, axis=1) < 1.0)


@kernel("random_walk", lambda: (2000,), None, check="stats", tol=0.5)
def random_walk(n, g=None):
    g = g if g is not None else np.random.default_rng(2)
    steps = g.standard_normal((n, 16))
    return np.std(np.cumsum(steps, axis=0)[-1]) / np.sqrt(n)


# -- statistics / ordering functions ------------------------------------------------------------------------
@kernel("covariance", lambda: (R.standard_normal((8, 500)),), lambda x: jnp.cov(x))
def covariance(x):
    return np.cov(x)


@kernel("correlation", lambda: (R.standard_normal((500, 6)),), lambda x: jnp.corrcoef(x.T))
def correlation(x):
    return np.corrcoef(x.T)


@kernel("histogram", lambda: (R.standard_normal(10000),),
        lambda x: jnp.histogram(x, bins=20, range=(-4.0, 4.0))[0])
def histogram(x):
    return np.histogram(x, bins=20, range=(-4.0, 4.0))[0]


@kernel("bincount", lambda: (R.integers(0, 50, 10000),), lambda i: jnp.bincount(i, length=50))
def bincount(i):
    return np.bincount(i, minlength=50)


@kernel("interp", lambda: (np.linspace(-1, 11, 5000),),
        lambda x: jnp.interp(x, jnp.arange(10.0), jnp.arange(10.0) ** 2))
def interp(x):
    return np.interp(x, np.arange(10.0), np.arange(10.0) ** 2)


@kernel("convolve", lambda: (R.standard_normal(4096),),
        lambda x: jnp.convolve(x, jnp.array([0.25, 0.5, 0.25]), mode="same"))
def convolve(x):
    return np.convolve(x, np.array([0.25, 0.5, 0.25]), mode="same")


@kernel("sort_partition", lambda: (R.standard_normal(4096),), lambda x: jnp.partition(x, 2048)[2048])
def sort_partition(x):
    return np.partition(x, 2048)[2048]


@kernel("polyval_trapezoid", lambda: (np.linspace(0, 1, 10001),),
        lambda x: jnp.trapezoid(jnp.polyval(jnp.array([3.0, -2.0, 1.0]), x), x))
def polyval_trapezoid(x):
    return np.trapezoid(np.polyval([3.0, -2.0, 1.0], x), x)


# -- in place: the arguments are updated, nothing is returned ---------------------------------------------
def _jacobi_step(u):
    return u.at[1:-1, 1:-1].set(0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]))


@kernel("jacobi_inplace", lambda: (R.standard_normal((N, N)),), _jacobi_step, inplace=True)
def jacobi_inplace(u):
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


@kernel("fill_rows_into_out", lambda: (R.standard_normal((N, 64)), np.zeros((N, 64))),
        lambda x, out: jnp.sin(x) * jnp.cos(x).sum(axis=1, keepdims=True), inplace=True)
def fill_rows_into_out(x, out):
    for i in range(x.shape[0] // 32):
        blk = x[i * 32:(i + 1) * 32]
        out[i * 32:(i + 1) * 32] = np.sin(blk) * np.cos(blk).sum(axis=1, keepdims=True)


@kernel("accumulate_inplace",
        lambda: (R.standard_normal((N, 32)), R.standard_normal((N, 32)), R.standard_normal((32, 32))),
        lambda c, x, w: c + x @ w + 2 * x @ w.T, inplace=True)
def accumulate_inplace(c, x, w):
    c += x @ w
    c += 2 * x @ w.T


@kernel("out_argument_inplace", lambda: (R.standard_normal((N, N)),), lambda x: (jnp.exp(-x * x) + 1) ** 2,
        inplace=True)
def out_argument_inplace(x):
    np.exp(-x * x, out=x)
    np.add(x, 1.0, out=x)
    np.square(x, out=x)


@kernel("mask_writes_inplace", lambda: (R.standard_normal((N, N)),),
        lambda x: jnp.where(x < -1, -1.0, jnp.where(x > 1, x * 0.5 + 0.5, x)), inplace=True)
def mask_writes_inplace(x):
    x[x < -1] = -1.0
    x[x > 1] = x[x > 1] * 0.5 + 0.5


@kernel("putmask_inplace", lambda: (R.standard_normal(1000),), lambda x: jnp.where(x < 0, 0.0, x), inplace=True)
def putmask_inplace(x):
    np.putmask(x, x < 0, 0.0)


@kernel("clip_inplace", lambda: (R.standard_normal((N, N)) * 2,), lambda x: jnp.clip(x, -1.0, 1.0), inplace=True)
def clip_inplace(x):
    np.clip(x, -1.0, 1.0, out=x)


@kernel("normalize_rows_views", lambda: (R.standard_normal((N, 64)),),
        lambda x: (x - x.mean(axis=1, keepdims=True)) / (x - x.mean(axis=1, keepdims=True)).std(axis=1, keepdims=True),
        inplace=True)
def normalize_rows_views(x):
    for i in range(x.shape[0]):
        row = x[i]
        row -= row.mean()
        row /= row.std()


@kernel("sort_rows_inplace", lambda: (R.standard_normal((N, 64)),), lambda x: jnp.sort(x, axis=1), inplace=True)
def sort_rows_inplace(x):
    x.sort(axis=1)


@kernel("scatter_add_inplace", lambda: (np.zeros(64), R.integers(0, 64, 4096), R.standard_normal(4096)),
        lambda h, idx, v: h.at[idx].add(v), inplace=True)
def scatter_add_inplace(h, idx, v):
    np.add.at(h, idx, v)


@kernel("transposed_view_inplace", lambda: (R.standard_normal((N, N)),),
        lambda x: x.at[:, 0].add(1.0).at[:, -1].set(0.0).at[0].multiply(2.0), inplace=True)
def transposed_view_inplace(x):
    xt = x.T
    xt[0] += 1.0  # column 0 of x
    x[:, -1] = 0.0
    top = x[0]
    top *= 2.0


import library_kernels  # noqa: F401  (registers its kernels in KERNELS)
