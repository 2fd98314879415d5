"""Writes into arrays, rewritten before the control-flow transform (so the names they assign
are carried through converted loops and branches): ``n[i] = v``, ``n[i] op= v``, ``n op= v``,
``f(..., out=n)`` and ``np.add.at(n, ...)`` rebind ``n`` to what the runtime returns (a NumPy
array receiving a traced value becomes a traced array); writes through ``holder[key]`` or
``holder.key`` go through the runtime's ``store_in``."""

from __future__ import annotations

import ast

from .nodes import _AUG_OPS, _attr, _index_expr


class _HostArrayWrites(ast.NodeTransformer):
    """Applies ``_host_array_writes`` to every statement (before the control-flow transform, so
    the names it assigns are carried through converted loops and branches)."""

    counter = 0

    def __init__(self, local_names=None):
        # names local to the function: only those can be rebound (``n = _rt.setitem(n, ...)``);
        # a global or closure variable keeps its binding (``_rt.store``)
        self.local_names = local_names

    def visit_FunctionDef(self, node):
        return node  # a nested function is converted on its own when it is called

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_body(self, body: list) -> list:
        out = []
        for s in body:
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r])
        return out

    def generic_visit(self, node):
        node = super().generic_visit(node)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)) \
                and any(isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) for e in node.targets[0].elts) \
                and not any(isinstance(e, ast.Starred) for e in node.targets[0].elts):
            # a, b[i] = u, v  ->  t = tuple(...); a = t[0]; b = _rt.setitem(b, i, t[1])
            _HostArrayWrites.counter += 1
            tmp = f"__rt_unpack_{_HostArrayWrites.counter}"
            elts = node.targets[0].elts
            first = ast.copy_location(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=ast.Call(
                func=_attr("unpack"), args=[node.value, ast.Constant(len(elts))], keywords=[])), node)
            parts = [first]
            for k, e in enumerate(elts):
                item = ast.Subscript(value=ast.Name(tmp, ast.Load()), slice=ast.Constant(k), ctx=ast.Load())
                parts.append(_host_array_writes(ast.copy_location(ast.Assign(targets=[e], value=item), node),
                                                self.local_names))
            return parts
        return _host_array_writes(node, self.local_names) if isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr)) \
            else node


def _host_array_writes(node, local_names=None):
    """``n[i] = v`` -> ``n = _rt.setitem(n, i, v)``, ``n[i] op= v`` -> ``n = _rt.aug_setitem(...)``,
    ``n op= v`` -> ``n = _rt.aug_assign(n, op, v)`` and the statement ``f(..., out=n)`` ->
    ``n = _rt.call_with_out(f, n, ...)`` for a plain name ``n``: a NumPy array that receives a
    traced value becomes a traced array under that name."""
    def name_store(n):
        return ast.Name(n, ast.Store())

    def local(t) -> bool:
        return isinstance(t, ast.Name) and (local_names is None or t.id in local_names)

    if isinstance(node, ast.Assign) and len(node.targets) > 1 and any(isinstance(t, ast.Subscript)
                                                                       for t in node.targets):
        # a[i:, i] = a[i, i:] = v: the value once, then each target from left to right
        tmp = ast.copy_location(ast.Assign(targets=[name_store("__rt_chained")], value=node.value), node)
        out = [tmp]
        for t in node.targets:
            one = ast.copy_location(ast.Assign(targets=[t], value=ast.Name("__rt_chained", ast.Load())), node)
            r = _host_array_writes(one, local_names)
            out.extend(r if isinstance(r, list) else [r])
        return out
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
            and local(node.targets[0].value):
        t = node.targets[0]
        call = ast.Call(func=_attr("setitem"), args=[ast.Name(t.value.id, ast.Load()), _index_expr(t.slice),
                                                     node.value], keywords=[])
        return ast.copy_location(ast.Assign(targets=[name_store(t.value.id)], value=call), node)
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
            and _holder_parts(node.targets[0].value) is not None:
        t = node.targets[0]  # d["a"][i] = v, obj.buf[i] = v: the array's place can be rebound
        holder, key, is_attr = _holder_parts(t.value)
        call = ast.Call(func=_attr("store_in"), args=[holder, key, _index_expr(t.slice), node.value,
                                                      ast.Constant(is_attr)], keywords=[])
        return ast.copy_location(ast.Expr(call), node)
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
        t = node.targets[0]  # a subscript of an expression: checked, not rebound
        call = ast.Call(func=_attr("store"), args=[t.value, _index_expr(t.slice), node.value], keywords=[])
        return ast.copy_location(ast.Expr(call), node)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
            and node.value.func.attr == "at" and node.value.args and local(node.value.args[0]):
        call = node.value  # np.add.at(buf, i, v): a NumPy buf receiving traced values is rebound
        name = call.args[0].id
        new = ast.Call(func=_attr("ufunc_at"), args=[call.func, *call.args], keywords=call.keywords)
        return ast.copy_location(ast.Assign(targets=[name_store(name)], value=new), node)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        outs = [k for k in call.keywords if k.arg == "out" and local(k.value)]
        if outs:
            name = outs[0].value.id
            rest = [k for k in call.keywords if k is not outs[0]]
            new = ast.Call(func=_attr("call_with_out"), args=[call.func, ast.Name(name, ast.Load()), *call.args],
                           keywords=rest)
            return ast.copy_location(ast.Assign(targets=[name_store(name)], value=new), node)
    if isinstance(node, ast.AugAssign) and type(node.op) in _AUG_OPS:
        op = ast.Constant(_AUG_OPS[type(node.op)])
        t = node.target
        if isinstance(t, ast.Subscript) and local(t.value):
            call = ast.Call(func=_attr("aug_setitem"), args=[ast.Name(t.value.id, ast.Load()), _index_expr(t.slice),
                                                             op, node.value], keywords=[])
            return ast.copy_location(ast.Assign(targets=[name_store(t.value.id)], value=call), node)
        if local(t):
            call = ast.Call(func=_attr("aug_assign"), args=[ast.Name(t.id, ast.Load()), op, node.value], keywords=[])
            return ast.copy_location(ast.Assign(targets=[name_store(t.id)], value=call), node)
        if isinstance(t, ast.Subscript) and _holder_parts(t.value) is not None:  # self.count[0] += v
            holder, key, is_attr = _holder_parts(t.value)
            call = ast.Call(func=_attr("store_in"), args=[holder, key, _index_expr(t.slice), node.value,
                                                          ast.Constant(is_attr), op], keywords=[])
            return ast.copy_location(ast.Expr(call), node)
        if isinstance(t, ast.Subscript):  # a subscript of another expression (f()[0] += v)
            call = ast.Call(func=_attr("aug_store"), args=[t.value, _index_expr(t.slice), op, node.value],
                            keywords=[])
            return ast.copy_location(ast.Expr(call), node)
    return node


def _holder_parts(e):
    """(holder, key, is attribute) when ``e`` is ``holder[key]`` or ``holder.key`` (a place an
    array can be rebound in), else None."""
    if isinstance(e, ast.Subscript) and not isinstance(e.slice, ast.Slice):
        return e.value, _index_expr(e.slice), False
    if isinstance(e, ast.Attribute):
        return e.value, ast.Constant(e.attr), True
    return None
