"""The ``slow`` marker of the differential tests: long-form runs, skipped unless REACTANT_SLOW=1."""

import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long-form run, skipped unless the environment has REACTANT_SLOW=1")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("REACTANT_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set REACTANT_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords and str(item.fspath).startswith(HERE):
            item.add_marker(skip)
