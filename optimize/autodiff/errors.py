"""Errors raised by the AD pass. Each names what the user wrote: the NumPy call that made the
offending op (the tracer wraps the location of the ops a NumPy function emits in a name
location, ``loc("np.cumprod"("model.py":4:0))``) and the user's line; where no NumPy call
is known (a module from elsewhere), the op and its file/line location."""

from __future__ import annotations

import linecache
import re

from jaxlib.mlir import ir

from ...ir.errors import ReactantError

_FILE_LOC = re.compile(r'"([^"]+)":(\d+)(?::(\d+))?')
_NAME_LOC = re.compile(r'"([^"]*)"\(')  # a quoted name opening its child location: a NameLoc


def location_text(loc: ir.Location | None) -> str | None:
    """``file:line[:col]`` of the innermost file location inside ``loc`` (None if unknown;
    a column of 0, which traced code has, is left out)."""
    if loc is None:
        return None
    m = _FILE_LOC.search(str(loc))
    if not m:
        return None
    file, line, col = m.group(1), m.group(2), m.group(3)
    return f"{file}:{line}" + (f":{col}" if col and col != "0" else "")


def call_name(loc: ir.Location | None) -> str | None:
    """The name a name location gives (the NumPy call that emitted the op, e.g. ``np.cumprod``),
    the first one inside a fused location; None when there is none."""
    if loc is None:
        return None
    m = _NAME_LOC.search(str(loc))
    return m.group(1) if m else None


class ADError(ReactantError, ValueError):
    """A module cannot be differentiated as asked. ``numpy_name`` (the NumPy call, when the
    op was made by one), ``op_name`` (the op) and ``location`` (``file:line``) say where;
    ``detail`` is the reason alone."""

    def __init__(self, message: str, op=None, *, op_name: str | None = None, hint: str | None = None):
        loc = op.location if op is not None else None
        self.detail = message
        self.op_name = op_name or (op_name_of(op) if op is not None else None)
        self.numpy_name = call_name(loc)
        self.location = location_text(loc)
        self.message = message
        self.hint = hint
        ValueError.__init__(self, self._render())

    def _render(self) -> str:
        if self.numpy_name:
            # the user's words first: the NumPy call and the line, then the reason
            parts = [f"cannot differentiate {self.numpy_name}: {self.detail}"]
            if self.location:
                parts.append(f"  at {self.location}")
                src = _source_line(self.location)
                if src:
                    parts.append(f"    {src}")
        else:
            where = ""
            if self.op_name:
                where += f" [op {self.op_name}"
                where += f" at {self.location}]" if self.location else "]"
            parts = [self.detail + where]
        if self.hint:
            parts.append(f"  hint: {self.hint}")
        return "\n".join(parts)


def _source_line(location: str) -> str:
    m = re.match(r"(.*?):(\d+)(?::\d+)?$", location)
    if not m:
        return ""
    return linecache.getline(m.group(1), int(m.group(2))).strip()


def op_name_of(op) -> str:
    o = getattr(op, "operation", op)
    return o.name
