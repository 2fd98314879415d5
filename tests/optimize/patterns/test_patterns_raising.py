"""Before/after and differential-execution tests of the ``raising`` pattern family (loops
whose iterations are independent become tensor operations), one row per batching situation,
and negative rows for loops that must stay loops."""

import pytest

from _harness import check_case, params, rcase

# for r: for q: A[r, q, :] = A[r, q, :] @ C  (as the tracer rolls it: two nested loops)
DOITGEN = """
func.func @main(%arg0: tensor<2x3x4xf64>, %arg1: tensor<4x4xf64>) -> tensor<2x3x4xf64> {
  %c = stablehlo.constant dense<3> : tensor<i32>
  %c_0 = stablehlo.constant dense<3> : tensor<ui32>
  %c_1 = stablehlo.constant dense<2> : tensor<ui32>
  %c_2 = stablehlo.constant dense<1> : tensor<i32>
  %c_3 = stablehlo.constant dense<0> : tensor<i32>
  %c_4 = stablehlo.constant dense<2> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %c_3, %iterArg_5 = %arg0) : tensor<i32>, tensor<2x3x4xf64>
  cond {
    %1 = stablehlo.compare LT, %iterArg, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1:2 = stablehlo.while(%iterArg_6 = %c_3, %iterArg_7 = %iterArg_5) : tensor<i32>, tensor<2x3x4xf64>
    cond {
      %3 = stablehlo.compare LT, %iterArg_6, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %3 = stablehlo.convert %iterArg : (tensor<i32>) -> tensor<ui32>
      %4 = stablehlo.add %3, %c_1 : tensor<ui32>
      %5 = stablehlo.remainder %4, %c_1 : tensor<ui32>
      %6 = stablehlo.convert %iterArg_6 : (tensor<i32>) -> tensor<ui32>
      %7 = stablehlo.add %6, %c_0 : tensor<ui32>
      %8 = stablehlo.remainder %7, %c_0 : tensor<ui32>
      %9 = stablehlo.convert %5 : (tensor<ui32>) -> tensor<i32>
      %10 = stablehlo.convert %8 : (tensor<ui32>) -> tensor<i32>
      %11 = stablehlo.dynamic_slice %iterArg_7, %9, %10, %c_3, sizes = [1, 1, 4] : (tensor<2x3x4xf64>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x4xf64>
      %12 = stablehlo.reshape %11 : (tensor<1x1x4xf64>) -> tensor<1x4xf64>
      %13 = stablehlo.dot_general %12, %arg1, contracting_dims = [1] x [0] : (tensor<1x4xf64>, tensor<4x4xf64>) -> tensor<1x4xf64>
      %14 = stablehlo.reshape %13 : (tensor<1x4xf64>) -> tensor<1x1x4xf64>
      %15 = stablehlo.dynamic_update_slice %iterArg_7, %14, %9, %10, %c_3 : (tensor<2x3x4xf64>, tensor<1x1x4xf64>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x3x4xf64>
      %16 = stablehlo.add %iterArg_6, %c_2 : tensor<i32>
      stablehlo.return %16, %15 : tensor<i32>, tensor<2x3x4xf64>
    }
    %2 = stablehlo.add %iterArg, %c_2 : tensor<i32>
    stablehlo.return %2, %1#1 : tensor<i32>, tensor<2x3x4xf64>
  }
  return %0#1 : tensor<2x3x4xf64>
}
"""


def loop(args: str, result: str, n: int, carried: str, body: str, ret: str, *, lo: int = 0,
         extra: str = "", inits: str = "") -> str:
    """``@main(args) -> result``: a loop ``i = lo .. n - 1`` carrying ``i`` and ``carried``
    (``name = init : type`` items separated by ``;``), then ``ret``. ``body`` computes the
    slot values it returns as ``%next_<name>``; ``%one`` is 1."""
    slots = [s.strip() for s in carried.split(";") if s.strip()]
    names = [s.split("=")[0].strip() for s in slots]
    vals = [s.split("=")[1].split(":")[0].strip() for s in slots]
    types = [s.split(":")[1].strip() for s in slots]
    head = ", ".join(["%i = %lo"] + [f"{a} = {v}" for a, v in zip(names, vals)])
    tys = ", ".join(["tensor<i32>"] + types)
    nexts = ", ".join(["%i1"] + ["%next_" + a[1:] for a in names])
    return f"""
func.func @main({args}) -> {result} {{
  %lo = stablehlo.constant dense<{lo}> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  {inits}
  %w:{len(names) + 1} = stablehlo.while({head}) : {tys}
  cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %zi = stablehlo.constant dense<0> : tensor<i32>
    {body}
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return {nexts} : {tys}
  }}
  {extra}
  return {ret} : {result.strip("()")}
}}"""


ROW_MAP = loop(
    "%x: tensor<6x4xf32>, %m: tensor<4x4xf32>, %o: tensor<6x4xf32>", "tensor<6x4xf32>", 6,
    "%out = %o : tensor<6x4xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 4] : (tensor<6x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    %d = stablehlo.dot_general %r, %m, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
    %t = stablehlo.tanh %d : tensor<1x4xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [1] : (tensor<1x4xf32>, tensor<f32>) -> tensor<1xf32>
    %b = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<1xf32>) -> tensor<1x4xf32>
    %v = stablehlo.add %t, %b : tensor<1x4xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %i, %zi : (tensor<6x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x4xf32>""",
    "%w#1")

# the rows of the carried array itself, read before they are overwritten (in place, row by row)
IN_PLACE = loop(
    "%x: tensor<5x3xf32>", "tensor<5x3xf32>", 5, "%a = %x : tensor<5x3xf32>", """
    %r = stablehlo.dynamic_slice %a, %i, %zi, sizes = [1, 3] : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %e = stablehlo.exponential %r : tensor<1x3xf32>
    %next_a = stablehlo.dynamic_update_slice %a, %e, %i, %zi : (tensor<5x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<5x3xf32>""",
    "%w#1")

# s = s + sum(x[i] * x[i]); m = max(m, x[i]) (scalar and vector accumulators)
ACCUMULATE = loop(
    "%x: tensor<7x3xf32>", "(tensor<f32>, tensor<1x3xf32>)", 7,
    "%s = %s0 : tensor<f32>; %m = %m0 : tensor<1x3xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 3] : (tensor<7x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %q = stablehlo.multiply %r, %r : tensor<1x3xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %t = stablehlo.reduce(%q init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x3xf32>, tensor<f32>) -> tensor<f32>
    %next_s = stablehlo.add %s, %t : tensor<f32>
    %next_m = stablehlo.maximum %r, %m : tensor<1x3xf32>""",
    "%w#1, %w#2", inits="""%s0 = stablehlo.constant dense<1.5> : tensor<f32>
  %m0 = stablehlo.constant dense<-1.0e30> : tensor<1x3xf32>""")

# out[i] = x[i - 1] - 2 x[i] + x[i + 1] for i = 1 .. n-2; the counter's final value is returned
STENCIL = loop(
    "%x: tensor<8xf32>, %o: tensor<8xf32>", "(tensor<8xf32>, tensor<i32>)", 7,
    "%out = %o : tensor<8xf32>", """
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %im = stablehlo.subtract %i, %c1 : tensor<i32>
    %ip = stablehlo.add %c1, %i : tensor<i32>
    %a = stablehlo.dynamic_slice %x, %im, sizes = [1] : (tensor<8xf32>, tensor<i32>) -> tensor<1xf32>
    %b = stablehlo.dynamic_slice %x, %i, sizes = [1] : (tensor<8xf32>, tensor<i32>) -> tensor<1xf32>
    %c = stablehlo.dynamic_slice %x, %ip, sizes = [1] : (tensor<8xf32>, tensor<i32>) -> tensor<1xf32>
    %two = stablehlo.constant dense<2.0> : tensor<1xf32>
    %b2 = stablehlo.multiply %two, %b : tensor<1xf32>
    %s = stablehlo.subtract %a, %b2 : tensor<1xf32>
    %v = stablehlo.add %s, %c : tensor<1xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %i : (tensor<8xf32>, tensor<1xf32>, tensor<i32>) -> tensor<8xf32>""",
    "%w#1, %w#0", lo=1)

# layout ops, select/compare/convert of the counter, iota, pad, concatenate, reverse, slice,
# a column write (dimension 1), an inner dynamic_update_slice
KITCHEN_SINK = loop(
    "%x: tensor<4x6xf32>, %o: tensor<3x6xf32>", "tensor<3x6xf32>", 6,
    "%out = %o : tensor<3x6xf32>", """
    %col = stablehlo.dynamic_slice %x, %zi, %i, sizes = [4, 1] : (tensor<4x6xf32>, tensor<i32>, tensor<i32>) -> tensor<4x1xf32>
    %tr = stablehlo.transpose %col, dims = [1, 0] : (tensor<4x1xf32>) -> tensor<1x4xf32>
    %rv = stablehlo.reverse %tr, dims = [1] : tensor<1x4xf32>
    %sl = stablehlo.slice %rv [0:1, 1:4] : (tensor<1x4xf32>) -> tensor<1x3xf32>
    %fi = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %fb = stablehlo.broadcast_in_dim %fi, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
    %io = stablehlo.iota dim = 1 : tensor<1x3xf32>
    %g = stablehlo.compare GT, %sl, %io : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xi1>
    %se = stablehlo.select %g, %sl, %fb : tensor<1x3xi1>, tensor<1x3xf32>
    %pz = stablehlo.constant dense<0.5> : tensor<f32>
    %pd = stablehlo.pad %se, %pz, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<1x3xf32>, tensor<f32>) -> tensor<1x4xf32>
    %cc = stablehlo.concatenate %pd, %tr, dim = 0 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
    %rs = stablehlo.reshape %cc : (tensor<2x4xf32>) -> tensor<8xf32>
    %head = stablehlo.slice %rs [0:3] : (tensor<8xf32>) -> tensor<3xf32>
    %k = stablehlo.constant dense<1> : tensor<i32>
    %up = stablehlo.slice %rs [4:5] : (tensor<8xf32>) -> tensor<1xf32>
    %hd = stablehlo.dynamic_update_slice %head, %up, %k : (tensor<3xf32>, tensor<1xf32>, tensor<i32>) -> tensor<3xf32>
    %v = stablehlo.reshape %hd : (tensor<3xf32>) -> tensor<3x1xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %zi, %i : (tensor<3x6xf32>, tensor<3x1xf32>, tensor<i32>, tensor<i32>) -> tensor<3x6xf32>""",
    "%w#1")

# dot_general with the batched operand on the right, and with both batched (an outer product
# per row), reading rows of two arrays
DOTS = loop(
    "%x: tensor<5x3xf32>, %y: tensor<5x2xf32>, %m: tensor<4x3xf32>, %o: tensor<5x4x2xf32>",
    "tensor<5x4x2xf32>", 5, "%out = %o : tensor<5x4x2xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 3] : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %q = stablehlo.dynamic_slice %y, %i, %zi, sizes = [1, 2] : (tensor<5x2xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %a = stablehlo.dot_general %m, %r, contracting_dims = [1] x [1] : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x1xf32>
    %o2 = stablehlo.dot_general %a, %q, batching_dims = [1] x [0], contracting_dims = [] x [] : (tensor<4x1xf32>, tensor<1x2xf32>) -> tensor<1x4x2xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %o2, %i, %zi, %zi : (tensor<5x4x2xf32>, tensor<1x4x2xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<5x4x2xf32>""",
    "%w#1")

# two writes per iteration into row r (an unrolled inner loop), the second reading the row
# through a static slice of the first write's result: it sees the first write
CHAINED_WRITES = loop(
    "%x: tensor<4x2x3xf32>", "tensor<4x2x3xf32>", 4, "%a = %x : tensor<4x2x3xf32>", """
    %s0 = stablehlo.slice %a [0:4, 0:1, 0:3] : (tensor<4x2x3xf32>) -> tensor<4x1x3xf32>
    %r0 = stablehlo.dynamic_slice %s0, %i, %zi, %zi, sizes = [1, 1, 3] : (tensor<4x1x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x3xf32>
    %e0 = stablehlo.exponential %r0 : tensor<1x1x3xf32>
    %d0 = stablehlo.dynamic_update_slice %a, %e0, %i, %zi, %zi : (tensor<4x2x3xf32>, tensor<1x1x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x2x3xf32>
    %s1 = stablehlo.slice %d0 [0:4, 0:2, 0:3] : (tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
    %r1 = stablehlo.dynamic_slice %s1, %i, %zi, %zi, sizes = [1, 2, 3] : (tensor<4x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x3xf32>
    %t1 = stablehlo.slice %r1 [0:1, 0:1, 0:3] : (tensor<1x2x3xf32>) -> tensor<1x1x3xf32>
    %u1 = stablehlo.slice %r1 [0:1, 1:2, 0:3] : (tensor<1x2x3xf32>) -> tensor<1x1x3xf32>
    %e1 = stablehlo.add %t1, %u1 : tensor<1x1x3xf32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %next_a = stablehlo.dynamic_update_slice %d0, %e1, %i, %c1, %zi : (tensor<4x2x3xf32>, tensor<1x1x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x2x3xf32>""",
    "%w#1")

# the second write goes to the next row: iteration r + 1 reads what iteration r wrote
CHAINED_NEXT_ROW = loop(
    "%x: tensor<5x3xf32>", "tensor<5x3xf32>", 4, "%a = %x : tensor<5x3xf32>", """
    %r0 = stablehlo.dynamic_slice %a, %i, %zi, sizes = [1, 3] : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %e0 = stablehlo.exponential %r0 : tensor<1x3xf32>
    %d0 = stablehlo.dynamic_update_slice %a, %e0, %i, %zi : (tensor<5x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<5x3xf32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %ip = stablehlo.add %i, %c1 : tensor<i32>
    %next_a = stablehlo.dynamic_update_slice %d0, %r0, %ip, %zi : (tensor<5x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<5x3xf32>""",
    "%w#1")

# y[i] = 0.5 y[i - 1] + x[i]: a recurrence (reads a row another iteration wrote)
RECURRENCE = loop(
    "%x: tensor<6xf32>, %y0: tensor<6xf32>", "tensor<6xf32>", 6, "%y = %y0 : tensor<6xf32>", """
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %im = stablehlo.subtract %i, %c1 : tensor<i32>
    %p = stablehlo.dynamic_slice %y, %im, sizes = [1] : (tensor<6xf32>, tensor<i32>) -> tensor<1xf32>
    %h = stablehlo.constant dense<0.5> : tensor<1xf32>
    %a = stablehlo.multiply %h, %p : tensor<1xf32>
    %b = stablehlo.dynamic_slice %x, %i, sizes = [1] : (tensor<6xf32>, tensor<i32>) -> tensor<1xf32>
    %v = stablehlo.add %a, %b : tensor<1xf32>
    %next_y = stablehlo.dynamic_update_slice %y, %v, %i : (tensor<6xf32>, tensor<1xf32>, tensor<i32>) -> tensor<6xf32>""",
    "%w#1", lo=1)

# the same recurrence with the read of another iteration's row after a batched operand
RECURRENCE_SECOND_OPERAND = loop(
    "%x: tensor<6xf32>, %y0: tensor<6xf32>", "tensor<6xf32>", 6, "%y = %y0 : tensor<6xf32>", """
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %im = stablehlo.subtract %i, %c1 : tensor<i32>
    %b = stablehlo.dynamic_slice %x, %i, sizes = [1] : (tensor<6xf32>, tensor<i32>) -> tensor<1xf32>
    %p = stablehlo.dynamic_slice %y, %im, sizes = [1] : (tensor<6xf32>, tensor<i32>) -> tensor<1xf32>
    %v = stablehlo.add %b, %p : tensor<1xf32>
    %next_y = stablehlo.dynamic_update_slice %y, %v, %i : (tensor<6xf32>, tensor<1xf32>, tensor<i32>) -> tensor<6xf32>""",
    "%w#1", lo=1)

# the accumulator also feeds the rows: a recurrence through the sum
PREFIX_SUM = loop(
    "%x: tensor<6xf32>, %o: tensor<6xf32>", "tensor<6xf32>", 6,
    "%s = %z0 : tensor<1xf32>; %out = %o : tensor<6xf32>", """
    %b = stablehlo.dynamic_slice %x, %i, sizes = [1] : (tensor<6xf32>, tensor<i32>) -> tensor<1xf32>
    %next_s = stablehlo.add %s, %b : tensor<1xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %next_s, %i : (tensor<6xf32>, tensor<1xf32>, tensor<i32>) -> tensor<6xf32>""",
    "%w#2", inits="%z0 = stablehlo.constant dense<0.0> : tensor<1xf32>")

# sorting rows (the comparator region is copied; the sort dimension moves by one)
SORT_ROWS = loop(
    "%x: tensor<4x5xf32>, %o: tensor<4x5xf32>", "tensor<4x5xf32>", 4, "%out = %o : tensor<4x5xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 5] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<1x5xf32>
    %s = "stablehlo.sort"(%r) ({
    ^bb0(%p0: tensor<f32>, %p1: tensor<f32>):
      %lt = stablehlo.compare LT, %p0, %p1 : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }) {dimension = 1 : i64, is_stable = false} : (tensor<1x5xf32>) -> tensor<1x5xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %s, %i, %zi : (tensor<4x5xf32>, tensor<1x5xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>""",
    "%w#1")

# rows i + 1 of a 6-row array for i = 0..5: the last read is clamped (a gather, which clamps too)
CLAMPED = loop(
    "%x: tensor<6xf32>, %o: tensor<6xf32>", "tensor<6xf32>", 6, "%out = %o : tensor<6xf32>", """
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %ip = stablehlo.add %i, %c1 : tensor<i32>
    %b = stablehlo.dynamic_slice %x, %ip, sizes = [1] : (tensor<6xf32>, tensor<i32>) -> tensor<1xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %b, %i : (tensor<6xf32>, tensor<1xf32>, tensor<i32>) -> tensor<6xf32>""",
    "%w#1")

# a gather: row x[j[i]] of an index table (a dynamic_slice at a batched index)
GATHER = loop(
    "%x: tensor<6xf32>, %j: tensor<6xi32>, %o: tensor<6xf32>", "tensor<6xf32>", 6,
    "%out = %o : tensor<6xf32>", """
    %k = stablehlo.dynamic_slice %j, %i, sizes = [1] : (tensor<6xi32>, tensor<i32>) -> tensor<1xi32>
    %ks = stablehlo.reshape %k : (tensor<1xi32>) -> tensor<i32>
    %b = stablehlo.dynamic_slice %x, %ks, sizes = [1] : (tensor<6xf32>, tensor<i32>) -> tensor<1xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %b, %i : (tensor<6xf32>, tensor<1xf32>, tensor<i32>) -> tensor<6xf32>""",
    "%w#1")

# s = s + outer(x[i], x[i]) over 2048 rows: the batched outer products (2048 x 1024 x 1024)
# would be far larger than anything the loop touches, so it stays a loop
HUGE_TEMPORARIES = loop(
    "%x: tensor<2048x1024xf32>, %s0: tensor<1024x1024xf32>", "tensor<1024x1024xf32>", 2048,
    "%s = %s0 : tensor<1024x1024xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 1024] : (tensor<2048x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1024xf32>
    %o = stablehlo.dot_general %r, %r, contracting_dims = [0] x [0] : (tensor<1x1024xf32>, tensor<1x1024xf32>) -> tensor<1024x1024xf32>
    %next_s = stablehlo.add %s, %o : tensor<1024x1024xf32>""",
    "%w#1")

# reduce_window (a cumulative sum per row): a window of one along the new dimension
REDUCE_WINDOW = loop(
    "%x: tensor<4x5xf32>, %o: tensor<4x5xf32>", "tensor<4x5xf32>", 4, "%out = %o : tensor<4x5xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 5] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<1x5xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %c = "stablehlo.reduce_window"(%r, %z) <{padding = dense<[[0, 0], [4, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 5>}> ({
    ^bb0(%p0: tensor<f32>, %p1: tensor<f32>):
      %s = stablehlo.add %p0, %p1 : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<1x5xf32>, tensor<f32>) -> tensor<1x5xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %c, %i, %zi : (tensor<4x5xf32>, tensor<1x5xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>""",
    "%w#1")

# an if on a value of the row: both branches computed, the results selected
IF_ROWS = loop(
    "%x: tensor<4x5xf32>, %o: tensor<4x5xf32>", "tensor<4x5xf32>", 4, "%out = %o : tensor<4x5xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 5] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<1x5xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x5xf32>, tensor<f32>) -> tensor<f32>
    %p = stablehlo.compare GT, %s, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c = "stablehlo.if"(%p) ({
      stablehlo.return %r : tensor<1x5xf32>
    }, {
      %n = stablehlo.negate %r : tensor<1x5xf32>
      stablehlo.return %n : tensor<1x5xf32>
    }) : (tensor<i1>) -> tensor<1x5xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %c, %i, %zi : (tensor<4x5xf32>, tensor<1x5xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>""",
    "%w#1")

# bitcast_convert has no batching rule: the loop stays
NO_RULE = loop(
    "%x: tensor<4x5xf32>, %o: tensor<4x5xi32>", "tensor<4x5xi32>", 4, "%out = %o : tensor<4x5xi32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 5] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<1x5xf32>
    %c = stablehlo.bitcast_convert %r : (tensor<1x5xf32>) -> tensor<1x5xi32>
    %next_out = stablehlo.dynamic_update_slice %out, %c, %i, %zi : (tensor<4x5xi32>, tensor<1x5xi32>, tensor<i32>, tensor<i32>) -> tensor<4x5xi32>""",
    "%w#1")

# sums of sliding windows x[i : i + 3] (one range of rows per window position), and an FFT
WINDOWS = loop(
    "%x: tensor<9xf32>, %o: tensor<7xcomplex<f32>>", "tensor<7xcomplex<f32>>", 7,
    "%out = %o : tensor<7xcomplex<f32>>", """
    %win = stablehlo.dynamic_slice %x, %i, sizes = [3] : (tensor<9xf32>, tensor<i32>) -> tensor<3xf32>
    %zr = stablehlo.constant dense<0.0> : tensor<3xf32>
    %cw = stablehlo.complex %win, %zr : tensor<3xcomplex<f32>>
    %f = stablehlo.fft %cw, type = FFT, length = [3] : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
    %f1 = stablehlo.slice %f [1:2] : (tensor<3xcomplex<f32>>) -> tensor<1xcomplex<f32>>
    %next_out = stablehlo.dynamic_update_slice %out, %f1, %i : (tensor<7xcomplex<f32>>, tensor<1xcomplex<f32>>, tensor<i32>) -> tensor<7xcomplex<f32>>""",
    "%w#1")

# out[i, :] = exp(x[i, :]) * s + i: a per-iteration scalar broadcast along a wide row
WIDE_ROW_SCALAR = """
func.func @main(%x: tensor<16x3xf32>, %s: tensor<f32>) -> tensor<16x3xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<16x3xf32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %z) : tensor<i32>, tensor<16x3xf32>
  cond {
    %n = stablehlo.constant dense<16> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %r = stablehlo.dynamic_slice %x, %i, %zero, sizes = [1, 3] : (tensor<16x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %q = stablehlo.reshape %r : (tensor<1x3xf32>) -> tensor<3xf32>
    %e = stablehlo.exponential %q : tensor<3xf32>
    %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %m = stablehlo.multiply %e, %b : tensor<3xf32>
    %if = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
    %ib = stablehlo.broadcast_in_dim %if, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %w = stablehlo.add %m, %ib : tensor<3xf32>
    %w2 = stablehlo.reshape %w : (tensor<3xf32>) -> tensor<1x3xf32>
    %u = stablehlo.dynamic_update_slice %acc, %w2, %i, %zero : (tensor<16x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<16x3xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %u : tensor<i32>, tensor<16x3xf32>
  }
  return %0#1 : tensor<16x3xf32>
}"""

# out[15 - i] = x[15 - i] / s + (15 - i), ids[15 - i] = 15 - i: rows written in reverse order
REVERSED_ROWS = """
func.func @main(%x: tensor<16xf32>, %s: tensor<f32>) -> (tensor<16xf32>, tensor<16x1xi32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<16xf32>
  %zi = stablehlo.constant dense<0> : tensor<16x1xi32>
  %0:3 = stablehlo.while(%i = %c0, %acc = %z, %ids = %zi) : tensor<i32>, tensor<16xf32>, tensor<16x1xi32>
  cond {
    %n = stablehlo.constant dense<16> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n15 = stablehlo.constant dense<15> : tensor<i32>
    %j = stablehlo.subtract %n15, %i : tensor<i32>
    %r = stablehlo.dynamic_slice %x, %j, sizes = [1] : (tensor<16xf32>, tensor<i32>) -> tensor<1xf32>
    %q = stablehlo.reshape %r : (tensor<1xf32>) -> tensor<f32>
    %e = stablehlo.divide %q, %s : tensor<f32>
    %jf = stablehlo.convert %j : (tensor<i32>) -> tensor<f32>
    %w = stablehlo.add %e, %jf : tensor<f32>
    %w2 = stablehlo.reshape %w : (tensor<f32>) -> tensor<1xf32>
    %u = stablehlo.dynamic_update_slice %acc, %w2, %j : (tensor<16xf32>, tensor<1xf32>, tensor<i32>) -> tensor<16xf32>
    %jj = stablehlo.reshape %j : (tensor<i32>) -> tensor<1x1xi32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %v = stablehlo.dynamic_update_slice %ids, %jj, %j, %zero : (tensor<16x1xi32>, tensor<1x1xi32>, tensor<i32>, tensor<i32>) -> tensor<16x1xi32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %u, %v : tensor<i32>, tensor<16xf32>, tensor<16x1xi32>
  }
  return %0#1, %0#2 : tensor<16xf32>, tensor<16x1xi32>
}"""

# acc += s * x[11 - i] (broadcast) - onehot(11 - i, tanh(x[11 - i])): a float sum of broadcast
# scalars and of rows written into zeros (fast-math: summed in another order)
ONE_HOT_SUM = """
func.func @main(%x: tensor<12xf32>, %s: tensor<f32>) -> tensor<12xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<12xf32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<12xf32>
  cond {
    %n = stablehlo.constant dense<12> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %n11 = stablehlo.constant dense<11> : tensor<i32>
    %j = stablehlo.subtract %n11, %i : tensor<i32>
    %r = stablehlo.dynamic_slice %x, %j, sizes = [1] : (tensor<12xf32>, tensor<i32>) -> tensor<1xf32>
    %q = stablehlo.reshape %r : (tensor<1xf32>) -> tensor<f32>
    %e = stablehlo.multiply %q, %s : tensor<f32>
    %b = stablehlo.broadcast_in_dim %e, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %w = stablehlo.tanh %q : tensor<f32>
    %w1 = stablehlo.reshape %w : (tensor<f32>) -> tensor<1xf32>
    %zeros = stablehlo.constant dense<0.0> : tensor<12xf32>
    %oh = stablehlo.dynamic_update_slice %zeros, %w1, %j : (tensor<12xf32>, tensor<1xf32>, tensor<i32>) -> tensor<12xf32>
    %a1 = stablehlo.add %acc, %b : tensor<12xf32>
    %a2 = stablehlo.subtract %a1, %oh : tensor<12xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %a2 : tensor<i32>, tensor<12xf32>
  }
  return %0#1 : tensor<12xf32>
}"""

# acc += y * x[i] (broadcast): the invariant factor out of the sum (fast-math)
SCALED_SUM = """
func.func @main(%x: tensor<12xf32>, %y: tensor<12xf32>) -> tensor<12xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<12xf32>
  cond {
    %n = stablehlo.constant dense<12> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %r = stablehlo.dynamic_slice %x, %i, sizes = [1] : (tensor<12xf32>, tensor<i32>) -> tensor<1xf32>
    %q = stablehlo.reshape %r : (tensor<1xf32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %q, dims = [] : (tensor<f32>) -> tensor<12xf32>
    %m = stablehlo.multiply %y, %b : tensor<12xf32>
    %a1 = stablehlo.add %acc, %m : tensor<12xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %a1 : tensor<i32>, tensor<12xf32>
  }
  return %0#1 : tensor<12xf32>
}"""

# integer sums (exact in wrapping arithmetic): s += y * x[i] - x[i] (the invariant factor out of
# the sum), h += onehot(5 - i, sum(x[5 - i])) (rows placed side by side, reversed); and a float
# minimum (exact in any order)
INT_SUMS = loop(
    "%x: tensor<6x3xi32>, %y: tensor<3xi32>, %f: tensor<6x3xf32>", "(tensor<3xi32>, tensor<6xi32>, tensor<1x3xf32>)", 6,
    "%s = %s0 : tensor<3xi32>; %h = %h0 : tensor<6xi32>; %m = %m0 : tensor<1x3xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 3] : (tensor<6x3xi32>, tensor<i32>, tensor<i32>) -> tensor<1x3xi32>
    %q = stablehlo.reshape %r : (tensor<1x3xi32>) -> tensor<3xi32>
    %p = stablehlo.multiply %y, %q : tensor<3xi32>
    %a1 = stablehlo.add %s, %p : tensor<3xi32>
    %next_s = stablehlo.subtract %a1, %q : tensor<3xi32>
    %c5 = stablehlo.constant dense<5> : tensor<i32>
    %k = stablehlo.subtract %c5, %i : tensor<i32>
    %e = stablehlo.dynamic_slice %x, %k, %zi, sizes = [1, 3] : (tensor<6x3xi32>, tensor<i32>, tensor<i32>) -> tensor<1x3xi32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %t = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<1x3xi32>, tensor<i32>) -> tensor<1xi32>
    %zeros = stablehlo.constant dense<0> : tensor<6xi32>
    %oh = stablehlo.dynamic_update_slice %zeros, %t, %k : (tensor<6xi32>, tensor<1xi32>, tensor<i32>) -> tensor<6xi32>
    %next_h = stablehlo.add %oh, %h : tensor<6xi32>
    %fr = stablehlo.dynamic_slice %f, %i, %zi, sizes = [1, 3] : (tensor<6x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %next_m = stablehlo.minimum %m, %fr : tensor<1x3xf32>""",
    "%w#1, %w#2, %w#3", inits="""%s0 = stablehlo.constant dense<7> : tensor<3xi32>
  %h0 = stablehlo.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  %m0 = stablehlo.constant dense<1.0e30> : tensor<1x3xf32>""")

# out[i] = x[6 - i, 1:3] * 2: a window read at rows going backwards, rows written forwards
REVERSED_READ = loop(
    "%x: tensor<7x4xf32>, %o: tensor<7x2xf32>", "tensor<7x2xf32>", 7, "%out = %o : tensor<7x2xf32>", """
    %c6 = stablehlo.constant dense<6> : tensor<i32>
    %k = stablehlo.subtract %c6, %i : tensor<i32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %r = stablehlo.dynamic_slice %x, %k, %c1, sizes = [1, 2] : (tensor<7x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %two = stablehlo.constant dense<2.0> : tensor<1x2xf32>
    %v = stablehlo.multiply %r, %two : tensor<1x2xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %i, %zi : (tensor<7x2xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<7x2xf32>""",
    "%w#1")

# a[(3 i + 2) % 8] = exp(a[(3 i + 2) % 8]) * x[i]: rows in no order (a permutation), in place
PERMUTED_ROWS = loop(
    "%x: tensor<8x2xf32>, %a0: tensor<8x2xf32>", "tensor<8x2xf32>", 8, "%a = %a0 : tensor<8x2xf32>", """
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %c2 = stablehlo.constant dense<2> : tensor<i32>
    %c8 = stablehlo.constant dense<8> : tensor<i32>
    %m3 = stablehlo.multiply %i, %c3 : tensor<i32>
    %p2 = stablehlo.add %m3, %c2 : tensor<i32>
    %j = stablehlo.remainder %p2, %c8 : tensor<i32>
    %r = stablehlo.dynamic_slice %a, %j, %zi, sizes = [1, 2] : (tensor<8x2xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %xr = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 2] : (tensor<8x2xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %e = stablehlo.exponential %r : tensor<1x2xf32>
    %v = stablehlo.multiply %e, %xr : tensor<1x2xf32>
    %next_a = stablehlo.dynamic_update_slice %a, %v, %j, %zi : (tensor<8x2xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<8x2xf32>""",
    "%w#1")

# out[i // 2] = x[i]: two iterations write one row (the last one wins): stays a loop
REPEATED_ROWS = loop(
    "%x: tensor<8xf32>, %o: tensor<4xf32>", "tensor<4xf32>", 8, "%out = %o : tensor<4xf32>", """
    %c2 = stablehlo.constant dense<2> : tensor<i32>
    %h = stablehlo.divide %i, %c2 : tensor<i32>
    %r = stablehlo.dynamic_slice %x, %i, sizes = [1] : (tensor<8xf32>, tensor<i32>) -> tensor<1xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %r, %h : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>""",
    "%w#1")

# out[4i : 4i + 4] = sin(x[4i : 4i + 4]) * 2: blocks of 4 rows, read from an array defined
# before the loop and written into the carried one
BLOCK_ROWS = loop(
    "%x: tensor<12x3xf32>, %o: tensor<12x3xf32>", "tensor<12x3xf32>", 3, "%out = %o : tensor<12x3xf32>", """
    %c4 = stablehlo.constant dense<4> : tensor<i32>
    %r0 = stablehlo.multiply %i, %c4 : tensor<i32>
    %b = stablehlo.dynamic_slice %x, %r0, %zi, sizes = [4, 3] : (tensor<12x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
    %s = stablehlo.sine %b : tensor<4x3xf32>
    %two = stablehlo.constant dense<2.0> : tensor<4x3xf32>
    %v = stablehlo.multiply %s, %two : tensor<4x3xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %r0, %zi : (tensor<12x3xf32>, tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<12x3xf32>""",
    "%w#1")

# a[:, 2i + 2 : 2i + 4] *= 3 in place: blocks of 2 columns from column 2, read and written
BLOCK_COLUMNS_IN_PLACE = loop(
    "%x: tensor<3x8xf32>", "tensor<3x8xf32>", 3, "%a = %x : tensor<3x8xf32>", """
    %c2 = stablehlo.constant dense<2> : tensor<i32>
    %m = stablehlo.multiply %i, %c2 : tensor<i32>
    %k = stablehlo.add %m, %c2 : tensor<i32>
    %b = stablehlo.dynamic_slice %a, %zi, %k, sizes = [3, 2] : (tensor<3x8xf32>, tensor<i32>, tensor<i32>) -> tensor<3x2xf32>
    %three = stablehlo.constant dense<3.0> : tensor<3x2xf32>
    %v = stablehlo.multiply %b, %three : tensor<3x2xf32>
    %next_a = stablehlo.dynamic_update_slice %a, %v, %zi, %k : (tensor<3x8xf32>, tensor<3x2xf32>, tensor<i32>, tensor<i32>) -> tensor<3x8xf32>""",
    "%w#1")

# blocks of 2 from row 1 (not a reshape of the array), and overlapping blocks (stride 1)
BLOCK_MISALIGNED = loop(
    "%x: tensor<7xf32>", "tensor<7xf32>", 3, "%a = %x : tensor<7xf32>", """
    %c2 = stablehlo.constant dense<2> : tensor<i32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %m = stablehlo.multiply %i, %c2 : tensor<i32>
    %k = stablehlo.add %m, %c1 : tensor<i32>
    %b = stablehlo.dynamic_slice %a, %k, sizes = [2] : (tensor<7xf32>, tensor<i32>) -> tensor<2xf32>
    %v = stablehlo.exponential %b : tensor<2xf32>
    %next_a = stablehlo.dynamic_update_slice %a, %v, %k : (tensor<7xf32>, tensor<2xf32>, tensor<i32>) -> tensor<7xf32>""",
    "%w#1")
BLOCK_OVERLAPPING = loop(
    "%x: tensor<7xf32>", "tensor<7xf32>", 5, "%a = %x : tensor<7xf32>", """
    %b = stablehlo.dynamic_slice %a, %i, sizes = [3] : (tensor<7xf32>, tensor<i32>) -> tensor<3xf32>
    %v = stablehlo.exponential %b : tensor<3xf32>
    %next_a = stablehlo.dynamic_update_slice %a, %v, %i : (tensor<7xf32>, tensor<3xf32>, tensor<i32>) -> tensor<7xf32>""",
    "%w#1")

def _rows_concat(n: int, expr, *, start=0, step=1) -> str:
    """``concatenate([expr(x[start + step k]) for k in range(n)])`` of a 6x5 ``x``: one row each."""
    body, names = [], []
    for k in range(n):
        r = start + step * k
        body.append(f"  %r{k} = stablehlo.slice %x [{r}:{r + 1}, 0:5] : (tensor<6x5xf32>) -> tensor<1x5xf32>")
        body.append(expr(k))
        names.append(f"%o{k}")
    t = f"tensor<{n}xf32>"
    return f"""
func.func @main(%x: tensor<6x5xf32>, %y: tensor<f32>) -> {t} {{
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
{chr(10).join(body)}
  %c = stablehlo.concatenate {", ".join(names)}, dim = 0 : ({", ".join(["tensor<1xf32>"] * n)}) -> {t}
  return %c : {t}
}}"""


def _sum_over_max(k: int) -> str:  # np.sum(x[k]) / np.max(x[k]) * y
    return f"""  %s{k} = stablehlo.reduce(%r{k} init: %z) applies stablehlo.add across dimensions = [1] : (tensor<1x5xf32>, tensor<f32>) -> tensor<1xf32>
  %x{k} = stablehlo.reduce(%r{k} init: %m) applies stablehlo.maximum across dimensions = [1] : (tensor<1x5xf32>, tensor<f32>) -> tensor<1xf32>
  %d{k} = stablehlo.divide %s{k}, %x{k} : tensor<1xf32>
  %b{k} = stablehlo.broadcast_in_dim %y, dims = [] : (tensor<f32>) -> tensor<1xf32>
  %o{k} = stablehlo.multiply %d{k}, %b{k} : tensor<1xf32>"""


def _sum_or_max(k: int) -> str:  # operands that are not the same computation (sum, then max)
    kind = "add" if k % 2 == 0 else "maximum"
    init = "%z" if k % 2 == 0 else "%m"
    return f"""  %o{k} = stablehlo.reduce(%r{k} init: {init}) applies stablehlo.{kind} across dimensions = [1] : (tensor<1x5xf32>, tensor<f32>) -> tensor<1xf32>"""


LIST_OF_ROW_SCALARS = _rows_concat(6, _sum_over_max)
LIST_OF_EVERY_OTHER_ROW = _rows_concat(4, _sum_over_max, start=5, step=-1)
LIST_OF_MIXED_ROWS = _rows_concat(4, _sum_or_max)

CASES = [
    rcase("concat_of_rows_raise", LIST_OF_ROW_SCALARS, id="list-of-row-scalars",
          present=[r"stablehlo.reduce.*tensor<6x1x5xf32>"], absent=[r"stablehlo.while", r"concatenate"]),
    rcase("concat_of_rows_raise", LIST_OF_EVERY_OTHER_ROW, id="list-of-rows-backwards",
          absent=[r"stablehlo.while", r"concatenate"]),
    rcase("concat_of_rows_raise", LIST_OF_MIXED_ROWS, changed=False, id="list-of-different-computations"),
    rcase("while_block_rows", BLOCK_ROWS, id="block-rows-then-raised", also=("while_raise",),
          present=[r"stablehlo.sine .*tensor<3x4x3xf32>"], absent=[r"stablehlo.while", r"gather"]),
    rcase("while_block_rows", BLOCK_ROWS, id="block-rows-carried-as-rows",
          present=[r"stablehlo.while.*tensor<3x4x3xf32>", r"dynamic_slice .*sizes = \[1, 4, 3\]"]),
    rcase("while_block_rows", BLOCK_COLUMNS_IN_PLACE, id="block-columns-in-place", also=("while_raise",),
          present=[r"tensor<3x4x2xf32>"], absent=[r"stablehlo.while"]),
    rcase("while_block_rows", BLOCK_MISALIGNED, changed=False, id="block-misaligned"),
    rcase("while_block_rows", BLOCK_OVERLAPPING, changed=False, id="block-overlapping"),
    rcase("while_raise", DOITGEN, id="doitgen-nested",
          present=[r"stablehlo.dot_general"], absent=[r"stablehlo.while"]),
    rcase("while_raise", ROW_MAP, id="row-map",
          present=[r"dot_general %\S+, %arg1.*tensor<6x1x4xf32>", r"stablehlo.tanh .*tensor<6x1x4xf32>",
                   r"stablehlo.reduce"], absent=[r"stablehlo.while"]),
    rcase("while_raise", IN_PLACE, id="in-place-rows",
          present=[r"stablehlo.exponential .*tensor<5x1x3xf32>"], absent=[r"stablehlo.while"]),
    rcase("while_raise_fast", ACCUMULATE, id="float-sum-fast-math", rtol=1e-5,
          present=[r"applies stablehlo.add across dimensions = \[0\]", r"applies stablehlo.maximum"],
          absent=[r"stablehlo.while"]),
    rcase("while_raise", ACCUMULATE, changed=False, id="float-sum-stays-exact"),
    rcase("while_raise", INT_SUMS, id="integer-sums-and-float-min", int_range=(-40, 40),
          present=[r"stablehlo.multiply %arg1, %\d+ : tensor<3xi32>", r"stablehlo.reverse",
                   r"applies stablehlo.minimum"], absent=[r"stablehlo.while", r"stablehlo.multiply .*tensor<6x"]),
    rcase("while_raise", WIDE_ROW_SCALAR, id="per-iteration-scalar-in-wide-row",
          present=[r"stablehlo.exponential .*tensor<16x3xf32>", r"stablehlo.iota dim = 0"], absent=[r"stablehlo.while"]),
    rcase("while_raise", REVERSED_ROWS, also=("while_dead_arg",), id="reversed-rows-batched-backwards",
          present=[r"stablehlo.divide .*tensor<16xf32>"], absent=[r"stablehlo.while", r"stablehlo.reverse"]),
    rcase("while_raise", REVERSED_READ, id="reversed-read", present=[r"stablehlo.reverse"],
          absent=[r"stablehlo.while"]),
    rcase("while_raise", PERMUTED_ROWS, id="permuted-rows-in-place", present=[r"stablehlo.gather", r"stablehlo.scatter"],
          absent=[r"stablehlo.while"], rtol=1e-5, atol=1e-5),
    rcase("while_raise", REPEATED_ROWS, changed=False, id="repeated-rows-stay"),
    rcase("while_raise_fast", ONE_HOT_SUM, also=("while_dead_arg",), id="one-hot-and-scalar-sum",
          present=[r"stablehlo.reduce", r"stablehlo.tanh .*tensor<12xf32>"], absent=[r"stablehlo.while"],
          rtol=1e-4, atol=1e-4),
    rcase("while_raise", ONE_HOT_SUM, changed=False, id="one-hot-float-sum-stays-exact"),
    rcase("while_raise_fast", SCALED_SUM, also=("while_dead_arg",), id="invariant-factor-out-of-sum",
          present=[r"stablehlo.multiply %arg1, %\d+ : tensor<12xf32>"],
          absent=[r"stablehlo.while", r"tensor<12x12xf32>"], rtol=1e-4, atol=1e-4),
    rcase("while_raise", SCALED_SUM, changed=False, id="scaled-float-sum-stays-exact"),
    rcase("while_raise", STENCIL, id="stencil-shifted-rows",
          present=[r"dense<7> : tensor<i32>"], absent=[r"stablehlo.while"]),
    rcase("while_raise", KITCHEN_SINK, id="layout-ops",
          present=[r"stablehlo.pad", r"stablehlo.concatenate", r"stablehlo.select"], absent=[r"stablehlo.while"]),
    rcase("while_raise", DOTS, id="dots-rhs-and-both-batched",
          present=[r"batching_dims = \[0, 2\] x \[0, 1\]"], absent=[r"stablehlo.while"]),
    rcase("while_raise", CHAINED_WRITES, id="chained-writes-in-the-row",
          present=[r"stablehlo.exponential .*tensor<4x1x1x3xf32>"], absent=[r"stablehlo.while"]),
    rcase("while_raise", CHAINED_NEXT_ROW, changed=False, id="chained-write-to-next-row-stays"),
    rcase("while_raise", RECURRENCE, changed=False, id="recurrence-stays"),
    rcase("while_raise", RECURRENCE_SECOND_OPERAND, changed=False, id="recurrence-second-operand-stays"),
    rcase("while_raise", PREFIX_SUM, changed=False, id="prefix-sum-stays"),
    rcase("while_raise", SORT_ROWS, id="sort-rows", present=[r"dimension = 2"], absent=[r"stablehlo.while"]),
    rcase("while_raise", WINDOWS, id="sliding-windows-fft", present=[r"stablehlo.fft .*tensor<7x3xcomplex<f32>>"],
          absent=[r"stablehlo.while"], rtol=1e-4, atol=1e-5),
    rcase("while_raise", REDUCE_WINDOW, id="reduce-window-rows",
          present=[r"window_dimensions = array<i64: 1, 1, 5>"], absent=[r"stablehlo.while"]),
    rcase("while_raise", IF_ROWS, id="if-on-row-values", present=[r"stablehlo.select", r"stablehlo.negate"],
          absent=[r"stablehlo.while", r"stablehlo.if"]),
    rcase("while_raise", NO_RULE, changed=False, id="no-batching-rule-stays"),
    rcase("while_raise", CLAMPED, id="clamped-read-gathers", present=[r"stablehlo.gather"],
          absent=[r"stablehlo.while"]),
    rcase("while_raise", GATHER, id="gather", int_range=(0, 6), present=[r"stablehlo.gather"],
          absent=[r"stablehlo.while"]),
    rcase("while_raise", HUGE_TEMPORARIES, changed=False, id="huge-temporaries-stay", run=False),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case):
    """The rewrite, its IR, and the module before and after run through PJRT."""
    check_case(case)


def test_every_raising_pattern_has_a_case():
    from reactant.optimize.patterns import PATTERNS

    mine = {n for n, p in PATTERNS.items() if p.family == "raising"}
    covered = {c.name for c in CASES if c.fires}
    assert mine and mine <= covered, sorted(mine - covered)


# the loops ``while_raise`` raises on its own (no fast math): rows and order-free accumulators
EXACT = {"row-map": ROW_MAP, "in-place-rows": IN_PLACE, "integer-sums-and-float-min": INT_SUMS,
         "reversed-rows": REVERSED_ROWS, "reversed-read": REVERSED_READ, "permuted-rows": PERMUTED_ROWS,
         "per-iteration-scalar-in-wide-row": WIDE_ROW_SCALAR}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_raising_gives_the_loops_bits(name):
    """``while_raise`` is exact (``optimize.exactness``): on inputs full of ±0, ±Inf, NaN and
    integer extremes the raised program gives the loop's bits."""
    import numpy as np
    from _harness import execute, main_arg_types, parse, rewrite, to_text

    from reactant.optimize.exactness import same_bits, special_array

    before = to_text(parse(EXACT[name]))
    after = rewrite(before, ("while_raise",))
    assert "stablehlo.while" not in after
    rng = np.random.default_rng(7)
    for _ in range(3):
        args = [special_array(rng, s, d) for s, d in main_arg_types(before)]
        for want, got in zip(execute(before, args), execute(after, args)):
            assert same_bits(want, got), (name, want, got)


def test_the_tracers_probe_places_the_raised_loop_where_the_loop_was():
    """``kept_loop_raises`` (what the tracer asks of a small loop) returns a function placing
    the raised ops after the loop: they replace its results and the loop goes, same values."""
    import numpy as np
    from jaxlib.mlir import ir

    from _harness import execute, parse, to_text
    from reactant.ir.regions import walk_nested
    from reactant.optimize.patterns.loop_raising import kept_loop_raises

    m = parse(DOITGEN)
    args = [np.random.default_rng(3).standard_normal((2, 3, 4)), np.random.default_rng(4).standard_normal((4, 4))]
    want = execute(to_text(m), args)
    with m.context, ir.Location.unknown(m.context):
        loops = []
        walk_nested(m.operation, lambda o: loops.append(o) if o.operation.name == "stablehlo.while" else None)
        outer = loops[0].operation
        place = kept_loop_raises(outer)
        assert callable(place)
        block = outer.block
        ret = list(block.operations)[-1]
        values = place(ir.InsertionPoint(ret))
        for old, new in zip(outer.results, values):
            old.replace_all_uses_with(new)
        outer.erase()
        assert m.operation.verify()
    text = to_text(m)
    assert "stablehlo.while" not in text and "dot_general" in text
    got = execute(text, args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)


def _probed_loop(monkeypatch, m) -> tuple[list, object]:
    """What the probe will run, recorded into the list (a pipeline: its pass names; a pattern
    run: the sorted names of its patterns), and ``m``'s only loop."""
    from reactant.ir.regions import walk_nested
    from reactant.optimize import passes
    from reactant.optimize.patterns import loop_raising

    runs = []
    real, real_apply = passes.run_pipeline, loop_raising.apply_patterns
    monkeypatch.setattr(passes, "run_pipeline", lambda *a, **k: runs.append(a[1]) or real(*a, **k))
    monkeypatch.setattr(loop_raising, "apply_patterns",
                        lambda m, ps, **k: runs.append(sorted(p.name for p in ps)) or real_apply(m, ps, **k))
    loops = []
    walk_nested(m.operation, lambda o: loops.append(o) if o.operation.name == "stablehlo.while" else None)
    assert len(loops) == 1
    return runs, loops[0].operation


_RAISING_RUN = ["while_block_rows", "while_raise"]  # (without fast math)


def test_the_probe_does_not_ask_the_optimizer_about_an_ordered_float_sum(monkeypatch):
    """A float slot summed onto itself (``s += t``) keeps the loop's order: only fast math
    raises it, so without it the tracer's probe answers no without running the patterns."""
    from jaxlib.mlir import ir

    from _harness import parse
    from reactant.optimize import PassOptions
    from reactant.optimize.patterns.loop_raising import kept_loop_raises

    m = parse(ACCUMULATE)
    with m.context, ir.Location.unknown(m.context):
        runs, w = _probed_loop(monkeypatch, m)
        assert kept_loop_raises(w) is False and runs == []
        assert kept_loop_raises(w, PassOptions()) is False and runs == []
        # (raised by the raising patterns alone: no pipeline ran, no other pattern)
        assert callable(kept_loop_raises(w, PassOptions(fast_math=True)))
        assert runs == [sorted(_RAISING_RUN + ["while_raise_fast"])]


def test_the_probe_answers_no_for_a_loop_the_raising_patterns_leave(monkeypatch):
    """A recurrence (each row reads the row written before it) does not raise: the probe tries
    the raising patterns and answers no, without running a pipeline."""
    import numpy as np
    from jaxlib.mlir import ir

    import reactant
    from reactant.ir.context import parse_module
    from reactant.optimize import PassOptions
    from reactant.optimize.patterns.loop_raising import kept_loop_raises

    def f(x):
        for i in range(1, 8):
            x[i] = x[i - 1] * 0.5 + 1.0

    text = reactant.code_hlo(reactant.compile(f, loops="keep"), reactant.to_rarray(np.ones(8)), optimize=False)
    m = parse_module(text)
    with m.context, ir.Location.unknown(m.context):
        runs, w = _probed_loop(monkeypatch, m)
        assert kept_loop_raises(w, PassOptions()) is False
    assert runs == [_RAISING_RUN]
