"""Test configuration: 8 host CPU devices (for sharding tests), set before jax loads."""

import os

# The default tier compiles ~4,000 small programs, most of its time in XLA's CPU back end:
# without LLVM's optimizations, and with XLA's older fusion emitters (the MLIR-based ones take
# twice as long to compile a small program), they compile 2-3x faster and compute the same
# values. The long-form tier (REACTANT_SLOW=1) keeps XLA's defaults, as users run it.
_FAST_XLA = " --xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8"
                      + ("" if os.environ.get("REACTANT_SLOW") == "1" else _FAST_XLA))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
# the optimizer's default cost constants: no calibration run timing this machine (results would
# depend on it) and no calibration file written into the user's cache
os.environ.setdefault("REACTANT_EQSAT_CALIBRATE", "0")

import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))  # tests/npcheck.py: shared NumPy comparison helpers

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# -- tiers: ``slow`` marks the long-form property tests (the bulk of the generated differential
# programs, hypothesis searches, thousand-op compiles). The README's test command skips them;
# ``REACTANT_SLOW=1`` runs them too (``.ci/run`` does).
def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long-form property test, skipped unless REACTANT_SLOW=1")


# the files whose tests run longest (processes started, timeouts waited out, hundreds of
# programs) go first: two workers then end together on short tests instead of one waiting for
# the other's last 20-second test (whole files: module fixtures are set up once)
_LONG_FIRST = ("sharding/test_process_failure.py", "differential/test_differential.py",
               "sharding/test_four_processes.py", "sharding/test_multiprocess.py", "optimize/test_reroll.py",
               "api/test_random.py")


def _long_first(item) -> int:
    path = item.nodeid.split("::")[0].replace(os.sep, "/")
    return next((i for i, f in enumerate(_LONG_FIRST) if path.endswith(f)), len(_LONG_FIRST))


def pytest_collection_modifyitems(config, items):
    items.sort(key=_long_first)  # (stable: the rest keep their order)
    if os.environ.get("REACTANT_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow (long-form): set REACTANT_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
