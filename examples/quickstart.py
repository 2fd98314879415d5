"""Quickstart: plain NumPy code, compiled with XLA by reactant, checked against NumPy.

Run:  python examples/quickstart.py
"""

import numpy as np

import reactant


# 1. A softmax classifier forward pass: unmodified NumPy.
def predict(w, x):
    h = np.tanh(x @ w)
    return np.exp(h) / np.exp(h).sum(axis=1, keepdims=True)


# 2. A few steps of k-means (Lloyd's algorithm), written for NumPy.
def kmeans_step(points, centers):
    d2 = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(axis=-1)  # (n, k) squared distances
    assign = np.argmin(d2, axis=1)
    onehot = (assign[:, None] == np.arange(centers.shape[0])[None, :]).astype(points.dtype)
    counts = onehot.sum(axis=0)
    new = (onehot.T @ points) / np.maximum(counts, 1)[:, None]
    return np.where(counts[:, None] > 0, new, centers), assign


# 3. An explicit heat-equation step that updates its argument in place.
def heat_step(u, alpha):
    lap = np.zeros_like(u)
    lap[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    u += alpha * lap
    return np.abs(lap).max()


def main():
    rng = np.random.default_rng(0)
    x_np = rng.random((256, 64), dtype=np.float32)
    w_np = rng.random((64, 10), dtype=np.float32)

    x, w = reactant.to_rarray(x_np), reactant.to_rarray(w_np)
    p = reactant.compile(predict)(w, x)
    err = np.abs(np.asarray(p) - predict(w_np, x_np)).max()
    print(f"predict: {p.shape} {p.dtype}, max |reactant - numpy| = {err:.2e}")

    pts_np = np.concatenate([rng.normal(c, 0.3, (200, 2)) for c in ((0, 0), (3, 3), (0, 4))]).astype(np.float32)
    cen_np = pts_np[[0, 250, 450]].copy()
    step = reactant.compile(kmeans_step)
    pts, cen = reactant.to_rarray(pts_np), reactant.to_rarray(cen_np)
    ref = cen_np
    for _ in range(5):
        cen, assign = step(pts, cen)
        ref, ref_assign = kmeans_step(pts_np, ref)
    print("k-means centers after 5 steps:\n", np.round(np.asarray(cen), 3))
    print(f"k-means: max |reactant - numpy| = {np.abs(np.asarray(cen) - ref).max():.2e}, "
          f"assignments equal: {bool((np.asarray(assign) == ref_assign).all())}, compiled once: {step.compile_count == 1}")

    u_np = np.zeros((64, 64))
    u_np[28:36, 28:36] = 1.0
    u = reactant.to_rarray(u_np)
    heat = reactant.compile(heat_step)
    for _ in range(10):
        heat(u, 0.2)  # updates u in place on the device
        heat_step(u_np, 0.2)
    print(f"heat: max |reactant - numpy| after 10 in-place steps = {np.abs(np.asarray(u) - u_np).max():.2e}")

    print("\nThe StableHLO that runs predict:")
    print(reactant.code_hlo(predict, w, x))


if __name__ == "__main__":
    main()
