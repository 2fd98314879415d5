"""Training a two-layer MLP sharded over 8 devices, written in plain NumPy.

1. Data parallel: the batch is split over the 8 devices of a mesh ("data",), the parameters are
   replicated; the compiled step updates them in place. XLA's partitioner inserts the
   all-reduce of the gradients.
2. Data + tensor parallel (Megatron style) on a 2-D mesh ("data", "model") = (2, 4): W1 is split
   by columns and W2 by rows over "model", the batch over "data".
3. The same data-parallel step written by hand with shard_map and an explicit psum.

Each is checked against the same NumPy program run unsharded. On a CPU-only machine the 8
devices are simulated (XLA_FLAGS, set below before jax loads); on 8 GPUs the script is the same.
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import numpy as np  # noqa: E402

import reactant  # noqa: E402
from reactant.sharding import NamedSharding, Replicated, make_mesh, psum, shard_map  # noqa: E402

LR = 0.05


def loss(params, x, y):
    w1, b1, w2 = params["w1"], params["b1"], params["w2"]
    h = np.tanh(x @ w1 + b1)
    return np.mean((h @ w2 - y) ** 2)


def train_step(params, x, y):
    """One SGD step, updating the parameters in place."""
    grads = reactant.gradient(loss, params, x, y)
    for k in params:
        params[k] -= LR * grads[k]
    return loss(params, x, y)


def numpy_reference(params, x, y, steps):
    """The same training with NumPy alone (hand-written gradients)."""
    p = {k: v.copy() for k, v in params.items()}
    for _ in range(steps):
        a = x @ p["w1"] + p["b1"]
        h = np.tanh(a)
        r = h @ p["w2"] - y
        g_out = 2 * r / r.size
        g_w2 = h.T @ g_out
        g_a = (g_out @ p["w2"].T) * (1 - h * h)
        p["w1"] -= LR * (x.T @ g_a)
        p["b1"] -= LR * g_a.sum(0)
        p["w2"] -= LR * g_w2
    return p


def init(rng, d_in=16, hidden=64, d_out=8, batch=256):
    params = {"w1": rng.standard_normal((d_in, hidden)) / 4, "b1": np.zeros(hidden),
              "w2": rng.standard_normal((hidden, d_out)) / 8}
    x = rng.standard_normal((batch, d_in))
    y = np.sin(x[:, :d_out])
    return params, x, y


def train(params, x, y, param_sharding, batch_sharding, steps):
    """``steps`` compiled training steps on placed arrays; whether the parameters equal the
    NumPy reference, the last loss, the placed parameters and the compiled step."""
    p = reactant.to_rarray(params, sharding=param_sharding)
    xs, ys = reactant.to_rarray((x, y), sharding=batch_sharding)
    step = reactant.compile(train_step)
    for _ in range(steps):
        last = step(p, xs, ys)
    ref = numpy_reference(params, x, y, steps)
    ok = all(np.allclose(np.asarray(p[k]), ref[k], rtol=1e-9, atol=1e-12) for k in ref)
    return ok, float(last), p, lambda: reactant.code_xla(step, p, xs, ys)


def data_parallel(steps=10):
    params, x, y = init(np.random.default_rng(0))
    mesh = make_mesh((8,), ("data",))
    ok, last, p, _ = train(params, x, y, Replicated(mesh), NamedSharding(mesh, ("data",)), steps)
    print(f"data parallel: loss {last:.6f}, parameters equal NumPy's: {ok}, w1 placed {p['w1'].sharding}")
    return ok


def tensor_parallel(steps=10):
    params, x, y = init(np.random.default_rng(1))
    mesh = make_mesh((2, 4), ("data", "model"))
    shard = {"w1": NamedSharding(mesh, (None, "model")),  # columns of W1 (and b1) over "model"
             "b1": NamedSharding(mesh, ("model",)),
             "w2": NamedSharding(mesh, ("model",))}       # rows of W2 over "model"
    ok, last, p, hlo = train(params, x, y, shard, NamedSharding(mesh, ("data",)), steps)
    print(f"tensor parallel: loss {last:.6f}, parameters equal NumPy's: {ok}, "
          f"w1 stays {p['w1'].sharding}, all-reduces per step: {hlo().count('all-reduce(')}")
    return ok


def shard_map_data_parallel(steps=10):
    rng = np.random.default_rng(2)
    params, x, y = init(rng)
    mesh = make_mesh((8,), ("data",))

    def local_step(params, xb, yb):
        # each device: the gradient of its share of the mean, summed over the devices
        grads = reactant.gradient(lambda p: loss(p, xb, yb) / 8, params)
        grads = psum(grads, "data")
        return {k: params[k] - LR * grads[k] for k in params}

    step = reactant.compile(shard_map(local_step, mesh, (None, "data", "data"), None))
    p = reactant.to_rarray(params, sharding=Replicated(mesh))
    xs, ys = reactant.to_rarray((x, y), sharding=NamedSharding(mesh, ("data",)))
    for _ in range(steps):
        p = step(p, xs, ys)
    ref = numpy_reference(params, x, y, steps)
    ok = all(np.allclose(np.asarray(p[k]), ref[k], rtol=1e-9, atol=1e-12) for k in ref)
    print(f"shard_map data parallel: parameters equal NumPy's: {ok}")
    return ok


if __name__ == "__main__":
    results = [data_parallel(), tensor_parallel(), shard_map_data_parallel()]
    print("all equal:", all(results))
