"""Extraction: a DAG-aware greedy extractor over a frozen copy of the e-graph.

egglog's own extractor is tree-based: a subterm used twice is paid twice, which distorts
choices where sharing matters (a matmul reused by two consumers). Instead we freeze the
e-graph (``EGraph.freeze()``: every table's rows, a few ms for thousands of nodes), read
each node's cost from the ``cost_table_*`` tables that the ``ana`` rules filled, and run
a greedy DAG extraction: the cost of choosing a node is the total cost of the *set* of
e-classes its subterm needs (shared classes counted once), iterated to a fixpoint with a
worklist. The chosen program is then re-costed exactly as a DAG from the roots.
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass

from .cost import dot_penalty
from .lang import CTORS

MISSING_COST = 10**15  # a node whose cost the rules could not compute (never preferred)
# fusible ops whose result XLA materializes when it has several consumers
FUSIBLE = {"Un", "Bin", "Cmp", "Sel", "Clamp", "Cvt", "Transpose", "Pad", "Concat", "Reverse", "Bcast", "Reshape",
           "Slice"}
NEVER_MATERIALIZED = {"SplatF", "SplatI", "Iota"}  # constants are duplicated into every fusion
DUPLICATED = {"Bcast", "Reshape"}  # cheap to recompute: every consuming fusion reads their operand
# XLA CPU's reduction fusions take elementwise producers (and broadcasts, pads) but copy
# slices and transposes into temporaries first (seen in its HLO: "wrapped_slice" / transpose copies)
REDUCE_COPIED = {"Slice", "Transpose", "Reverse", "Concat"}
ELEMENTWISE = {"Un", "Bin", "Cmp", "Sel", "Clamp", "Cvt"}


@dataclass(slots=True)  # one object per e-node (thousands per segment)
class Node:
    ctor: str
    inputs: list  # raw egglog Values, one per constructor argument
    cls: int  # e-class index
    children: tuple  # e-class indices of the Op arguments
    cost: int


class Frozen:
    """A snapshot of the Op e-classes of an e-graph: nodes, costs, slot roots, types."""

    def __init__(self, egraph, mat_cost: int = 0, dot_t_costs: tuple[int, int] = (0, 0), red_ew: int = 0):
        self.eg = egraph
        self.mat_cost = mat_cost  # per element of a multi-use fusible result
        # per element of an elementwise op fused into a reduction, on top of its node cost
        # (XLA CPU's reduction fusions run elementwise work slower than its loop fusions)
        self.red_ew = red_ew
        # per operand element of a dot whose lhs / rhs is a transposed matrix (see _fusion_cost)
        self.lhs_t, self.rhs_t = dot_t_costs
        fr = egraph.freeze()
        funcs = fr.functions
        self.class_ids: dict = {}
        self.nodes: list[Node] = []
        # (the loops below run over every row of the e-graph: lookups are inlined, and class
        # ids are still numbered in the order the rows meet them)
        class_ids = self.class_ids
        to_i64 = egraph.value_to_i64
        nodes_append = self.nodes.append

        def cls(v):
            i = class_ids.get(v)
            if i is None:
                i = class_ids[v] = len(class_ids)
            return i

        costs = {}
        for name in CTORS:
            ct = funcs.get(f"cost_table_{name}")
            if ct is None:
                continue
            for row in ct.rows:
                costs[(name, tuple(row.inputs))] = row.output
        for name, sorts in CTORS.items():
            fn = funcs.get(name)
            if fn is None:
                continue
            op_pos = [k for k, srt in enumerate(sorts) if srt == "Op"]
            for row in fn.rows:
                if row.subsumed:
                    continue
                ins = list(row.inputs)
                c = costs.get((name, tuple(ins)))
                cost = MISSING_COST if c is None else to_i64(c)
                children = tuple([cls(ins[k]) for k in op_pos])
                nodes_append(Node(name, ins, cls(row.output), children, cost))
        self.slot_class: dict[int, int] = {}
        slot = funcs.get("Slot")
        if slot is not None:
            for row in slot.rows:
                self.slot_class[to_i64(row.inputs[0])] = cls(row.output)
        numel = {}
        nf = funcs.get("numel")
        if nf is not None:
            for row in nf.rows:
                numel[row.inputs[0]] = to_i64(row.output)
        self.numel = [numel.get(nd.inputs[-1], 0) for nd in self.nodes]
        vecs: dict = {}  # decoded IVec values (many nodes share a permutation or dims vector)

        def vec(v):
            out = vecs.get(v)
            if out is None:
                out = vecs[v] = self.vec(v)
            return out

        self.full_contraction = [nd.ctor == "Dot" and self.numel[i] == 1 and not vec(nd.inputs[2])
                                 for i, nd in enumerate(self.nodes)]
        # transposes that swap the two dims of a matrix: XLA folds one feeding a dot into the
        # dot's dimension numbers (a transposed-operand GEMM)
        self.matrix_transpose = [nd.ctor == "Transpose" and vec(nd.inputs[1]) == (1, 0) for nd in self.nodes]
        # per node, for the fusion cost evaluated in every local-search step
        self.kid_sets = [frozenset(nd.children) for nd in self.nodes]
        self.node_cost = [nd.cost for nd in self.nodes]
        self.node_children = [tuple(nd.children) for nd in self.nodes]
        self.node_ctor = [nd.ctor for nd in self.nodes]
        self.dot_user = [nd.ctor == "Dot" and not fc for nd, fc in zip(self.nodes, self.full_contraction)]
        self._tt = {}
        tt = funcs.get("TT")
        if tt is not None:
            for row in tt.rows:
                self._tt[_key(row.output)] = (row.inputs[0], row.inputs[1])
        # XLA rewrites transpose(A'B') into the operand-swapped dot B'^T A'^T, which writes the
        # transposed result directly (see _fusion_cost)
        cls_ty = {}
        for nd in self.nodes:
            cls_ty.setdefault(nd.cls, nd.inputs[-1])
        self.dot_mm = {}  # Dot node -> (lhs, rhs contracting dim) for matrix x matrix -> matrix dots
        for i, nd in enumerate(self.nodes):
            if nd.ctor == "Dot":
                mm = self._dot_mm(nd, cls_ty)
                if mm is not None:
                    self.dot_mm[i] = mm
        self.n_classes = len(self.class_ids)
        self._by_class = None
        self._sigs: dict[int, tuple] = {}

    def _dot_mm(self, nd: Node, cls_ty: dict) -> tuple[int, int] | None:
        """For a dot of two matrices into a matrix (one contracting dim each, no batch dims):
        its lhs and rhs contracting dims; None for other dots."""
        if self.vec(nd.inputs[2]) or self.vec(nd.inputs[3]):
            return None
        lc, rc = self.vec(nd.inputs[4]), self.vec(nd.inputs[5])
        if len(lc) != 1 or len(rc) != 1:
            return None
        for v in (nd.inputs[-1], cls_ty.get(nd.children[0]), cls_ty.get(nd.children[1]) if len(nd.children) > 1 else None):
            t = self._tt.get(_key(v)) if v is not None else None
            if t is None or len(self.vec(t[1])) != 2:
                return None
        return lc[0], rc[0]

    def signature(self, i: int):
        """Node identity up to the order of its operands."""
        sig = self._sigs.get(i)
        if sig is None:
            nd = self.nodes[i]
            data = tuple(v for v, srt in zip(nd.inputs, CTORS[nd.ctor]) if srt != "Op")
            sig = self._sigs[i] = (nd.ctor, data, tuple(sorted(nd.children)))
        return sig

    def nodes_by_class(self) -> dict[int, list[int]]:
        if self._by_class is None:
            self._by_class = {}
            for i, nd in enumerate(self.nodes):
                self._by_class.setdefault(nd.cls, []).append(i)
        return self._by_class

    def _cls(self, v) -> int:
        k = _key(v)
        i = self.class_ids.get(k)
        if i is None:
            i = self.class_ids[k] = len(self.class_ids)
        return i

    # -- decoding node data
    def decode(self, node: Node) -> list:
        """The constructor arguments of ``node`` as Python data (Op arguments as class ids)."""
        out = []
        for v, s in zip(node.inputs, CTORS[node.ctor]):
            if s == "Op":
                out.append(self._cls(v))
            elif s == "i64":
                out.append(self.eg.value_to_i64(v))
            elif s == "String":
                out.append(self.eg.value_to_string(v))
            elif s == "IVec":
                out.append(self.vec(v))
            elif s == "Ty":
                d, shape = self._tt[_key(v)]
                out.append((self.eg.value_to_string(d), self.vec(shape)))
        return out

    def vec(self, v) -> tuple[int, ...]:
        return tuple(self.eg.value_to_i64(x) for x in self.eg.value_to_vec(v))


def _key(v):
    return v  # egglog Values hash/compare by their raw bits (all Op classes share one sort)


def _bottom_up(nodes, n: int):
    """(parents per class, a queue of the leaf nodes, the set of queued nodes): the start of
    a bottom-up pass over the e-graph."""
    parents: list[list[int]] = [[] for _ in range(n)]
    for i, nd in enumerate(nodes):
        for ch in set(nd.children):
            parents[ch].append(i)
    queue = deque(i for i, nd in enumerate(nodes) if not nd.children)
    return parents, queue, set(queue)


def _enqueue(classes, queued: set, queue) -> None:
    """Queue the classes not queued yet (the parents of a class whose best cost improved)."""
    for p in classes:
        if p not in queued:
            queued.add(p)
            queue.append(p)


def greedy_dag(fz: Frozen, max_steps: int | None = None, *, free: dict[int, int] | None = None) -> list[int | None]:
    """Best node index per e-class (or None when the class has no finite extraction).

    ``free`` maps classes that are paid for anyway (e.g. the program the outputs need) to
    their node: they cost nothing to share, so other classes prefer terms that reuse them."""
    n = fz.n_classes
    nodes = fz.nodes
    best_total = [float("inf")] * n
    best_node: list[int | None] = [None] * n
    best_set: list[dict | None] = [None] * n
    for c, i in (free or {}).items():
        best_total[c], best_node[c], best_set[c] = 0, i, {}
    parents, queue, queued = _bottom_up(nodes, n)
    steps = 0
    limit = max_steps if max_steps is not None else 50 * max(1, len(nodes))
    nonneg = min(fz.node_cost, default=0) >= 0
    while queue and steps < limit:
        steps += 1
        i = queue.popleft()
        queued.discard(i)
        nd = nodes[i]
        kids = nd.children
        if kids:
            if any(best_node[c] is None for c in kids):
                continue
            # the union of the children's sets costs at least the dearest child's total: when
            # even that is not cheaper than the class's best, nothing would change
            if nonneg and max([best_total[c] for c in kids]) + nd.cost >= best_total[nd.cls]:
                continue
        chs = set(kids)
        if chs:
            order = sorted(chs, key=lambda c: len(best_set[c]), reverse=True)
            s = dict(best_set[order[0]])
            for c in order[1:]:
                s.update(best_set[c])
            if nd.cls in s:
                continue  # would need its own class: a cycle
        else:
            s = {}
        total = sum(s.values()) + nd.cost
        if total < best_total[nd.cls] and not (free and nd.cls in free):
            s[nd.cls] = nd.cost
            best_total[nd.cls] = total
            best_node[nd.cls] = i
            best_set[nd.cls] = s
            _enqueue(parents[nd.cls], queued, queue)
    return best_node


def tree_greedy(fz: Frozen) -> list[int | None]:
    """Best node per e-class by *tree* cost (shared subterms counted per use): linear-ish,
    used on large e-graphs where the set-based DAG greedy gets slow; the local search in
    ``improve`` then restores sharing where it pays."""
    n = fz.n_classes
    nodes = fz.nodes
    best = [None] * n
    best_node: list[int | None] = [None] * n
    parents, queue, queued = _bottom_up(nodes, n)
    steps, limit = 0, 20 * max(1, len(nodes))
    while queue and steps < limit:
        steps += 1
        i = queue.popleft()
        queued.discard(i)
        nd = nodes[i]
        total = nd.cost
        for c in set(nd.children):
            b = best[c]
            if b is None:
                break
            total += b
        else:
            cur = best[nd.cls]
            if cur is None or total < cur:
                best[nd.cls] = total
                best_node[nd.cls] = i
                _enqueue(parents[nd.cls], queued, queue)
    return best_node


def dag_cost(fz: Frozen, choice: list[int | None], roots: list[int], bound: float | None = None
             ) -> tuple[int, list[int]] | None:
    """Total cost of the program chosen by ``choice`` for ``roots`` and its classes in
    dependency order; None if a root is unextractable or the choice cycles.

    Each class is paid once (a DAG), plus the memory traffic of XLA's fusions as they follow
    from the chosen program (``_fusion_cost``)."""
    order: list[int] = []
    state: dict[int, int] = {}  # 1 = on stack, 2 = done
    total = 0
    node_cost, node_children = fz.node_cost, fz.node_children
    get = state.get
    for r in roots:
        stack = [(r, False)]
        pop, push = stack.pop, stack.append
        while stack:
            c, post = pop()
            if post:
                state[c] = 2
                order.append(c)
                continue
            st = get(c)
            if st == 2:
                continue
            if st == 1:
                return None  # cycle
            i = choice[c]
            if i is None:
                return None
            state[c] = 1
            push((c, True))
            total += node_cost[i]
            for ch in node_children[i]:
                s2 = get(ch)
                if s2 == 1:
                    return None
                if s2 is None:
                    push((ch, False))
    if bound is not None and total > bound:
        # already worse: fusion traffic only adds (but for a folded transpose(dot), whose
        # discount this bound ignores: the swapped dot, costed the same, is in the graph)
        return total, order
    if fz.mat_cost:
        total += _fusion_cost(fz, choice, order, roots)
    return total, order


def _fusion_cost(fz: Frozen, choice, order: list[int], roots: list[int]) -> int:
    """Memory traffic implied by the chosen DAG once XLA fuses it.

    Fusible ops (elementwise and data movement) join the fusion of their consumer when
    they have exactly one consumer; a fusible result with several consumers, an output of
    the segment or a dot operand is materialized: written once, and read by every fusion
    that consumes it. Every fusion reads its external inputs (leaves, materialized
    results, dot/reduce results) once; through a slice it reads only what the slice keeps.
    Reductions (and full-contraction dots, which XLA CPU runs as a multiply-reduce) fuse
    their elementwise producers but copy slices and transposes into temporaries first.
    A dot's own operand and result traffic is in its node cost; a matrix transpose of a
    dot's result that nothing else reads is folded into the dot, as XLA does."""
    mat = fz.mat_cost
    nodes = fz.nodes
    numel = fz.numel
    fullc = fz.full_contraction
    mtrans = fz.matrix_transpose
    kid_sets = fz.kid_sets
    ctor, kids, size, dot_user = {}, {}, {}, {}
    users: dict[int, list[int]] = {}
    for c in order:
        i = choice[c]
        k = ctor[c] = nodes[i].ctor
        ks = kids[c] = kid_sets[i]
        size[c] = numel[i]
        dot_user[c] = k == "Dot" and not fullc[i]
        for ch in ks:
            us = users.get(ch)
            if us is None:
                users[ch] = [c]
            else:
                us.append(c)
    root_set = set(roots)
    extra = 0
    # transpose(A'B') of a matrix product read only there: XLA's algebraic simplifier emits the
    # swapped dot B'^T A'^T, which writes the transposed result (an LSTM gradient's weight
    # gradients in its HLO): the transpose costs nothing, and the dot pays the transposed-
    # operand penalties of the swapped form (below) instead of its own
    folded: set[int] = set()  # such transposes
    out_folded: set[int] = set()  # their dots
    if fz.dot_mm:
        const: dict[int, bool] = {}  # constants, and data movement of constants only
        for c in order:
            k = ctor[c]
            const[c] = k in NEVER_MATERIALIZED or k == "Dense" or (
                k in FUSIBLE and bool(kids[c]) and all(const[ch] for ch in kids[c]))
        for c in order:
            i = choice[c]
            if not mtrans[i]:
                continue
            d = fz.node_children[i][0]
            # through single-use elementwise ops of the product and constants (a scaled
            # gradient): the transpose moves onto the product (the patterns pass does that)
            via = False
            while ctor[d] in ("Un", "Bin") and d not in root_set and len(users.get(d, ())) == 1:
                rest = [k for k in fz.node_children[choice[d]] if not const[k]]
                if len(rest) != 1:
                    break
                d, via = rest[0], True
            if choice[d] not in fz.dot_mm or d in root_set or len(users.get(d, ())) != 1:
                continue
            folded.add(c)
            out_folded.add(d)
            extra -= fz.node_cost[i]
            if not via:
                ctor[c] = "Dot"  # materialized like a dot's result: its consumers read it
    mat_flag: dict[int, bool] = {}
    for c in order:
        k = ctor[c]
        if k in NEVER_MATERIALIZED:
            m = False
        elif k not in FUSIBLE:
            m = True  # leaves, constants, dots, reductions
        elif k in DUPLICATED:
            m = c in root_set
        else:
            us = users.get(c, ())
            m = c in root_set or len(us) != 1 or dot_user[us[0]]
        mat_flag[c] = m

    if fz.lhs_t or fz.rhs_t:
        # XLA folds a matrix transpose feeding a dot into the dot's dimension numbers (the
        # operand's contracting dim flips: dot(transpose(a), b) contracts a's leading dim) and
        # a folded result transpose swaps the operands: the dot pays the penalties the Dot cost
        # rule charges the dot XLA runs (measured: "transpose then A @ B" runs exactly as fast
        # as A^T @ B, up to 2.4x slower than A @ B), not those of the dot as written
        lhs_t, rhs_t = fz.lhs_t, fz.rhs_t
        for f in order:
            if ctor[f] != "Dot" or f in folded:
                continue
            i = choice[f]
            if fullc[i]:
                continue
            kids_f = fz.node_children[i]
            mm = fz.dot_mm.get(i)
            if mm is None:
                for pos, pen in ((0, lhs_t), (1, rhs_t)):
                    ch = kids_f[pos] if pos < len(kids_f) else None
                    if pen and ch is not None and mtrans[choice[ch]] and ch not in folded:
                        extra += pen * size[ch]
                continue
            a, b = kids_f
            ta = mtrans[choice[a]] and a not in folded
            tb = mtrans[choice[b]] and b not in folded
            if not (ta or tb or f in out_folded):
                continue
            lc0, rc0 = mm
            la = 1 - lc0 if ta else lc0
            lb = 1 - rc0 if tb else rc0
            na, nb = size[a], size[b]
            pen = {"lhs_t": lhs_t, "rhs_t": rhs_t}
            if f in out_folded:  # B'^T A'^T
                runs = dot_penalty(pen, nb, lb, na, la)
            else:
                runs = dot_penalty(pen, na, la, nb, lb)
            extra += runs - dot_penalty(pen, na, lc0, nb, rc0)
    for f in order:
        k = ctor[f]
        reduce_like = k == "Reduce" or (k == "Dot" and fullc[choice[f]])
        fusible_root = k in FUSIBLE and mat_flag[f]
        if not (fusible_root or reduce_like):
            continue
        if fusible_root:
            us = users.get(f, ())
            if f in root_set or not us or not all(dot_user[u] for u in us):
                extra += mat * size[f]  # the write
        elif k == "Dot":  # a full contraction: its multiply is elementwise work in the reduction
            extra += fz.red_ew * size[fz.node_children[choice[f]][0]]
        seen: set[int] = set()
        reads: dict[int, int] = {}
        absorbed: list[int] = []
        stack = [(ch, f) for ch in kids[f]]
        while stack:
            y, p = stack.pop()
            if y in seen:
                continue
            seen.add(y)
            ky = ctor[y]
            if ky in NEVER_MATERIALIZED:
                continue
            if mat_flag[y]:
                if not reduce_like and ky == "Reduce" and _single_consumer(y, users, ctor, root_set):
                    # XLA CPU pulls a reduction read by nothing else into its elementwise
                    # consumer's fusion (x - max(x) in a softmax: one kernel reads x once for both)
                    absorbed.append(fz.node_children[choice[y]][0])
                    continue
                r = reads[y] = mat * (size[p] if ctor[p] == "Slice" else size[y])
                extra += r
                continue
            if reduce_like:
                if ky in REDUCE_COPIED and y not in folded:
                    extra += 2 * mat * size[y]  # copied into a temporary first
                elif ky in ELEMENTWISE:
                    extra += fz.red_ew * size[y]
            for ch in kids[y]:
                stack.append((ch, y))
        for x in set(absorbed):
            extra -= reads.get(x, 0)
    return extra


class _FusionState:
    """The fusion traffic of the current program kept per fusion (the traffic each
    materialized or reduce-like class pays, and each dot's transposed-operand penalty), so
    that the local search can price a one-class switch by recomputing only the fusions the
    switch can touch instead of the whole program.

    It is the local part of ``_fusion_cost``: without what XLA does across fusions (a
    transpose of a dot folded into the swapped dot, a reduction pulled into its consumer's
    fusion, the surcharge of elementwise work inside reductions), which a one-class switch
    can change far from the class. So it only ranks candidates: ``improve`` keeps a switch
    when ``dag_cost``, with the whole model, agrees."""

    def __init__(self, fz: Frozen, choice, order: list[int], roots: list[int]):
        self.fz = fz
        self.root_set = set(roots)
        self.in_dag = set(order)
        kid_sets = fz.kid_sets
        users: dict[int, list[int]] = {}
        for c in order:
            for ch in kid_sets[choice[c]]:
                us = users.get(ch)
                if us is None:
                    users[ch] = [c]
                else:
                    us.append(c)
        self.users = users
        self.mat = {c: self._mat(choice[c], c, users.get(c, ()), choice) for c in order}
        self.term = {}
        self.pen = {}
        total = 0
        for f in order:
            t = self._term(f, choice, users, self.mat)
            if t:
                self.term[f] = t
                total += t
            p = self._pen(f, choice)
            if p:
                self.pen[f] = p
                total += p
        self.total = total

    def _mat(self, i: int, c: int, us, choice) -> bool:
        # as ``mat_flag`` in ``_fusion_cost``
        k = self.fz.node_ctor[i]
        if k in NEVER_MATERIALIZED:
            return False
        if k not in FUSIBLE:
            return True
        if k in DUPLICATED:
            return c in self.root_set
        return c in self.root_set or len(us) != 1 or self.fz.dot_user[choice[us[0]]]

    def _pen(self, f: int, choice) -> int:
        fz = self.fz
        i = choice[f]
        if not (fz.lhs_t or fz.rhs_t) or not fz.dot_user[i]:
            return 0
        out = 0
        kids_f = fz.node_children[i]
        for pos, pen in ((0, fz.lhs_t), (1, fz.rhs_t)):
            ch = kids_f[pos] if pos < len(kids_f) else None
            if pen and ch is not None and fz.matrix_transpose[choice[ch]]:
                out += pen * fz.numel[choice[ch]]
        return out

    def _term(self, f: int, choice, users, mat) -> int:
        # the second loop of ``_fusion_cost`` for one class (same traversal order, so a slice
        # met first through another parent is priced alike)
        fz = self.fz
        ctor, numel = fz.node_ctor, fz.numel
        i = choice[f]
        k = ctor[i]
        reduce_like = k == "Reduce" or (k == "Dot" and fz.full_contraction[i])
        fusible_root = k in FUSIBLE and mat[f]
        if not (fusible_root or reduce_like):
            return 0
        m = fz.mat_cost
        extra = 0
        if fusible_root:
            us = users.get(f, ())
            if f in self.root_set or not us or not all(fz.dot_user[choice[u]] for u in us):
                extra += m * numel[i]
        kid_sets = fz.kid_sets
        seen: set[int] = set()
        stack = [(ch, f) for ch in kid_sets[i]]
        while stack:
            y, p = stack.pop()
            if y in seen:
                continue
            seen.add(y)
            iy = choice[y]
            ky = ctor[iy]
            if ky in NEVER_MATERIALIZED:
                continue
            if mat[y]:
                extra += m * (numel[choice[p]] if ctor[choice[p]] == "Slice" else numel[iy])
                continue
            if reduce_like and ky in REDUCE_COPIED:
                extra += 2 * m * numel[iy]
            for ch in kid_sets[iy]:
                stack.append((ch, y))
        return extra

    def after_switch(self, choice, c: int, old: int, added: list[int], removed: list[int]) -> int:
        """The fusion traffic once class ``c`` switched from node ``old`` to ``choice[c]`` (already
        set), with the classes ``added`` to and ``removed`` from the DAG (``_base_after_switch``).
        Only fusions whose region (the classes their traversal visits) holds a class whose node,
        users or materialization changed are recomputed."""
        fz = self.fz
        kid_sets = fz.kid_sets
        alt = choice[c]
        gone = set(removed)
        added_set = set(added)
        # classes whose users change: the kids of c's old and new node, of added and removed classes
        touched = set(kid_sets[old]) | kid_sets[alt]
        for x in added:
            touched |= kid_sets[choice[x]]
        for x in gone:
            touched |= kid_sets[choice[x]]
        alt_k = kid_sets[alt]
        users = dict(self.users)
        for x in touched:
            us = [u for u in self.users.get(x, ()) if u not in gone and (u != c or x in alt_k)]
            if x in alt_k and c not in us:
                us.append(c)
            for a in added:
                if x in kid_sets[choice[a]]:
                    us.append(a)
            users[x] = us
        mat = dict(self.mat)
        changed = [c]  # classes whose attributes change for the fusions that reach them
        for x in touched.union(added, (c,)):
            if x in gone:
                continue
            mx = self._mat(choice[x], x, users.get(x, ()), choice)
            if self.mat.get(x) != mx:
                changed.append(x)
            mat[x] = mx
        aff = touched | gone
        aff.update(added)
        aff.add(c)
        # fusions that can reach a changed class: walk up through classes a fusion's
        # traversal passes through (fusible, not materialized) before or after the switch
        ctor = fz.node_ctor
        stack, up = changed, set(changed)
        while stack:
            y = stack.pop()
            for us in (self.users.get(y, ()), users.get(y, ())):
                for u in us:
                    aff.add(u)
                    if u in up:
                        continue
                    i_old = old if u == c else choice[u]
                    through_old = u in self.in_dag and ctor[i_old] not in NEVER_MATERIALIZED and not self.mat[u]
                    through_new = (u not in gone and (u in self.in_dag or u in added_set)
                                   and ctor[choice[u]] not in NEVER_MATERIALIZED and not mat[u])
                    if through_old or through_new:
                        up.add(u)
                        stack.append(u)
        total = self.total
        term, pen = self.term, self.pen
        dots = set(self.users.get(c, ())) | set(users.get(c, ())) | aff
        for f in aff:
            total -= term.get(f, 0)
            if f not in gone and (f in self.in_dag or f in added_set):
                total += self._term(f, choice, users, mat)
        for f in dots:
            total -= pen.get(f, 0)
            if f not in gone and (f in self.in_dag or f in added_set):
                total += self._pen(f, choice)
        return total


def _single_consumer(c: int, users: dict, ctor: dict, root_set: set) -> bool:
    """Whether class ``c`` (not an output) is read by one consumer, through single-use broadcasts
    and reshapes."""
    while True:
        us = users.get(c, ())
        if c in root_set or len(us) != 1:
            return False
        c = us[0]
        if ctor[c] not in DUPLICATED:
            return True


def original_choice(fz0: Frozen, choice0, order0: list[int], fz: Frozen, choice) -> list | None:
    """``choice`` with every class of the original program (``fz0``, frozen before any
    rewrite; ``order0`` its classes in dependency order) set to its original node in the
    saturated graph ``fz``: a starting point for the local search that is never worse
    than the input program. Where rewriting merged original classes (``x + 0`` with ``x``)
    the first (innermost) original node wins, which keeps the choice acyclic."""
    from .lang import CTORS

    slot_of0: dict[int, int] = {}
    for slot, c0 in fz0.slot_class.items():
        slot_of0.setdefault(c0, slot)
    index: dict = {}
    for i, nd in enumerate(fz.nodes):
        data = tuple(v for v, srt in zip(nd.inputs, CTORS[nd.ctor]) if srt != "Op")
        index[(nd.ctor, data, nd.children)] = i
    out = list(choice)
    assigned: set[int] = set()
    for c0 in order0:
        i0 = choice0[c0]
        if i0 is None or c0 not in slot_of0:
            continue
        n0 = fz0.nodes[i0]
        try:
            c = fz.slot_class[slot_of0[c0]]
            kids = tuple(fz.slot_class[slot_of0[ch]] for ch in n0.children)
        except KeyError:
            return None
        data = tuple(v for v, srt in zip(n0.inputs, CTORS[n0.ctor]) if srt != "Op")
        if c in assigned:
            continue
        i = index.get((n0.ctor, data, kids))
        if i is None:
            return None
        out[c] = i
        assigned.add(c)
    return out


def _references(fz: Frozen, choice, order: list[int], roots: list[int]) -> dict[int, int]:
    """For each class of the chosen DAG: how many chosen nodes (and roots) refer to it."""
    refs = dict.fromkeys(order, 0)
    for r in roots:
        refs[r] += 1
    kids = fz.node_children
    for c in order:
        for ch in kids[choice[c]]:
            refs[ch] += 1
    return refs


def _base_after_switch(fz: Frozen, choice, refs: dict[int, int], pos: dict[int, int], base: int, c: int,
                       alt: int) -> tuple[int, list[int], list[int]] | None:
    """The DAG's node-cost total (``dag_cost`` before fusion traffic) once class ``c`` switches
    to node ``alt``, computed from the references alone: what ``alt`` newly needs is added,
    what only the old node needed is dropped. Returns (that total, the classes added to the
    DAG, the classes dropped from it); None when the switch makes a cycle (``alt`` needs
    ``c``) or a new class has no choice, exactly where ``dag_cost`` would give None.

    Cycles are found from the current DAG's post-order ``pos``: a class can only reach ``c``
    through classes that come after ``c`` in it (ancestors of ``c``), so the search stays in
    that region."""
    node_cost, kids = fz.node_cost, fz.node_children
    pc = pos[c]
    old = choice[c]
    total = base + node_cost[alt] - node_cost[old]
    gained: dict[int, int] = {}
    checked: set[int] = set()  # DAG classes known not to reach c
    added: list[int] = []
    removed: list[int] = []
    stack = list(kids[alt])
    while stack:
        ch = stack.pop()
        if ch == c:
            return None
        in_dag = ch in refs
        seen = in_dag or ch in gained
        gained[ch] = gained.get(ch, 0) + 1
        if in_dag:
            if pos[ch] > pc and ch not in checked and _reaches(fz, choice, pos, ch, c, pc, checked):
                return None
            continue
        if seen:
            continue
        i = choice[ch]
        if i is None:
            return None
        added.append(ch)
        total += node_cost[i]
        stack.extend(kids[i])
    stack = list(kids[old])
    while stack:
        ch = stack.pop()
        gained[ch] = gained.get(ch, 0) - 1
        if ch in refs and refs[ch] + gained[ch] == 0:  # nothing refers to it any more
            removed.append(ch)
            total -= node_cost[choice[ch]]
            stack.extend(kids[choice[ch]])
    return total, added, removed


def _reaches(fz: Frozen, choice, pos: dict[int, int], start: int, target: int, pt: int, checked: set[int]) -> bool:
    """Whether DAG class ``start`` reaches ``target`` (post-order position ``pt``) in the
    current choice; classes found not to reach it are added to ``checked``."""
    kids = fz.node_children
    stack, visited = [start], []
    while stack:
        x = stack.pop()
        if x == target:
            return True
        if x in checked or pos.get(x, -1) <= pt:
            continue
        checked.add(x)
        visited.append(x)
        stack.extend(kids[choice[x]])
    return False


def improve(fz: Frozen, choice: list[int | None], roots: list[int], *, max_steps: int = 5_000,
            neutral_moves: int = 24) -> tuple[int, list[int]] | None:
    """Local search on the extracted DAG: switch one class of the current program to another
    of its nodes when that lowers the total DAG cost (``choice`` is updated in place).
    A limited number of cost-neutral switches (never undone right away) lets it cross
    plateaus where two roots can only share a subterm after both switch to it. Sweeps the
    program's classes round-robin until a full sweep changes nothing, or after ``max_steps``
    cost evaluations (a work budget: the result does not depend on the machine's speed)."""
    cur = dag_cost(fz, choice, roots)
    if cur is None:
        return None
    node_cost = fz.node_cost
    refs = _references(fz, choice, cur[1], roots)
    pos = {c: k for k, c in enumerate(cur[1])}
    base = sum(node_cost[choice[c]] for c in cur[1])
    # candidate switches are ranked incrementally, by the local model (the DAG walk and the
    # fusion traffic of the whole program per candidate dominated O2 on 10^3-op gradients);
    # one it finds better is re-costed in full and kept only if the whole model agrees
    fus = _FusionState(fz, choice, cur[1], roots) if fz.mat_cost else None
    est = base + (fus.total if fus is not None else 0)  # the current program by the local model
    by_class = fz.nodes_by_class()
    steps = 0
    tabu: set = set()
    since_move = 0  # classes examined since the last accepted move
    k = 0
    while steps < max_steps:
        classes = cur[1]
        if since_move >= len(classes):
            break
        c = classes[k % len(classes)]
        k += 1
        since_move += 1
        old = choice[c]
        sig_old = fz.signature(old)
        for alt in by_class.get(c, ()):
            if alt == old or any(choice[ch] is None for ch in fz.nodes[alt].children):
                continue
            if fz.signature(alt) == sig_old:
                continue  # an operand-swapped twin (commutativity): same cost, same DAG
            steps += 1
            # a switch whose node costs alone exceed the current total cannot win (fusion
            # traffic only adds): rejected from the references, without walking the DAG
            sw = _base_after_switch(fz, choice, refs, pos, base, c, alt)
            if sw is None or sw[0] > cur[0]:
                continue
            inc, added, removed = sw
            choice[c] = alt
            local = inc + (fus.after_switch(choice, c, old, added, removed) if fus is not None else 0)
            if _CHECK and fus is not None:
                r = dag_cost(fz, choice, roots)
                fresh = _FusionState(fz, choice, r[1], roots)
                assert local == inc + fresh.total, (local, inc + fresh.total)
            size = len(cur[1]) + len(added) - len(removed)
            neutral_ok = neutral_moves > 0 and (c, alt) not in tabu and size <= len(cur[1])
            if local < est or (local == est and neutral_ok):
                full = dag_cost(fz, choice, roots) if fus is not None else (local, None)
                if full is not None and (full[0] < cur[0] or (full[0] == cur[0] and neutral_ok)):
                    if full[0] == cur[0]:
                        neutral_moves -= 1
                        tabu.add((c, old))
                    cur = full if full[1] is not None else dag_cost(fz, choice, roots)
                    refs = _references(fz, choice, cur[1], roots)
                    pos = {c2: k2 for k2, c2 in enumerate(cur[1])}
                    base = sum(node_cost[choice[c2]] for c2 in cur[1])
                    if fus is not None:
                        fus = _FusionState(fz, choice, cur[1], roots)
                    est = base + (fus.total if fus is not None else 0)
                    since_move = 0
                    k = 0
                    break
            choice[c] = old
    return cur


# REACTANT_EQSAT_CHECK=1: every incrementally priced switch is re-costed in full and compared
_CHECK = os.environ.get("REACTANT_EQSAT_CHECK", "") not in ("", "0")
