"""What the transformer reads off a block of statements: the names it assigns and reads, the
attributes it assigns, the names it may read before assigning them, and whether it leaves the
block (return/break/continue/yield)."""

from __future__ import annotations

import ast


class _Names(ast.NodeVisitor):
    """Names stored / loaded in a statement list, not descending into nested scopes."""

    def __init__(self):
        self.stored: list[str] = []
        self.loaded: set[str] = set()

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            if node.id not in self.stored:
                self.stored.append(node.id)
        else:
            self.loaded.add(node.id)

    def visit_FunctionDef(self, node):
        if node.name not in self.stored:
            self.stored.append(node.name)
        for d in node.decorator_list + node.args.defaults + node.args.kw_defaults:
            if d is not None:
                self.visit(d)
        self._free(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        if node.name not in self.stored:
            self.stored.append(node.name)

    def visit_Lambda(self, node):
        self._free(node)

    def _free(self, node):
        # names a nested function reads from this scope count as loads
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                self.loaded.add(n.id)

    def visit_ListComp(self, node):
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                self.loaded.add(n.id)

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp


def _attr_targets(nodes: list, stored: list) -> list[tuple[str, str]]:
    """``name.attr`` assigned in ``nodes`` (``self.total = ...``, ``self.n += 1``), not in
    nested scopes, on a name the statements do not themselves rebind: the attributes an if on
    a traced value carries like variables."""
    out: list[tuple[str, str]] = []

    def visit(n):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
            n, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            for e in ast.walk(t) if isinstance(t, (ast.Tuple, ast.List)) else [t]:
                if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id not in stored:
                    key = (e.value.id, e.attr)
                    if key not in out:
                        out.append(key)
        for c in ast.iter_child_nodes(n):
            visit(c)

    for n in nodes:
        visit(n)
    return out


def _names(nodes) -> _Names:
    v = _Names()
    for n in nodes if isinstance(nodes, list) else [nodes]:
        v.visit(n)
    return v


def _exposed(stmts: list) -> set:
    """Names a statement list may read before assigning them (upward-exposed uses): a name
    counts as assigned only after a plain assignment to it at this level, in both branches of
    an if, or as the target of a for loop within that loop's body."""
    exposed: set = set()
    defined: set = set()
    for s in stmts:
        if isinstance(s, ast.For) and isinstance(s.target, ast.Name):
            uses = _names(s.iter).loaded | (_exposed(s.body) - {s.target.id}) | _exposed(s.orelse)
            sure: set = set()
        elif isinstance(s, ast.If):
            uses = _names(s.test).loaded | _exposed(s.body) | _exposed(s.orelse)
            sure = _assigned_surely(s.body) & _assigned_surely(s.orelse)
        elif isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
            uses = _names(s.value).loaded
            sure = {t.id for t in s.targets}
        else:
            uses = _names(s).loaded
            sure = set()
        exposed |= uses - defined
        defined |= sure
    return exposed


def _assigned_surely(stmts: list) -> set:
    out: set = set()
    for s in stmts:
        if isinstance(s, ast.Assign):
            out |= {t.id for t in s.targets if isinstance(t, ast.Name)}
        elif isinstance(s, ast.If):
            out |= _assigned_surely(s.body) & _assigned_surely(s.orelse)
    return out


class _Escapes(ast.NodeVisitor):
    """Whether a statement list returns/breaks/continues/yields out of a converted body."""

    def __init__(self):
        self.found: str | None = None
        self.in_loop = 0

    def visit_Return(self, node):
        self.found = self.found or "return"

    def visit_Yield(self, node):
        self.found = self.found or "yield"

    visit_YieldFrom = visit_Await = visit_Yield

    def visit_Break(self, node):
        if not self.in_loop:
            self.found = self.found or "break"

    def visit_Continue(self, node):
        if not self.in_loop:
            self.found = self.found or "continue"

    def visit_Global(self, node):
        self.found = self.found or "global statement"

    visit_Nonlocal = visit_Global

    def _loop(self, node):
        self.in_loop += 1
        self.generic_visit(node)
        self.in_loop -= 1

    visit_For = visit_While = visit_AsyncFor = _loop

    def visit_FunctionDef(self, node):
        pass

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def _escape(nodes) -> str | None:
    v = _Escapes()
    for n in nodes:
        v.visit(n)
    return v.found
