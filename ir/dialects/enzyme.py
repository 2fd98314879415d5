"""The ``enzyme`` dialect's Python module: empty on purpose.

The AD marker ops (``enzyme.autodiff``, ``enzyme.fwddiff``) are unregistered. Whenever the MLIR
bindings wrap one of them, they look up the dialect's Python module, and a lookup that fails
is not remembered: every walk over a function holding a marker searched ``sys.path`` again
(~20 ms of a 0.12 s compile). Found here once, the lookup is cached.
"""
