"""Loop-heavy NumPy kernels written the textbook way (Python loops over plain ints, slices
bounded by the loop index), with a jax.numpy version of the same algorithm for ``jax.jit``
(``lax.fori_loop`` where the NumPy code loops, so that jax compiles one loop too).

``KERNELS[name] = numpy_fn`` (functional: copies its input, returns a new array: the form
jax is compared with), ``INPLACE[name] = numpy_fn`` (the same algorithm as NumPy users write
it: updates its arguments in place, some through views, and returns None; its inputs:
``inplace_inputs(name, n)``), ``jax_versions() -> {name: jax_fn}``, ``inputs(name, n)``.
"""

from __future__ import annotations

import numpy as np


def trisolve(L, b):
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def lu_dots(A):
    n = A.shape[0]
    A = A.copy()
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


def lu_outer(A):
    n = A.shape[0]
    A = A.copy()
    for i in range(n - 1):
        A[i + 1:, i] /= A[i, i]
        A[i + 1:, i + 1:] -= np.outer(A[i + 1:, i], A[i, i + 1:])
    return A


def cholesky(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for i in range(n):
        for j in range(i + 1):
            s = L[i, :j] @ L[j, :j]
            if i == j:
                L[i, j] = np.sqrt(A[i, i] - s)
            else:
                L[i, j] = (A[i, j] - s) / L[j, j]
    return L


def gauss_seidel(A):
    n = A.shape[0]
    A = A.copy()
    for t in range(2):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = (A[i - 1, j] + A[i, j - 1] + A[i, j] + A[i, j + 1] + A[i + 1, j]) / 5.0
    return A


def jacobi(A):
    A = A.copy()
    B = A.copy()
    for t in range(50):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
    return A


def levinson(r):
    """Levinson-Durbin recursion (the ``durbin`` kernel): solves a Toeplitz system."""
    n = r.shape[0]
    y = np.zeros_like(r)
    z = np.zeros_like(r)
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        alpha = -(r[k] + np.dot(r[:k][::-1], y[:k])) / beta
        z[:k] = y[:k] + alpha * y[:k][::-1]
        y[:k] = z[:k]
        y[k] = alpha
    return y


def doitgen(A, C4):
    nr, nq, _ = A.shape
    A = A.copy()
    for r in range(nr):
        for q in range(nq):
            A[r, q, :] = A[r, q, :] @ C4
    return A


# -- the same algorithms in place: update the arguments, return nothing ---------------------------
def trisolve_inplace(L, b):
    """Forward substitution overwriting ``b`` with the solution (as LAPACK's trsv does)."""
    for i in range(b.shape[0]):
        b[i] = (b[i] - L[i, :i] @ b[:i]) / L[i, i]


def lu_dots_inplace(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]


def lu_outer_inplace(A):
    n = A.shape[0]
    for i in range(n - 1):
        A[i + 1:, i] /= A[i, i]
        A[i + 1:, i + 1:] -= np.outer(A[i + 1:, i], A[i, i + 1:])


def lu_outer_views(A):
    """Right-looking LU through views: the column below the pivot and the trailing block."""
    n = A.shape[0]
    for i in range(n - 1):
        col = A[i + 1:, i]
        col /= A[i, i]
        trailing = A[i + 1:, i + 1:]
        trailing -= np.outer(col, A[i, i + 1:])


def cholesky_inplace(A):
    """Cholesky overwriting the lower triangle of ``A`` with L (the upper is left as it was)."""
    n = A.shape[0]
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, n):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def gauss_seidel_inplace(A):
    n = A.shape[0]
    for t in range(2):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = (A[i - 1, j] + A[i, j - 1] + A[i, j] + A[i, j + 1] + A[i + 1, j]) / 5.0


def jacobi_inplace(A, B):
    """Jacobi 2-D time loop updating both grids (polybench's ``jacobi_2d(A, B)``), the interiors
    written through views taken once."""
    a, b = A[1:-1, 1:-1], B[1:-1, 1:-1]
    for t in range(50):
        b[...] = 0.2 * (a + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        a[...] = 0.2 * (b + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def levinson_inplace(r, y):
    """Levinson-Durbin writing the solution into ``y`` (polybench's ``durbin(r, y)``)."""
    n = r.shape[0]
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        alpha = -(r[k] + np.dot(r[:k][::-1], y[:k])) / beta
        y[:k] += alpha * y[:k][::-1]
        y[k] = alpha


def levinson_views(r, y):
    """``levinson_inplace`` with the prefix update through a view (its right side is a new
    array: no overlap)."""
    n = r.shape[0]
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        alpha = -(r[k] + np.dot(r[:k][::-1], y[:k])) / beta
        yk = y[:k]
        yk += alpha * yk[::-1]
        y[k] = alpha


def doitgen_inplace(A, C4):
    nr, nq, _ = A.shape
    for r in range(nr):
        for q in range(nq):
            A[r, q, :] = A[r, q, :] @ C4


# -- jax versions of the same algorithms -------------------------------------------------------------
def _jax():
    import jax
    import jax.numpy as jnp
    from jax import lax

    def j_trisolve(L, b):
        n = b.shape[0]
        idx = jnp.arange(n)

        def body(i, x):
            return x.at[i].set((b[i] - jnp.dot(jnp.where(idx < i, L[i], 0.0), x)) / L[i, i])
        return lax.fori_loop(0, n, body, jnp.zeros_like(b))

    def j_lu_outer(A):
        n = A.shape[0]
        idx = jnp.arange(n)

        def body(i, A):
            col = jnp.where(idx > i, A[:, i] / A[i, i], A[:, i])
            A = A.at[:, i].set(col)
            u = jnp.where(idx > i, col, 0.0)
            v = jnp.where(idx > i, A[i], 0.0)
            return A - jnp.outer(u, v)
        return lax.fori_loop(0, n - 1, body, A)

    def j_lu_dots(A):
        return j_lu_outer(A)  # the same factors (Doolittle): jax has no cheaper loop form of the dots

    def j_cholesky(A):
        n = A.shape[0]
        idx = jnp.arange(n)

        def row(i, L):
            def col(j, L):
                s = jnp.dot(jnp.where(idx < j, L[i], 0.0), jnp.where(idx < j, L[j], 0.0))
                v = jnp.where(i == j, jnp.sqrt(A[i, i] - s), (A[i, j] - s) / L[j, j])
                return L.at[i, j].set(v)
            return lax.fori_loop(0, i + 1, col, L)
        return lax.fori_loop(0, n, row, jnp.zeros_like(A))

    def j_gauss_seidel(A):
        n = A.shape[0]

        def sweep(t, A):
            def row(i, A):
                def col(j, A):
                    return A.at[i, j].set((A[i - 1, j] + A[i, j - 1] + A[i, j] + A[i, j + 1] + A[i + 1, j]) / 5.0)
                return lax.fori_loop(1, n - 1, col, A)
            return lax.fori_loop(1, n - 1, row, A)
        return lax.fori_loop(0, 2, sweep, A)

    def j_jacobi(A):
        def step(t, AB):
            A, B = AB
            B = B.at[1:-1, 1:-1].set(0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1]))
            A = A.at[1:-1, 1:-1].set(0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1]))
            return A, B
        return lax.fori_loop(0, 50, step, (A, A))[0]

    def j_levinson(r):
        n = r.shape[0]
        idx = jnp.arange(n)

        def body(k, s):
            y, beta, alpha = s
            beta = (1 - alpha * alpha) * beta
            rev = jnp.where(idx < k, jnp.roll(y[::-1], k - n), 0.0)  # y[:k][::-1], zero padded
            alpha = -(r[k] + jnp.dot(rev, r)) / beta
            y = jnp.where(idx < k, y + alpha * rev, y).at[k].set(alpha)
            return y, beta, alpha
        y0 = jnp.zeros_like(r).at[0].set(-r[0])
        return lax.fori_loop(1, n, body, (y0, 1.0, -r[0]))[0]

    def j_doitgen(A, C4):
        return jnp.einsum("rqs,sp->rqp", A, C4)

    return {"trisolve": j_trisolve, "lu_dots": j_lu_dots, "lu_outer": j_lu_outer, "cholesky": j_cholesky,
            "gauss_seidel": j_gauss_seidel, "jacobi": j_jacobi, "levinson": j_levinson,
            "doitgen": j_doitgen}, jax


def _spd(n, rng):
    M = rng.standard_normal((n, n))
    return M @ M.T + n * np.eye(n)


def inputs(name: str, n: int, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    if name == "trisolve":
        return (np.tril(rng.standard_normal((n, n))) + n * np.eye(n), rng.standard_normal(n))
    if name in ("lu_dots", "lu_outer", "cholesky"):
        return (_spd(n, rng),)
    if name in ("gauss_seidel", "jacobi"):
        return (rng.standard_normal((n, n)),)
    if name == "levinson":
        return (rng.uniform(0.0, 0.1, n),)
    if name == "doitgen":
        return (rng.standard_normal((n // 4, n // 4, n)), rng.standard_normal((n, n)))
    raise KeyError(name)


def inplace_inputs(name: str, n: int, seed: int = 0) -> tuple:
    """The in-place variant's arguments: ``inputs``' plus the arrays it writes its result into."""
    args = inputs(base_name(name), n, seed)
    if name == "jacobi":
        return args + (args[0].copy(),)
    if name.startswith("levinson"):
        return args + (np.zeros_like(args[0]),)
    return args


def base_name(name: str) -> str:
    """The kernel an ``INPLACE`` entry is a form of (``lu_outer_views`` -> ``lu_outer``)."""
    return name.removesuffix("_views")


KERNELS = {"trisolve": trisolve, "lu_dots": lu_dots, "lu_outer": lu_outer, "cholesky": cholesky,
           "gauss_seidel": gauss_seidel, "jacobi": jacobi, "levinson": levinson, "doitgen": doitgen}
# ``*_views``: the same kernel with its in-place updates written through views of the arguments
INPLACE = {"trisolve": trisolve_inplace, "lu_dots": lu_dots_inplace, "lu_outer": lu_outer_inplace,
           "lu_outer_views": lu_outer_views, "cholesky": cholesky_inplace, "gauss_seidel": gauss_seidel_inplace,
           "jacobi": jacobi_inplace, "levinson": levinson_inplace, "levinson_views": levinson_views,
           "doitgen": doitgen_inplace}


def jax_versions():
    """{name: jax.numpy function} and the jax module (imported on demand)."""
    return _jax()
