"""The automatic-differentiation marker ops: contract, parsing and validation.

The tracer (``reactant.autodiff``) does not differentiate while tracing. It records a marker
op that names the traced primal function; the ``autodiff`` pass of ``reactant.optimize``
expands every marker into derivative code after the module has been optimized. Markers live
in the unregistered ``enzyme`` dialect (the context must allow unregistered dialects).

Reverse mode
------------
``%r:N = "enzyme.autodiff"(%operands...) {fn = @f, activity = [...], ret_activity = [...]}``

``@f`` is a ``func.func`` in the same module (usually private) with arguments a_1..a_n and
results r_1..r_m.

* ``activity``: an ArrayAttr of StringAttr, one per argument of ``@f``:
  ``"active"`` (its gradient is returned), ``"const"`` (no derivative), ``"dup"``
  (duplicated: the argument is followed in the operand list by its shadow, a gradient
  accumulator of the same type; the op returns shadow + gradient).
* ``ret_activity``: an ArrayAttr of StringAttr, one per result of ``@f``:
  ``"active"`` (primal result returned AND differentiated: a seed/cotangent operand is
  given), ``"activenoneed"`` (differentiated with a seed, primal not returned), ``"const"``
  (primal returned, not differentiated), ``"constnoneed"`` (neither).
* Operands: for each argument in order, the argument value, then its shadow if ``"dup"``;
  then one seed per result whose ret_activity is ``"active"``/``"activenoneed"``, in result
  order. A seed has the type of its result.
* Results: first the primal results whose ret_activity is ``"active"`` or ``"const"`` (in
  order), then for each argument in order: its gradient if ``"active"``, its updated shadow
  if ``"dup"``.

Forward mode
------------
``%r:N = "enzyme.fwddiff"(%operands...) {fn = @f, activity = [...], ret_activity = [...],
width = 1 : i64}`` (``width`` optional, default 1).

* ``activity`` per argument: ``"const"`` or ``"dup"`` (followed by its tangent operand).
* ``ret_activity`` per result: ``"dup"`` (primal and tangent returned), ``"dupnoneed"``
  (tangent only), ``"const"`` (primal only), ``"constnoneed"`` (neither).
* Results: the primal results whose ret_activity is ``"dup"`` or ``"const"`` (in order),
  then the tangents of the results whose ret_activity is ``"dup"``/``"dupnoneed"`` (in
  order).
* With ``width = W > 1`` (vector forward mode, for BatchDuplicated) every tangent operand
  and tangent result has an extra leading dimension W (``tensor<Wx...>``).

Activities may also be written as Enzyme's ``#enzyme<activity enzyme_active>`` attributes
(any attribute whose text contains ``enzyme_<name>``); they mean the same.

After the pass no ``enzyme.*`` op remains; the differentiated functions stay (DCE may
remove them later). Violations of this contract raise :class:`ADError` naming the marker
and its source location: unknown ``fn``, activity list length mismatch, an unknown
activity, an ``"active"``/``"dup"`` argument of integer type, a shadow, tangent or seed of
the wrong type, a missing seed (too few operands), a result list that does not match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from jaxlib.mlir import ir

from ...ir.markers import (ARG_FORWARD, ARG_REVERSE, MARKERS, RET_FORWARD, RET_REVERSE, REVERSE, SEEDED,
                           WITH_DERIVATIVE, WITH_TANGENT, Activity, batched_type, result_types)
from ...ir.types import is_inexact_tensor
from .errors import ADError


_ENZYME_ACT = re.compile(r"enzyme_([a-z]+)")


@dataclass
class MarkerSpec:
    """A parsed, validated marker op."""

    op: ir.Operation
    mode: str  # "reverse" | "forward"
    fn_name: str
    fn: object  # func.FuncOp (OpView)
    activity: list[Activity]
    ret_activity: list[Activity]
    width: int = 1
    args: list[ir.Value] = field(default_factory=list)  # primal argument per fn argument
    shadows: list[ir.Value | None] = field(default_factory=list)  # per argument (dup)
    seeds: list[ir.Value | None] = field(default_factory=list)  # per result (reverse)

    @property
    def arg_types(self) -> list[ir.Type]:
        return list(ir.FunctionType(ir.TypeAttr(self.fn.attributes["function_type"]).value).inputs)

    @property
    def result_types(self) -> list[ir.Type]:
        return list(ir.FunctionType(ir.TypeAttr(self.fn.attributes["function_type"]).value).results)


def _activity_name(attr: ir.Attribute) -> str:
    if isinstance(attr, ir.StringAttr):
        return attr.value
    try:
        return ir.StringAttr(attr).value
    except (ValueError, TypeError):
        pass
    m = _ENZYME_ACT.search(str(attr))
    if m:
        return m.group(1)
    return str(attr)


def _str_list(op, name: str) -> list[str]:
    attrs = op.attributes
    if name not in attrs:
        raise ADError(f"{op.name}: missing attribute {name!r}", op)
    try:
        arr = ir.ArrayAttr(attrs[name])
    except (ValueError, TypeError):
        raise ADError(f"{op.name}: attribute {name!r} must be an array of strings, got {attrs[name]}", op)
    return [_activity_name(a) for a in arr]


def fn_symbol(op) -> str:
    attrs = op.attributes
    if "fn" not in attrs:
        raise ADError(f"{op.name}: missing attribute 'fn' (the function to differentiate)", op)
    a = attrs["fn"]
    try:
        return ir.FlatSymbolRefAttr(a).value
    except (ValueError, TypeError):
        s = str(a)
        return s[1:] if s.startswith("@") else s


def parse_marker(op, funcs: dict[str, object]) -> MarkerSpec:
    """Parse and validate one marker op against the contract in this module's docstring."""
    op = getattr(op, "operation", op)
    name = op.name
    if name not in MARKERS:
        raise ADError(f"not an AD marker: {name}", op)
    mode = "reverse" if name == REVERSE else "forward"
    fname = fn_symbol(op)
    fn = funcs.get(fname)
    if fn is None:
        raise ADError(f"{name}: function @{fname} is not defined in the module", op)
    if len(fn.regions[0].blocks) == 0:
        raise ADError(f"{name}: function @{fname} has no body (external declaration)", op)
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    arg_types, res_types = list(ftype.inputs), list(ftype.results)
    activity = _str_list(op, "activity")
    ret_activity = _str_list(op, "ret_activity")
    allowed_arg, allowed_ret = (ARG_REVERSE, RET_REVERSE) if mode == "reverse" else (ARG_FORWARD, RET_FORWARD)
    if len(activity) != len(arg_types):
        raise ADError(f"{name}: activity has {len(activity)} entries but @{fname} has {len(arg_types)} "
                      f"argument(s)", op)
    if len(ret_activity) != len(res_types):
        raise ADError(f"{name}: ret_activity has {len(ret_activity)} entries but @{fname} has "
                      f"{len(res_types)} result(s)", op)
    for i, a in enumerate(activity):
        if a not in allowed_arg:
            raise ADError(f"{name}: activity[{i}] = {a!r} is not one of {[str(x) for x in allowed_arg]}", op)
    for j, a in enumerate(ret_activity):
        if a not in allowed_ret:
            raise ADError(f"{name}: ret_activity[{j}] = {a!r} is not one of {[str(x) for x in allowed_ret]}", op)
    width = 1
    if "width" in op.attributes:
        width = int(ir.IntegerAttr(op.attributes["width"]).value)
        if width < 1:
            raise ADError(f"{name}: width must be >= 1, got {width}", op)
        if mode == "reverse" and width != 1:
            raise ADError(f"{name}: reverse mode supports width = 1 only, got {width}", op)

    # argument types: derivatives only for float/complex tensors
    for i, (a, t) in enumerate(zip(activity, arg_types)):
        if a in WITH_DERIVATIVE and not is_inexact_tensor(t):
            raise ADError(f"{name}: argument {i} of @{fname} is marked {a!r} but has non-differentiable "
                          f"type {t} (only float/complex tensors have derivatives; mark it 'const')", op)

    operands = list(op.operands)
    n_expected = sum(2 if a == Activity.DUP else 1 for a in activity)
    if mode == "reverse":
        n_seeds = sum(1 for a in ret_activity if a in SEEDED)
        n_expected += n_seeds
    if len(operands) != n_expected:
        detail = ""
        if mode == "reverse" and len(operands) < n_expected:
            seeded = [j for j, a in enumerate(ret_activity) if a in SEEDED]
            detail = (f"; reverse mode needs one seed (cotangent) operand per differentiated result "
                      f"(results {seeded} are marked active)")
        raise ADError(f"{name}: expected {n_expected} operand(s) for activity {activity} and ret_activity "
                      f"{ret_activity}, got {len(operands)}{detail}", op)
    activity, ret_activity = [Activity(a) for a in activity], [Activity(a) for a in ret_activity]
    spec = MarkerSpec(op=op, mode=mode, fn_name=fname, fn=fn, activity=activity, ret_activity=ret_activity,
                      width=width)
    k = 0
    for i, (a, t) in enumerate(zip(activity, arg_types)):
        v = operands[k]
        k += 1
        if v.type != t:
            raise ADError(f"{name}: operand for argument {i} of @{fname} has type {v.type}, expected {t}", op)
        spec.args.append(v)
        if a == Activity.DUP:
            s = operands[k]
            k += 1
            want = batched_type(t, width) if mode == "forward" else t
            if s.type != want:
                what = "shadow" if mode == "reverse" else "tangent"
                raise ADError(f"{name}: {what} of duplicated argument {i} of @{fname} has type {s.type}, "
                              f"expected {want} (the argument's type"
                              + (f" with leading width {width})" if want != t else ")"), op)
            spec.shadows.append(s)
        else:
            spec.shadows.append(None)
    if mode == "reverse":
        for j, (a, t) in enumerate(zip(ret_activity, res_types)):
            if a in SEEDED:
                if not is_inexact_tensor(t):
                    raise ADError(f"{name}: result {j} of @{fname} is marked {a!r} but has non-differentiable "
                                  f"type {t}", op)
                s = operands[k]
                k += 1
                if s.type != t:
                    raise ADError(f"{name}: seed for result {j} of @{fname} has type {s.type}, expected {t}", op)
                spec.seeds.append(s)
            else:
                spec.seeds.append(None)
    else:
        for j, (a, t) in enumerate(zip(ret_activity, res_types)):
            if a in WITH_TANGENT and not is_inexact_tensor(t):
                raise ADError(f"{name}: result {j} of @{fname} is marked {a!r} but has non-differentiable "
                              f"type {t}", op)
    want_types = result_types(mode, activity, ret_activity, arg_types, res_types, width)
    got = [r.type for r in op.results]
    if got != want_types:
        raise ADError(f"{name}: result types {[str(t) for t in got]} do not match the contract "
                      f"{[str(t) for t in want_types]}", op)
    return spec
