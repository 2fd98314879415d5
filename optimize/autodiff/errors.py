"""Errors raised by the AD pass: each names the offending op and, when the op carries a
file/line location, that location (the user's line, for traced code)."""

from __future__ import annotations

import re

from jaxlib.mlir import ir

_FILE_LOC = re.compile(r'"([^"]+)":(\d+)(?::(\d+))?')


def location_text(loc: ir.Location | None) -> str | None:
    """``file:line[:col]`` of the innermost file location inside ``loc`` (None if unknown)."""
    if loc is None:
        return None
    m = _FILE_LOC.search(str(loc))
    if not m:
        return None
    file, line, col = m.group(1), m.group(2), m.group(3)
    return f"{file}:{line}" + (f":{col}" if col else "")


class ADError(ValueError):
    """A module cannot be differentiated as asked. ``op_name`` and ``location`` say where."""

    def __init__(self, message: str, op=None, *, op_name: str | None = None):
        self.op_name = op_name or (op_name_of(op) if op is not None else None)
        self.location = location_text(op.location) if op is not None else None
        where = ""
        if self.op_name:
            where += f" [op {self.op_name}"
            where += f" at {self.location}]" if self.location else "]"
        super().__init__(message + where)


def op_name_of(op) -> str:
    o = getattr(op, "operation", op)
    return o.name
