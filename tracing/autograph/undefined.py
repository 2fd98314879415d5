"""The value of a variable a traced statement could not define: any use of it is an error that
names the variable."""

from __future__ import annotations

from ..errors import ReactantError


class Undefined:
    """The value of a variable that a traced statement could not define (e.g. assigned in only
    one branch); any use raises an error naming it."""

    __slots__ = ("name", "why", "read")
    __reactant_undefined__ = True

    def __init__(self, name: str, why: str):
        self.name = name
        self.why = why
        self.read = False  # (used, even where the error was caught: a loop must not bind it)

    def _fail(self, *a, **k):
        object.__setattr__(self, "read", True)
        raise ReactantError(f"variable {self.name!r} is undefined here: {self.why}",
                            hint="assign it before the if/loop (or in every branch)")

    __getattr__ = __call__ = __getitem__ = __iter__ = __len__ = __bool__ = __float__ = __int__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _fail
    __matmul__ = __rmatmul__ = __pow__ = __neg__ = __lt__ = __gt__ = __le__ = __ge__ = _fail
    __array__ = __array_ufunc__ = __array_function__ = _fail

    def __repr__(self) -> str:
        return f"<undefined {self.name}>"


def _undefined(name: str, why: str) -> Undefined:
    return Undefined(name, why)


def _is_undef(v) -> bool:
    return type(v) is Undefined
