"""Every package folder of the checkout is installed: pyproject.toml lists packages explicitly
(the subsystem folders sit at the repo root), so a new subpackage missing from the list would
import in an editable checkout and fail from a wheel (reactant.numpy once did)."""

from __future__ import annotations

import os
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_package_folder_is_listed_in_pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        conf = tomllib.load(f)["tool"]["setuptools"]
    listed = set(conf["packages"])
    dirs = conf["package-dir"]
    found = set()
    for pkg, folder in dirs.items():
        base = os.path.join(ROOT, folder)
        for here, subdirs, files in os.walk(base):
            subdirs[:] = [d for d in subdirs if d != "__pycache__"]
            if "__init__.py" not in files:
                subdirs[:] = []  # (not a package: nothing below is importable as one)
                continue
            rel = os.path.relpath(here, base)
            name = pkg if rel == "." else pkg + "." + rel.replace(os.sep, ".")
            # a folder mapped by its own package-dir entry is listed under that name
            if not any(os.path.abspath(os.path.join(ROOT, d)) == os.path.abspath(here) and p != name
                       for p, d in dirs.items()):
                found.add(name)
    assert found - listed == set(), f"package folders missing from pyproject's packages: {sorted(found - listed)}"
    assert listed - found == set(), f"pyproject lists packages with no folder: {sorted(listed - found)}"
