"""What ``import reactant`` and a first call load: jax (the PJRT runtime) only at the first
use of a device, with 64-bit values kept and ``XLA_FLAGS`` honoured as before; the e-graph
engine's Python front end (and the code formatter it imports) never, its compiled bindings only
when saturation runs; a user's own ``import egglog`` afterwards works as usual."""

import os
import subprocess
import sys

PROGRAM = r"""
import sys
import numpy as np
import reactant
assert "egglog.bindings" not in sys.modules, "import reactant loaded the e-graph engine"
f = reactant.compile(lambda a, b: np.tanh(a @ b).sum(axis=0), optimize="O2")
x = np.arange(65536.0).reshape(256, 256) / 65536  # (worth saturating: see eqsat_calls)
out = f(reactant.to_rarray(x), reactant.to_rarray(x + 1))
np.testing.assert_allclose(np.asarray(out), np.tanh(x @ (x + 1)).sum(axis=0))
from reactant.optimize import eqsat
assert eqsat.last_report().segments, "equality saturation did not run"
assert "egglog" not in sys.modules, "the egglog front end was imported"
import egglog.bindings  # a user's own import afterwards works as usual
e = egglog.EGraph(); e.let("x", egglog.i64(1) + egglog.i64(2))
assert isinstance(egglog.bindings.EGraph(), egglog.bindings.EGraph)
print("ok")
"""


def test_import_defers_the_egraph_engine_and_loads_only_its_bindings():
    r = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


def _run(program: str, **env: str | None) -> None:
    """Run ``program`` in a fresh interpreter (this process has jax loaded already); ``env``
    overrides the environment (None removes a variable)."""
    full = dict(os.environ)
    for k, v in env.items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, env=full)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


FIRST_USE = r"""
import importlib.metadata, os, sys
import numpy as np
import reactant
loaded = [m for m in ("jax", "jaxlib.xla_client", "egglog", "egglog.bindings") if m in sys.modules]
assert not loaded, f"import reactant loaded {loaded}"
assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "1"  # reactant's default, in place before jax loads
from reactant.optimize.eqsat import cost  # the calibration key names jax's version, read without jax
assert cost._timer[1] == "jax" + importlib.metadata.version("jax") and "jax" not in sys.modules

x = reactant.to_rarray(np.ones(2))  # the first device array loads the runtime
assert "jax" in sys.modules
assert x.dtype == np.float64 and np.asarray(x).dtype == np.float64
big = 2**53 + 1  # not representable in float32 or int32: would change if narrowed
f = reactant.compile(lambda a, n: (a * (1 + 2**-40), n + 1))
a, n = f(x, reactant.to_rarray(np.array([big, -big], dtype=np.int64)))
assert a.dtype == np.float64 and n.dtype == np.int64
np.testing.assert_array_equal(np.asarray(a), np.full(2, 1 + 2**-40))
np.testing.assert_array_equal(np.asarray(n), np.array([big + 1, -big + 1], dtype=np.int64))

import jax  # jax's own global setting is untouched; its arrays are accepted as before
assert not jax.config.jax_enable_x64 and cost._timer[1] == f"jax{jax.__version__}"
y = reactant.to_rarray(jax.numpy.arange(3.0))  # (float32: jax's default without x64)
assert y.dtype == np.float32
np.testing.assert_array_equal(np.asarray(reactant.compile(lambda v: v * 2)(y)), np.arange(3.0, dtype=np.float32) * 2)
print("ok")
"""


def test_import_defers_jax_until_first_use_and_keeps_64_bit_values():
    _run(FIRST_USE, TF_CPP_MIN_LOG_LEVEL=None, JAX_ENABLE_X64=None)


DEVICES = r"""
import os, sys
import numpy as np
{before}
import reactant
{after}
assert "jax" not in sys.modules
devs = reactant.devices()
assert len(devs) == 8, devs
mesh = reactant.sharding.make_mesh((8,), ("x",))
x = reactant.to_rarray(np.arange(16.0), sharding=reactant.sharding.NamedSharding(mesh, ("x",)))
np.testing.assert_array_equal(np.asarray(reactant.compile(lambda a: a.sum())(x)), np.arange(16.0).sum())
print("ok")
"""
FLAG = 'os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"'


def test_device_count_flag_set_before_import_gives_eight_devices():
    _run(DEVICES.format(before=FLAG, after=""), XLA_FLAGS=None)


def test_device_count_flag_set_after_import_but_before_first_use_is_read_too():
    _run(DEVICES.format(before="", after=FLAG), XLA_FLAGS=None)
