"""The persistent compile cache: compiled programs kept on disk across processes.

Off by default, as JAX's is: ``REACTANT_CACHE_DIR=<dir>`` or ``reactant.config.cache_dir``
turns it on (``reactant/config.py``). What is cached is the work after tracing: the optimizer
(passes, equality saturation, the AD expansion), the finishing steps (decompositions,
shardings fixed on ``@main``) and XLA's compile. A function is always traced, so everything a
trace says about the Python side (output tree, in-place updates and donation, views, state
write-backs, guards) is fresh; the cache only answers "what executable does this traced
module become".

The key is a hash of everything that answer depends on: the traced module (bytecode, before
the optimizer), the input and output types, the compile options, the optimizer's cost
constants when equality saturation runs, the devices or mesh it runs on, the jax / jaxlib /
egglog / numpy versions, the PJRT platform, the XLA flags, the host CPU, and a hash of
reactant's own sources (an edited checkout must not reuse what older code compiled).

An entry is one file ``<key>.rxc``: a magic, a SHA-256 of the rest, JSON metadata (the key,
the output placements), the optimized module's bytecode and the serialized executable. It is
written to a temporary file in the same directory and renamed over (``os.replace``), so
readers and concurrent writers see a whole entry or none. A hit refreshes the file's mtime;
after a write the least recently used entries past ``cache_max_bytes`` are deleted. An entry
that is truncated, corrupt, from another version or not loadable is ignored (logged with
``REACTANT_LOG=cache``) and the program compiled again; a directory that cannot be written
warns once and compiling goes on without it. Multi-process runs do not use it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import importlib.metadata
import json
import os
import platform
import sys
import tempfile
import threading
import time
import warnings
from typing import Any, Callable

from . import _jax_adapter as jx
from . import config, runtime
from .optimize import compile_pipeline
from .optimize.eqsat import cost as _eqsat_cost
from .optimize.pipelines import SATURATION
from .progress import log_enabled
from .sharding import NamedSharding

FORMAT = 1  # of the entry files; a change makes old entries foreign
_MAGIC = b"RXCACHE" + bytes([FORMAT])
_SUFFIX = ".rxc"
_TMP_PREFIX = ".tmp-"
_STALE_TMP_SECONDS = 3600  # a temporary file this old was left by a process that died writing it

stats = {"hits": 0, "misses": 0, "writes": 0, "rejected": 0, "evicted": 0, "write_errors": 0}
_lock = threading.Lock()
_warned_dirs: set[str] = set()


class _Unkeyable(Exception):
    """An option has no value that means the same in another process (e.g. an object repr)."""


def _count(what: str, n: int = 1) -> None:
    with _lock:
        stats[what] += n


def _log(text: str) -> None:
    if log_enabled("cache"):
        print(f"reactant: cache: {text}", file=sys.stderr, flush=True)


class Lookup:
    """One compilation's use of the cache: ``find`` once the program is traced (a hit fills
    ``hit`` and the caller skips the optimizer and XLA), ``save`` after XLA compiled it."""

    def __init__(self, name: str, options: Any, progress: Any, device_of: Callable[[Any], Any]):
        """``options``: the compile ``Options``; ``progress``: the ``CompileProgress`` (the
        lookup is a stage of it); ``device_of(prog)``: the device a single-device program runs on."""
        self.name = name
        self.options = options
        self.progress = progress
        self.device_of = device_of
        # (final bytecode, output placements, compile function giving the loaded executable)
        self.hit: tuple[bytes, list, Callable[[bytes], Any]] | None = None
        self._path: str | None = None
        self._mesh = None
        self._devices: list = []
        self._key = ""

    # -- lookup ---------------------------------------------------------------------------------
    def find(self, prog: Any) -> bool:
        """Look the traced ``prog`` up; True on a hit (``self.hit`` is set)."""
        directory = config.effective_cache_dir()
        if directory is None:
            return False
        config.effective_cache_max_bytes()  # (a bad REACTANT_CACHE_MAX_BYTES: the error before any work)
        if jx.process_count() > 1:
            _log(f"{self.name}: not cached: a multi-process run")
            return False
        progress = self.progress
        progress.enter("persistent cache lookup")
        mesh = prog.tc.extensions.get("mesh")
        devices = list(mesh.devices.flat) if mesh is not None else [self.device_of(prog)]
        try:
            key = program_key(prog, self.options, mesh, devices)
        except Exception as e:  # noqa: BLE001 - e.g. an option only this process can name: compile as usual
            _log(f"{self.name}: not cached: {type(e).__name__}: {e}")
            progress.done("persistent cache lookup", "not cached (no key)")
            return False
        self._key, self._mesh, self._devices = key, mesh, devices
        self._path = os.path.join(directory, key + _SUFFIX)
        found = self._load(prog, devices)
        if found is None:
            _count("misses")
            progress.done("persistent cache lookup", "miss")
            return False
        self.hit = found
        _count("hits")
        _log(f"{self.name}: hit {key[:16]}")
        progress.done("persistent cache lookup", "hit: no optimizer, no XLA compile")
        return True

    def _load(self, prog: Any, devices: list):
        path = self._path
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            _log(f"{self.name}: miss {self._key[:16]}")
            return None
        except OSError as e:
            _log(f"{self.name}: cannot read {path} ({e}): compiling")
            return None
        try:
            meta, bc, blob = _decode(data, self._key, _fingerprint(devices[0].client))
            if meta["outputs"] != len(prog.output_specs):
                raise ValueError(f"{meta['outputs']} outputs, the program has {len(prog.output_specs)}")
            mesh = self._mesh
            if mesh is None:
                outs = devices * len(prog.output_specs)
            else:
                outs = [NamedSharding(mesh, tuple(tuple(e) if isinstance(e, list) else e for e in spec))
                        for spec in meta["out_specs"]]
            exe = runtime.load_executable(blob, devices, num_partitions=len(devices) if mesh is not None else 1)
        except Exception as e:  # noqa: BLE001 - any unusable entry: compile again (and overwrite it)
            _count("rejected")
            _log(f"{self.name}: ignored entry {path} ({type(e).__name__}: {e}): compiling again")
            return None
        try:
            os.utime(path)  # most recently used
        except OSError:
            pass
        return bc, outs, lambda _bc: exe

    # -- store ----------------------------------------------------------------------------------
    def save(self, bytecode: bytes, placements: list, exe: Any) -> None:
        """Store what XLA compiled for the program ``find`` missed (nothing after a hit, or
        when the cache is off)."""
        if self._path is None or self.hit is not None:
            return
        directory, path = os.path.dirname(self._path), self._path
        self.progress.enter("persistent cache write")
        try:
            blob = runtime.serialize_executable(exe, self._devices)
        except Exception as e:  # noqa: BLE001 - an executable PJRT cannot serialize: not cached
            _log(f"{self.name}: not stored: the executable does not serialize ({type(e).__name__}: {e})")
            self.progress.done("persistent cache write", "not stored")
            return
        meta = {"key": self._key, "fingerprint": _fingerprint(self._devices[0].client), "function": self.name,
                "outputs": len(placements),
                "out_specs": None if self._mesh is None else [list(p.spec) for p in placements]}
        data = _encode(meta, bytecode, blob)
        bound = config.effective_cache_max_bytes()
        if len(data) > bound:
            _log(f"{self.name}: not stored: the entry ({len(data)} bytes) exceeds cache_max_bytes ({bound})")
            self.progress.done("persistent cache write", "not stored (too large)")
            return
        try:
            _write_atomic(directory, path, data)
        except OSError as e:
            _count("write_errors")
            _log(f"{self.name}: cannot write {directory} ({e}): going on without the persistent cache")
            with _lock:
                first = directory not in _warned_dirs
                _warned_dirs.add(directory)
            if first:
                warnings.warn(f"reactant: the persistent compile cache directory {directory} cannot be written "
                              f"({e}); programs are compiled without it", RuntimeWarning, stacklevel=2)
            self.progress.done("persistent cache write", "failed")
            return
        _count("writes")
        _log(f"{self.name}: stored {self._key[:16]} ({len(data)} bytes)")
        evict(directory, bound)
        self.progress.done("persistent cache write", f"{len(data)} bytes")


# -- the key ------------------------------------------------------------------------------------
def program_key(prog: Any, options: Any, mesh: Any, devices: list) -> str:
    """The hex SHA-256 naming the executable the traced ``prog`` becomes with ``options`` on
    ``mesh`` (or the single device in ``devices``)."""
    h = hashlib.sha256()

    def part(name: str, value: Any) -> None:
        data = value if isinstance(value, bytes) else repr(value).encode()
        h.update(name.encode() + b"\0" + len(data).to_bytes(8, "little") + data)

    part("fingerprint", sorted(_fingerprint(devices[0].client).items()))
    part("devices", [(d.id, d.platform, d.device_kind) for d in devices])
    part("mesh", None if mesh is None else (mesh.device_ids, mesh.devices.shape, mesh.axis_names))
    opts = [(f.name, _canon(getattr(options, f.name))) for f in dataclasses.fields(options) if f.name != "verbose"]
    part("options", opts)
    part("pass_options", _canon(options.pass_options()))
    level = options.optimize
    if SATURATION & set(compile_pipeline(list(level) if isinstance(level, (list, tuple)) else level)):
        # equality saturation's choices depend on the cost model calibrated on this machine
        part("cost", sorted(_eqsat_cost.constants().items()))
    part("inputs", [(tuple(s[0]), str(s[1]), *s[2:]) for s in prog.input_specs])
    part("outputs", [(tuple(s), str(d)) for s, d in prog.output_specs])
    from .compiler import _bytecode  # (compiler imports this module)

    part("module", _bytecode(prog.module))
    return h.hexdigest()


def _canon(v: Any) -> Any:
    """``v`` as a value that means the same in every process (a sharding by its device ids)."""
    if isinstance(v, NamedSharding):
        return ("NamedSharding", v.mesh.device_ids, v.mesh.devices.shape, v.mesh.axis_names, v.spec)
    if hasattr(v, "mesh") and hasattr(v, "spec"):  # a jax sharding
        from .sharding import as_sharding

        return _canon(as_sharding(v))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_canon(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted((repr(_canon(k)), _canon(x)) for k, x in v.items())))
    if isinstance(v, (set, frozenset)):
        return (type(v).__name__, tuple(sorted(repr(_canon(x)) for x in v)))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__, tuple((f.name, _canon(getattr(v, f.name))) for f in dataclasses.fields(v)))
    text = repr(v)
    if " at 0x" in text:  # an object's identity: nothing another process could match
        raise _Unkeyable(f"{text} has no process-independent value")
    return text


def _fingerprint(client: Any) -> dict[str, str]:
    """Versions, platform, host and sources: the same in two processes that may share entries."""
    fp = _fingerprints.get(client.platform)
    if fp is None:
        fp = _fingerprints[client.platform] = {**jx.runtime_fingerprint(client), **_software()}
    return fp


_fingerprints: dict[str, dict[str, str]] = {}


@functools.lru_cache(maxsize=None)
def _software() -> dict[str, str]:
    """Versions of the other software the optimizer runs on, and reactant's own."""
    fp = {}
    for dist in ("egglog", "numpy"):
        try:
            fp[dist] = importlib.metadata.version(dist)
        except Exception:  # noqa: BLE001
            fp[dist] = "?"
    fp["reactant"] = str(getattr(sys.modules.get(__package__), "__version__", "?"))
    fp["sources"] = _sources_hash()
    fp["host"] = _host()
    fp["format"] = str(FORMAT)
    return fp


def _sources_hash() -> str:
    """A hash of reactant's Python sources, every package of it (an edit anywhere, e.g. in an
    optimizer pass, must not reuse what the old code compiled): each file's path, size and
    modification time, which costs a stat per file where reading them all costs ~40 ms (a file
    touched but unchanged only costs a miss)."""
    h = hashlib.sha256()
    roots = [os.path.dirname(os.path.abspath(__file__))]
    for sub in ("tracing", "optimize", "sharding", "ir"):
        roots += list(importlib.import_module(f"{__package__}.{sub}").__path__)

    def walk(d: str, rel: str) -> None:
        with os.scandir(d) as it:
            for e in sorted(it, key=lambda e: e.name):
                if e.is_dir() and e.name != "__pycache__":
                    walk(e.path, f"{rel}{e.name}/")
                elif e.name.endswith(".py"):
                    st = e.stat()
                    h.update(f"{rel}{e.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())

    for root in roots:
        walk(root, os.path.basename(root) + "/")
    return h.hexdigest()


def _host() -> str:
    """The CPU (XLA's CPU code uses the host's instruction set)."""
    text = platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "flags")):
                    text += "|" + line.split(":", 1)[1].strip()
                if line.strip() == "":  # the first processor's block is enough
                    break
    except OSError:
        pass
    return hashlib.sha256(text.encode()).hexdigest()[:32]


# -- entry files --------------------------------------------------------------------------------
def _encode(meta: dict, bytecode: bytes, blob: bytes) -> bytes:
    m = json.dumps(meta, sort_keys=True).encode()
    body = len(m).to_bytes(4, "little") + m + len(bytecode).to_bytes(8, "little") + bytecode + blob
    return _MAGIC + hashlib.sha256(body).digest() + body


def _decode(data: bytes, key: str, fingerprint: dict) -> tuple[dict, bytes, bytes]:
    """(metadata, optimized bytecode, executable) of an entry file; ValueError when it is not
    a whole, intact entry of this key and version."""
    if data[:len(_MAGIC)] != _MAGIC:
        raise ValueError("not an entry of this format")
    head = len(_MAGIC) + 32
    body = data[head:]
    if len(data) < head or hashlib.sha256(body).digest() != data[len(_MAGIC):head]:
        raise ValueError("checksum mismatch (truncated or corrupt)")
    n = int.from_bytes(body[:4], "little")
    meta = json.loads(body[4:4 + n])
    nb = int.from_bytes(body[4 + n:12 + n], "little")
    bc, blob = body[12 + n:12 + n + nb], body[12 + n + nb:]
    if meta.get("key") != key or meta.get("fingerprint") != fingerprint:
        raise ValueError("an entry of another program or version")
    return meta, bc, blob


def _write_atomic(directory: str, path: str, data: bytes) -> None:
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=_TMP_PREFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # (mkstemp's 0600 would hide the entry from other users of the directory)
        os.replace(tmp, path)  # readers see the old entry or the new one, whole
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def evict(directory: str, max_bytes: int) -> int:
    """Delete the least recently used entries of ``directory`` until they total at most
    ``max_bytes`` (and temporary files abandoned by dead writers); returns how many entries
    were deleted. Safe while other processes read and write: a vanished file is skipped."""
    entries = []
    now = time.time()
    try:
        with os.scandir(directory) as it:
            for e in it:
                try:
                    st = e.stat()
                except OSError:
                    continue
                if e.name.endswith(_SUFFIX):
                    entries.append((st.st_mtime, e.name, st.st_size))
                elif e.name.startswith(_TMP_PREFIX) and now - st.st_mtime > _STALE_TMP_SECONDS:
                    _unlink(os.path.join(directory, e.name))
    except OSError:
        return 0
    total = sum(size for _, _, size in entries)
    removed = 0
    for _, name, size in sorted(entries):
        if total <= max_bytes:
            break
        if _unlink(os.path.join(directory, name)):
            removed += 1
            _log(f"evicted {name} ({size} bytes; the directory holds more than {max_bytes} bytes)")
        total -= size
    if removed:
        _count("evicted", removed)
    return removed


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def clear(directory: str | None = None) -> None:
    """Delete every entry of ``directory`` (default: the configured cache directory)."""
    directory = directory or config.effective_cache_dir()
    if directory is not None:
        evict(directory, 0)
