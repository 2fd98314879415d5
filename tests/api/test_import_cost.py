"""What ``import reactant`` and a first call load: the e-graph engine's Python front end (and
the code formatter it imports) never, its compiled bindings only when saturation runs; a
user's own ``import egglog`` afterwards works as usual."""

import subprocess
import sys

PROGRAM = r"""
import sys
import numpy as np
import reactant
assert "egglog.bindings" not in sys.modules, "import reactant loaded the e-graph engine"
f = reactant.compile(lambda a, b: np.tanh(a @ b).sum(axis=0), optimize="O2")
x = np.arange(4096.0).reshape(64, 64) / 4096
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
