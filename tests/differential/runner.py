"""Run a generated program in NumPy and in reactant, and classify each (program, mode).

Modes: ``<loops>-<optimize>`` for loops in auto/keep/unroll and optimize in O0/O2 (through
``reactant.compile(fn, loops=..., optimize=...)``), ``eager`` (the plain function on device
arrays, outside any compile), and for gradient programs ``grad`` (``reactant.gradient`` called
outside compile) and ``grad-keep`` (the gradient inside ``reactant.compile(loops="keep")``),
both checked against central finite differences of the NumPy program.

Each run is compared with NumPy: the returned pytree (structure, shapes, dtype kinds and
widths, values at rtol=atol=1e-9) and the final state of every argument (and, for class
programs, every call's result and the object's attributes after all calls). A program that
amplifies rounding (values of 1e10 fed to a cosine) is compared within what it does to NumPy
itself: NumPy is also run on inputs moved by one ulp (``ILL_RUNS`` times), and a float
result may differ by ``ILL_FACTOR`` times the largest change that made, when that change is
small (at most ``ILL_MAX_REL`` of the values: a branch that flips is no tolerance). Outcomes:

- ``ok``: the same answer;
- ``error``: the product raised a ``ReactantError`` or a NumPy-like standard error (TypeError,
  ValueError, IndexError, NotImplementedError...) with a message: allowed by the first law;
- ``crash``: any other exception (AttributeError, KeyError, AssertionError, RuntimeError,
  MLIRError... from the product's internals, an optimization pass's invalid output or a
  rewrite pattern's exception), a dead process or a timeout;
- ``mismatch``: a different value, shape, dtype or argument state: the forbidden outcome.

Programs that raise (or warn of overflow/invalid values) in NumPy are discarded and counted.

``run_program`` runs in this process; ``run_pool`` runs many programs in worker processes, so a
segfault or a hang is recorded as a crash of that (program, mode) and the run goes on.
"""

from __future__ import annotations

import atexit
import importlib.util
import itertools
import json
import os
import re
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from .generator import Program, generate

COMPILED_MODES = tuple(f"{loops}-{opt}" for loops in ("auto", "keep", "unroll") for opt in ("O0", "O2"))
GRAD_MODES = ("grad", "grad-keep")
# "numpy": compiled (auto, O2) and called with NumPy arrays, as NumPy users call it (inputs, written back)
ALL_MODES = COMPILED_MODES + ("eager", "numpy") + GRAD_MODES
STATUSES = ("ok", "error", "crash", "mismatch")
RTOL = ATOL = 1e-9
# gradients against central differences (step FD_STEP along random directions)
FD_STEP = 1e-6
FD_RTOL, FD_ATOL = 1e-5, 1e-6
# standard exception types that count as a clear error when they carry a message
CLEAR_ERRORS = (TypeError, ValueError, IndexError, NotImplementedError, ZeroDivisionError, OverflowError,
                np.linalg.LinAlgError)


@dataclass
class Outcome:
    """How one mode of one program went. ``detail``: a short diff or the exception's first
    lines; ``names_line``: for an exception, whether its message names the program's source."""

    seed: int
    mode: str
    status: str
    detail: str = ""
    exc_type: str = ""
    names_line: bool | None = None
    source: str = ""

    def signature(self) -> str:
        """What groups outcomes of the same cause: the exception type and its message with
        numbers, names and paths blurred; for a mismatch, what differed."""
        if self.status == "mismatch":
            what = ", ".join(line.split(":", 1)[0] for line in self.detail.splitlines())
            return f"mismatch {re.sub(r'[0-9]+', 'N', what)}"
        first = self.detail.splitlines()[0] if self.detail else ""
        first = re.sub(r'"[^"]*"|\'[^\']*\'', "'…'", first)
        first = re.sub(r"\S+\.py:[0-9]+", "<file>:N", first)  # the program's temp file
        first = re.sub(r"[0-9]+", "N", first)
        return f"{self.status} {self.exc_type}: {first[:110]}"


@dataclass
class ProgramResult:
    """All outcomes of one program (``valid`` False: NumPy itself failed, ``invalid`` says how)."""

    seed: int
    valid: bool
    outcomes: list[Outcome] = field(default_factory=list)
    invalid: str = ""


# -- loading a program from a real file (the source transformation reads it) -----------------
_TMP: str | None = None
_COUNTER = itertools.count()


def _tmpdir() -> str:
    global _TMP
    if _TMP is None:
        _TMP = tempfile.mkdtemp(prefix="reactant-differential-")
        atexit.register(shutil.rmtree, _TMP, True)
    return _TMP


def load(program: Program):
    """Import the program's source from a file of its own (``inspect.getsource`` works)."""
    name = f"diffprog_{program.seed}_{next(_COUNTER)}"
    path = os.path.join(_tmpdir(), name + ".py")
    with open(path, "w") as f:
        f.write(program.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def unload(module) -> None:
    sys.modules.pop(module.__name__, None)


# -- the NumPy reference ------------------------------------------------------------------------
@dataclass
class Reference:
    returns: list[Any]  # one per call
    args: list[list[np.ndarray]]  # final argument states, one list per call
    state: dict[str, Any]  # class programs: the object's attributes after all calls
    # the same trees holding, per float leaf, how far NumPy's own result moves with inputs one
    # ulp away (None: not measured, or not small)
    spread: Any = None


ILL_RUNS = 8  # NumPy runs on inputs moved by one ulp
ILL_FACTOR = 10  # a result may differ by this many times the largest move they made ...
ILL_MAX_REL = 1e-4  # ... when that move is at most this fraction of the values


def _copy(a):
    return a.copy() if isinstance(a, np.ndarray) else a


def _numpy_call(program: Program, module, inputs_of: Callable[[int], list]) -> Reference:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            if program.kind == "class":
                obj = module.Model(*program.init_values())
                rets, args = [], []
                for c in range(program.calls):
                    a = inputs_of(c)
                    rets.append(_snapshot(obj.step(*a)))
                    args.append([x.copy() for x in a])
                return Reference(rets, args, {k: _snapshot(v) for k, v in vars(obj).items()})
            a = inputs_of(0)
            return Reference([_snapshot(module.prog(*a))], [[x.copy() for x in a]], {})


def _snapshot(tree):
    """A copy of a NumPy result (views of arguments must not change later)."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(_snapshot(t) for t in tree)
    return np.array(tree, copy=True) if isinstance(tree, np.ndarray) else tree


def _finite(tree) -> bool:
    if isinstance(tree, (tuple, list)):
        return all(_finite(t) for t in tree)
    a = np.asarray(tree)
    return a.dtype.kind not in "fc" or bool(np.all(np.isfinite(a)))


def reference(program: Program, module) -> Reference:
    """The program's answer in NumPy; raises when NumPy raises, warns, or gives non-finite values."""
    ref = _numpy_call(program, module, program.inputs)
    if not (_finite(ref.returns) and _finite(ref.args)):
        raise FloatingPointError("non-finite values in NumPy")
    ref.spread = _spread(program, module, ref)
    return ref


def _trees(ref: Reference) -> list:
    return [ref.returns, ref.args, ref.state]


def _spread(program: Program, module, ref: Reference):
    """Per float leaf of ``ref``: the largest change of NumPy's result over ``ILL_RUNS`` runs on
    inputs each moved by one ulp up or down (the program's own amplification of rounding),
    where it stays under ``ILL_MAX_REL`` of the values; else None."""
    rng = np.random.default_rng([program.seed, 4242])

    def nudged(c: int) -> list:
        out = []
        for a in program.inputs(c):
            if a.dtype.kind == "f":
                a = a * (1 + rng.choice([-1.0, 1.0], size=a.shape) * np.finfo(a.dtype).eps)
            out.append(a)
        return out

    moved = None
    for _ in range(ILL_RUNS):
        try:
            other = _numpy_call(program, module, nudged)
            moved = _max_moves(_trees(other), _trees(ref), moved)
        except Exception:  # noqa: BLE001 - a run NumPy rejects, or another structure: not counted
            continue
    return moved


def _max_moves(got, want, acc):
    """``acc`` with each float leaf the larger of it and ``|got - want|`` (the largest over the
    leaf), or None where that move is not small; raises on another structure."""
    if isinstance(want, dict):
        return {k: _max_moves(got[k], want[k], None if acc is None else acc[k]) for k in want}
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            raise ValueError("structure")
        return [_max_moves(g, w, None if acc is None else acc[i]) for i, (g, w) in enumerate(zip(got, want))]
    w = np.asarray(want)
    if w.dtype.kind not in "fc":
        return None
    g = np.asarray(got)
    if g.shape != w.shape:
        raise ValueError("structure")
    if acc is not None and acc < 0:
        return acc  # (a move that was not small: no tolerance, whatever later runs do)
    move = float(np.max(np.abs(g - w), initial=0.0))
    scale = float(np.max(np.abs(w), initial=0.0))
    if not np.isfinite(move) or move > ILL_MAX_REL * (scale + 1.0):
        return -1.0
    return move if acc is None else max(move, acc)


# -- comparison --------------------------------------------------------------------------------
def _host(x, where: str):
    """A result leaf as a NumPy value; a leaked tracer or an unexpected type is a difference."""
    import reactant

    if isinstance(x, (reactant.TracedRArray, reactant.TracedRNumber)):
        raise _Diff(f"{where}: a tracer escaped ({type(x).__name__})")
    if isinstance(x, (reactant.ConcreteRArray, np.ndarray, np.generic, int, float, bool, complex)):
        return np.asarray(x)
    raise _Diff(f"{where}: got {type(x).__name__}, want an array")


class _Diff(Exception):
    pass


def _fmt(a: np.ndarray) -> str:
    return np.array2string(np.asarray(a), precision=6, threshold=12, edgeitems=3).replace("\n", "")


def compare(got, want, where: str, spread=None) -> None:
    """Raise ``_Diff`` naming the first difference between ``got`` and NumPy's ``want``
    (``spread``: how far NumPy's own result moves with inputs one ulp away, the same tree)."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            raise _Diff(f"{where}: structure: got {type(got).__name__}"
                        f"{'' if not isinstance(got, (tuple, list)) else f' of {len(got)}'}, want "
                        f"{type(want).__name__} of {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            compare(g, w, f"{where}[{i}]", None if spread is None else spread[i])
        return
    if want is None:
        if got is not None:
            raise _Diff(f"{where}: got {type(got).__name__}, want None")
        return
    w = np.asarray(want)
    g = _host(got, where)
    if g.shape != w.shape:
        raise _Diff(f"{where}: shape {g.shape} != NumPy's {w.shape}")
    if g.dtype.kind != w.dtype.kind or g.dtype.itemsize != w.dtype.itemsize:
        raise _Diff(f"{where}: dtype {g.dtype} != NumPy's {w.dtype}")
    amplified = ILL_FACTOR * spread if isinstance(spread, float) and spread > 0 else 0.0
    if w.dtype.kind in "fc":
        same = np.isclose(g, w, rtol=RTOL, atol=ATOL + amplified, equal_nan=True)
    else:
        same = g == w
    if not np.all(same):
        bad = int(np.size(same) - np.count_nonzero(same))
        if w.dtype.kind in "fciu":
            err = float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64))))
            scale = f", max abs diff {err:.3g}"
        else:
            scale = ""
        if amplified:
            scale += f" (NumPy's own result moves by {spread:.3g} with inputs one ulp away)"
        raise _Diff(f"{where}: values differ at {bad} of {max(w.size, 1)}{scale}: got {_fmt(g)} want {_fmt(w)}")


# -- the reactant runs ----------------------------------------------------------------------------
def _is_product_error(e: BaseException) -> str:
    """``error`` for a clear error (allowed), ``crash`` for anything else: also a pass whose
    output fails verification or a rewrite pattern that raised (the product's own bug, though
    reported clearly)."""
    from reactant.optimize.passes import InvalidModuleError
    from reactant.optimize.patterns._registry import PatternError
    from reactant.tracing.errors import ReactantError

    if isinstance(e, (InvalidModuleError, PatternError)):
        return "crash"
    if isinstance(e, ReactantError):
        return "error"
    if isinstance(e, CLEAR_ERRORS) and str(e).strip():
        return "error"
    return "crash"


def _exception_outcome(program: Program, mode: str, e: BaseException, module) -> Outcome:
    status = _is_product_error(e)
    msg = str(e).strip() or "(no message)"
    detail = "\n".join(msg.splitlines()[:4])
    if status == "crash":  # where inside the product it came from
        tb = traceback.extract_tb(e.__traceback__)
        if tb:
            fr = tb[-1]
            detail += f"\n  at {os.path.relpath(fr.filename, _repo_root())}:{fr.lineno} in {fr.name}"
    names = os.path.basename(module.__file__) in msg
    return Outcome(program.seed, mode, status, detail, type(e).__name__, names)


def _repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _device(tree):
    import reactant

    return reactant.to_rarray(tree)


def _compiled_run(program: Program, module, mode: str, ref: Reference) -> None:
    """Run a compiled or eager mode and compare; raises ``_Diff`` on a difference."""
    import reactant

    place = _device
    if mode == "eager":
        wrap = lambda f: f  # noqa: E731
    elif mode == "numpy":
        wrap = reactant.compile
        place = lambda tree: [np.array(a, copy=True) for a in tree]  # noqa: E731
    else:
        loops, opt = mode.split("-")
        wrap = lambda f: reactant.compile(f, loops=loops, optimize=opt)  # noqa: E731
    diffs: list[str] = []

    def check(got, want, where, spread=None):
        try:
            compare(got, want, where, spread)
        except _Diff as d:
            diffs.append(str(d))

    returns_sp, args_sp, state_sp = ref.spread if ref.spread is not None else (None, None, None)

    if program.kind == "class":
        obj = module.Model(*place([a.copy() for a in program.init_values()]))
        step = wrap(obj.step)
        for c in range(program.calls):
            args = place(program.inputs(c))
            got = step(*args)
            check(got, ref.returns[c], f"call {c} return", None if returns_sp is None else returns_sp[c])
            for k, (a, spec, want) in enumerate(zip(args, program.args, ref.args[c])):
                check(a, want, f"call {c} argument {spec.name}", None if args_sp is None else args_sp[c][k])
            if diffs:
                break
        else:
            for name, want in ref.state.items():
                if not hasattr(obj, name):
                    diffs.append(f"state self.{name}: missing")
                else:
                    check(getattr(obj, name), want, f"state self.{name}", None if state_sp is None else state_sp[name])
    else:
        args = place(program.inputs(0))
        got = wrap(module.prog)(*args)
        check(got, ref.returns[0], "return", None if returns_sp is None else returns_sp[0])
        for k, (a, spec, want) in enumerate(zip(args, program.args, ref.args[0])):
            check(a, want, f"argument {spec.name}", None if args_sp is None else args_sp[0][k])
    if diffs:
        raise _Diff("\n".join(diffs))


def _numpy_scalar(module, args) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(module.prog(*[a.copy() for a in args]))


def _grad_run(program: Program, module, mode: str) -> None:
    """Reverse-mode gradient against central differences along three random directions."""
    import reactant

    xs = program.inputs(0)
    nums = tuple(range(len(xs)))
    if mode == "grad":
        grads = reactant.gradient(module.prog, *_device([a.copy() for a in xs]), argnums=nums)
    else:
        f = reactant.compile(lambda *a: reactant.gradient(module.prog, *a, argnums=nums), loops="keep")
        grads = f(*_device([a.copy() for a in xs]))
    if not isinstance(grads, (tuple, list)) or len(grads) != len(xs):
        raise _Diff(f"gradient: structure: got {type(grads).__name__}, want tuple of {len(xs)}")
    g = [_host(gi, f"gradient {s.name}") for gi, s in zip(grads, program.args)]
    for gi, a, s in zip(g, xs, program.args):
        if gi.shape != a.shape:
            raise _Diff(f"gradient {s.name}: shape {gi.shape} != {a.shape}")
    rng = np.random.default_rng([program.seed, 77])
    for d in range(3):
        vs = [rng.standard_normal(a.shape) for a in xs]
        fp = _numpy_scalar(module, [a + FD_STEP * v for a, v in zip(xs, vs)])
        fm = _numpy_scalar(module, [a - FD_STEP * v for a, v in zip(xs, vs)])
        fd = (fp - fm) / (2 * FD_STEP)
        ad = float(sum(np.vdot(gi, v) for gi, v in zip(g, vs)))
        if not abs(ad - fd) <= FD_ATOL + FD_RTOL * max(abs(ad), abs(fd)):
            raise _Diff(f"gradient: directional derivative {d}: reactant {ad:.10g}, finite differences {fd:.10g}")


def run_mode(program: Program, module, mode: str, ref: Reference) -> Outcome:
    """One mode of one program, classified."""
    if mode in GRAD_MODES and not program.grad:
        return Outcome(program.seed, mode, "skip")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if mode in GRAD_MODES:
                _grad_run(program, module, mode)
            else:
                _compiled_run(program, module, mode, ref)
    except _Diff as d:
        return Outcome(program.seed, mode, "mismatch", str(d), source=program.source)
    except Exception as e:  # noqa: BLE001 - every exception is classified, none may escape
        out = _exception_outcome(program, mode, e, module)
        if out.status == "crash":
            out.source = program.source
        return out
    return Outcome(program.seed, mode, "ok")


def traced_key(program: Program, module, mode: str):
    """What determines a compiled mode's executable: the traced module (before the pipeline)
    with its input/output maps, and the optimization level; None when it cannot be had."""
    import reactant

    if mode not in COMPILED_MODES or program.kind != "function":  # tracing a method changes its object
        return None
    loops, opt = mode.split("-")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prog = reactant.compile(module.prog, loops=loops, optimize=opt).lower(
                *_device(program.inputs(0)), optimize=False)
        return (prog.text(), repr(prog.out_tree), repr(prog.out_leaves), repr(prog.aliases), len(prog.captured), opt)
    except Exception:  # noqa: BLE001 - the run itself raises again and is classified
        return None


def run_program(program: Program, modes: Iterable[str] = ALL_MODES, *, share: bool = False) -> ProgramResult:
    """All ``modes`` of one program, in this process (``valid`` False when NumPy fails).

    ``share``: a compiled mode whose traced program (before optimization) is the one an earlier
    mode at the same optimization level traced is not compiled and run again: it gets that
    mode's outcome (the rest of the pipeline is a function of the traced program and the
    level). Saves most of the XLA compilations of the CI part."""
    module = load(program)
    try:
        try:
            ref = reference(program, module)
        except Exception as e:  # noqa: BLE001 - a program NumPy rejects is discarded
            return ProgramResult(program.seed, False, invalid=f"{type(e).__name__}: {e}")
        outs, seen = [], {}
        for m in modes:
            key = traced_key(program, module, m) if share else None
            if key is not None and key in seen:
                same = seen[key]
                outs.append(Outcome(program.seed, m, same.status, same.detail, same.exc_type, same.names_line,
                                    same.source))
                continue
            out = run_mode(program, module, m, ref)
            if key is not None:
                seen[key] = out
            outs.append(out)
        return ProgramResult(program.seed, True, [o for o in outs if o.status != "skip"])
    finally:
        unload(module)


def run_seed(seed: int, profile: str = "full", modes: Iterable[str] = ALL_MODES) -> ProgramResult:
    return run_program(generate(seed, profile), modes)


# -- many programs in worker processes -----------------------------------------------------------
MODE_TIMEOUT = 300.0  # seconds one mode may take before its worker is killed (a crash: timeout)


def _worker_main() -> None:
    """Worker: read ``{"seed", "profile", "modes"}`` lines, write JSON events on the protocol fd
    (stdout is redirected to stderr, so that nothing the product prints mixes in)."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import faulthandler
    faulthandler.enable()  # a signal leaves the Python stack in the worker's log (the crash report)
    import reactant  # noqa: F401  (loaded before the first program: its time is no mode's)

    def send(**msg):
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    send(type="ready")
    for line in sys.stdin:
        task = json.loads(line)
        seed, modes = task["seed"], task["modes"]
        program = generate(seed, task["profile"])
        module = load(program)
        try:
            try:
                ref = reference(program, module)
            except Exception as e:  # noqa: BLE001
                send(type="invalid", seed=seed, error=f"{type(e).__name__}: {e}")
                continue
            for mode in modes:
                send(type="start", seed=seed, mode=mode)
                if os.environ.get("REACTANT_DIFF_ABORT") == f"{seed}:{mode}":  # to test crash recording
                    os.abort()
                out = run_mode(program, module, mode, ref)
                send(type="outcome", outcome=asdict(out))
        finally:
            unload(module)
            send(type="done", seed=seed)


class _Worker:
    """One worker process and the reading of its events (with a timeout per event)."""

    def __init__(self, log_dir: str):
        fd, self.log = tempfile.mkstemp(prefix="worker-", suffix=".log", dir=log_dir)
        self.err = os.fdopen(fd, "w")
        env = dict(os.environ, PYTHONPATH=_repo_root() + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.differential.runner", "--worker"],
                                     cwd=_repo_root(), env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, text=True, bufsize=1)
        self.fd = self.proc.stdout.fileno()
        self.eof = False
        self.buf = b""  # read from the pipe's fd directly: a buffered reader would hide lines from select
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.fd, selectors.EVENT_READ)

    def send(self, task: dict) -> None:
        self.proc.stdin.write(json.dumps(task) + "\n")
        self.proc.stdin.flush()

    def event(self, timeout: float) -> dict | None:
        """The next event, or None when the worker died or timed out."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not self.sel.select(left):
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def death(self) -> str:
        """Why the worker stopped (killing it when it hangs), with the end of its stderr."""
        if self.eof:  # the pipe closed: the process is ending
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            why = "worker stopped answering: killed" if self.eof else f"timeout ({MODE_TIMEOUT:.0f} s): killed"
        else:
            rc = self.proc.returncode
            why = f"worker died: signal {-rc}" if rc < 0 else f"worker exited with status {rc}"
        self.err.flush()
        with open(self.log, errors="replace") as f:
            tail = f.read()[-1500:]
        return why + ("\n" + tail.strip() if tail.strip() else "")

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.proc.kill()
        self.err.close()
        os.unlink(self.log)


def run_pool(seeds: Iterable[int], modes: Iterable[str] = ALL_MODES, *, jobs: int = 2, profile: str = "full",
             on_result: Callable[[ProgramResult], None] | None = None, max_tasks: int = 150) -> list[ProgramResult]:
    """Run ``seeds`` in ``jobs`` worker processes (each restarted after ``max_tasks`` programs
    and after a death); returns the results in seed order."""
    modes = tuple(modes)
    todo = list(seeds)
    lock = threading.Lock()
    results: dict[int, ProgramResult] = {}
    log_dir = _tmpdir()

    def next_seed():
        with lock:
            return todo.pop(0) if todo else None

    def serve():
        worker, done_here = None, 0
        while True:
            seed = next_seed()
            if seed is None:
                break
            res = ProgramResult(seed, True)
            remaining = list(modes)
            while True:
                if worker is None or done_here >= max_tasks:
                    if worker is not None:
                        worker.close()
                    worker, done_here = _Worker(log_dir), 0
                    if worker.event(MODE_TIMEOUT) is None:
                        raise RuntimeError("differential worker did not start:\n" + worker.death())
                worker.send({"seed": seed, "profile": profile, "modes": remaining})
                current = None
                finished = False
                while True:
                    ev = worker.event(MODE_TIMEOUT)
                    if ev is None:
                        break
                    if ev["type"] == "start":
                        current = ev["mode"]
                    elif ev["type"] == "outcome":
                        if ev["outcome"]["status"] != "skip":
                            res.outcomes.append(Outcome(**ev["outcome"]))
                        remaining.remove(ev["outcome"]["mode"])
                        current = None
                    elif ev["type"] == "invalid":
                        res.valid, res.invalid = False, ev["error"]
                    elif ev["type"] == "done":
                        finished = True
                        break
                if finished:
                    done_here += 1
                    break
                why = worker.death()
                worker = None
                if current is None:  # died outside a mode (loading the program): no mode ran
                    current = remaining[0] if remaining else "load"
                src = generate(seed, profile).source
                res.outcomes.append(Outcome(seed, current, "crash", why, "Timeout" if why.startswith("timeout")
                                            else "WorkerDied", None, src))
                if current in remaining:
                    remaining.remove(current)
                if not remaining:
                    break
            with lock:
                results[seed] = res
            if on_result is not None:
                on_result(res)
        if worker is not None:
            worker.close()

    threads = [threading.Thread(target=serve, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results[s] for s in sorted(results)]


# -- summaries -------------------------------------------------------------------------------------
def summarize(results: list[ProgramResult]) -> dict[str, int]:
    counts = {s: 0 for s in STATUSES}
    for r in results:
        for o in r.outcomes:
            counts[o.status] = counts.get(o.status, 0) + 1
    counts["programs"] = len(results)
    counts["runs"] = sum(len(r.outcomes) for r in results)
    counts["invalid"] = sum(not r.valid for r in results)
    return counts


def summary_line(results: list[ProgramResult]) -> str:
    c = summarize(results)
    return (f"differential: {c['programs']} programs, {c['runs']} runs: ok {c['ok']}, error {c['error']}, "
            f"crash {c['crash']}, mismatch {c['mismatch']} (numpy-invalid discarded: {c['invalid']})")


def failure_report(o: Outcome) -> str:
    """A failure as text: seed, mode, what differed or was raised, and the program."""
    return (f"--- seed {o.seed}, mode {o.mode}: {o.status}"
            f"{' (' + o.exc_type + ')' if o.exc_type else ''}\n{o.detail}\n{o.source}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        _worker_main()
    else:
        print("usage: python -m tests.differential.runner --worker  (see benchmarks/differential.py)")
