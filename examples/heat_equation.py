"""1-D heat equation, written as plain NumPy with a Python `for` over a *traced* step count.

reactant turns the loop into one `stablehlo.while` (the step count is a runtime input, so
changing it does not recompile), and differentiates through it with respect to the initial
condition. Checked against NumPy (values) and jax.grad of a jax.lax.fori_loop version.

Run:  python examples/heat_equation.py
"""

import numpy as np

import reactant


def heat(u0, nsteps, alpha):
    u = u0.copy()
    for _ in range(nsteps):  # nsteps is traced: this becomes a stablehlo.while
        lap = np.zeros_like(u)
        lap[1:-1] = u[:-2] - 2 * u[1:-1] + u[2:]
        u = u + alpha * lap
    return u


def loss(u0, nsteps, alpha):
    return (heat(u0, nsteps, alpha) ** 2).sum()


solve = reactant.compile(heat)
grad = reactant.compile(lambda u0, n, a: reactant.gradient(loss, u0, n, a), ad_max_trip_count=1024)


def jax_reference(u0, nsteps, alpha):
    import jax
    import jax.numpy as jnp

    def step(_, u):
        return u.at[1:-1].add(alpha * (u[:-2] - 2 * u[1:-1] + u[2:]))

    def jloss(u):
        return (jax.lax.fori_loop(0, nsteps, step, u) ** 2).sum()

    with jax.enable_x64(True):
        return np.asarray(jax.grad(jloss)(jnp.asarray(u0)))


def main(n=128, steps=100, alpha=0.25):
    x = np.linspace(0, 1, n)
    u0_np = np.exp(-((x - 0.5) ** 2) / 0.005)
    u0 = reactant.to_rarray(u0_np)
    nsteps = reactant.to_rarray(np.int32(steps))

    u = solve(u0, nsteps, alpha)
    ref = heat(u0_np, steps, alpha)
    print(f"heat: {steps} steps, max |reactant - numpy| = {np.abs(np.asarray(u) - ref).max():.2e}")
    text = reactant.code_hlo(solve, u0, nsteps, alpha)
    print(f"one loop in the StableHLO: {text.count('stablehlo.while') == 1}")
    u200 = solve(u0, reactant.to_rarray(np.int32(2 * steps)), alpha)
    print(f"{2 * steps} steps without recompiling: {solve.compile_count == 1}, "
          f"max |diff| = {np.abs(np.asarray(u200) - heat(u0_np, 2 * steps, alpha)).max():.2e}")

    g = grad(u0, nsteps, alpha)
    g_ref = jax_reference(u0_np, steps, alpha)
    print(f"gradient wrt u0: max |reactant - jax.grad| = {np.abs(np.asarray(g) - g_ref).max():.2e}")


if __name__ == "__main__":
    main()
