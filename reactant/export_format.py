"""The serialized form of a ``reactant.export``: its byte layout, and the JSON forms of what an
export describes (static values, pytree structures, array specs).

Layout: ``MAGIC``, the format version (u32) and the description's length (u64), the description
(UTF-8 JSON), the sections it counts (the VHLO artifact first, then captured arrays' bytes),
and a SHA-256 of everything before it. Static values are written type-exactly (``2`` and
``2.0``, ``0.0`` and ``-0.0`` differ) and never as code: classes and functions by their
``module:qualname``, looked up among the modules already imported when read.
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import hashlib
import json
import struct
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .arrays import ConcreteRArray
from .ir.errors import ReactantError
from .sharding import NamedSharding, PartitionSpec
from .tracing.dtypes import SUPPORTED
from .tracing.errors import UnsupportedError
from .tracing.pytree import TreeDef

FORMAT_VERSION = 1  # of the serialized form; raise it when the layout or the header's meaning changes
MAGIC = b"reactant-export\n"
_PREFIX = struct.Struct("<IQ")  # format version, header length
_DIGEST = 32  # sha256 of everything before it, at the end


class ExportError(ReactantError, ValueError):
    """Bytes that are not a readable reactant export: not one at all, corrupted, or written
    in a format version or StableHLO version this installation cannot read."""


# -- what an Exported describes -----------------------------------------------------------------
@dataclass(frozen=True)
class ArraySpec:
    """An array of the program: ``shape``, ``dtype`` and, for an SPMD program, its
    ``PartitionSpec`` over the mesh (``None``: one device). ``number``: an argument that was
    a Python number of this type, made a runtime input by ``track_numbers=True``."""

    shape: tuple[int, ...]
    dtype: np.dtype
    spec: PartitionSpec | None = None
    number: type | None = None

    def __str__(self) -> str:
        s = f"{self.dtype.name}{list(self.shape)}"
        if self.number is not None:
            s = f"{self.number.__name__} as {s}"
        return s if self.spec is None else f"{s} {self.spec!r}"


@dataclass(frozen=True)
class Static:
    """A value baked into the program as a constant: an argument passes it again, a result
    returns it."""

    value: Any


@dataclass(frozen=True)
class Argument:
    """A result that is the argument leaf ``index`` itself, returned as is (as NumPy does)."""

    index: int


def pack(header: dict, blobs: list[bytes]) -> bytes:
    """The bytes of an export: ``header`` (JSON-able) and its sections."""
    text = json.dumps(dict(header, blobs=[len(b) for b in blobs]), separators=(",", ":")).encode()
    body = MAGIC + _PREFIX.pack(FORMAT_VERSION, len(text)) + text + b"".join(blobs)
    return body + hashlib.sha256(body).digest()


def unpack(data: bytes, reader: str) -> tuple[dict, list[bytes]]:
    """(header, sections) of ``pack``'s bytes; ``ExportError`` for anything else (``reader``:
    this installation's version, for the message)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ExportError(f"expected the bytes of Exported.serialize(), got {type(data).__name__}")
    data = bytes(data)
    if not data.startswith(MAGIC):
        raise ExportError("these bytes are not a reactant export (they do not start with its magic line)")
    if len(data) < len(MAGIC) + _PREFIX.size + _DIGEST:
        raise ExportError(f"this reactant export is truncated ({len(data)} bytes)")
    version, size = _PREFIX.unpack_from(data, len(MAGIC))
    if version != FORMAT_VERSION:
        raise ExportError(f"this export has format version {version}; this reactant ({reader}) reads format "
                          f"{FORMAT_VERSION}",
                          hint="export it again with this version, or read it with a reactant of its version")
    body, digest = data[:-_DIGEST], data[-_DIGEST:]
    if hashlib.sha256(body).digest() != digest:
        raise ExportError("this reactant export is corrupted or truncated (its checksum does not match)")
    start = len(MAGIC) + _PREFIX.size
    try:
        header = json.loads(body[start:start + size].decode())
        sizes = [int(n) for n in header.pop("blobs")]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ExportError(f"the export's description is malformed ({e})") from None
    offset = start + size
    if not sizes or any(n < 0 for n in sizes) or offset + sum(sizes) != len(body):
        raise ExportError("the export's sections do not add up to its length")
    blobs = []
    for n in sizes:
        blobs.append(body[offset:offset + n])
        offset += n
    return header, blobs


# -- arrays and shardings -----------------------------------------------------------------------
_DTYPES = {d.name: d for d in SUPPORTED}


def _dtype_name(dt: np.dtype) -> str:
    dt = np.dtype(dt)
    return dt.name if dt.name in _DTYPES else dt.str


def _dtype(name: str) -> np.dtype:
    return _DTYPES.get(name) or np.dtype(name)


def enc_array(shape, dtype, placement) -> list:
    spec = None
    if isinstance(placement, NamedSharding):
        spec = [e if e is None or isinstance(e, str) else list(e) for e in placement.spec]
    return [[int(n) for n in shape], _dtype_name(dtype), spec]


def dec_array(d: list, number: type | None = None) -> ArraySpec:
    shape, dtype, spec = d
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError(f"shape {shape!r}")
    if spec is not None:
        spec = PartitionSpec(*[e if e is None or isinstance(e, str) else tuple(e) for e in spec])
    return ArraySpec(tuple(shape), _dtype(dtype), spec, number)


# -- static values: a type-exact JSON form ------------------------------------------------------
class _Unencodable(Exception):
    pass


def enc_static(v, where: str) -> list:
    """``v`` (a static argument or result leaf) in JSON form; UnsupportedError naming ``where``
    for a value that cannot be written down."""
    try:
        return _enc(v)
    except _Unencodable as e:
        raise UnsupportedError(f"{where} is the static value {show(v)}, which an export cannot store ({e})",
                               hint="pass data (numbers, strings, tuples, NumPy arrays, dtypes, NumPy "
                                    "functions) or close over the object inside the function") from None


def enc_static_or_none(v):
    try:
        return _enc(v)
    except _Unencodable:
        return None


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def _enc(v) -> list:
    t = type(v)
    if v is None:
        return ["none"]
    if v is Ellipsis:
        return ["ellipsis"]
    if t is bool:
        return ["bool", v]
    if t is int:
        return ["int", str(v)]
    if t is float:
        return ["float", v.hex()]
    if t is complex:
        return ["complex", v.real.hex(), v.imag.hex()]
    if t is str:
        return ["str", v]
    if t is bytes:
        return ["bytes", _b64(v)]
    if t is tuple or t is list:
        return [t.__name__, [_enc(x) for x in v]]
    if t is dict:
        return ["dict", [[_enc(k), _enc(x)] for k, x in v.items()]]
    if t is slice:
        return ["slice", _enc(v.start), _enc(v.stop), _enc(v.step)]
    if t is np.ndarray:
        if v.dtype == object:
            return ["ndarray_object", list(v.shape), [_enc(x) for x in v.reshape(-1)]]
        if v.dtype.fields is not None:
            raise _Unencodable("a structured dtype")
        return ["ndarray", _dtype_name(v.dtype), list(v.shape), _b64(np.ascontiguousarray(v).tobytes())]
    if isinstance(v, np.generic) and v.dtype.fields is None and v.dtype != object:
        return ["numpy", _dtype_name(v.dtype), _b64(v.tobytes())]
    if isinstance(v, np.dtype) and v.fields is None:
        return ["dtype", _dtype_name(v)]
    if isinstance(v, np.ufunc) and getattr(np, v.__name__, None) is v:
        return ["ufunc", v.__name__]
    if isinstance(v, (type, types.FunctionType, types.BuiltinFunctionType)):
        ref = _ref(v)
        if _resolve(ref) is not v:
            raise _Unencodable(f"{ref} cannot be found by its name")
        return ["ref", ref]
    raise _Unencodable(f"type {t.__name__}")


def dec_static(e: list, strict: bool = False) -> Any:
    """The value of ``_enc``'s form. ``strict``: a reference that names nothing loaded in this
    process is an error (a result to return); otherwise it stays a ``_Missing`` placeholder."""
    tag = e[0]
    if tag == "none":
        return None
    if tag == "ellipsis":
        return Ellipsis
    if tag == "bool":
        return bool(e[1])
    if tag == "int":
        return int(e[1])
    if tag == "float":
        return float.fromhex(e[1])
    if tag == "complex":
        return complex(float.fromhex(e[1]), float.fromhex(e[2]))
    if tag == "str":
        return str(e[1])
    if tag == "bytes":
        return base64.b64decode(e[1])
    if tag == "tuple":
        return tuple(dec_static(x, strict) for x in e[1])
    if tag == "list":
        return [dec_static(x, strict) for x in e[1]]
    if tag == "dict":
        return {dec_static(k, strict): dec_static(x, strict) for k, x in e[1]}
    if tag == "slice":
        return slice(*(dec_static(x, strict) for x in e[1:4]))
    if tag == "ndarray":
        return np.frombuffer(base64.b64decode(e[3]), dtype=_dtype(e[1])).reshape(e[2]).copy()
    if tag == "ndarray_object":
        out = np.empty(len(e[2]), dtype=object)
        out[:] = [dec_static(x, strict) for x in e[2]] if e[2] else []
        return out.reshape(e[1])
    if tag == "numpy":
        return np.frombuffer(base64.b64decode(e[2]), dtype=_dtype(e[1]))[0]
    if tag == "dtype":
        return _dtype(e[1])
    if tag == "ufunc":
        f = getattr(np, e[1], None)
        if not isinstance(f, np.ufunc):
            raise ValueError(f"unknown ufunc {e[1]!r}")
        return f
    if tag == "ref":
        obj = _resolve(e[1])
        if obj is None:
            if strict:
                raise ExportError(f"the program returns {e[1]}, which is not loaded in this process",
                                  hint=f"import {e[1].partition(':')[0]} first")
            return _Missing(e[1])
        return obj
    raise ValueError(f"unknown static value tag {tag!r}")


class _Missing:
    """A static value naming a class or function not loaded in this process."""

    def __init__(self, ref: str):
        self.ref = ref

    def __repr__(self) -> str:
        return f"<{self.ref} (not loaded)>"


def _ref(obj) -> str:
    return f"{getattr(obj, '__module__', None)}:{getattr(obj, '__qualname__', None)}"


def _resolve(ref: str):
    """The object ``module:qualname`` names among the modules already imported (never imports)."""
    mod, _, qual = ref.partition(":")
    obj = sys.modules.get(mod)
    for part in qual.split("."):
        if obj is None or part == "<locals>":
            return None
        obj = getattr(obj, part, None)
    return obj


def show(v) -> str:
    text = f"{type(v).__name__} {v!r}" if not isinstance(v, (ConcreteRArray, np.ndarray)) else \
        f"{type(v).__name__} {v.dtype}{list(v.shape)}"
    return text if len(text) < 120 else text[:117] + "..."


# -- pytree structures: a JSON form ---------------------------------------------------------------
def enc_tree(t: TreeDef, what: str):
    if t.kind is None:
        return "*"
    kids = [enc_tree(c, what) for c in t.children]
    k = t.kind
    if k is tuple or k is list:
        return [k.__name__, kids]
    if k is dict:
        try:
            return ["dict", [_enc(key) for key in t.aux], kids]
        except _Unencodable as e:
            raise UnsupportedError(f"{what} hold a dict with a key an export cannot store ({e})") from None
    if k is type(None):
        return ["none"]
    if issubclass(k, tuple) and hasattr(k, "_fields") and t.aux is None:
        return ["namedtuple", _ref(k), list(k._fields), kids]
    if dataclasses.is_dataclass(k) and t.aux == tuple(f.name for f in dataclasses.fields(k)):
        return ["dataclass", _ref(k), list(t.aux), kids]
    try:
        aux = _enc(t.aux)
    except _Unencodable as e:
        raise UnsupportedError(f"{what} hold a {k.__name__} whose flattened form an export cannot store "
                               f"({e})") from None
    return ["node", _ref(k), aux, kids]


_STAND_INS: dict = {}


def dec_tree(e, strict: bool) -> TreeDef:
    """The structure ``enc_tree`` wrote. Classes come from modules already imported; when
    one is not, a namedtuple or dataclass gets a look-alike and a registered type is an
    error if ``strict`` (a result to build) or a placeholder kind otherwise."""
    if e == "*":
        return TreeDef(None, None, ())
    tag = e[0]
    if tag == "none":
        return TreeDef(type(None), None, ())
    if tag in ("tuple", "list"):
        return TreeDef(tuple if tag == "tuple" else list, None, tuple(dec_tree(c, strict) for c in e[1]))
    if tag == "dict":
        return TreeDef(dict, tuple(dec_static(k) for k in e[1]), tuple(dec_tree(c, strict) for c in e[2]))
    ref, kids = e[1], tuple(dec_tree(c, strict) for c in e[3])
    cls = _resolve(ref)
    if tag == "namedtuple":
        if not (isinstance(cls, type) and issubclass(cls, tuple) and list(getattr(cls, "_fields", ())) == e[2]):
            cls = _stand_in(ref, lambda name: collections.namedtuple(name, e[2]))
        return TreeDef(cls, None, kids)
    if tag == "dataclass":
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)
                and [f.name for f in dataclasses.fields(cls)] == e[2]):
            cls = _stand_in(ref, lambda name: dataclasses.make_dataclass(name, e[2]))
        return TreeDef(cls, tuple(e[2]), kids)
    if tag == "node":
        if not isinstance(cls, type):
            if strict:
                raise ExportError(f"the program returns a {ref}, which is not loaded in this process",
                                  hint=f"import {ref.partition(':')[0]} (which registers it) first")
            cls = _stand_in(ref, lambda name: type(name, (), {}))
        return TreeDef(cls, dec_static(e[2]), kids)
    raise ValueError(f"unknown structure tag {tag!r}")


def _stand_in(ref: str, make: Callable[[str], type]) -> type:
    """One look-alike class per name (results of two calls have the same class)."""
    cls = _STAND_INS.get(ref)
    if cls is None:
        name = ref.rpartition(":")[2].rpartition(".")[2] or "Result"
        cls = _STAND_INS[ref] = make(name if name.isidentifier() else "Result")
    return cls


def custom_node(e) -> str | None:
    """The first kind other than tuple, list, dict and None in a structure's form."""
    if e == "*" or e[0] == "none":
        return None
    if e[0] in ("tuple", "list"):
        kids = e[1]
    elif e[0] == "dict":
        kids = e[2]
    else:
        return e[1].rpartition(":")[2] or e[0]
    for c in kids:
        k = custom_node(c)
        if k is not None:
            return k
    return None


def leaf_paths(e, arg_names: list) -> list[str]:
    """Each leaf's name in the ``(args, kwargs)`` structure: ``x``, ``params['w']``, ``state.h``."""
    out: list[str] = []

    def walk(node, path: str) -> None:
        if node == "*":
            out.append(path)
            return
        tag = node[0]
        if tag == "none":
            return
        if tag in ("tuple", "list"):
            for i, c in enumerate(node[1]):
                walk(c, f"{path}[{i}]")
        elif tag == "dict":
            for k, c in zip(node[1], node[2]):
                walk(c, f"{path}[{dec_static(k)!r}]")
        elif tag in ("namedtuple", "dataclass"):
            for f, c in zip(node[2], node[3]):
                walk(c, f"{path}.{f}")
        else:
            for i, c in enumerate(node[3]):
                walk(c, f"{path}[{i}]")

    if isinstance(e, list) and e[0] == "tuple" and len(e[1]) == 2 and e[1][1] != "*" and e[1][1][0] == "dict":
        args, kwargs = e[1]
        for i, c in enumerate(args[1] if args != "*" and args[0] == "tuple" else []):
            walk(c, arg_names[i] if i < len(arg_names) else f"args[{i}]")
        for k, c in zip(kwargs[1], kwargs[2]):
            walk(c, str(dec_static(k)))
    else:
        walk(e, "")
    return out


def show_tree(enc, tree: TreeDef) -> str:
    return repr(tree) if enc is None else repr(dec_tree(enc, strict=False))
