"""The layering holds: every import in the source tree (module level, inside functions, and
``importlib.import_module`` / ``__import__`` with a constant name) is checked.

- ``ir/`` (reactant.ir) imports nothing of ours but itself;
- ``tracing/``, ``optimize/``, ``sharding/`` import only themselves and ``reactant.ir``;
- private jax/jaxlib modules (a dotted path with a component starting with ``_``) are imported
  only by the two adapters: ``reactant/_jax_adapter.py`` (runtime) and ``ir/_jaxlib.py`` (MLIR
  bindings, for the bottom layer that cannot import ``reactant/``).
"""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = {"reactant": "reactant", "tracing": "reactant.tracing", "optimize": "reactant.optimize",
           "sharding": "reactant.sharding", "ir": "reactant.ir"}
LOWER = ("tracing", "optimize", "sharding")
ADAPTERS = {os.path.join("reactant", "_jax_adapter.py"), os.path.join("ir", "_jaxlib.py")}


def layer_of(module: str) -> str | None:
    """The folder a module of ours lives in (None for outside libraries)."""
    if module != "reactant" and not module.startswith("reactant."):
        return None
    best = "reactant"
    for folder, pkg in FOLDERS.items():
        if (module == pkg or module.startswith(pkg + ".")) and len(pkg) > len(FOLDERS[best]):
            best = folder
    return best


def module_name(folder: str, relpath: str) -> tuple[str, bool]:
    """(dotted module name, is a package __init__) of a file under ``folder``."""
    parts = relpath[:-3].split(os.sep)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    return ".".join([FOLDERS[folder]] + parts), is_pkg


def imports_of(source: str, modname: str, is_pkg: bool) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in ``source``, lazy ones included."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = modname.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod))
            # `from reactant import tracing` imports a layer by attribute name
            out += [(node.lineno, f"{mod}.{a.name}") for a in node.names
                    if mod in FOLDERS.values() and f"{mod}.{a.name}" in FOLDERS.values()]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in ("import_module", "__import__"):
                out.append((node.lineno, node.args[0].value))
    return out


def violations(root: str) -> list[str]:
    bad = []
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for fn in files:
                if not fn.endswith(".py"):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, root)
                modname, is_pkg = module_name(folder, os.path.relpath(path, os.path.join(root, folder)))
                with open(path, encoding="utf-8") as f:
                    source = f.read()
                for line, mod in imports_of(source, modname, is_pkg):
                    where = f"{rel}:{line}: {folder} imports {mod}"
                    target = layer_of(mod)
                    if folder == "ir" and target not in (None, "ir"):
                        bad.append(where)
                    elif folder in LOWER and target not in (None, "ir", folder):
                        bad.append(where)
                    top = mod.split(".")[0]
                    if top in ("jax", "jaxlib") and any(p.startswith("_") for p in mod.split(".")[1:]) \
                            and rel not in ADAPTERS:
                        bad.append(where + " (private module outside the adapters)")
    return bad


def test_source_tree_respects_the_layering():
    assert violations(ROOT) == []


@pytest.mark.parametrize("folder, line, expect_bad", [
    ("tracing", "from ..optimize import passes", True),
    ("tracing", "def f():\n    from reactant.optimize.passes import PASSES", True),  # lazy
    ("optimize", "import importlib\nimportlib.import_module('reactant.tracing.ops')", True),
    ("optimize", "from reactant import tracing", True),
    ("sharding", "from ..optimize import passes", True),
    ("optimize", "from ..sharding import Mesh", True),
    ("ir", "from ..tracing import ops", True),
    ("ir", "from reactant import compiler", True),
    ("optimize", "from .. import compiler", True),  # a lower layer importing reactant/
    ("optimize", "from jax._src import core", True),
    ("tracing", "from jaxlib.mlir._mlir_libs import _jax_mlir_ext", True),
    ("optimize", "from ..ir import attrs\nfrom ..ir.types import ranked", False),
    ("tracing", "from ..ir.markers import Activity\nimport numpy as np", False),
    ("tracing", "from .ops import emit\nfrom ..tracing.ops import emit1", False),
    ("ir", "from .types import ranked\nfrom jaxlib.mlir import ir", False),
])
def test_checker_finds_violations(tmp_path, folder, line, expect_bad):
    """The checker itself: each forbidden import in a synthetic tree is reported."""
    for f in FOLDERS:
        (tmp_path / f).mkdir()
    (tmp_path / folder / "mod.py").write_text(line + "\n")
    assert bool(violations(str(tmp_path))) == expect_bad
