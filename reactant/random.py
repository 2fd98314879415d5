"""Random numbers whose state lives on the device: ``reactant.random.default_rng(seed)``.

A :class:`Generator` holds a ``uint64[2]`` state (a device array): a key and a counter. Each
draw takes a 64-bit draw key from the state (``stablehlo.rng_bit_generator``, Threefry, on the
two-word state: the same on every device) and advances the state; element ``i`` of the draw
(its flat row-major index) is ``threefry2x32(draw_key, i)``: a pure function of (state, global
index).
So the values never depend on how the array is partitioned: a draw sharded over any mesh is
computed shard by shard (no gather, no collective) and equals the draw on one device. The same
seed gives the same stream, eagerly and inside compiled functions. Passed to a compiled
function, a generator is an argument like any other (a pytree of its state) and its state
advances in place, so two calls give different numbers. Eager calls run the same traced
code, compiled once per method and static arguments.

The methods follow ``numpy.random.Generator`` (values differ from NumPy's: another bit
generator). Distributions are exact: uniforms take the top 53 (float64) or 24 (float32) bits;
normals use Box-Muller; gamma is Marsaglia-Tsang, poisson Knuth's product (lam < 10) or
Hormann's PTRS, binomial inversion (n*p < 10) or Hormann's BTRS, all with rejection loops that
run until every element is accepted (``stablehlo.while``); ``multivariate_normal`` factors the
covariance with Cholesky (it must be positive definite; NaN otherwise).
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from .tracing import ops
from .tracing.context import active
from .tracing.control_flow import while_loop
from .tracing.errors import ArgumentError
from .tracing.numpy_api.convert import as_traced
from .tracing.pytree import register_pytree_node
from .tracing.traced import TracedRArray

Size = int | Sequence[int] | None


def default_rng(seed: Any = None, *, device=None, sharding=None) -> "Generator":
    """A new generator seeded by ``seed`` (an int, a sequence of ints, a ``SeedSequence``, or
    None for fresh entropy from the operating system), its state on ``device`` (default: the
    default device) or placed by ``sharding`` (``Replicated(mesh)`` to draw inside programs
    over a mesh)."""
    from .arrays import to_rarray

    if isinstance(seed, Generator):
        return seed
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return Generator(to_rarray(ss.generate_state(2, np.uint64), device=device, sharding=sharding))


def _size(size: Size) -> tuple[int, ...] | None:
    if size is None:
        return None
    return (int(size),) if np.ndim(size) == 0 else tuple(int(s) for s in size)


def _shape(size: Size, *params) -> tuple[int, ...]:
    """The output shape: ``size``, or the parameters' broadcast shape."""
    s = _size(size)
    if s is not None:
        return s
    return tuple(np.broadcast_shapes(*[tuple(getattr(p, "shape", np.shape(p))) for p in params])) if params else ()


def _eager(method):
    """Outside a trace, run ``method`` compiled (once per method and static arguments); the
    generator's state is updated in place as for any argument."""
    compiled = None

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        nonlocal compiled
        if active() is not None or isinstance(self.state, TracedRArray):
            return method(self, *args, **kwargs)
        if compiled is None:
            from .compiler import CompiledFunction, Options

            # (scalar parameters such as scale= are static: no advice about track_numbers)
            compiled = CompiledFunction(lambda g, *a, **k: method(g, *a, **k), Options(warn_scalars=False))
        return compiled(self, *args, **kwargs)

    return call


class Generator:
    """A random generator with its state on the device (see the module docstring)."""

    __slots__ = ("state",)

    def __init__(self, state: Any):
        self.state = state

    def __repr__(self) -> str:
        return f"reactant.random.Generator(state={'traced' if isinstance(self.state, TracedRArray) else 'device'})"

    # -- bits and uniforms ----------------------------------------------------------------------
    def _bits(self, shape: tuple[int, ...], dtype=np.uint64) -> TracedRArray:
        """Random bits of ``shape`` (unsigned ``dtype``): element ``i`` of this draw is
        ``threefry2x32(draw_key, i)``, ``i`` its flat (row-major) index, so partitioning the
        array cannot change it; the draw count advances."""
        dt = np.dtype(dtype)
        if dt not in (np.dtype(np.uint32), np.dtype(np.uint64)):
            raise ArgumentError(f"random bits are uint32 or uint64, not {dt}")
        # the draw key: two words from the state (a tiny op whatever the draw's size: one
        # Threefry of the whole chain would double the program), the state advanced in place
        new, draw_key = ops.rng_bit_generator(as_traced(self.state), (2,), np.uint32)
        self.state[...] = new
        index = _flat_index(shape)
        b0, b1 = _threefry_traced(draw_key[0], draw_key[1], _lo(index), _hi(index))
        if dt == np.uint32:
            return b0
        return (b1.astype(np.uint64) << np.uint64(32)) | b0.astype(np.uint64)

    def _uniform01(self, shape: tuple[int, ...], dtype=np.float64) -> TracedRArray:
        """Uniform on [0, 1) from the top mantissa bits."""
        dt = np.dtype(dtype)
        if dt == np.float64:
            return (self._bits(shape, np.uint64) >> np.uint64(11)).astype(np.float64) * (1.0 / 2 ** 53)
        if dt == np.float32:
            return (self._bits(shape, np.uint32) >> np.uint32(8)).astype(np.float32) * np.float32(1.0 / 2 ** 24)
        raise ArgumentError(f"random floats are float32 or float64, not {dt}")

    def _normal(self, shape, dtype=np.float64) -> TracedRArray:
        u1 = 1 - self._uniform01(shape, dtype)  # (0, 1]: log is finite
        u2 = self._uniform01(shape, dtype)
        two_pi = np.asarray(2 * np.pi, dtype=dtype)
        return np.sqrt(-2 * np.log(u1)) * np.cos(two_pi * u2)

    # -- continuous -------------------------------------------------------------------------------
    @_eager
    def random(self, size: Size = None, dtype=np.float64, out=None):
        """Uniform floats on [0, 1)."""
        return _out(self._uniform01(_shape(size), dtype), out)

    @_eager
    def uniform(self, low=0.0, high=1.0, size: Size = None):
        """Uniform floats on [low, high)."""
        u = self._uniform01(_shape(size, low, high))
        return low + (high - low) * u

    @_eager
    def standard_normal(self, size: Size = None, dtype=np.float64, out=None):
        """Normal with mean 0 and standard deviation 1."""
        return _out(self._normal(_shape(size), dtype), out)

    @_eager
    def normal(self, loc=0.0, scale=1.0, size: Size = None):
        """Normal with mean ``loc`` and standard deviation ``scale`` (differentiable in both:
        the sample is ``loc + scale * z``)."""
        return loc + scale * self._normal(_shape(size, loc, scale))

    @_eager
    def standard_exponential(self, size: Size = None, dtype=np.float64):
        return -np.log1p(-self._uniform01(_shape(size), dtype))

    @_eager
    def exponential(self, scale=1.0, size: Size = None):
        """Exponential with mean ``scale``."""
        return -np.log1p(-self._uniform01(_shape(size, scale))) * scale

    @_eager
    def gamma(self, shape, scale=1.0, size: Size = None):
        """Gamma with shape ``shape`` and scale ``scale`` (Marsaglia-Tsang; shapes below 1 by
        ``gamma(a + 1) * U**(1/a)``)."""
        return self._gamma(shape, _shape(size, shape, scale)) * scale

    def _gamma(self, a, shape):
        a = np.broadcast_to(as_traced(a).astype(np.float64), shape)
        small = a < 1
        a1 = np.where(small, a + 1, a)
        d = a1 - 1.0 / 3
        c = 1 / np.sqrt(9 * d)

        def body(carry):
            out, done = carry
            z = self._normal(shape)
            u = 1 - self._uniform01(shape)
            v = (1 + c * z) ** 3
            vp = np.where(v > 0, v, 1.0)
            ok = (v > 0) & (np.log(u) < 0.5 * z * z + d - d * vp + d * np.log(vp))
            return np.where(ok & ~done, d * vp, out), done | ok

        out, _ = _rejection(body, (np.zeros(shape), np.zeros(shape, dtype=bool)))
        boost = (1 - self._uniform01(shape)) ** (1 / np.where(small, a, 1.0))
        return np.where(small, out * boost, out)

    @_eager
    def beta(self, a, b, size: Size = None):
        """Beta with parameters ``a`` and ``b`` (a ratio of gammas)."""
        shape = _shape(size, a, b)
        x, y = self._gamma(a, shape), self._gamma(b, shape)
        return x / (x + y)

    @_eager
    def multivariate_normal(self, mean, cov, size: Size = None, method: str = "cholesky"):
        """Normal with mean vector ``mean`` and covariance ``cov`` (positive definite: it is
        factored with Cholesky; NaN otherwise). NumPy's default ``method="svd"`` gives the same
        distribution; it is read as Cholesky here."""
        if method not in ("cholesky", "svd", "eigh"):
            raise ArgumentError(f"method must be 'svd', 'eigh' or 'cholesky', got {method!r}")
        mean, cov = as_traced(mean).astype(np.float64), as_traced(cov).astype(np.float64)
        k = mean.shape[-1]
        if cov.shape != (k, k):
            raise ArgumentError(f"cov must be {k}x{k} for a mean of length {k}, got shape {cov.shape}")
        s = _size(size)
        z = self._normal((s if s is not None else ()) + (k,))
        return mean + z @ ops.cholesky(cov).T

    # -- discrete ---------------------------------------------------------------------------------
    @_eager
    def integers(self, low, high=None, size: Size = None, dtype=np.int64, endpoint: bool = False):
        """Uniform integers on [low, high) ([low, high] with ``endpoint``; [0, low) without
        ``high``)."""
        if high is None:
            low, high = 0, low
        if not _traced(low, high) and np.any(np.asarray(high) + bool(endpoint) <= np.asarray(low)):
            raise ArgumentError(f"integers: high <= low ({high} <= {low})")
        shape = _shape(size, low, high)
        span = (as_traced(high).astype(np.int64) - as_traced(low).astype(np.int64) + int(bool(endpoint)))
        r = self._bits(shape, np.uint64) % span.astype(np.uint64)  # bias < span / 2**64
        return (as_traced(low).astype(np.int64) + r.astype(np.int64)).astype(dtype)

    @_eager
    def choice(self, a, size: Size = None, replace: bool = True, p=None, axis: int = 0, shuffle: bool = True):
        """Draws from ``a`` (an int n: from arange(n)) along ``axis``, with replacement or not,
        with probabilities ``p`` or uniformly; ``size`` is static."""
        n = int(a) if np.ndim(a) == 0 and not isinstance(a, TracedRArray) else as_traced(a).shape[axis]
        shape = _size(size) or ()
        k = int(np.prod(shape))
        if replace:
            if p is None:
                idx = self.integers(0, n, shape)
            else:
                cdf = np.cumsum(as_traced(p).astype(np.float64))
                u = self._uniform01(shape) * cdf[-1]
                idx = np.minimum(np.searchsorted(cdf, u, side="right"), n - 1)
        else:
            if k > n:
                raise ArgumentError(f"choice: cannot take {k} samples from {n} without replacement")
            keys = self._uniform01((n,))
            if p is not None:  # Gumbel top-k: keys log p + Gumbel noise, largest first
                keys = np.log(as_traced(p).astype(np.float64)) - np.log(-np.log(1 - keys))
                keys = -keys
            idx = np.argsort(keys)[:k].reshape(shape)
        if np.ndim(a) == 0 and not isinstance(a, TracedRArray):
            return idx
        return np.take(as_traced(a), idx, axis=axis)

    @_eager
    def permutation(self, x, axis: int = 0):
        """A shuffled ``arange(x)`` (an int), or a shuffled copy of ``x`` along ``axis``."""
        if np.ndim(x) == 0 and not isinstance(x, TracedRArray):
            return np.argsort(self._uniform01((int(x),)))
        x = as_traced(x)
        return np.take(x, np.argsort(self._uniform01((x.shape[axis],))), axis=axis)

    def shuffle(self, x, axis: int = 0) -> None:
        """Shuffle ``x`` in place along ``axis`` (a traced array, a device array, or a NumPy
        array on the host)."""
        if isinstance(x, np.ndarray):
            x[...] = np.take(x, np.asarray(self.permutation(x.shape[axis])), axis=axis)
            return
        self._shuffle(x, axis)

    @_eager
    def _shuffle(self, x, axis: int = 0):
        x[...] = self.permutation(x, axis)

    @_eager
    def poisson(self, lam=1.0, size: Size = None):
        """Poisson with mean ``lam`` (Knuth's product below 10, Hormann's PTRS above)."""
        shape = _shape(size, lam)
        lam = np.broadcast_to(as_traced(lam).astype(np.float64), shape)
        small = lam < 10
        # Knuth: multiply uniforms until the product falls below exp(-lam)
        limit = np.exp(-lam)

        def knuth(carry):
            k, prod, running = carry
            prod = np.where(running, prod * self._uniform01(shape), prod)
            more = running & (prod > limit)
            return k + more, prod, more

        k_small, _, _ = _loop(knuth, (np.zeros(shape, dtype=np.int64), np.ones(shape), small), lambda c: c[2])
        # PTRS (transformed rejection with squeeze), for lam >= 10
        lam_b = np.where(small, 10.0, lam)
        slam, loglam = np.sqrt(lam_b), np.log(lam_b)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)

        def ptrs(carry):
            out, done = carry
            u = self._uniform01(shape) - 0.5
            v = self._uniform01(shape)
            us = 0.5 - np.abs(u)
            k = np.floor((2 * a / us + b) * u + lam_b + 0.43)
            quick = (us >= 0.07) & (v <= vr)
            ok_k = k >= 0
            usq = np.where(us > 0, us, 1.0)
            full = np.log(np.where(v > 0, v, 1.0)) + np.log(inv_alpha) - np.log(a / (usq * usq) + b) <= (
                -lam_b + k * loglam - ops.lgamma(as_traced(np.where(ok_k, k, 0.0)) + 1))
            ok = quick | (ok_k & ~((us < 0.013) & (v > us)) & full)
            return np.where(ok & ~done, k, out), done | ok

        k_large, _ = _rejection(ptrs, (np.zeros(shape), small))
        return np.where(small, k_small, k_large.astype(np.int64))

    @_eager
    def binomial(self, n, p, size: Size = None):
        """Binomial with ``n`` trials of probability ``p`` (inversion below n*p = 10, Hormann's
        BTRS above; p > 1/2 by symmetry)."""
        shape = _shape(size, n, p)
        n = np.broadcast_to(as_traced(n).astype(np.float64), shape)
        p = np.broadcast_to(as_traced(p).astype(np.float64), shape)
        flip = p > 0.5
        pp = np.where(flip, 1 - p, p)
        small = n * pp < 10
        # inversion: walk the pmf from 0 until the uniform is used up
        q = 1 - pp
        s = pp / np.where(q > 0, q, 1.0)
        a_inv = (n + 1) * s
        r0 = q ** n

        def inversion(carry):
            x, u, r, running = carry
            running = running & (u > r) & (x < n)
            u = np.where(running, u - r, u)
            x = x + running
            r = np.where(running, r * (a_inv / np.where(x > 0, x, 1.0) - s), r)
            return x, u, r, running

        x_small, _, _, _ = _loop(inversion, (np.zeros(shape), self._uniform01(shape), r0, small & (pp > 0)),
                                 lambda c: c[3])
        # BTRS for n*p >= 10
        nb = np.where(small, 20.0, n)
        pb = np.where(small, 0.5, pp)
        qb = 1 - pb
        spq = np.sqrt(nb * pb * qb)
        b = 1.15 + 2.53 * spq
        a = -0.0873 + 0.0248 * b + 0.01 * pb
        c = nb * pb + 0.5
        vr = 0.92 - 4.2 / b
        alpha = (2.83 + 5.1 / b) * spq
        lpq = np.log(pb / qb)
        m = np.floor((nb + 1) * pb)
        h = ops.lgamma(as_traced(m + 1)) + ops.lgamma(as_traced(nb - m + 1))

        def btrs(carry):
            out, done = carry
            u = self._uniform01(shape) - 0.5
            v = self._uniform01(shape)
            us = 0.5 - np.abs(u)
            k = np.floor((2 * a / np.where(us > 0, us, 1.0) + b) * u + c)
            inside = (k >= 0) & (k <= nb)
            quick = inside & (us >= 0.07) & (v <= vr)
            kk = np.where(inside, k, 0.0)
            usq = np.where(us > 0, us, 1.0)
            lv = np.log(np.where(v > 0, v, 1.0) * alpha / (a / (usq * usq) + b))
            full = inside & (lv <= h - ops.lgamma(as_traced(kk + 1)) - ops.lgamma(as_traced(nb - kk + 1))
                             + (kk - m) * lpq)
            ok = quick | full
            return np.where(ok & ~done, k, out), done | ok

        x_large, _ = _rejection(btrs, (np.zeros(shape), small))
        x = np.where(small, x_small, x_large)
        return np.where(flip, n - x, x).astype(np.int64)


register_pytree_node(Generator, lambda g: ((g.state,), None), lambda aux, ch: Generator(ch[0]))


# -- counter-based bits (Threefry-2x32, 20 rounds: Salmon et al., "Parallel random numbers: as
# easy as 1, 2, 3", SC 2011) -----------------------------------------------------------------------
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)


def threefry2x32(k0, k1, x0, x1) -> tuple:
    """Threefry-2x32 of the counter words ``(x0, x1)`` under the key ``(k0, k1)`` (uint32
    arrays or scalars, broadcast): two uint32 words, elementwise."""
    u32 = np.uint32
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for group in range(5):  # 5 x 4 rounds, a key injection after each 4
        for r in _ROTATIONS[group % 2]:
            x0 = x0 + x1
            x1 = (x1 << u32(r)) | (x1 >> u32(32 - r))
            x1 = x1 ^ x0
        x0 = x0 + ks[(group + 1) % 3]
        x1 = x1 + ks[(group + 2) % 3] + u32(group + 1)
    return x0, x1


def _threefry_traced(k0, k1, x0, x1) -> tuple:
    """``threefry2x32`` on traced values (``k0``, ``k1`` scalars; ``x0``, ``x1`` of one
    shape), built with the op layer: the key schedule on scalars, each constant broadcast once
    (a draw is ~110 elementwise ops; NumPy dispatch per op would double its trace time)."""
    shape = x0.shape
    u32 = np.uint32

    def wide(v):
        return ops.broadcast_in_dim(v, shape, ())

    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    inject0 = [wide(ks[(g + 1) % 3]) for g in range(3)]
    inject1 = [wide(ks[(g + 2) % 3] + u32(g + 1)) for g in range(5)]
    shifts = {r: (ops.full(shape, r, u32), ops.full(shape, 32 - r, u32)) for rs in _ROTATIONS for r in rs}
    x0, x1 = ops.add(x0, wide(ks[0])), ops.add(x1, wide(ks[1]))
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x0 = ops.add(x0, x1)
            left, right = shifts[r]
            x1 = ops.xor(ops.or_(ops.shift_left(x1, left), ops.shift_right_logical(x1, right)), x0)
        x0 = ops.add(x0, inject0[group % 3])
        x1 = ops.add(x1, inject1[group])
    return x0, x1


def _lo(x):
    return (x & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def _hi(x):
    return (x >> np.uint64(32)).astype(np.uint32)


def _flat_index(shape: tuple[int, ...]):
    """The row-major flat index of every element of ``shape`` (uint64), from one iota per
    dimension: elementwise in the array's own shape, so a sharded draw stays sharded."""
    if not shape:
        return ops.iota((1,), np.uint64, 0).reshape(())
    index = None
    stride = 1
    for d in range(len(shape) - 1, -1, -1):
        term = ops.iota(shape, np.uint64, d)
        if stride != 1:
            term = term * np.uint64(stride)
        index = term if index is None else index + term
        stride *= shape[d]
    return index


# -- helpers ---------------------------------------------------------------------------------------
def _traced(*xs) -> bool:
    return any(isinstance(x, TracedRArray) for x in xs)


def _out(value, out):
    if out is None:
        return value
    out[...] = value
    return out


def _loop(body, init: tuple, running):
    """Repeat ``body`` on the carry while any element of ``running(carry)`` is set."""
    return while_loop(lambda c: np.any(running(c)), body, init)


def _rejection(body, init: tuple):
    """Rejection sampling over whole arrays: ``body((out, done)) -> (out, done)`` draws for
    every element and accepts where it may; repeats until every element is done."""
    return _loop(body, init, lambda c: ~c[1])
