"""Loop raising through the batching rules added for vmap's loops: dynamic_slice and
dynamic_update_slice at batched indices (a gather, a scatter; clamped as the originals),
gather and scatter ops, reduce_window, cholesky and triangular_solve, if/case (both branches
computed, the taken one selected), sort with several results and inner loops (one loop over
batched carried values). Each row: the loop is
gone, the module verifies, and it computes what the loop computed (indices drawn partly out
of bounds, where the clamping rules matter)."""

import pytest

from _harness import check_case, params, rcase
from test_patterns_raising import loop

# x[i][j[i]] : a batched operand read at a batched index (indices out of bounds clamp)
SLICE_AT_BATCHED_INDEX = loop(
    "%x: tensor<6x5xf32>, %j: tensor<6xi32>, %o: tensor<6x2xf32>", "tensor<6x2xf32>", 6,
    "%out = %o : tensor<6x2xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 5] : (tensor<6x5xf32>, tensor<i32>, tensor<i32>) -> tensor<1x5xf32>
    %row = stablehlo.reshape %r : (tensor<1x5xf32>) -> tensor<5xf32>
    %k = stablehlo.dynamic_slice %j, %i, sizes = [1] : (tensor<6xi32>, tensor<i32>) -> tensor<1xi32>
    %ks = stablehlo.reshape %k : (tensor<1xi32>) -> tensor<i32>
    %b = stablehlo.dynamic_slice %row, %ks, sizes = [2] : (tensor<5xf32>, tensor<i32>) -> tensor<2xf32>
    %v = stablehlo.reshape %b : (tensor<2xf32>) -> tensor<1x2xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %i, %zi : (tensor<6x2xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<6x2xf32>""",
    "%w#1")

# an invariant table read at a batched index that moves in two dimensions
TABLE_TWO_INDICES = loop(
    "%t: tensor<5x4xf32>, %j: tensor<6x2xi64>, %o: tensor<6x2xf32>", "tensor<6x2xf32>", 6,
    "%out = %o : tensor<6x2xf32>", """
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %a = stablehlo.dynamic_slice %j, %i, %zi, sizes = [1, 1] : (tensor<6x2xi64>, tensor<i32>, tensor<i32>) -> tensor<1x1xi64>
    %b = stablehlo.dynamic_slice %j, %i, %c1, sizes = [1, 1] : (tensor<6x2xi64>, tensor<i32>, tensor<i32>) -> tensor<1x1xi64>
    %as = stablehlo.reshape %a : (tensor<1x1xi64>) -> tensor<i64>
    %bs = stablehlo.reshape %b : (tensor<1x1xi64>) -> tensor<i64>
    %v = stablehlo.dynamic_slice %t, %as, %bs, sizes = [1, 2] : (tensor<5x4xf32>, tensor<i64>, tensor<i64>) -> tensor<1x2xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %i, %zi : (tensor<6x2xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<6x2xf32>""",
    "%w#1")

# y = zeros(5); y[j[i] : j[i] + 2] = x[i, :2] (a write at a batched index, clamped)
UPDATE_AT_BATCHED_INDEX = loop(
    "%x: tensor<6x3xf32>, %j: tensor<6xi32>, %o: tensor<6x5xf32>", "tensor<6x5xf32>", 6,
    "%out = %o : tensor<6x5xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 2] : (tensor<6x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %u = stablehlo.reshape %r : (tensor<1x2xf32>) -> tensor<2xf32>
    %k = stablehlo.dynamic_slice %j, %i, sizes = [1] : (tensor<6xi32>, tensor<i32>) -> tensor<1xi32>
    %ks = stablehlo.reshape %k : (tensor<1xi32>) -> tensor<i32>
    %y0 = stablehlo.constant dense<0.5> : tensor<5xf32>
    %y = stablehlo.dynamic_update_slice %y0, %u, %ks : (tensor<5xf32>, tensor<2xf32>, tensor<i32>) -> tensor<5xf32>
    %v = stablehlo.reshape %y : (tensor<5xf32>) -> tensor<1x5xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %i, %zi : (tensor<6x5xf32>, tensor<1x5xf32>, tensor<i32>, tensor<i32>) -> tensor<6x5xf32>""",
    "%w#1")

# gather ops: constant indices into a batched row, and batched indices into an invariant table
GATHERS = loop(
    "%x: tensor<6x4xf32>, %t: tensor<7x3xf32>, %j: tensor<6x2xi32>, %o: tensor<6x5xf32>", "tensor<6x5xf32>", 6,
    "%out = %o : tensor<6x5xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 4] : (tensor<6x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    %row = stablehlo.reshape %r : (tensor<1x4xf32>) -> tensor<4xf32>
    %ci = stablehlo.constant dense<[[3], [0]]> : tensor<2x1xi32>
    %g1 = "stablehlo.gather"(%row, %ci) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<4xf32>, tensor<2x1xi32>) -> tensor<2xf32>
    %k = stablehlo.dynamic_slice %j, %i, %zi, sizes = [1, 2] : (tensor<6x2xi32>, tensor<i32>, tensor<i32>) -> tensor<1x2xi32>
    %ks = stablehlo.reshape %k : (tensor<1x2xi32>) -> tensor<2x1xi32>
    %g2 = "stablehlo.gather"(%t, %ks) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<7x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
    %s2 = stablehlo.slice %g2 [0:1, 0:3] : (tensor<2x3xf32>) -> tensor<1x3xf32>
    %f2 = stablehlo.reshape %s2 : (tensor<1x3xf32>) -> tensor<3xf32>
    %v5 = stablehlo.concatenate %g1, %f2, dim = 0 : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
    %v = stablehlo.reshape %v5 : (tensor<5xf32>) -> tensor<1x5xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %i, %zi : (tensor<6x5xf32>, tensor<1x5xf32>, tensor<i32>, tensor<i32>) -> tensor<6x5xf32>""",
    "%w#1")

# np.add.at(zeros(4), j[i], x[i]): a scatter-add per row (repeated indices accumulate)
SCATTER_ADD = loop(
    "%x: tensor<6x3xf32>, %j: tensor<6x3xi32>, %o: tensor<6x4xf32>", "tensor<6x4xf32>", 6,
    "%out = %o : tensor<6x4xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 3] : (tensor<6x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %u = stablehlo.reshape %r : (tensor<1x3xf32>) -> tensor<3xf32>
    %k = stablehlo.dynamic_slice %j, %i, %zi, sizes = [1, 3] : (tensor<6x3xi32>, tensor<i32>, tensor<i32>) -> tensor<1x3xi32>
    %ks = stablehlo.reshape %k : (tensor<1x3xi32>) -> tensor<3x1xi32>
    %y0 = stablehlo.constant dense<0.0> : tensor<4xf32>
    %y = "stablehlo.scatter"(%y0, %ks, %u) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<4xf32>
    %v = stablehlo.reshape %y : (tensor<4xf32>) -> tensor<1x4xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %i, %zi : (tensor<6x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x4xf32>""",
    "%w#1")

# cholesky of a per-row s.p.d. matrix, then a triangular solve against an invariant right side
FACTOR = loop(
    "%x: tensor<4x3x3xf64>, %b: tensor<3x2xf64>, %o: tensor<4x3x2xf64>", "tensor<4x3x2xf64>", 4,
    "%out = %o : tensor<4x3x2xf64>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, %zi, sizes = [1, 3, 3] : (tensor<4x3x3xf64>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x3x3xf64>
    %m = stablehlo.reshape %r : (tensor<1x3x3xf64>) -> tensor<3x3xf64>
    %mm = stablehlo.dot_general %m, %m, contracting_dims = [1] x [1] : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3xf64>
    %e = stablehlo.constant dense<[[3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0]]> : tensor<3x3xf64>
    %a = stablehlo.add %mm, %e : tensor<3x3xf64>
    %l = stablehlo.cholesky %a, lower = true : tensor<3x3xf64>
    %s = "stablehlo.triangular_solve"(%l, %b) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<3x3xf64>, tensor<3x2xf64>) -> tensor<3x2xf64>
    %v = stablehlo.reshape %s : (tensor<3x2xf64>) -> tensor<1x3x2xf64>
    %next_out = stablehlo.dynamic_update_slice %out, %v, %i, %zi, %zi : (tensor<4x3x2xf64>, tensor<1x3x2xf64>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x3x2xf64>""",
    "%w#1")

# case on an index computed from the row (out of range: the last branch), three branches
CASE_ROWS = loop(
    "%x: tensor<6x3xf32>, %o: tensor<6x3xf32>", "tensor<6x3xf32>", 6, "%out = %o : tensor<6x3xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 3] : (tensor<6x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x3xf32>, tensor<f32>) -> tensor<f32>
    %k = stablehlo.convert %s : (tensor<f32>) -> tensor<i32>
    %c = "stablehlo.case"(%k) ({
      stablehlo.return %r : tensor<1x3xf32>
    }, {
      %n = stablehlo.negate %r : tensor<1x3xf32>
      stablehlo.return %n : tensor<1x3xf32>
    }, {
      %e = stablehlo.exponential %r : tensor<1x3xf32>
      stablehlo.return %e : tensor<1x3xf32>
    }) : (tensor<i32>) -> tensor<1x3xf32>
    %next_out = stablehlo.dynamic_update_slice %out, %c, %i, %zi : (tensor<6x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<6x3xf32>""",
    "%w#1")

# an invariant predicate, two results, a nested if on a row value, and a branch reading the
# row of the array the loop writes in place (the row the enclosing batcher knows)
NESTED_IFS = loop(
    "%x: tensor<5x3xf32>, %flag: tensor<i1>", "tensor<5x3xf32>", 5, "%a = %x : tensor<5x3xf32>", """
    %r = stablehlo.dynamic_slice %a, %i, %zi, sizes = [1, 3] : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x3xf32>, tensor<f32>) -> tensor<f32>
    %c:2 = "stablehlo.if"(%flag) ({
      %p = stablehlo.compare GT, %s, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %in = "stablehlo.if"(%p) ({
        %q = stablehlo.dynamic_slice %a, %i, %zi, sizes = [1, 3] : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
        %e = stablehlo.exponential %q : tensor<1x3xf32>
        stablehlo.return %e : tensor<1x3xf32>
      }, {
        stablehlo.return %r : tensor<1x3xf32>
      }) : (tensor<i1>) -> tensor<1x3xf32>
      stablehlo.return %in, %s : tensor<1x3xf32>, tensor<f32>
    }, {
      %n = stablehlo.negate %r : tensor<1x3xf32>
      stablehlo.return %n, %z : tensor<1x3xf32>, tensor<f32>
    }) : (tensor<i1>) -> (tensor<1x3xf32>, tensor<f32>)
    %sb = stablehlo.broadcast_in_dim %c#1, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
    %v = stablehlo.add %c#0, %sb : tensor<1x3xf32>
    %next_a = stablehlo.dynamic_update_slice %a, %v, %i, %zi : (tensor<5x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<5x3xf32>""",
    "%w#1")

# argsort of each row: a sort with two operands (values and indices), two results
ARGSORT_ROWS = loop(
    "%x: tensor<4x5xf32>, %o: tensor<4x5xi32>", "tensor<4x5xi32>", 4, "%out = %o : tensor<4x5xi32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 5] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<1x5xf32>
    %io = stablehlo.iota dim = 1 : tensor<1x5xi32>
    %s:2 = "stablehlo.sort"(%r, %io) ({
    ^bb0(%p0: tensor<f32>, %p1: tensor<f32>, %q0: tensor<i32>, %q1: tensor<i32>):
      %lt = stablehlo.compare LT, %p0, %p1 : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }) {dimension = 1 : i64, is_stable = true} : (tensor<1x5xf32>, tensor<1x5xi32>) -> (tensor<1x5xf32>, tensor<1x5xi32>)
    %next_out = stablehlo.dynamic_update_slice %out, %s#1, %i, %zi : (tensor<4x5xi32>, tensor<1x5xi32>, tensor<i32>, tensor<i32>) -> tensor<4x5xi32>""",
    "%w#1")

# for i: s = x[i, 0]; for k in 0..3: s = 0.5 s + x[i, k] (an inner recurrence): the outer loop
# goes, the inner one carries all the rows' s at once
INNER_RECURRENCE = loop(
    "%x: tensor<6x4xf32>, %o: tensor<6xf32>", "tensor<6xf32>", 6, "%out = %o : tensor<6xf32>", """
    %r = stablehlo.dynamic_slice %x, %i, %zi, sizes = [1, 4] : (tensor<6x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    %row = stablehlo.reshape %r : (tensor<1x4xf32>) -> tensor<4xf32>
    %s0 = stablehlo.slice %row [0:1] : (tensor<4xf32>) -> tensor<1xf32>
    %h = stablehlo.constant dense<0.5> : tensor<1xf32>
    %in:2 = stablehlo.while(%k = %zi, %s = %s0) : tensor<i32>, tensor<1xf32>
    cond {
      %four = stablehlo.constant dense<4> : tensor<i32>
      %p = stablehlo.compare LT, %k, %four, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %e = stablehlo.dynamic_slice %row, %k, sizes = [1] : (tensor<4xf32>, tensor<i32>) -> tensor<1xf32>
      %a = stablehlo.multiply %h, %s : tensor<1xf32>
      %b = stablehlo.add %a, %e : tensor<1xf32>
      %c1 = stablehlo.constant dense<1> : tensor<i32>
      %k1 = stablehlo.add %k, %c1 : tensor<i32>
      stablehlo.return %k1, %b : tensor<i32>, tensor<1xf32>
    }
    %next_out = stablehlo.dynamic_update_slice %out, %in#1, %i : (tensor<6xf32>, tensor<1xf32>, tensor<i32>) -> tensor<6xf32>""",
    "%w#1")

# the inner loop runs i times (a trip count per outer iteration): the loops stay
TRIANGULAR = loop(
    "%x: tensor<6xf32>, %o: tensor<6xf32>", "tensor<6xf32>", 6, "%out = %o : tensor<6xf32>", """
    %z = stablehlo.constant dense<0.0> : tensor<1xf32>
    %in:2 = stablehlo.while(%k = %zi, %s = %z) : tensor<i32>, tensor<1xf32>
    cond {
      %p = stablehlo.compare LT, %k, %i, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %e = stablehlo.dynamic_slice %x, %k, sizes = [1] : (tensor<6xf32>, tensor<i32>) -> tensor<1xf32>
      %b = stablehlo.add %s, %e : tensor<1xf32>
      %c1 = stablehlo.constant dense<1> : tensor<i32>
      %k1 = stablehlo.add %k, %c1 : tensor<i32>
      stablehlo.return %k1, %b : tensor<i32>, tensor<1xf32>
    }
    %next_out = stablehlo.dynamic_update_slice %out, %in#1, %i : (tensor<6xf32>, tensor<1xf32>, tensor<i32>) -> tensor<6xf32>""",
    "%w#1")

CASES = [
    rcase("while_raise", SLICE_AT_BATCHED_INDEX, id="slice-at-batched-index", int_range=(-3, 8),
          present=[r"stablehlo.gather.*operand_batching_dims = \[0\]"], absent=[r"stablehlo.while"]),
    rcase("while_raise", TABLE_TWO_INDICES, id="table-two-moving-indices", int_range=(-2, 7),
          present=[r"stablehlo.gather"], absent=[r"stablehlo.while"]),
    rcase("while_raise", UPDATE_AT_BATCHED_INDEX, id="update-at-batched-index", int_range=(-2, 7),
          present=[r"stablehlo.scatter", r"stablehlo.clamp"], absent=[r"stablehlo.while"]),
    rcase("while_raise", GATHERS, id="gather-ops", int_range=(0, 7),
          present=[r"stablehlo.gather"], absent=[r"stablehlo.while"]),
    rcase("while_raise", SCATTER_ADD, id="scatter-add", int_range=(0, 4),
          present=[r"input_batching_dims = \[0\]"], absent=[r"stablehlo.while"]),
    rcase("while_raise", FACTOR, id="cholesky-triangular-solve", rtol=1e-9, atol=1e-9,
          present=[r"stablehlo.cholesky.*tensor<4x3x3xf64>", r"triangular_solve"], absent=[r"stablehlo.while"]),
    rcase("while_raise", CASE_ROWS, id="case-on-row-values", present=[r"stablehlo.select"],
          absent=[r"stablehlo.while", r"stablehlo.case"]),
    rcase("while_raise", NESTED_IFS, id="nested-ifs-in-place", present=[r"stablehlo.select"],
          absent=[r"stablehlo.while", r"stablehlo.if"]),
    rcase("while_raise", ARGSORT_ROWS, id="argsort-rows", present=[r"dimension = 2"], absent=[r"stablehlo.while"]),
    rcase("while_raise", INNER_RECURRENCE, id="inner-loop-batched",
          present=[r"stablehlo.while.*tensor<6x1xf32>"], absent=[r"(?s)stablehlo.while.*stablehlo.while"]),
    rcase("while_raise", TRIANGULAR, changed=False, id="inner-trip-count-per-iteration-stays"),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case):
    """The rewrite, its IR, and the module before and after run through PJRT."""
    check_case(case)
