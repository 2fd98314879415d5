"""Family ``gather_scatter``: gathers and scatters whose indices are known (constants, iotas
and integer arithmetic on them, evaluated exactly) become slices, dynamic slices, pads and
dynamic_update_slices; scatters into a splat along the diagonal become a select.

Gather indices are clamped (so any known index gives a known slice); scatter skips
out-of-bounds windows, so scatters are rewritten only when every window is provably in
bounds, and "set" scatters only when the written positions are distinct.
"""

from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as _hlo

from ...ir import build as B
from ...ir.attrs import compare_attrs, i64_array, i64_list, scalar_value
from ...ir.evaluate import evaluate_value
from ...ir.loops import analyze
from ...ir.opinfo import combiner, info
from ...ir.types import element_type_of, np_dtype, num_elements, ranked, shape_of
from ...ir.values import defining_op
from ._registry import pattern, replace
from ._util import int_range

FAMILY = "gather_scatter"
_EVAL_LIMIT = 1 << 22


# -- shared analysis -------------------------------------------------------------------------------

def _index_matrix(indices: ir.Value, ivd: int, n_idx: int, memo=None):
    """(batch_shape, (prod(batch), n_idx) int64 array) of an index tensor, or None."""
    arr = evaluate_value(indices, _EVAL_LIMIT, _memo=memo)
    if arr is None:
        return None
    arr = np.asarray(arr)
    if ivd == arr.ndim:
        arr = arr[..., None]
    else:
        arr = np.moveaxis(arr, ivd, -1)
    if arr.shape[-1] != n_idx:
        return None
    batch = arr.shape[:-1]
    return batch, arr.reshape(-1, n_idx).astype(np.int64)


def _affine_fit(values: np.ndarray, batch: tuple[int, ...]):
    """values: (prod(batch),) ints. Returns (offset, coeffs per batch dim) when
    values[b] == offset + sum_j coeff_j * b_j exactly, else None."""
    if values.size == 0:
        return None
    v = values.reshape(batch) if batch else values.reshape(())
    o = int(v.reshape(-1)[0])
    coeffs = []
    for j, n in enumerate(batch):
        if n > 1:
            idx = [0] * len(batch)
            idx[j] = 1
            coeffs.append(int(v[tuple(idx)]) - o)
        else:
            coeffs.append(0)
    grid = np.full(batch, o, dtype=np.int64)
    for j, (n, c) in enumerate(zip(batch, coeffs)):
        if c:
            sh = [1] * len(batch)
            sh[j] = n
            grid = grid + c * np.arange(n, dtype=np.int64).reshape(sh)
    if not np.array_equal(grid, v):
        return None
    return o, coeffs


def _drives(offsets_coeffs, rank: int, batch):
    """From per-operand-dim affine fits: {operand dim: batch dim} driving it with a positive
    stride, or None when a batch dim drives several dims or a dim several batch dims."""
    drive = {}
    used = set()
    for d in range(rank):
        o, cs = offsets_coeffs[d]
        nz = [j for j, c in enumerate(cs) if c != 0]
        if len(nz) > 1:
            return None
        if nz:
            j = nz[0]
            if cs[j] < 0 or j in used:
                return None
            used.add(j)
            drive[d] = j
    return drive


def _grid_fit(cols, batch):
    """(``_affine_fit`` of each operand dim's index column, their ``_drives``), or None
    when a column is not affine in the batch indices or the drive is ambiguous."""
    fits = []
    for col in cols:
        f = _affine_fit(col, batch)
        if f is None:
            return None
        fits.append(f)
    drive = _drives(fits, len(fits), batch)
    return None if drive is None else (fits, drive)


def _slice_starts(indices, ivd: int, index_dims, rank: int, scalar_t, loc) -> list[ir.Value]:
    """The start operands of a dynamic (update) slice for one index vector: component k of
    ``indices`` (along ``ivd``) for operand dim ``index_dims[k]``, a shared 0 elsewhere."""
    ishape = shape_of(indices)
    comps = []
    for k in range(len(index_dims)):
        if ivd < len(ishape):
            st = [0] * len(ishape)
            e = [1] * len(ishape)
            st[ivd], e[ivd] = k, k + 1
            c = B.slice(indices, st, e, loc=loc)
        else:
            c = indices
        comps.append(B.op1("stablehlo.reshape", [c], scalar_t, loc=loc) if shape_of(c) != () else c)
    zero = None
    starts = []
    for d in range(rank):
        if d in index_dims:
            starts.append(comps[index_dims.index(d)])
        else:
            if zero is None:
                zero = B.full(0, scalar_t, loc=loc)
            starts.append(zero)
    return starts


def _rank0_int(values, elem: ir.Type, loc) -> list[ir.Value]:
    t = ranked([], elem)
    return [B.full(int(v), t, loc=loc) for v in values]


def _block_ops(region: ir.Region):
    blocks = list(region.blocks)
    if len(blocks) != 1:
        return None
    return blocks[0], list(blocks[0].operations)


def _combiner(op) -> str | None:
    """'set' (return update), 'keep' (return current), 'add', or None."""
    r = _block_ops(op.regions[0])
    if r is None:
        return None
    block, ops = r
    if len(block.arguments) != 2:
        return None
    a, b = block.arguments
    ret = ops[-1]
    if len(ret.operands) != 1:
        return None
    v = ret.operands[0]
    if len(ops) == 1:
        if v == b:
            return "set"
        if v == a:
            return "keep"
        return None
    f = combiner(op)  # (one op of both arguments, returned)
    if f is not None and info(f.name).reduce_kind == "add":
        return "add"
    return None


# -- gather ------------------------------------------------------------------------------------------

def _gather_dims(op):
    dn = _hlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
    return (list(dn.offset_dims), list(dn.collapsed_slice_dims), list(dn.operand_batching_dims),
            list(dn.start_indices_batching_dims), list(dn.start_index_map), dn.index_vector_dim)


def _arrange(t: ir.Value, sources: list, result_type: ir.RankedTensorType, loc) -> ir.Value:
    """Turn ``t`` into ``result_type``: ``sources[r]`` is the dim of ``t`` feeding result dim
    r (or None for a broadcast / unit dim); dims of ``t`` feeding nothing have size 1."""
    ts = shape_of(t)
    used = sorted(s for s in sources if s is not None)
    # 1. drop unused (unit) dims
    if len(used) != len(ts):
        t = B.op1("stablehlo.reshape", [t], ranked([ts[d] for d in used], element_type_of(t)), loc=loc)
    pos = {d: k for k, d in enumerate(used)}
    order = [pos[s] for s in sources if s is not None]  # t dims in result order
    # 2. transpose into result order
    if order != sorted(order):
        cur = shape_of(t)
        t = B.op1("stablehlo.transpose", [t], ranked([cur[k] for k in order], element_type_of(t)),
                  {"permutation": i64_array(order)}, loc=loc)
    # 3. broadcast into the result
    dims = [r for r, s in enumerate(sources) if s is not None]
    if shape_of(t) == tuple(result_type.shape):
        return t
    return B.op1("stablehlo.broadcast_in_dim", [t], result_type,
                 {"broadcast_dimensions": i64_array(dims)}, loc=loc)


@pattern("gather_full_slice", FAMILY, "stablehlo.gather", benefit=3)
def gather_full_slice(op, rewriter):
    """gather whose slice is the whole operand -> the operand, broadcast over the batch
    (every start index clamps to 0)."""
    x = op.operands[0]
    offset_dims, collapsed, obatch, _, _, _ = _gather_dims(op)
    sizes = i64_list(op.attributes["slice_sizes"])
    if obatch or tuple(sizes) != shape_of(x):
        return False
    rt = ir.RankedTensorType(op.results[0].type)
    kept = [d for d in range(len(sizes)) if d not in collapsed]
    sources = [None] * len(rt.shape)
    for r, d in zip(offset_dims, kept):
        sources[r] = d
    with rewriter.ip:
        r = _arrange(x, sources, rt, op.location)
    return replace(rewriter, op, r)


@pattern("gather_known_indices_to_slice", FAMILY, "stablehlo.gather", benefit=2)
def gather_known_indices_to_slice(op, rewriter):
    """gather with indices known at compile time (constants, iotas, ...) that pick a regular
    grid -> a (strided) slice of the operand, reshaped / transposed / broadcast into place.
    Covers constant indices (one slice) and ``x[iota]``-style gathers (x itself)."""
    x, indices = op.operands
    offset_dims, collapsed, obatch, _, sim, ivd = _gather_dims(op)
    if obatch:
        return False
    sizes = i64_list(op.attributes["slice_sizes"])
    xs = shape_of(x)
    m = _index_matrix(indices, ivd, len(sim))
    if m is None:
        return False
    batch, mat = m
    rank = len(xs)
    cols = []
    for d in range(rank):
        if d in sim:
            k = sim.index(d)
            cols.append(np.clip(mat[:, k], 0, xs[d] - sizes[d]))
        else:
            cols.append(np.zeros(mat.shape[0], dtype=np.int64))
    g = _grid_fit(cols, batch)
    if g is None:
        return False
    fits, drive = g
    start, limit, strides = [], [], []
    for d in range(rank):
        o, cs = fits[d]
        if d in drive:
            if sizes[d] != 1:
                return False
            j = drive[d]
            c = cs[j]
            start.append(o)
            strides.append(c)
            limit.append(o + c * (batch[j] - 1) + 1)
        else:
            start.append(o)
            strides.append(1)
            limit.append(o + sizes[d])
    rt = ir.RankedTensorType(op.results[0].type)
    rrank = len(rt.shape)
    batch_pos = [r for r in range(rrank) if r not in offset_dims]
    kept = [d for d in range(rank) if d not in collapsed]
    sources = [None] * rrank
    by_batch = {j: d for d, j in drive.items()}
    for j, r in enumerate(batch_pos):
        if j in by_batch:
            sources[r] = by_batch[j]
    for r, d in zip(offset_dims, kept):
        if d not in drive:
            sources[r] = d
    with rewriter.ip:
        t = B.slice(x, start, limit, strides, loc=op.location)
        r = _arrange(t, sources, rt, op.location)
    return replace(rewriter, op, r)


@pattern("gather_single_to_dynamic_slice", FAMILY, "stablehlo.gather", benefit=1)
def gather_single_to_dynamic_slice(op, rewriter):
    """gather of a single window at a runtime index -> dynamic_slice (same clamping)."""
    x, indices = op.operands
    offset_dims, collapsed, obatch, _, sim, ivd = _gather_dims(op)
    if obatch:
        return False
    ishape = shape_of(indices)
    batch = [n for i, n in enumerate(ishape) if i != ivd]
    if int(np.prod(batch, dtype=np.int64)) != 1:
        return False
    if evaluate_value(indices, 16) is not None:
        return False  # gather_known_indices_to_slice
    sizes = i64_list(op.attributes["slice_sizes"])
    et = element_type_of(indices)
    if np_dtype(et) is None:
        return False
    scalar_t = ranked([], et)
    rt = ir.RankedTensorType(op.results[0].type)
    with rewriter.ip:
        starts = _slice_starts(indices, ivd, sim, len(shape_of(x)), scalar_t, op.location)
        ds = B.op1("stablehlo.dynamic_slice", [x] + starts,
                   ranked(sizes, element_type_of(x)), {"slice_sizes": i64_array(sizes)}, loc=op.location)
        r = B.op1("stablehlo.reshape", [ds], rt, loc=op.location) if shape_of(ds) != tuple(rt.shape) else ds
    return replace(rewriter, op, r)


# -- scatter ---------------------------------------------------------------------------------------------

def _scatter_dims(op):
    dn = _hlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    return (list(dn.update_window_dims), list(dn.inserted_window_dims), list(dn.input_batching_dims),
            list(dn.scatter_indices_batching_dims), list(dn.scattered_dims_to_operand_dims),
            dn.index_vector_dim)


def _single_scatter(op):
    """(input, indices, updates) of a one-input scatter, else None."""
    if len(op.operands) != 3 or len(op.results) != 1:
        return None
    return op.operands[0], op.operands[1], op.operands[2]


def _single_set_or_add(op):
    """(combiner kind, input, indices, updates, dimension numbers) of a one-input scatter that
    sets or adds its updates, else None."""
    kind = _combiner(op)
    s = _single_scatter(op) if kind in ("set", "add") else None
    return None if s is None else (kind, *s, _scatter_dims(op))


@pattern("scatter_keep_combiner", FAMILY, "stablehlo.scatter", benefit=3)
def scatter_keep_combiner(op, rewriter):
    """scatter whose update computation returns the current value -> the input."""
    if _combiner(op) != "keep":
        return False
    n = len(op.results)
    return replace(rewriter, op, list(op.operands[:n]))


@pattern("scatter_empty_updates", FAMILY, "stablehlo.scatter", benefit=3)
def scatter_empty_updates(op, rewriter):
    """scatter of zero updates -> the input."""
    n = len(op.results)
    if num_elements(op.operands[-1]) != 0:
        return False
    return replace(rewriter, op, list(op.operands[:n]))


def _scatter_box(op):
    """For a one-input scatter with known indices whose windows tile one in-bounds box (each
    batch dim walks one operand dim with stride 1, distinct positions): (start, box shape,
    sources of the update in operand order). None otherwise."""
    s = _single_scatter(op)
    if s is None:
        return None
    x, indices, upd = s
    uwd, inserted, ibatch, _, sdod, ivd = _scatter_dims(op)
    if ibatch:
        return None
    xs, us = shape_of(x), shape_of(upd)
    m = _index_matrix(indices, ivd, len(sdod))
    if m is None:
        return None
    batch, mat = m
    rank = len(xs)
    scatter_dims = [i for i in range(len(us)) if i not in uwd]
    kept = [d for d in range(rank) if d not in inserted]
    wsize = [1] * rank
    wdim = {}
    for i, d in zip(uwd, kept):
        wsize[d] = us[i]
        wdim[d] = i
    cols = []
    for d in range(rank):
        col = mat[:, sdod.index(d)] if d in sdod else np.zeros(mat.shape[0], dtype=np.int64)
        if col.size and (col.min() < 0 or col.max() + wsize[d] > xs[d]):
            return None
        cols.append(col)
    g = _grid_fit(cols, batch)
    if g is None:
        return None
    fits, drive = g
    driven_batch = set(drive.values())
    if any(n > 1 and j not in driven_batch for j, n in enumerate(batch)):
        return None  # repeated windows
    start, box, sources = [], [], []
    for d in range(rank):
        o, cs = fits[d]
        start.append(o)
        if d in drive:
            j = drive[d]
            if cs[j] != 1 or wsize[d] != 1:
                return None
            box.append(batch[j])
            sources.append(scatter_dims[j])
        else:
            box.append(wsize[d])
            sources.append(wdim.get(d))
    return x, upd, start, box, sources


def _update_box(upd: ir.Value, sources, box, loc) -> ir.Value:
    """The update tensor rearranged to operand order with the box shape."""
    us = shape_of(upd)
    used = sorted(s for s in sources if s is not None)
    u = upd
    if len(used) != len(us):
        u = B.op1("stablehlo.reshape", [u], ranked([us[i] for i in used], element_type_of(upd)), loc=loc)
    pos = {i: k for k, i in enumerate(used)}
    order = [pos[s] for s in sources if s is not None]
    if order != sorted(order):
        cur = shape_of(u)
        u = B.op1("stablehlo.transpose", [u], ranked([cur[k] for k in order], element_type_of(u)),
                  {"permutation": i64_array(order)}, loc=loc)
    if shape_of(u) != tuple(box):
        u = B.op1("stablehlo.reshape", [u], ranked(box, element_type_of(u)), loc=loc)
    return u


def _splat_scalar(x: ir.Value, loc):
    """A rank-0 value x is filled with (broadcast source or a new constant), or None."""
    d = defining_op(x)
    if d is not None and d.operation.name == "stablehlo.broadcast_in_dim" and shape_of(d.operands[0]) == ():
        return d.operands[0]
    if d is not None and d.operation.name == "stablehlo.constant":
        s = scalar_value(x)
        if s is not None:
            return B.full(s, ranked([], element_type_of(x)), loc=loc)
    return None


def _is_splat(x: ir.Value) -> bool:
    d = defining_op(x)
    if d is None:
        return False
    if d.operation.name == "stablehlo.broadcast_in_dim":
        return shape_of(d.operands[0]) == ()
    return d.operation.name == "stablehlo.constant" and scalar_value(x) is not None


@pattern("scatter_box_to_update_slice", FAMILY, "stablehlo.scatter", benefit=2)
def scatter_box_to_update_slice(op, rewriter):
    """scatter (set or add) with known, in-bounds indices covering one box ->
    dynamic_update_slice(x, u) (set) or dynamic_update_slice(x, x[box] + u) (add); into a
    splat x it becomes a pad (of u, or of u + x)."""
    kind = _combiner(op)
    if kind not in ("set", "add"):
        return False
    res = _scatter_box(op)
    if res is None:
        return False
    x, upd, start, box, sources = res
    xs = shape_of(x)
    loc = op.location
    with rewriter.ip:
        u = _update_box(upd, sources, box, loc)
        splat = _is_splat(x)
        if splat:
            s = _splat_scalar(x, loc)
            if kind == "add":
                c = B.op1("stablehlo.broadcast_in_dim", [s], ranked(box, element_type_of(x)),
                          {"broadcast_dimensions": i64_array([])}, loc=loc)
                u = B.op1("stablehlo.add", [c, u], u.type, loc=loc)
            r = B.pad(u, s, start, [n - a - b for n, a, b in zip(xs, start, box)], loc=loc)
        else:
            if kind == "add":
                old = B.slice(x, start, [a + b for a, b in zip(start, box)], loc=loc)
                u = B.op1("stablehlo.add", [old, u], u.type, loc=loc)
            if tuple(box) == xs:
                r = u
            else:
                idx = _rank0_int(start, ir.IntegerType.get_signless(64), loc)
                r = B.op1("stablehlo.dynamic_update_slice", [x, u] + idx, op.results[0].type, loc=loc)
    return replace(rewriter, op, r)


@pattern("scatter_diagonal_to_select", FAMILY, "stablehlo.scatter", benefit=2)
def scatter_diagonal_to_select(op, rewriter):
    """scatter (set or add) of v into a splat c at (i, i) for i < n ->
    select(iota0 == iota1, broadcast(v'), c): elementwise, fusible, and the form the
    diagonal-matrix patterns recognise."""
    s = _single_set_or_add(op)
    if s is None:
        return False
    kind, x, indices, upd, (uwd, inserted, ibatch, _, sdod, ivd) = s
    xs = shape_of(x)
    if ibatch or uwd or len(xs) != 2 or sorted(inserted) != [0, 1] or sorted(sdod) != [0, 1]:
        return False
    if not _is_splat(x) or len(shape_of(upd)) != 1:
        return False
    m = _index_matrix(indices, ivd, 2)
    if m is None:
        return False
    batch, mat = m
    n = mat.shape[0]
    if len(batch) != 1 or n > min(xs) or n == 0:
        return False
    ar = np.arange(n, dtype=np.int64)
    if not (np.array_equal(mat[:, 0], ar) and np.array_equal(mat[:, 1], ar)):
        return False
    loc = op.location
    et = element_type_of(x)
    rt = ir.RankedTensorType(op.results[0].type)
    with rewriter.ip:
        c = _splat_scalar(x, loc)
        v = upd
        if kind == "add":
            cb = B.op1("stablehlo.broadcast_in_dim", [c], ranked([n], et),
                       {"broadcast_dimensions": i64_array([])}, loc=loc)
            v = B.op1("stablehlo.add", [cb, v], v.type, loc=loc)
        if n < xs[0]:
            v = B.pad(v, c, [0], [xs[0] - n], loc=loc)
        vb = B.op1("stablehlo.broadcast_in_dim", [v], rt, {"broadcast_dimensions": i64_array([0])}, loc=loc)
        it = ranked(xs, ir.IntegerType.get_signless(32))
        i0 = B.iota(it, 0, loc=loc)
        i1 = B.iota(it, 1, loc=loc)
        mask = B.op1("stablehlo.compare", [i0, i1], ranked(xs, ir.IntegerType.get_signless(1)),
                     compare_attrs("EQ", "SIGNED"), loc=loc)
        cfull = B.op1("stablehlo.broadcast_in_dim", [c], rt, {"broadcast_dimensions": i64_array([])}, loc=loc)
        r = B.op1("stablehlo.select", [mask, vb, cfull], rt, loc=loc)
    return replace(rewriter, op, r)


def _loop_env(op) -> dict:
    """Bounds of the counters of the loops around ``op`` (``reactant.ir.loops``)."""
    env = {}
    o = op.operation.parent
    child = op.operation
    while o is not None and o.name != "func.func":
        if o.name == "stablehlo.while":
            info = analyze(o.opview)
            if info is not None and child.parent == o and child.block == info.body:
                for k, r in info.ranges.items():
                    env[info.body.arguments[k]] = r
        child = o
        o = o.parent
    return env


@pattern("scatter_single_in_bounds_to_dus", FAMILY, "stablehlo.scatter", benefit=1)
def scatter_single_in_bounds_to_dus(op, rewriter):
    """scatter (set or add) of one window at a runtime index that is provably in bounds
    (value ranges, loop counters included) -> dynamic_update_slice (of x[idx] + u for add)."""
    s = _single_set_or_add(op)
    if s is None:
        return False
    kind, x, indices, upd, (uwd, inserted, ibatch, _, sdod, ivd) = s
    if ibatch:
        return False
    ishape, us, xs = shape_of(indices), shape_of(upd), shape_of(x)
    batch = [n for i, n in enumerate(ishape) if i != ivd]
    if int(np.prod(batch, dtype=np.int64)) != 1:
        return False
    if evaluate_value(indices, 16) is not None:
        return False  # scatter_box_to_update_slice
    et = element_type_of(indices)
    dt = np_dtype(et)
    if dt is None or dt.kind not in "iu":
        return False
    rank = len(xs)
    kept = [d for d in range(rank) if d not in inserted]
    wsize = [1] * rank
    for i, d in zip(uwd, kept):
        wsize[d] = us[i]
    # every index component must be in [0, dim - window]
    env = _loop_env(op)
    rng = int_range(indices, env=env)
    if rng is None:
        return False
    for d in sdod:
        if rng[0] < 0 or rng[1] > xs[d] - wsize[d]:
            return False
    loc = op.location
    scalar_t = ranked([], et)
    with rewriter.ip:
        starts = _slice_starts(indices, ivd, sdod, rank, scalar_t, loc)
        u = B.op1("stablehlo.reshape", [upd], ranked(wsize, element_type_of(upd)), loc=loc) \
            if tuple(wsize) != us else upd
        if kind == "add":
            old = B.op1("stablehlo.dynamic_slice", [x] + starts, u.type,
                        {"slice_sizes": i64_array(wsize)}, loc=loc)
            u = B.op1("stablehlo.add", [old, u], u.type, loc=loc)
        r = B.op1("stablehlo.dynamic_update_slice", [x, u] + starts, op.results[0].type, loc=loc)
    return replace(rewriter, op, r)


@pattern("gather_of_scatter_same_indices", FAMILY, "stablehlo.gather", benefit=2)
def gather_of_scatter_same_indices(op, rewriter):
    """gather(scatter_set(x, idx, u), idx) -> u when both pick single elements at the same
    known, in-bounds and distinct indices (the values just written are read back)."""
    x, indices = op.operands
    sc = defining_op(x)
    if sc is None or sc.operation.name != "stablehlo.scatter" or _combiner(sc) != "set":
        return False
    s = _single_scatter(sc)
    if s is None:
        return False
    _, sidx, upd = s
    offset_dims, collapsed, obatch, _, sim, ivd = _gather_dims(op)
    uwd, inserted, ibatch, _, sdod, sivd = _scatter_dims(sc)
    xs = shape_of(x)
    rank = len(xs)
    sizes = i64_list(op.attributes["slice_sizes"])
    if obatch or ibatch or offset_dims or uwd or sizes != [1] * rank:
        return False
    if sorted(collapsed) != list(range(rank)) or sorted(inserted) != list(range(rank)):
        return False
    g = _index_matrix(indices, ivd, len(sim))
    t = _index_matrix(sidx, sivd, len(sdod))
    if g is None or t is None:
        return False
    gb, gm = g
    tb, tm = t
    if tuple(gb) != shape_of(op.results[0]) or tuple(tb) != shape_of(upd) or gm.shape[0] != tm.shape[0]:
        return False
    gfull = np.zeros((gm.shape[0], rank), dtype=np.int64)
    tfull = np.zeros((tm.shape[0], rank), dtype=np.int64)
    for k, d in enumerate(sim):
        gfull[:, d] = gm[:, k]
    for k, d in enumerate(sdod):
        tfull[:, d] = tm[:, k]
    if (tfull < 0).any() or (tfull >= np.asarray(xs)).any() or not np.array_equal(gfull, tfull):
        return False
    if len({tuple(r) for r in tfull.tolist()}) != tfull.shape[0]:
        return False
    if upd.type != op.results[0].type:
        return False
    return replace(rewriter, op, upd)


@pattern("gather_of_splat", FAMILY, "stablehlo.gather", benefit=3)
def gather_of_splat(op, rewriter):
    """gather from a tensor filled with one value -> that value, broadcast to the result."""
    x = op.operands[0]
    if not _is_splat(x):
        return False
    with rewriter.ip:
        s = _splat_scalar(x, op.location)
        r = B.op1("stablehlo.broadcast_in_dim", [s], op.results[0].type,
                  {"broadcast_dimensions": i64_array([])}, loc=op.location)
    return replace(rewriter, op, r)


@pattern("scatter_same_splat", FAMILY, "stablehlo.scatter", benefit=3)
def scatter_same_splat(op, rewriter):
    """scatter (set) of updates filled with the value the input is filled with -> the input."""
    if _combiner(op) != "set":
        return False
    s = _single_scatter(op)
    if s is None:
        return False
    x, _, upd = s
    if not (_is_splat(x) and _is_splat(upd)):
        return False
    a, b = scalar_value(x), scalar_value(upd)
    if a is None or b is None or repr(a) != repr(b) or element_type_of(x) != element_type_of(upd):
        dx, du = defining_op(x), defining_op(upd)
        same_src = (dx is not None and du is not None and dx.operation.name == du.operation.name
                    == "stablehlo.broadcast_in_dim" and dx.operands[0] == du.operands[0])
        if not same_src:
            return False
    return replace(rewriter, op, x)
