"""Device arrays: ``ConcreteRArray`` / ``ConcreteRNumber`` and ``to_rarray``.

A ConcreteRArray is a mutable handle on a device buffer (a ``jax.Array``): a compiled function
that updates its argument in place swaps the buffer under the handle. Outside a trace, NumPy
operations on it run eagerly (each operation compiled once per signature and cached);
inside a trace, a captured ConcreteRArray is a constant.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, NamedTuple

import numpy as np

from . import _jax_adapter as jx
from . import runtime
from .tracing import active as _trace_active
from .tracing.array_methods import NumpyArrayMethods
from .tracing.dtypes import canonical
from .tracing.errors import ArgumentError
from .sharding import NamedSharding, ShardingError, as_sharding
from .sharding.uneven import logical_index
from .tracing.pytree import flatten, prefix_leaves, tree_map, unflatten


class Signature(NamedTuple):
    """What a compiled function's cache key needs to know of a device array. ``placement``:
    the device id (or the sharding itself); ``weak``: a tracked Python scalar, which promotes
    like a Python number (NEP 50); ``nonneg``: a signed integer array known to hold no negative
    value (seen on the host when it was moved), so indexing with it needs no negative-index
    wrap. Hashes and compares as the plain tuple (same speed)."""

    shape: tuple[int, ...]
    dtype: np.dtype
    placement: Any
    weak: bool
    nonneg: bool


class Shard(NamedTuple):
    """One device's piece of an array: ``index`` is the tuple of slices it covers."""

    device: Any
    index: tuple
    data: np.ndarray


class ConcreteRArray(NumpyArrayMethods):
    """An array on a device. ``np.asarray(x)`` / ``x.to_numpy()`` copy it back to the host."""

    __slots__ = ("_buf", "_sig", "_sid", "__weakref__")

    def __init__(self, data: Any, *, device=None, sharding=None):
        buf, nonneg, shape = _to_buffer(data, device, sharding)
        self._buf = buf
        self._sig = _signature(buf, weak=False, nonneg=nonneg, shape=shape)
        self._sid = sig_id(self._sig)

    @classmethod
    def _wrap(cls, buf, sig, sid: int | None = None) -> "ConcreteRArray":
        """Fast constructor for executable outputs (signature already known)."""
        self = object.__new__(cls)
        self._buf = buf
        self._sig = sig
        self._sid = sig_id(sig) if sid is None else sid
        return self

    # -- attributes -------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._sig.shape

    @property
    def dtype(self) -> np.dtype:
        return self._sig.dtype

    @property
    def device(self):
        dev = jx.single_device(self._buf.sharding)
        return dev if dev is not None else sorted(self._buf.devices(), key=lambda d: d.id)[0]

    @property
    def sharding(self):
        """A ``reactant.sharding.NamedSharding`` for an array placed on a mesh, else its device."""
        p = self._sig.placement
        return p if isinstance(p, NamedSharding) else self.device

    @property
    def addressable_shards(self) -> list:
        """The pieces this process holds: ``Shard(device, index, data)`` per device, ``index``
        the tuple of slices of the global array, ``data`` a NumPy copy. Where the mesh does not
        divide a sharded dimension, the last devices' pieces are shorter (possibly empty)."""
        shards = self._buf.addressable_shards
        if not self._padded():
            return [Shard(s.device, s.index, np.asarray(s.data)) for s in shards]
        out = []
        for s in shards:
            index = logical_index(s.index, self.shape)
            keep = tuple(slice(0, max(0, (i.stop - i.start))) for i in index)
            out.append(Shard(s.device, index, np.asarray(s.data)[keep]))
        return out

    @property
    def buffer(self) -> jx.Array:
        """The underlying ``jax.Array`` (shares memory; do not donate it elsewhere). For an
        array whose sharded dimensions the mesh does not divide, it is the padded buffer
        (shape ``sharding.padded_shape(shape)``, padding of unspecified contents)."""
        return self._buf

    def _padded(self) -> bool:
        """Whether the buffer is larger than the array (an uneven sharding: ``sharding/uneven.py``)."""
        return self._buf.shape != self._sig.shape

    # -- host conversion --------------------------------------------------------------------
    def _host(self) -> np.ndarray:
        """The whole value on the host (read-only view or copy). Across processes, only an
        array this process holds entirely (fully addressable, or replicated) can be read."""
        buf = self._buf
        if not self._readable():
            raise ShardingError(
                f"this array of shape {self.shape} is sharded over devices of several processes; "
                f"this process holds only {len(buf.addressable_shards)} of its "
                f"{len(buf.sharding.device_set)} shards",
                hint="read this process's pieces with .addressable_shards, or replicate it first on every "
                     "process (reactant.distributed.gather(x), or a compiled function with "
                     "out_shardings=reactant.sharding.Replicated(mesh))")
        arr = np.asarray(buf)
        if arr.shape != self._sig.shape:  # a padded (uneven) buffer: the logical part
            arr = arr[tuple(slice(0, n) for n in self._sig.shape)]
        return arr

    def to_numpy(self) -> np.ndarray:
        """A writable host copy."""
        return np.array(self._host(), copy=True)

    def __array__(self, dtype=None, copy=None):
        arr = self._host()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        if copy or not arr.flags.writeable:
            return arr.copy()
        return arr

    def __reactant_concrete__(self) -> np.ndarray:
        """Its value as a NumPy array (what a trace with no program to read it from embeds)."""
        return self._host()

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export (the Array API signature); the buffer's own exporter does the work."""
        if max_version is not None and tuple(max_version)[0] < 1:
            max_version = None  # a consumer of DLPack before 1.0 gets the legacy capsule, as the standard says
        return self._buf.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return self._buf.__dlpack_device__()

    def to_device(self, device, /, *, stream=None) -> "ConcreteRArray":
        """This array on ``device`` (itself when it is already there)."""
        if device is None or device == self.device:
            return self
        return type(self)(self, device=device)

    def block_until_ready(self) -> "ConcreteRArray":
        self._buf.block_until_ready()
        return self

    def item(self, *args):
        return self._host().item(*args)

    def tolist(self):
        return self._host().tolist()

    def __float__(self):
        return float(self._host())

    def __int__(self):
        return int(self._host())

    def __complex__(self):
        return complex(self._host())

    def __bool__(self):
        return bool(self._host())

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError("only integer arrays can be used as an index")
        return int(self._host())

    def __repr__(self) -> str:
        name = type(self).__name__
        if not self._readable():
            return f"{name}(<shape {self.shape} sharded over several processes>, dtype={self.dtype})"
        body = np.array2string(self._host(), separator=", ", prefix=f"{name}(")
        return f"{name}({body}, dtype={self.dtype})"

    def __str__(self) -> str:
        return str(self._host()) if self._readable() else repr(self)

    def _readable(self) -> bool:
        return self._buf.is_fully_addressable or self._buf.is_fully_replicated

    __hash__ = None

    # -- NumPy protocols: eager execution (inside a trace: an implicit input) ----------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .eager import eager_ufunc

        if _trace_active() is not None:
            inputs = tuple(_as_traced(x) for x in inputs)
            return getattr(ufunc, method)(*inputs, **kwargs)
        return eager_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from .eager import eager_function

        if _trace_active() is not None:
            args = tree_map(_as_traced, args, is_leaf=_is_concrete)
            kwargs = tree_map(_as_traced, kwargs, is_leaf=_is_concrete)
            return func(*args, **kwargs)
        return eager_function(func, args, kwargs)

    def __getitem__(self, index):
        from .eager import eager_getitem

        if _trace_active() is not None:
            return _as_traced(self)[index]
        return eager_getitem(self, index)

    def __setitem__(self, index, value):
        from .eager import eager_setitem

        if _trace_active() is not None:  # the program updates it; the call writes it back
            _captured_for_update(self)[index] = value
            return
        eager_setitem(self, index, value)

    def _inplace(self, ufunc, other):
        from .eager import eager_inplace

        if _trace_active() is not None:
            h = _captured_for_update(self)
            ufunc(h, other, out=h)
            return self
        eager_inplace(ufunc, self, other)
        return self

    def _fill(self, value):
        self[...] = value


class ConcreteView(ConcreteRArray):
    """An eager NumPy view of another device array (``x[1:3]``, ``x.T``... outside a compiled
    function): its value is read again from the base whenever the base's buffer changed, and
    writes to it (``v[...] = y``, ``v += 1``, an in-place update by a compiled function) go
    through to the base. ``_read()`` / ``_write(value)`` run the eager operation that made it."""

    __slots__ = ("_base", "_read", "_write", "_seen", "_strides")

    @property
    def _buf(self):
        base_buf = self._base._buf
        if base_buf is not self._seen:
            _BUF_SLOT.__set__(self, self._read()._buf)
            self._seen = base_buf
        return _BUF_SLOT.__get__(self)

    @_buf.setter
    def _buf(self, buf):
        _BUF_SLOT.__set__(self, buf)
        self._write(self)  # the base takes the new view value
        self._seen = self._base._buf

    @property
    def base(self) -> ConcreteRArray:
        return self._base


_BUF_SLOT = ConcreteRArray.__dict__["_buf"]


def make_view(result: ConcreteRArray, base: ConcreteRArray, strides, read, write) -> ConcreteView:
    """``result`` (just computed from ``base``) as a view of it; ``strides``: its strides in
    elements of ``base``'s root when known, else None (a view of a view)."""
    v = object.__new__(ConcreteView)
    _BUF_SLOT.__set__(v, _BUF_SLOT.__get__(result) if type(result) is not ConcreteView else result._buf)
    v._sig, v._sid = result._sig, result._sid
    v._base, v._read, v._write = base, read, write
    v._seen = base._buf
    v._strides = tuple(strides) if strides is not None and type(base) is not ConcreteView else None
    return v


class ConcreteRNumber(ConcreteRArray):
    """A 0-d device array (a scalar), e.g. a Python number moved with ``track_numbers=True``."""

    __slots__ = ()


def _is_concrete(x) -> bool:
    return isinstance(x, ConcreteRArray)


def _captured_for_update(x: "ConcreteRArray"):
    """Inside a trace, the handle of a device array the traced code updates in place without
    having received it (an attribute ``self.w``, a global): the program returns its new value
    and every call writes it into this same object."""
    if isinstance(x, ConcreteView):
        raise ArgumentError("a view of a device array read by a traced function cannot be updated in place",
                            hint="pass the array as an argument of the compiled function, or update its base")
    from .tracing.numpy_api import as_traced

    h = as_traced(x)
    tc = _trace_active()
    if tc.capture_handles.get(id(x)) is not h:  # a constant here (no @main to read it at run time)
        raise ArgumentError("a device array read by this traced function cannot be updated in place",
                            hint="pass it as an argument of the compiled function instead")
    return h


def _as_traced(x):
    """Inside a trace, a device array the traced code reads: an implicit input of the program
    (``TraceContext.capture``)."""
    from .tracing.numpy_api import as_traced

    return as_traced(x) if isinstance(x, ConcreteRArray) else x


def _signature(buf, weak: bool, nonneg: bool = False, shape: tuple | None = None) -> Signature:
    """``shape``: the array's logical shape when the buffer is padded (an uneven sharding)."""
    return Signature(tuple(buf.shape) if shape is None else tuple(shape), np.dtype(buf.dtype),
                     runtime.sharding_key(buf.sharding), weak, nonneg)


# Interned signature ids: cache keys of calls hash these small ints instead of the signatures
# (~7x cheaper). Ids come from a counter, never reused, so the table can be dropped when it
# grows past its bound: arrays keep their ids, and a new array with an old signature gets a
# new id (one slower lookup through the general key, then fast again).
SIG_IDS_MAX = 1 << 16
_SIG_IDS: dict[Signature, int] = {}
_SIG_IDS_LOCK = threading.Lock()
_next_sid = itertools.count()


def sig_id(sig: Signature) -> int:
    """The interned id of a signature."""
    sid = _SIG_IDS.get(sig)
    if sid is None:
        with _SIG_IDS_LOCK:
            sid = _SIG_IDS.get(sig)
            if sid is None:
                if len(_SIG_IDS) >= SIG_IDS_MAX:
                    _SIG_IDS.clear()
                sid = _SIG_IDS[sig] = next(_next_sid)
    return sid


def _sign_unknown(sig: Signature) -> Signature:
    """The signature of an array whose values changed on the device."""
    return sig._replace(nonneg=False) if sig.nonneg else sig


def _known_nonneg(arr: np.ndarray) -> bool:
    return arr.dtype.kind == "i" and arr.ndim > 0 and (arr.size == 0 or bool(arr.min() >= 0))


def _to_buffer(data: Any, device, sharding=None):
    """A device buffer holding ``data`` (on ``device``, or placed by ``sharding``), whether it
    is a non-negative integer array, and its logical shape (the buffer's is larger where the
    sharding does not divide a dimension: it is padded, see ``sharding/uneven.py``)."""
    nonneg = False
    if isinstance(data, ConcreteRArray):
        if data._padded():
            if device is None and (sharding is None or as_sharding(sharding) == data._sig.placement):
                return jx.copy_buffer(data._buf), data._sig.nonneg, data.shape  # a copy, placed as it is
            # elsewhere: its logical part (a padded buffer fits only its own sharding)
            data, nonneg = data._host(), data._sig.nonneg
        else:
            data, nonneg = data._buf, data._sig.nonneg
    if sharding is not None:
        s = as_sharding(sharding)
        shape = tuple(np.shape(data))
        s.check_shape(shape)  # rank check, naming the spec
        padded = s.padded_shape(shape)
        if jx.is_array(data) and padded == shape:
            return jx.device_put_sharded(data, runtime.jax_sharding(s)), nonneg, shape
        if jx.is_array(data):
            data = _readable_host(data)
        arr = np.asarray(data)
        if arr.dtype == object:
            raise ArgumentError(f"cannot move {type(data).__name__} to a device: it is not an array of numbers")
        canonical(arr.dtype)
        nonneg = _known_nonneg(arr)
        if padded != shape:  # zeros in the padding (never read; zeros keep it deterministic)
            arr = np.pad(arr, [(0, p - n) for p, n in zip(padded, shape)])
        # every process passes the same global array; each places only its own shards
        return jx.make_array_from_callback(padded, runtime.jax_sharding(s), arr.__getitem__), nonneg, shape
    if jx.is_array(data):
        # our own copy: donating it later must not invalidate the caller's jax array
        buf = jx.copy_buffer(data) if device is None else jx.device_put(np.asarray(data), device)
        return buf, nonneg, None
    arr = np.asarray(data)
    if arr.dtype == object:
        raise ArgumentError(f"cannot move {type(data).__name__} to a device: it is not an array of numbers")
    canonical(arr.dtype)
    return jx.device_put(arr, device if device is not None else runtime.default_device()), _known_nonneg(arr), None


def _readable_host(buf) -> np.ndarray:
    """A device array's whole value on the host, to place it padded."""
    if not (buf.is_fully_addressable or buf.is_fully_replicated):
        raise ShardingError(f"an array of shape {tuple(buf.shape)} sharded over several processes cannot be "
                            "placed by a sharding that does not divide its dimensions",
                            hint="choose a sharding whose mesh axes divide the sharded dimensions")
    return np.asarray(buf)


def to_rarray(obj: Any, *, device=None, sharding=None, track_numbers: bool = False, mesh=None) -> Any:
    """Move ``obj`` to a device: every NumPy array (and, with ``track_numbers=True``, every
    Python/NumPy scalar) in the pytree ``obj`` becomes a ``ConcreteRArray`` /
    ``ConcreteRNumber``; the structure is kept. NumPy scalars always become ConcreteRNumbers.

    ``device`` (a device, a platform name such as ``"cpu"``/``"gpu"``, or ``"gpu:1"``)
    defaults to this process's first device of the default platform (``REACTANT_PLATFORM``,
    else the CPU).
    ``sharding`` places the arrays over a mesh instead: one ``reactant.sharding.NamedSharding``
    for every leaf, or a pytree prefix of ``obj`` holding shardings (``None`` entries: the
    default device). Over a mesh spanning several processes (``reactant.distributed``), every
    process passes the same globally-shaped host array and only the shards of its own devices
    are placed (like ``jax.make_array_from_callback``): the others are never read.
    ``mesh`` (instead of ``sharding``) puts the arrays on a mesh without a spec: compiled
    functions choose their shardings (``reactant.sharding.AutoPlaced``).
    """
    if mesh is not None:
        if sharding is not None:
            raise ShardingError("to_rarray takes sharding= or mesh=, not both",
                                hint="mesh= alone lets the compiler choose the sharding")
        from .sharding.auto import AutoPlaced

        sharding = AutoPlaced(mesh)
    is_leaf = lambda x: isinstance(x, (ConcreteRArray, np.ndarray))  # noqa: E731
    device = runtime.resolve_device(device)
    leaves, tree = flatten(obj, is_leaf)
    if sharding is None or _is_sharding(sharding):
        per_leaf = [sharding] * len(leaves)
    else:
        try:
            per_leaf = prefix_leaves(sharding, obj, lambda s: s is None or _is_sharding(s), is_leaf)
        except ValueError as e:
            raise ShardingError(f"sharding= must be a sharding or a pytree prefix of the arrays: {e}") from None
    placed = []  # nothing is returned (or left half-placed) unless every leaf moves
    for leaf, s in zip(leaves, per_leaf):
        placed.append(_move(leaf, device, s, track_numbers))
        if mesh is not None and isinstance(placed[-1], ConcreteRArray):  # (stored replicated)
            placed[-1]._sig = placed[-1]._sig._replace(placement=sharding)
            placed[-1]._sid = sig_id(placed[-1]._sig)
    return unflatten(tree, placed)


def _is_sharding(s) -> bool:
    return isinstance(s, NamedSharding) or (hasattr(s, "mesh") and hasattr(s, "spec"))


def _move(leaf, device, sharding, track_numbers: bool):
    if isinstance(leaf, ConcreteRArray):
        if device is None and sharding is None:
            return leaf
        return type(leaf)(leaf, device=device, sharding=sharding)
    if isinstance(leaf, np.ndarray) or jx.is_array(leaf) or (
        hasattr(leaf, "__array__") and not isinstance(leaf, (str, bytes)) and not np.isscalar(leaf)
    ):
        arr = ConcreteRArray(leaf, device=device, sharding=sharding)
        return ConcreteRNumber._wrap(arr._buf, arr._sig) if arr.shape == () else arr
    if isinstance(leaf, np.generic) or (
        track_numbers and isinstance(leaf, (bool, int, float, complex)) and not isinstance(leaf, np.generic)
    ):
        weak = not isinstance(leaf, np.generic)
        buf, _, _ = _to_buffer(np.asarray(leaf), device, sharding)  # Python scalars: NumPy's default dtypes
        return ConcreteRNumber._wrap(buf, _signature(buf, weak))
    return leaf

