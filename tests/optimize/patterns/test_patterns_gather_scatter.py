"""Before/after and differential-execution tests of the ``gather_scatter`` pattern family."""

import pytest

from _harness import check_case, params, rcase

SCATTER_SET = """({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      stablehlo.return %q : tensor<f32>
    })"""
SCATTER_ADD = """({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %s = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %s : tensor<f32>
    })"""
SCATTER_KEEP = """({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      stablehlo.return %p : tensor<f32>
    })"""

CASES = [
    # -- gather -------------------------------------------------------------------------------
    rcase("gather_full_slice", """
func.func @main(%x: tensor<1x5xf32>, %i: tensor<3x2xi32>) -> tensor<3x5xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 5>}> : (tensor<1x5xf32>, tensor<3x2xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}""", present=[r"broadcast_in_dim .* dims = \[1\] : \(tensor<5xf32>\) -> tensor<3x5xf32>"],
         absent=["gather"], int_range=(-9, 9)),
    rcase("gather_known_indices_to_slice", """
func.func @main(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<1000xi32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1000xi32>
  %2 = stablehlo.compare LT, %0, %1, SIGNED : (tensor<1000xi32>, tensor<1000xi32>) -> tensor<1000xi1>
  %c_0 = stablehlo.constant dense<1000> : tensor<i32>
  %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1000xi32>
  %4 = stablehlo.add %0, %3 : tensor<1000xi32>
  %5 = stablehlo.select %2, %4, %0 : tensor<1000xi1>, tensor<1000xi32>
  %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<1000xi32>) -> tensor<1000x1xi32>
  %7 = "stablehlo.gather"(%x, %6) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<1000xf32>, tensor<1000x1xi32>) -> tensor<1000x1xf32>
  %8 = stablehlo.reshape %7 : (tensor<1000x1xf32>) -> tensor<1000xf32>
  return %8 : tensor<1000xf32>
}""", present=[r"stablehlo.broadcast_in_dim %arg0, dims = \[0\] : \(tensor<1000xf32>\) -> tensor<1000x1xf32>"],
         absent=["gather"], id="vmap-iota"),
    rcase("gather_known_indices_to_slice", """
func.func @main(%x: tensor<6x7xf32>) -> tensor<3x2xf32> {
  %i = stablehlo.constant dense<[[1, 2], [1, 4], [1, 6]]> : tensor<3x2xi32>
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 1>}> : (tensor<6x7xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}""", present=[r"stablehlo.slice %arg0 \[1:3, 2:7:2\]", r"transpose"], absent=["gather"], id="strided-transposed"),
    rcase("gather_known_indices_to_slice", """
func.func @main(%x: tensor<6x7xf32>) -> tensor<2x3xf32> {
  %i = stablehlo.constant dense<[9, -3]> : tensor<2xi32>
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 0>, indices_are_sorted = false, slice_sizes = array<i64: 2, 3>}> : (tensor<6x7xf32>, tensor<2xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}""", present=[r"stablehlo.slice %arg0 \[4:6, 0:3\]"], absent=["gather"], id="clamped-constant"),
    rcase("gather_known_indices_to_slice", """
func.func @main(%x: tensor<6x7xf32>) -> tensor<3xf32> {
  %i = stablehlo.constant dense<[[1, 2], [3, 1], [0, 0]]> : tensor<3x2xi32>
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<6x7xf32>, tensor<3x2xi32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}""", changed=False, id="irregular-neg"),
    rcase("gather_single_to_dynamic_slice", """
func.func @main(%x: tensor<6x7xf32>, %i: tensor<1x2xi32>) -> tensor<1x3xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<6x7xf32>, tensor<1x2xi32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}""", present=[r"dynamic_slice %arg0, .* sizes = \[1, 3\]"], absent=["gather"], int_range=(-3, 9)),
    rcase("gather_of_scatter_same_indices", """
func.func @main(%v: tensor<4xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<8x8xf32>
  %i = stablehlo.constant dense<[[0, 1], [2, 2], [5, 3], [7, 0]]> : tensor<4x2xi32>
  %0 = "stablehlo.scatter"(%z, %i, %v) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_SET + """ : (tensor<8x8xf32>, tensor<4x2xi32>, tensor<4xf32>) -> tensor<8x8xf32>
  %1 = "stablehlo.gather"(%0, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<8x8xf32>, tensor<4x2xi32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}""", present=[r"return %arg0"]),
    # -- scatter ------------------------------------------------------------------------------------
    rcase("gather_of_splat", """
func.func @main(%s: tensor<f32>, %i: tensor<3x1xi32>) -> tensor<3x2xf32> {
  %x = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2>}> : (tensor<8x2xf32>, tensor<3x1xi32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}""", present=[r"broadcast_in_dim %arg0, dims = \[\] : \(tensor<f32>\) -> tensor<3x2xf32>"], absent=["gather"],
         int_range=(-2, 10)),
    rcase("scatter_same_splat", """
func.func @main(%i: tensor<3x1xi32>) -> tensor<8xf32> {
  %x = stablehlo.constant dense<1.5> : tensor<8xf32>
  %u = stablehlo.constant dense<1.5> : tensor<3xf32>
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_SET + """ : (tensor<8xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}""", absent=["scatter"], int_range=(-2, 10)),
    rcase("scatter_keep_combiner", """
func.func @main(%x: tensor<8xf32>, %i: tensor<3x1xi32>, %u: tensor<3xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_KEEP + """ : (tensor<8xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}""", present=[r"return %arg0"]),
    rcase("scatter_empty_updates", """
func.func @main(%x: tensor<8xf32>, %i: tensor<0x1xi32>, %u: tensor<0xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_ADD + """ : (tensor<8xf32>, tensor<0x1xi32>, tensor<0xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}""", present=[r"return %arg0"]),
    rcase("scatter_box_to_update_slice", """
func.func @main(%x: tensor<8x5xf32>, %u: tensor<3x5xf32>) -> tensor<8x5xf32> {
  %i = stablehlo.iota dim = 0 : tensor<3x1xi32>
  %c = stablehlo.constant dense<2> : tensor<3x1xi32>
  %j = stablehlo.add %i, %c : tensor<3x1xi32>
  %0 = "stablehlo.scatter"(%x, %j, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_SET + """ : (tensor<8x5xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}""", present=[r"dynamic_update_slice %arg0, %arg1"], absent=["scatter"]),
    rcase("scatter_box_to_update_slice", """
func.func @main(%x: tensor<8x5xf32>, %u: tensor<5x3xf32>) -> tensor<8x5xf32> {
  %i = stablehlo.iota dim = 0 : tensor<3x1xi32>
  %c = stablehlo.constant dense<4> : tensor<3x1xi32>
  %j = stablehlo.add %i, %c : tensor<3x1xi32>
  %0 = "stablehlo.scatter"(%x, %j, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_ADD + """ : (tensor<8x5xf32>, tensor<3x1xi32>, tensor<5x3xf32>) -> tensor<8x5xf32>
  return %0 : tensor<8x5xf32>
}""", present=[r"transpose %arg1", r"stablehlo.slice %arg0 \[4:7, 0:5\]", r"dynamic_update_slice"],
         absent=["scatter"], id="add-transposed"),
    rcase("scatter_box_to_update_slice", """
func.func @main(%u: tensor<3xf32>) -> tensor<10xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<10xf32>
  %i = stablehlo.constant dense<[[6], [7], [8]]> : tensor<3x1xi32>
  %0 = "stablehlo.scatter"(%z, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_ADD + """ : (tensor<10xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}""", present=[r"stablehlo.pad .* low = \[6\], high = \[1\]"], absent=["scatter"], id="add-into-zeros-pad"),
    rcase("scatter_box_to_update_slice", """
func.func @main(%x: tensor<10xf32>, %u: tensor<3xf32>) -> tensor<10xf32> {
  %i = stablehlo.constant dense<[[6], [8], [10]]> : tensor<3x1xi32>
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_SET + """ : (tensor<10xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}""", changed=False, id="out-of-bounds-neg"),
    rcase("scatter_box_to_update_slice", """
func.func @main(%x: tensor<10xf32>, %u: tensor<3xf32>) -> tensor<10xf32> {
  %i = stablehlo.constant dense<[[6], [6], [7]]> : tensor<3x1xi32>
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_ADD + """ : (tensor<10xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}""", changed=False, id="repeated-neg"),
    rcase("scatter_diagonal_to_select", """
func.func @main(%v: tensor<6xf32>) -> (tensor<8x7xf32>, tensor<6x6xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<8x7xf32>
  %i = stablehlo.iota dim = 0 : tensor<6x1xi32>
  %ii = stablehlo.concatenate %i, %i, dim = 1 : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x2xi32>
  %0 = "stablehlo.scatter"(%z, %ii, %v) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_SET + """ : (tensor<8x7xf32>, tensor<6x2xi32>, tensor<6xf32>) -> tensor<8x7xf32>
  %o = stablehlo.constant dense<1.5> : tensor<6x6xf32>
  %1 = "stablehlo.scatter"(%o, %ii, %v) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> """ + SCATTER_ADD + """ : (tensor<6x6xf32>, tensor<6x2xi32>, tensor<6xf32>) -> tensor<6x6xf32>
  return %0, %1 : tensor<8x7xf32>, tensor<6x6xf32>
}""", present=[r"compare +EQ", r"stablehlo.select"], absent=["scatter"]),
    rcase("scatter_single_in_bounds_to_dus", """
func.func @main(%x: tensor<10xf32>) -> tensor<10xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<10xf32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %z) : tensor<i32>, tensor<10xf32>
  cond {
    %n = stablehlo.constant dense<10> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %e = stablehlo.dynamic_slice %x, %i, sizes = [1] : (tensor<10xf32>, tensor<i32>) -> tensor<1xf32>
    %r = stablehlo.reshape %e : (tensor<1xf32>) -> tensor<f32>
    %t = stablehlo.sine %r : tensor<f32>
    %idx = stablehlo.reshape %i : (tensor<i32>) -> tensor<1xi32>
    %u = "stablehlo.scatter"(%acc, %idx, %t) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> """ + SCATTER_ADD + """ : (tensor<10xf32>, tensor<1xi32>, tensor<f32>) -> tensor<10xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %u : tensor<i32>, tensor<10xf32>
  }
  return %0#1 : tensor<10xf32>
}""", present=[r"dynamic_update_slice %iterArg_\d+"], absent=["scatter"]),
    rcase("scatter_single_in_bounds_to_dus", """
func.func @main(%x: tensor<10xf32>, %i: tensor<1xi32>, %t: tensor<f32>) -> tensor<10xf32> {
  %u = "stablehlo.scatter"(%x, %i, %t) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> """ + SCATTER_SET + """ : (tensor<10xf32>, tensor<1xi32>, tensor<f32>) -> tensor<10xf32>
  return %u : tensor<10xf32>
}""", changed=False, id="unknown-range-neg", int_range=(-3, 13)),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case):
    """The rewrite, its IR, and the module before and after run through PJRT."""
    check_case(case)


def test_every_gather_scatter_pattern_has_a_case():
    from reactant.optimize.patterns import PATTERNS

    mine = {n for n, p in PATTERNS.items() if p.family == "gather_scatter"}
    covered = {c.name for c in CASES if c.fires}
    assert mine <= covered, sorted(mine - covered)
