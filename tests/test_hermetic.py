"""The suite reads and writes nothing outside the checkout and the temp dir: no path outside it in
the tests, examples, notebooks or benchmarks' defaults, and test files that read data files (the
benchmark corpus) pass in a copy of the checkout with nothing beside it and ``HOME`` pointed at
an empty folder, which stays empty."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# what reads or writes files: every test, example and notebook; benchmarks' code and scripts
SCANNED = ("tests", "examples", "notebooks", "benchmarks")
# a path outside the checkout: its parent folder, or an absolute path not under the temp dir
OUTSIDE = re.compile(r"""\.\./shared|(?<![\w.:/~])/(?:work|home|root|Users|mnt)/""")


def _files():
    for top in SCANNED:
        for root, dirs, files in os.walk(os.path.join(REPO, top)):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", ".ipynb_checkpoints")]
            for f in files:
                if f.endswith((".py", ".sh", ".ipynb", ".toml", ".cfg", ".json")):
                    yield os.path.join(root, f)


def test_no_path_outside_the_checkout():
    me = os.path.abspath(__file__)
    found = []
    for path in _files():
        if path == me:
            continue
        with open(path, errors="replace") as f:
            for n, line in enumerate(f, 1):
                if OUTSIDE.search(line):  # (prose too: a user's machine has no such folder)
                    found.append(f"{os.path.relpath(path, REPO)}:{n}: {line.strip()[:100]}")
    assert not found, "paths outside the checkout:\n" + "\n".join(found)


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=False)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [p for p in out.stdout.decode().split("\0") if p]


def test_data_reading_tests_pass_alone_with_an_empty_home(tmp_path):
    files = _tracked()
    copy = tmp_path / "isolated" / "checkout"  # nothing beside it
    for rel in files:
        src = os.path.join(REPO, rel)
        if not os.path.isfile(src):
            continue
        dst = copy / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REACTANT_", "XDG_"))}
    env.update(HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
    # files reading the corpus (through tests/hlo_corpus.py) and compiling at every level: the
    # CLI's tests, the corpus count and two modules (the main suite runs the rest of them)
    targets = ["tests/optimize/test_cli.py", "tests/optimize/test_corpus_levels.py"]
    assert all((copy / t).exists() for t in targets)
    subset = "test_cli or complete or mlp_train_step.fwd or diagmm.grad"
    r = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-x", "-p", "no:cacheprovider",
                        "-k", subset, *targets],
                       cwd=copy, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    last = r.stdout.splitlines()[-1]  # (the summary: "13 passed, 22 deselected in 2.5s")
    assert re.match(r"\d+ passed, \d+ deselected in ", last) and int(last.split()[0]) >= 12, last
    left = [str(p.relative_to(home)) for p in home.rglob("*")]
    assert not left, f"the tests wrote into HOME: {left[:10]}"


# -- no timed assertions: speed lives in benchmarks/ -----------------------------------------------
_CLOCKS = {"perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns", "process_time"}


def _reads_clock(node) -> bool:
    import ast

    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CLOCKS
               and isinstance(n.func.value, ast.Name) and n.func.value.id == "time" for n in ast.walk(node))


def timed_assertions(source: str) -> list[int]:
    """Lines of ``assert`` statements that test a value computed from a clock reading."""
    import ast

    tree = ast.parse(source)
    timed: set[str] = set()
    grew = True
    while grew:  # names bound from a clock, or from names bound from one (t0, dt = now - t0, ...)
        grew = False
        for n in ast.walk(tree):
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None:
                if _reads_clock(n.value) or any(isinstance(x, ast.Name) and x.id in timed for x in ast.walk(n.value)):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                    for t in targets:
                        for x in ast.walk(t):
                            if isinstance(x, ast.Name) and x.id not in timed:
                                timed.add(x.id)
                                grew = True
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Assert)
            and (_reads_clock(n.test) or any(isinstance(x, ast.Name) and x.id in timed for x in ast.walk(n.test)))]


def test_timed_assertions_are_found():
    assert timed_assertions("import time\nt0 = time.perf_counter()\nf()\ndt = time.perf_counter() - t0\n"
                            "assert dt < 30\nassert ok\n") == [5]
    assert timed_assertions("import time\nassert time.monotonic() > 0\n") == [2]


def test_no_timed_assertion_in_the_tests():
    found = []
    for root, dirs, files in os.walk(os.path.join(REPO, "tests")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(root, f)
                with open(path) as fh:
                    found += [f"{os.path.relpath(path, REPO)}:{n}" for n in timed_assertions(fh.read())]
    assert not found, "assertions on measured time (speed belongs in benchmarks/):\n" + "\n".join(found)
