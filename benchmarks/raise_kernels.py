"""More loop-heavy NumPy kernels in the shapes of issue 15's table (time loops of whole-array
stencil updates, shortest paths, recurrences, a histogram by loop), each with a jax.numpy
version written the natural JAX way (``lax.fori_loop`` for loops, whole-array expressions inside,
``einsum``/``at[].add`` where JAX users reach for them).

``KERNELS[name] = numpy_fn`` (copies its inputs, returns one array), ``INPLACE[name] = numpy_fn``
(the same algorithm updating its arguments in place and returning None, as NumPy users write
it; its arguments: ``inplace_inputs(name, n)``), ``jax_versions() -> {name: jax_fn}``,
``inputs(name, n)``. Kernels of ``loop_kernels.py`` are not repeated here.
"""

from __future__ import annotations

import numpy as np


def fdtd_2d(ex, ey, hz, fict):
    """2-D finite-difference time domain (Yee grid), ``fict.shape[0]`` time steps."""
    ex, ey, hz = ex.copy(), ey.copy(), hz.copy()
    for t in range(fict.shape[0]):
        ey[0, :] = fict[t]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return hz


def heat_3d(A):
    """3-D heat equation, explicit 7-point stencil, 10 double steps (on copies)."""
    A = A.copy()
    heat_3d_inplace(A, A.copy())
    return A


def channel_flow(u, v, p):
    """A few steps of a 2-D incompressible channel flow (momentum update, pressure Poisson
    iterations with periodic x and wall y boundaries), in the style of the CFD teaching codes."""
    u, v, p = u.copy(), v.copy(), p.copy()
    channel_flow_inplace(u, v, p)
    return u + v + p


def floyd_warshall(D):
    """All-pairs shortest paths: the loop over intermediate vertices, each step one whole-matrix
    relaxation (the usual NumPy form of the triple loop)."""
    D = D.copy()
    for k in range(D.shape[0]):
        D = np.minimum(D, D[:, k, None] + D[None, k, :])
    return D


def recurrence_1d(a, b):
    """A first-order linear recurrence x[i] = a[i] * x[i-1] + b[i] (an IIR filter)."""
    x = np.zeros_like(b)
    x[0] = b[0]
    for i in range(1, b.shape[0]):
        x[i] = a[i] * x[i - 1] + b[i]
    return x


def histogram_loop(data, weights):
    """A weighted histogram of values in [0, 1) into 64 bins, one element at a time."""
    h = np.zeros_like(weights, shape=(64,))
    for i in range(data.shape[0]):
        h[(data[i] * 64).astype(np.int64)] += weights[i]
    return h


# -- the same algorithms in place: update the arguments, return nothing ---------------------------
def fdtd_2d_inplace(ex, ey, hz, fict):
    """FDTD 2-D updating the three fields in place (polybench's ``fdtd_2d``)."""
    for t in range(fict.shape[0]):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def heat_3d_inplace(A, B):
    """3-D heat equation updating both grids (polybench's ``heat_3d(A, B)``)."""
    for t in range(10):
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
                               + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
                               + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
                               + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
                               + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
                               + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2])
                               + B[1:-1, 1:-1, 1:-1])


def channel_flow_inplace(u, v, p):
    """The channel flow updating ``u``, ``v``, ``p`` in place; boundaries written through row
    and column views."""
    dt, dx, rho, nu, force = 0.001, 0.05, 1.0, 0.1, 1.0
    b = np.zeros_like(p)
    for step in range(5):
        b[1:-1, 1:-1] = rho * (1 / dt * ((u[1:-1, 2:] - u[1:-1, :-2]) / (2 * dx) + (v[2:, 1:-1] - v[:-2, 1:-1]) / (2 * dx))
                               - ((u[1:-1, 2:] - u[1:-1, :-2]) / (2 * dx)) ** 2
                               - ((v[2:, 1:-1] - v[:-2, 1:-1]) / (2 * dx)) ** 2)
        for it in range(20):
            pn = p.copy()
            p[1:-1, 1:-1] = 0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1]) - dx * dx / 4 * b[1:-1, 1:-1]
            p[:, -1] = p[:, -2]
            p[:, 0] = p[:, 1]
            p[0, :] = p[1, :]
            p[-1, :] = p[-2, :]
        un, vn = u.copy(), v.copy()
        u[1:-1, 1:-1] = (un[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, :-2])
                         - vn[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[:-2, 1:-1])
                         - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, :-2])
                         + nu * dt / dx ** 2 * (un[1:-1, 2:] - 4 * un[1:-1, 1:-1] + un[1:-1, :-2] + un[2:, 1:-1]
                                                + un[:-2, 1:-1]) + force * dt)
        v[1:-1, 1:-1] = (vn[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, :-2])
                         - vn[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[:-2, 1:-1])
                         - dt / (2 * rho * dx) * (p[2:, 1:-1] - p[:-2, 1:-1])
                         + nu * dt / dx ** 2 * (vn[1:-1, 2:] - 4 * vn[1:-1, 1:-1] + vn[1:-1, :-2] + vn[2:, 1:-1]
                                                + vn[:-2, 1:-1]))
        for wall in (u[0], u[-1], v[0], v[-1]):
            wall[:] = 0


def floyd_warshall_inplace(D):
    """Shortest paths overwriting ``D``: each relaxation written into it with ``out=``."""
    for k in range(D.shape[0]):
        np.minimum(D, D[:, k, None] + D[None, k, :], out=D)


def recurrence_1d_inplace(a, b):
    """The recurrence run over ``b`` in place: b[i] += a[i] * b[i-1]."""
    for i in range(1, b.shape[0]):
        b[i] += a[i] * b[i - 1]


def histogram_loop_inplace(data, weights, h):
    """The weighted histogram accumulated into the caller's ``h``."""
    for i in range(data.shape[0]):
        h[(data[i] * 64).astype(np.int64)] += weights[i]


def _jax():
    import jax
    import jax.numpy as jnp
    from jax import lax

    def j_fdtd_2d(ex, ey, hz, fict):
        def step(t, s):
            ex, ey, hz = s
            ey = ey.at[0, :].set(fict[t])
            ey = ey.at[1:, :].set(ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :]))
            ex = ex.at[:, 1:].set(ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1]))
            hz = hz.at[:-1, :-1].set(hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1]))
            return ex, ey, hz
        return lax.fori_loop(0, fict.shape[0], step, (ex, ey, hz))[2]

    def _heat(A):
        c = A[1:-1, 1:-1, 1:-1]
        return (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * c + A[:-2, 1:-1, 1:-1])
                + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * c + A[1:-1, :-2, 1:-1])
                + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * c + A[1:-1, 1:-1, :-2]) + c)

    def j_heat_3d(A):
        def step(t, s):
            A, B = s
            B = B.at[1:-1, 1:-1, 1:-1].set(_heat(A))
            A = A.at[1:-1, 1:-1, 1:-1].set(_heat(B))
            return A, B
        return lax.fori_loop(0, 10, step, (A, A))[0]

    def j_channel_flow(u, v, p):
        dt, dx, rho, nu, force = 0.001, 0.05, 1.0, 0.1, 1.0

        def step(s, uvp):
            u, v, p = uvp
            b = jnp.zeros_like(p).at[1:-1, 1:-1].set(
                rho * (1 / dt * ((u[1:-1, 2:] - u[1:-1, :-2]) / (2 * dx) + (v[2:, 1:-1] - v[:-2, 1:-1]) / (2 * dx))
                       - ((u[1:-1, 2:] - u[1:-1, :-2]) / (2 * dx)) ** 2
                       - ((v[2:, 1:-1] - v[:-2, 1:-1]) / (2 * dx)) ** 2))

            def poisson(it, p):
                pn = p
                p = p.at[1:-1, 1:-1].set(0.25 * (pn[1:-1, 2:] + pn[1:-1, :-2] + pn[2:, 1:-1] + pn[:-2, 1:-1])
                                         - dx * dx / 4 * b[1:-1, 1:-1])
                p = p.at[:, -1].set(p[:, -2]).at[:, 0].set(p[:, 1])
                return p.at[0, :].set(p[1, :]).at[-1, :].set(p[-2, :])
            p = lax.fori_loop(0, 20, poisson, p)
            un, vn = u, v
            u = u.at[1:-1, 1:-1].set(
                un[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, :-2])
                - vn[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[:-2, 1:-1])
                - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, :-2])
                + nu * dt / dx ** 2 * (un[1:-1, 2:] - 4 * un[1:-1, 1:-1] + un[1:-1, :-2] + un[2:, 1:-1] + un[:-2, 1:-1])
                + force * dt)
            v = v.at[1:-1, 1:-1].set(
                vn[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, :-2])
                - vn[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[:-2, 1:-1])
                - dt / (2 * rho * dx) * (p[2:, 1:-1] - p[:-2, 1:-1])
                + nu * dt / dx ** 2 * (vn[1:-1, 2:] - 4 * vn[1:-1, 1:-1] + vn[1:-1, :-2] + vn[2:, 1:-1] + vn[:-2, 1:-1]))
            u = u.at[0, :].set(0).at[-1, :].set(0)
            v = v.at[0, :].set(0).at[-1, :].set(0)
            return u, v, p
        u, v, p = lax.fori_loop(0, 5, step, (u, v, p))
        return u + v + p

    def j_floyd_warshall(D):
        def step(k, D):
            return jnp.minimum(D, D[:, k, None] + D[None, k, :])
        return lax.fori_loop(0, D.shape[0], step, D)

    def j_recurrence_1d(a, b):
        def step(i, x):
            return x.at[i].set(a[i] * x[i - 1] + b[i])
        return lax.fori_loop(1, b.shape[0], step, jnp.zeros_like(b).at[0].set(b[0]))

    def j_histogram_loop(data, weights):
        return jnp.zeros(64, weights.dtype).at[(data * 64).astype(jnp.int32)].add(weights)

    return {"fdtd_2d": j_fdtd_2d, "heat_3d": j_heat_3d, "channel_flow": j_channel_flow,
            "floyd_warshall": j_floyd_warshall, "recurrence_1d": j_recurrence_1d,
            "histogram_loop": j_histogram_loop}, jax


def inputs(name: str, n: int, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    if name == "fdtd_2d":
        return (rng.standard_normal((n, n)), rng.standard_normal((n, n)), rng.standard_normal((n, n)),
                rng.standard_normal((50, n)))
    if name == "heat_3d":
        m = max(8, n // 4)
        return (rng.standard_normal((m, m, m)),)
    if name == "channel_flow":
        return (rng.standard_normal((n, n)) * 0.1, rng.standard_normal((n, n)) * 0.1, rng.standard_normal((n, n)) * 0.1)
    if name == "floyd_warshall":
        d = rng.uniform(1.0, 10.0, (n, n))
        np.fill_diagonal(d, 0.0)
        return (d,)
    if name == "recurrence_1d":
        return (rng.uniform(-0.9, 0.9, 16 * n), rng.standard_normal(16 * n))
    if name == "histogram_loop":
        return (rng.uniform(0.0, 1.0, 16 * n), rng.standard_normal(16 * n))
    raise KeyError(name)


def inplace_inputs(name: str, n: int, seed: int = 0) -> tuple:
    """The in-place variant's arguments: ``inputs``' plus the arrays it writes its result into."""
    args = inputs(name, n, seed)
    if name == "heat_3d":
        return args + (args[0].copy(),)
    if name == "histogram_loop":
        return args + (np.zeros(64),)
    return args


KERNELS = {"fdtd_2d": fdtd_2d, "heat_3d": heat_3d, "channel_flow": channel_flow, "floyd_warshall": floyd_warshall,
           "recurrence_1d": recurrence_1d, "histogram_loop": histogram_loop}
INPLACE = {"fdtd_2d": fdtd_2d_inplace, "heat_3d": heat_3d_inplace, "channel_flow": channel_flow_inplace,
           "floyd_warshall": floyd_warshall_inplace, "recurrence_1d": recurrence_1d_inplace,
           "histogram_loop": histogram_loop_inplace}


def jax_versions():
    """{name: jax.numpy function} and the jax module (imported on demand)."""
    return _jax()
