"""reactant.export: programs exported with their structure, shardings and in-place updates run
again (in this process, after a serialization round trip, in a fresh process without the
source, from JAX) with NumPy's results; bad arguments and bad bytes are clear errors."""

import collections
import hashlib
import json
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import reactant
from reactant.export import Argument, ArraySpec, ExportError, Static
from reactant.export_format import MAGIC
from reactant.sharding import NamedSharding, PartitionSpec, Replicated, make_mesh

R = np.random.default_rng(0)
Result = collections.namedtuple("Result", "y n")


def model(params, x, scale):
    """A pytree in (a dict), a namedtuple out with an array and a static int."""
    h = np.tanh(x @ params["w"] + params["b"])
    return Result(h.sum(axis=1) * scale, x.shape[0])


def model_np(params, x, scale):
    return np.tanh(x @ params["w"] + params["b"]).sum(axis=1) * scale


def accumulate(acc, x):
    """Updates its first argument in place and returns a reduction of the new value."""
    acc += x * 2
    acc[0] = -1.0
    return acc.sum(axis=0)


def accumulate_np(acc, x):
    acc = acc + x * 2
    acc[0] = -1.0
    return acc, acc.sum(axis=0)


def loss(w, x):
    return (np.tanh(x @ w) ** 2).sum()


def loss_gradient(w, x):
    return reactant.gradient(loss, w, x)


def loss_gradient_np(w, x):
    z = np.tanh(x @ w)
    return x.T @ (2 * z * (1 - z ** 2))


def sharded_step(x, w):
    """Scales its sharded argument in place; the reduction over the sharded rows needs a collective."""
    x *= 0.5
    return np.tanh(x @ w).sum(axis=0)


def sharded_step_np(x, w):
    x = x * 0.5
    return x, np.tanh(x @ w).sum(axis=0)


def _params():
    return {"w": R.standard_normal((4, 3)).astype(np.float32), "b": R.standard_normal(3).astype(np.float32)}


@pytest.fixture(scope="module")
def mesh():
    return make_mesh((8,), ("x",))


def test_round_trip_in_process_with_pytrees_and_statics():
    p, x = _params(), R.standard_normal((5, 4)).astype(np.float32)
    rp, rx = reactant.to_rarray(p), reactant.to_rarray(x)
    exp = reactant.export(model, rp, rx, 2.5)
    same = reactant.compile(model).export(rp, rx, 2.5)  # the method is the same thing
    assert same.stablehlo() == exp.stablehlo()
    back = reactant.deserialize(exp.serialize())
    for e in (exp, back):
        r = e(rp, rx, 2.5)
        assert type(r) is Result and r.n == 5
        np.testing.assert_allclose(np.asarray(r.y), model_np(p, x, 2.5), rtol=1e-5, atol=1e-6)
        assert e.in_paths == ("params['w']", "params['b']", "x", "scale")
        assert e.in_leaves[0] == ArraySpec((4, 3), np.dtype(np.float32))
        assert e.in_leaves[3] == Static(2.5) and e.statics == {"scale": 2.5}
        assert e.out_leaves == (ArraySpec((5,), np.dtype(np.float32)), Static(5))
        assert e.in_place == () and e.mesh_shape is None and e.platform == "cpu"
        assert e.versions["format"] == 1 and {"reactant", "jax", "jaxlib", "stablehlo_target"} <= set(e.versions)
    # NumPy arrays are accepted where device arrays were exported, as a compiled function does
    np.testing.assert_allclose(np.asarray(back(p, x, 2.5).y), model_np(p, x, 2.5), rtol=1e-5, atol=1e-6)
    # the StableHLO is the compiled function's own (same optimized module)
    assert "stablehlo.tanh" in back.stablehlo() and "func.func public @main" in back.stablehlo()
    import pickle

    again = pickle.loads(pickle.dumps(back))
    np.testing.assert_allclose(np.asarray(again(rp, rx, 2.5).y), model_np(p, x, 2.5), rtol=1e-5, atol=1e-6)


def test_argument_updated_in_place():
    a, x = R.standard_normal((6, 3)), R.standard_normal((6, 3))
    for donate in (True, False):
        exp = reactant.export(reactant.compile(accumulate, donate=donate), reactant.to_rarray(a),
                              reactant.to_rarray(x))
        exp = reactant.deserialize(exp.serialize())
        assert exp.in_place == ((0, 1),) and exp.donated is donate
        want_acc, want = accumulate_np(a, x)
        acc = reactant.to_rarray(a)
        r = exp(acc, reactant.to_rarray(x))  # the result, and the new value written into acc
        np.testing.assert_allclose(np.asarray(r), want, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(acc), want_acc, rtol=1e-12)
        host = a.copy()  # a NumPy argument is written back into, as NumPy would
        np.testing.assert_allclose(np.asarray(exp(host, x)), want, rtol=1e-12)
        np.testing.assert_allclose(host, want_acc, rtol=1e-12)
        # on another device than the arguments it was exported with: the argument stays there
        other = reactant.to_rarray(a, device=reactant.devices()[3])
        np.testing.assert_allclose(np.asarray(exp(other, reactant.to_rarray(x, device=reactant.devices()[3]))),
                                   want, rtol=1e-12)
        assert other.device == reactant.devices()[3]
        np.testing.assert_allclose(np.asarray(other), want_acc, rtol=1e-12)


def test_a_result_that_is_an_argument_is_that_object():
    def f(x, k):
        return x, x * k, "done"

    x = reactant.to_rarray(np.arange(3.0))
    exp = reactant.deserialize(reactant.export(f, x, 2.0).serialize())
    assert exp.out_leaves == (Argument(0), ArraySpec((3,), np.dtype(np.float64)), Static("done"))
    y = reactant.to_rarray(np.arange(3.0) + 1)
    same, doubled, text = exp(y, 2.0)
    assert same is y and text == "done"
    np.testing.assert_array_equal(np.asarray(doubled), (np.arange(3.0) + 1) * 2)


def test_the_same_array_twice_is_kept_apart_from_two_arrays():
    def f(a, b):
        a += 1.0
        return b * 2.0

    x = reactant.to_rarray(np.zeros(3))
    apart = reactant.export(f, x, reactant.to_rarray(np.zeros(3)))
    with pytest.raises(reactant.ArgumentError, match="were distinct arrays"):
        apart(x, x)
    together = reactant.deserialize(reactant.export(f, x, x).serialize())
    y = reactant.to_rarray(np.zeros(3))
    np.testing.assert_array_equal(np.asarray(together(y, y)), [2.0, 2.0, 2.0])  # b sees the write, as in NumPy
    np.testing.assert_array_equal(np.asarray(y), [1.0, 1.0, 1.0])
    with pytest.raises(reactant.ArgumentError, match="were one array"):
        together(y, reactant.to_rarray(np.zeros(3)))


def test_gradient_program():
    w, x = R.standard_normal((4, 3)), R.standard_normal((7, 4))
    exp = reactant.deserialize(reactant.export(loss_gradient, reactant.to_rarray(w), reactant.to_rarray(x))
                               .serialize())
    g = np.asarray(exp(reactant.to_rarray(w), reactant.to_rarray(x)))
    np.testing.assert_allclose(g, loss_gradient_np(w, x), rtol=1e-10, atol=1e-12)
    eps, fd = 1e-6, np.zeros_like(w)  # and central finite differences of the NumPy loss
    for i in np.ndindex(w.shape):
        d = np.zeros_like(w)
        d[i] = eps
        fd[i] = ((np.tanh(x @ (w + d)) ** 2).sum() - (np.tanh(x @ (w - d)) ** 2).sum()) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)
    # other values of the same shapes: the program is not specialized to the example
    w2, x2 = R.standard_normal((4, 3)), R.standard_normal((7, 4))
    np.testing.assert_allclose(np.asarray(exp(w2, x2)), loss_gradient_np(w2, x2), rtol=1e-10, atol=1e-12)


def test_sharded_program_on_a_mesh_of_8_devices(mesh):
    a, w = R.standard_normal((16, 4)).astype(np.float32), R.standard_normal((4, 3)).astype(np.float32)
    x = reactant.to_rarray(a, sharding=NamedSharding(mesh, ("x",)))
    rw = reactant.to_rarray(w, sharding=Replicated(mesh))
    exp = reactant.deserialize(reactant.export(sharded_step, x, rw).serialize())
    assert exp.mesh_shape == {"x": 8} and exp.in_place == ((0, 1),)
    assert exp.in_leaves[0].spec == PartitionSpec("x") and exp.in_leaves[1].spec == PartitionSpec()
    assert "sdy.mesh @mesh" in exp.stablehlo()
    want_x, want = sharded_step_np(a, w)
    np.testing.assert_allclose(np.asarray(exp(x, rw)), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(x), want_x, rtol=1e-6)
    assert x.sharding == NamedSharding(mesh, ("x", None))
    # single-device arguments are placed on a mesh of this process's devices, and stay where they were
    x1 = reactant.to_rarray(a)
    np.testing.assert_allclose(np.asarray(exp(x1, reactant.to_rarray(w))), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(x1), want_x, rtol=1e-6)
    assert x1.device == reactant.devices()[0] and not isinstance(x1.sharding, NamedSharding)
    for _ in range(3):  # repeated calls (the program has collectives) keep agreeing with NumPy
        want_x, want = sharded_step_np(want_x, w)
        np.testing.assert_allclose(np.asarray(exp(x, rw)), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(x), want_x, rtol=1e-5)
    with pytest.raises(reactant.UnsupportedError, match="SPMD"):
        exp.to_jax()


def test_shard_map_collective_survives_the_portable_artifact():
    # (the VHLO round trip drops the all_reduce's channel type; XLA still sums the right groups)
    from reactant.sharding import psum, shard_map

    mesh2 = make_mesh((4, 2), ("x", "y"))
    a = np.arange(32.0, dtype=np.float32).reshape(8, 4)

    def f(x):
        return shard_map(lambda b: psum(b, "x"), mesh2, in_specs=(("x",),), out_specs=())(x) * 2.0

    x = reactant.to_rarray(a, sharding=NamedSharding(mesh2, ("x",)))
    exp = reactant.deserialize(reactant.export(f, x).serialize())
    assert "stablehlo.all_reduce" in exp.stablehlo() and exp.mesh_shape == {"x": 4, "y": 2}
    np.testing.assert_allclose(np.asarray(exp(x)), a.reshape(4, 2, 4).sum(axis=0) * 2.0)
    np.testing.assert_allclose(np.asarray(exp(a)), a.reshape(4, 2, 4).sum(axis=0) * 2.0)


def test_wrong_arguments_name_the_leaf():
    p, x = _params(), R.standard_normal((5, 4)).astype(np.float32)
    exp = reactant.deserialize(reactant.export(model, reactant.to_rarray(p), reactant.to_rarray(x), 2.5).serialize())
    rp, rx = reactant.to_rarray(p), reactant.to_rarray(x)
    with pytest.raises(reactant.ArgumentError, match=r"x has shape \(4, 4\)"):
        exp(rp, reactant.to_rarray(x[:4]), 2.5)
    with pytest.raises(reactant.ArgumentError, match=r"params\['w'\] has shape \(4, 3\) and dtype float64"):
        exp(reactant.to_rarray({"w": p["w"].astype(np.float64), "b": p["b"]}), rx, 2.5)
    with pytest.raises(reactant.ArgumentError, match="scale is float 3.0.*static value float 2.5"):
        exp(rp, rx, 3.0)
    with pytest.raises(reactant.ArgumentError, match="structure"):
        exp(rp, rx)
    with pytest.raises(reactant.ArgumentError, match="structure"):
        exp({"w": rp["w"]}, rx, 2.5)
    with pytest.raises(reactant.ArgumentError, match="x must be a device array"):
        exp(rp, "x", 2.5)
    # a Python number made an input with track_numbers stays a number of its type
    f = reactant.compile(lambda x, k: x * k, track_numbers=True)
    tracked = reactant.export(f, rx, 2.0)
    np.testing.assert_allclose(np.asarray(tracked(rx, 3.0)), x * 3.0, rtol=1e-6)
    with pytest.raises(reactant.ArgumentError, match="k must be a Python float"):
        tracked(rx, 3)
    np.testing.assert_allclose(np.asarray(exp(rp, rx, 2.5).y), model_np(p, x, 2.5), rtol=1e-5, atol=1e-6)


def _reserialized(data: bytes, edit) -> bytes:
    """``data`` with its JSON description changed by ``edit`` and a checksum that matches."""
    start = len(MAGIC) + 12
    version, size = struct.unpack_from("<IQ", data, len(MAGIC))
    header = json.loads(data[start:start + size])
    edit(header)
    text = json.dumps(header).encode()
    body = MAGIC + struct.pack("<IQ", version, len(text)) + text + data[start + size:-32]
    return body + hashlib.sha256(body).digest()


def test_bad_bytes_and_other_versions_are_clear_errors():
    x = reactant.to_rarray(np.ones((3, 2), np.float32))
    data = reactant.export(lambda x: np.sin(x) * 2, x).serialize()
    assert reactant.deserialize(_reserialized(data, lambda h: None))(x) is not None  # the editor itself is sound
    bad = bytearray(data)
    bad[len(data) // 2] ^= 0x10
    other_version = data[:len(MAGIC)] + struct.pack("<I", 99) + data[len(MAGIC) + 4:]
    cases = {
        b"": "not a reactant export",
        b"\x00" * 300: "not a reactant export",
        b"ML\xefR" + os.urandom(200): "not a reactant export",
        data[:-7]: "corrupted or truncated",
        bytes(bad): "corrupted or truncated",
        other_version: "format version 99; this reactant .* reads format 1",
        _reserialized(data, lambda h: h["outputs"][0].__setitem__(0, [4, 2])): "does not match its description",
        _reserialized(data, lambda h: h.__setitem__("stablehlo", "99.0.0")): "StableHLO 99.0.0, newer",
        _reserialized(data, lambda h: h.__setitem__("mesh", {"axes": ["x"], "sizes": [8]})): "mesh",
        _reserialized(data, lambda h: h.pop("in_tree")): "malformed",
        _reserialized(data, lambda h: h["in_leaves"][0].__setitem__("array", "?")): "malformed",
    }
    for blob, message in cases.items():
        with pytest.raises(ExportError, match=message):
            reactant.deserialize(blob)
    with pytest.raises(ExportError, match="expected the bytes"):
        reactant.deserialize("not bytes")
    with pytest.raises(TypeError, match="reactant.export"):
        reactant.Exported()


def test_to_jax_under_jit_equals_numpy():
    import jax

    a, b = R.standard_normal((5, 4)).astype(np.float32), R.standard_normal((4, 3)).astype(np.float32)

    def f(x, ws):
        return {"h": np.tanh(x @ ws[0]), "s": (x * x).sum(axis=1)}

    exp = reactant.deserialize(reactant.export(f, reactant.to_rarray(a), [reactant.to_rarray(b)]).serialize())
    jexp = exp.to_jax()
    r = jax.jit(jexp.call)(a, [b])
    np.testing.assert_allclose(np.asarray(r["h"]), np.tanh(a @ b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(r["s"]), (a * a).sum(axis=1), rtol=1e-5)
    bigger = jax.jit(lambda x, w: jexp.call(x * 2, [w])["s"].sum() + 1)(a, b)
    np.testing.assert_allclose(float(bigger), (4 * a * a).sum() + 1, rtol=1e-5)
    with pytest.raises(reactant.UnsupportedError, match="static arguments"):
        reactant.export(model, reactant.to_rarray(_params()), reactant.to_rarray(a), 2.0).to_jax()
    with pytest.raises(reactant.UnsupportedError, match="in place"):
        reactant.export(accumulate, reactant.to_rarray(a), reactant.to_rarray(a)).to_jax()


G = reactant.to_rarray(np.arange(6.0))


def test_runtime_checks_captured_arrays_and_state_updates():
    global G

    def checked(x):
        assert (x > 0).all(), "x must be positive"
        return np.log(x) + G  # G: a device array of the Python state, stored with the export

    x = reactant.to_rarray(np.arange(1.0, 7.0))
    exp = reactant.deserialize(reactant.export(checked, x).serialize())
    old = np.asarray(G).copy()
    G = reactant.to_rarray(np.zeros(6))  # the export keeps the value it was made with
    np.testing.assert_allclose(np.asarray(exp(x)), np.log(np.arange(1.0, 7.0)) + old, rtol=1e-12)
    with pytest.raises(AssertionError, match="x must be positive"):
        exp(reactant.to_rarray(-np.arange(1.0, 7.0)))

    def updates_state(x):
        G[0] = x.sum()
        return x

    with pytest.raises(reactant.UnsupportedError, match="Python state"):
        reactant.export(updates_state, x)


CHILD = """
import sys, numpy as np, reactant
out = {}
folder = sys.argv[1]
def load(name):
    with open(f"{folder}/{name}.rexp", "rb") as f:
        return reactant.deserialize(f.read())
inputs = np.load(f"{folder}/inputs.npz")
if reactant.devices().__len__() >= 8:
    r = load("model")({"w": inputs["w"], "b": inputs["b"]}, reactant.to_rarray(inputs["x"]), 2.5)
    out["model_y"], out["model_n"], out["model_type"] = np.asarray(r.y), r.n, type(r).__name__ + str(r._fields)
    acc = reactant.to_rarray(inputs["acc"])
    out["acc_result"] = np.asarray(load("accumulate")(acc, inputs["x2"]))
    out["acc_after"] = np.asarray(acc)
    out["grad"] = np.asarray(load("gradient")(inputs["gw"], inputs["gx"]))
    sx = inputs["sx"].copy()
    out["sharded_result"] = np.asarray(load("sharded")(sx, inputs["sw"]))
    out["sharded_after"] = sx
else:
    out["grad"] = np.asarray(load("gradient")(inputs["gw"], inputs["gx"]))
    try:
        load("sharded")(inputs["sx"], inputs["sw"])
    except reactant.ShardingError as e:
        out["error"] = str(e).splitlines()[0]
out["modules"] = np.array(sorted(m for m in sys.modules if "test_export" in m))
np.savez(f"{folder}/out.npz", **out)
"""


def _child(folder, devices: int):
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}", TF_CPP_MIN_LOG_LEVEL="2")
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), str(folder)], capture_output=True, text=True,
                       timeout=600, env=env, cwd=str(folder))
    assert p.returncode == 0, p.stderr[-3000:]
    return dict(np.load(folder / "out.npz"))


def test_fresh_process_without_the_source(tmp_path, mesh):
    p, x = _params(), R.standard_normal((5, 4)).astype(np.float32)
    acc, x2 = R.standard_normal((6, 3)), R.standard_normal((6, 3))
    gw, gx = R.standard_normal((4, 3)), R.standard_normal((7, 4))
    sx, sw = R.standard_normal((16, 4)).astype(np.float32), R.standard_normal((4, 3)).astype(np.float32)
    exports = {
        "model": reactant.export(model, reactant.to_rarray(p), reactant.to_rarray(x), 2.5),
        "accumulate": reactant.export(accumulate, reactant.to_rarray(acc), reactant.to_rarray(x2)),
        "gradient": reactant.export(loss_gradient, reactant.to_rarray(gw), reactant.to_rarray(gx)),
        "sharded": reactant.export(sharded_step, reactant.to_rarray(sx, sharding=NamedSharding(mesh, ("x",))),
                                   reactant.to_rarray(sw, sharding=Replicated(mesh))),
    }
    for name, exp in exports.items():
        (tmp_path / f"{name}.rexp").write_bytes(exp.serialize())
    np.savez(tmp_path / "inputs.npz", w=p["w"], b=p["b"], x=x, acc=acc, x2=x2, gw=gw, gx=gx, sx=sx, sw=sw)

    out = _child(tmp_path, 8)
    assert out["modules"].size == 0  # the child never imported this file
    np.testing.assert_allclose(out["model_y"], model_np(p, x, 2.5), rtol=1e-5, atol=1e-6)
    assert int(out["model_n"]) == 5 and str(out["model_type"]) == "Result('y', 'n')"
    want_acc, want = accumulate_np(acc, x2)
    np.testing.assert_allclose(out["acc_result"], want, rtol=1e-12)
    np.testing.assert_allclose(out["acc_after"], want_acc, rtol=1e-12)
    np.testing.assert_allclose(out["grad"], loss_gradient_np(gw, gx), rtol=1e-10, atol=1e-12)
    want_sx, want_s = sharded_step_np(sx, sw)
    np.testing.assert_allclose(out["sharded_result"], want_s, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["sharded_after"], want_sx, rtol=1e-6)

    # a process with 2 devices runs the single-device program; the 8-device one is a clear error
    (tmp_path / "out.npz").unlink()
    out = _child(tmp_path, 2)
    np.testing.assert_allclose(out["grad"], loss_gradient_np(gw, gx), rtol=1e-10, atol=1e-12)
    assert "exported for a mesh of 8 devices (x=8); this process has 2 cpu device(s)" in str(out["error"])
