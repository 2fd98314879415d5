"""The optimizer on sharded modules from elsewhere (lowered by jax.jit): O2 keeps every
sharding annotation, constraint and manual computation, and the partitioned program computes
the same per-device results before and after."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from reactant import runtime
from reactant.ir.context import main_func, parse_module, to_text
from reactant.optimize import optimize


def _shardy_facts(module) -> dict:
    """Everything sharding-related the optimizer must keep."""
    fn = main_func(module)
    facts = {"args": str(fn.attributes["arg_attrs"]) if "arg_attrs" in fn.attributes else "",
             "results": str(fn.attributes["res_attrs"]) if "res_attrs" in fn.attributes else "",
             "constraints": [], "manual": []}

    def visit(op):
        if op.name == "sdy.sharding_constraint":
            facts["constraints"].append(str(op.attributes["sharding"]))
        if op.name == "sdy.manual_computation":
            facts["manual"].append(tuple(str(op.attributes[k]) for k in ("in_shardings", "out_shardings",
                                                                           "manual_axes")))
        return 0  # WalkResult.ADVANCE

    fn.operation.walk(visit)
    return facts


def _run(text: str, devices, args):
    exe = runtime.compile_module(text, devices, num_partitions=len(devices))
    outs = exe.execute_sharded(args).disassemble_into_single_device_arrays()
    return [[np.asarray(s) for s in per_device] for per_device in outs]


def test_o2_keeps_shardings_constraints_and_manual_computations():
    devs = jax.devices()[:8]
    jm = Mesh(np.array(devs).reshape(2, 4), ("a", "b"))

    def f(x, w):
        y = jnp.tanh(x @ w)
        y = jax.lax.with_sharding_constraint(y, NamedSharding(jm, P(None, "b")))
        z = jnp.transpose(jnp.transpose(y * 1.0 + 0.0))  # foldable around the constraint, not across it
        s = jax.shard_map(lambda t: jax.lax.psum(jnp.exp(t) * 2.0, "b"), mesh=jm, in_specs=P("a", "b"),
                          out_specs=P("a"))(z)
        return s, jax.lax.with_sharding_constraint(z.T, NamedSharding(jm, P("b")))

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    shard_x, shard_w = NamedSharding(jm, P("a")), NamedSharding(jm, P())
    text = jax.jit(f, in_shardings=(shard_x, shard_w)).lower(x, w).as_text()
    module = parse_module(text)
    before = _shardy_facts(module)
    assert len(before["constraints"]) == 2 and len(before["manual"]) == 1 and "sdy.sharding" in before["args"]
    optimize(module, "O2")
    after_text = to_text(module)
    assert _shardy_facts(module) == before
    args = [jax.device_put(x, shard_x), jax.device_put(w, shard_w)]
    want, got = _run(text, devs, args), _run(after_text, devs, args)
    for a, b in zip(want, got):
        for sa, sb in zip(a, b):
            np.testing.assert_allclose(sb, sa, rtol=1e-5, atol=1e-6)
