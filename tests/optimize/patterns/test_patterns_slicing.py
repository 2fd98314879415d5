"""Before/after and differential-execution tests of the ``slicing`` pattern family."""

import pytest

from _harness import apply_named, check_case, params, rcase, to_text

CASES = [
    # -- slice of slice / full -------------------------------------------------------------
    rcase("slice_full", """
func.func @main(%a: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = stablehlo.slice %a [0:4, 0:6] : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}""", present=[r"return %arg0"]),
    rcase("slice_full", """
func.func @main(%a: tensor<4x6xf32>) -> tensor<4x5xf32> {
  %0 = stablehlo.slice %a [0:4, 1:6] : (tensor<4x6xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}""", changed=False, id="partial-neg"),
    rcase("slice_slice", """
func.func @main(%a: tensor<20x6xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.slice %a [2:20:2, 1:5] : (tensor<20x6xf32>) -> tensor<9x4xf32>
  %1 = stablehlo.slice %0 [1:8:3, 2:4] : (tensor<9x4xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}""", present=[r"stablehlo.slice %arg0 \[4:17:6, 3:5\]"], absent=[r"tensor<9x4xf32>"]),
    # -- pushdown ------------------------------------------------------------------------------
    rcase("slice_elementwise", """
func.func @main(%a: tensor<100xf32>, %b: tensor<100xf32>) -> tensor<10xf32> {
  %c = stablehlo.constant dense<4.0> : tensor<100xf32>
  %0 = stablehlo.multiply %a, %b : tensor<100xf32>
  %1 = stablehlo.add %0, %c : tensor<100xf32>
  %2 = stablehlo.slice %1 [0:10] : (tensor<100xf32>) -> tensor<10xf32>
  return %2 : tensor<10xf32>
}""", present=[r"stablehlo.multiply .* : tensor<10xf32>", r"dense<4.000000e\+00> : tensor<10xf32>"],
         absent=[r"stablehlo.add .*tensor<100xf32>", r"stablehlo.multiply .*tensor<100xf32>"]),
    rcase("slice_elementwise", """
func.func @main(%p: tensor<i1>, %a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = stablehlo.select %p, %a, %b : tensor<i1>, tensor<8x8xf32>
  %1 = stablehlo.slice %0 [0:4, 0:8] : (tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = stablehlo.slice %0 [4:8, 0:8] : (tensor<8x8xf32>) -> tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}""", present=[r"stablehlo.select %arg0, .* : tensor<i1>, tensor<4x8xf32>"],
         absent=[r"tensor<i1>, tensor<8x8xf32>"], id="disjoint-slices-scalar-pred"),
    rcase("slice_elementwise", """
func.func @main(%a: tensor<100xf32>) -> (tensor<10xf32>, tensor<100xf32>) {
  %0 = stablehlo.exponential %a : tensor<100xf32>
  %1 = stablehlo.slice %0 [0:10] : (tensor<100xf32>) -> tensor<10xf32>
  return %1, %0 : tensor<10xf32>, tensor<100xf32>
}""", changed=False, id="other-use-neg"),
    rcase("slice_broadcast_in_dim", """
func.func @main(%a: tensor<6xf32>, %s: tensor<f32>) -> (tensor<2x3x4xf32>, tensor<5xf32>) {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<6xf32>) -> tensor<8x6x4xf32>
  %1 = stablehlo.slice %0 [1:3, 0:6:2, 0:4] : (tensor<8x6x4xf32>) -> tensor<2x3x4xf32>
  %2 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<100xf32>
  %3 = stablehlo.slice %2 [0:5] : (tensor<100xf32>) -> tensor<5xf32>
  return %1, %3 : tensor<2x3x4xf32>, tensor<5xf32>
}""", present=[r"stablehlo.slice %arg0 \[0:6:2\]", r"broadcast_in_dim %arg1, dims = \[\] : \(tensor<f32>\) -> tensor<5xf32>"],
         absent=[r"tensor<8x6x4xf32>", r"tensor<100xf32>"]),
    rcase("slice_broadcast_in_dim", """
func.func @main(%a: tensor<1x6xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<1x6xf32>) -> tensor<5x6xf32>
  %1 = stablehlo.slice %0 [1:4, 2:4] : (tensor<5x6xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}""", present=[r"stablehlo.slice %arg0 \[0:1, 2:4\]"], id="expanding-unit-dim"),
    rcase("slice_transpose", """
func.func @main(%a: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %1 = stablehlo.slice %0 [1:4, 0:4:2] : (tensor<6x4xf32>) -> tensor<3x2xf32>
  return %1 : tensor<2x3xf32>
}""".replace("return %1 : tensor<2x3xf32>", "return %1 : tensor<3x2xf32>").replace("-> tensor<2x3xf32>", "-> tensor<3x2xf32>"),
         present=[r"stablehlo.slice %arg0 \[0:4:2, 1:4\]", r"transpose .* -> tensor<3x2xf32>"]),
    rcase("slice_reshape_unit_dims", """
func.func @main(%a: tensor<6x1x4xf32>) -> tensor<1x3x2xf32> {
  %0 = stablehlo.reshape %a : (tensor<6x1x4xf32>) -> tensor<1x6x4xf32>
  %1 = stablehlo.slice %0 [0:1, 1:4, 2:4] : (tensor<1x6x4xf32>) -> tensor<1x3x2xf32>
  return %1 : tensor<1x3x2xf32>
}""", present=[r"stablehlo.slice %arg0 \[1:4, 0:1, 2:4\]"]),
    rcase("slice_reshape_major", """
func.func @main(%a: tensor<4x5x6xf32>) -> tensor<10x6xf32> {
  %0 = stablehlo.reshape %a : (tensor<4x5x6xf32>) -> tensor<20x6xf32>
  %1 = stablehlo.slice %0 [10:20, 0:6] : (tensor<20x6xf32>) -> tensor<10x6xf32>
  return %1 : tensor<10x6xf32>
}""", present=[r"stablehlo.slice %arg0 \[2:4, 0:5, 0:6\]"]),
    rcase("slice_reshape_major", """
func.func @main(%a: tensor<4x5x6xf32>) -> tensor<9x6xf32> {
  %0 = stablehlo.reshape %a : (tensor<4x5x6xf32>) -> tensor<20x6xf32>
  %1 = stablehlo.slice %0 [10:19, 0:6] : (tensor<20x6xf32>) -> tensor<9x6xf32>
  return %1 : tensor<9x6xf32>
}""", changed=False, id="partial-row-neg"),
    rcase("slice_dot_general", """
func.func @main(%x: tensor<64x16xf32>, %y: tensor<16x8xf32>) -> tensor<10x3xf32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] : (tensor<64x16xf32>, tensor<16x8xf32>) -> tensor<64x8xf32>
  %1 = stablehlo.slice %0 [0:10, 2:8:2] : (tensor<64x8xf32>) -> tensor<10x3xf32>
  return %1 : tensor<10x3xf32>
}""", present=[r"stablehlo.slice %arg0 \[0:10, 0:16\]", r"stablehlo.slice %arg1 \[0:16, 2:8:2\]",
               r"dot_general .* -> tensor<10x3xf32>"], absent=[r"tensor<64x8xf32>"]),
    rcase("slice_dot_general", """
func.func @main(%x: tensor<3x8x5xf32>, %y: tensor<3x5x4xf32>) -> tensor<2x8x4xf32> {
  %0 = stablehlo.dot_general %x, %y, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<3x8x5xf32>, tensor<3x5x4xf32>) -> tensor<3x8x4xf32>
  %1 = stablehlo.slice %0 [1:3, 0:8, 0:4] : (tensor<3x8x4xf32>) -> tensor<2x8x4xf32>
  return %1 : tensor<2x8x4xf32>
}""", present=[r"stablehlo.slice %arg0 \[1:3, 0:8, 0:5\]", r"stablehlo.slice %arg1 \[1:3, 0:5, 0:4\]"],
         id="batch"),
    rcase("slice_reduce", """
func.func @main(%x: tensor<50x8xf32>) -> tensor<5xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<50x8xf32>, tensor<f32>) -> tensor<50xf32>
  %1 = stablehlo.slice %0 [10:20:2] : (tensor<50xf32>) -> tensor<5xf32>
  return %1 : tensor<5xf32>
}""", present=[r"stablehlo.slice %arg0 \[10:20:2, 0:8\]", r"-> tensor<5xf32>"], absent=[r"tensor<50xf32>"]),
    rcase("slice_concatenate", """
func.func @main(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<9x3xf32>
  %1 = stablehlo.slice %0 [5:7, 0:3] : (tensor<9x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}""", present=[r"stablehlo.slice %arg1 \[1:3, 0:3\]"], absent=["concatenate"]),
    rcase("slice_concatenate", """
func.func @main(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>, %c: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.concatenate %a, %b, %c, dim = 0 : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<2x3xf32>) -> tensor<11x3xf32>
  %1 = stablehlo.slice %0 [2:6, 1:3] : (tensor<11x3xf32>) -> tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}""", present=[r"stablehlo.slice %arg0 \[2:4, 1:3\]", r"stablehlo.slice %arg1 \[0:2, 1:3\]"],
         absent=[r"concatenate .*%arg2"], id="two-operands"),
    rcase("slice_concatenate", """
func.func @main(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<9x3xf32>
  %1 = stablehlo.slice %0 [4:9:2, 0:3] : (tensor<9x3xf32>) -> tensor<3x3xf32>
  return %1 : tensor<3x3xf32>
}""", present=[r"stablehlo.slice %arg1 \[0:5:2, 0:3\]"], id="strided"),
    rcase("slice_pad", """
func.func @main(%a: tensor<4x5xf32>) -> (tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x2xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %a, %z, low = [2, 1], high = [3, 0], interior = [0, 0] : (tensor<4x5xf32>, tensor<f32>) -> tensor<9x6xf32>
  %1 = stablehlo.slice %0 [3:5, 2:5] : (tensor<9x6xf32>) -> tensor<2x3xf32>
  %2 = stablehlo.slice %0 [0:3, 0:3] : (tensor<9x6xf32>) -> tensor<3x3xf32>
  %3 = stablehlo.slice %0 [6:8, 0:2] : (tensor<9x6xf32>) -> tensor<2x2xf32>
  return %1, %2, %3 : tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x2xf32>
}""", present=[r"stablehlo.slice %arg0 \[1:3, 1:4\]", r"low = \[2, 1\], high = \[0, 0\]",
               r"broadcast_in_dim %cst, dims = \[\] : \(tensor<f32>\) -> tensor<2x2xf32>"],
         absent=[r"tensor<9x6xf32>"]),
    rcase("slice_iota", """
func.func @main() -> (tensor<4x3xi32>, tensor<3xi32>, tensor<3xf32>) {
  %0 = stablehlo.iota dim = 1 : tensor<8x6xi32>
  %1 = stablehlo.slice %0 [2:6, 0:3] : (tensor<8x6xi32>) -> tensor<4x3xi32>
  %2 = stablehlo.iota dim = 0 : tensor<10xi32>
  %3 = stablehlo.slice %2 [1:10:3] : (tensor<10xi32>) -> tensor<3xi32>
  %4 = stablehlo.iota dim = 0 : tensor<10xf32>
  %5 = stablehlo.slice %4 [4:7] : (tensor<10xf32>) -> tensor<3xf32>
  return %1, %3, %5 : tensor<4x3xi32>, tensor<3xi32>, tensor<3xf32>
}""", present=[r"iota dim = 1 : tensor<4x3xi32>", r"stablehlo.multiply", r"stablehlo.add"],
         absent=[r"stablehlo.slice"]),
    rcase("slice_reverse", """
func.func @main(%a: tensor<10x4xf32>) -> tensor<3x4xf32> {
  %0 = stablehlo.reverse %a, dims = [0] : tensor<10x4xf32>
  %1 = stablehlo.slice %0 [1:8:3, 0:4] : (tensor<10x4xf32>) -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}""", present=[r"stablehlo.slice %arg0 \[2:9:3, 0:4\]", r"reverse .* tensor<3x4xf32>"]),
    rcase("slice_dynamic_update_slice", """
func.func @main(%a: tensor<10x4xf32>, %u: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x2xf32>, tensor<3x4xf32>) {
  %i = stablehlo.constant dense<5> : tensor<i32>
  %j = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %j : (tensor<10x4xf32>, tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<10x4xf32>
  %1 = stablehlo.slice %0 [6:8, 0:4] : (tensor<10x4xf32>) -> tensor<2x4xf32>
  %2 = stablehlo.slice %0 [1:3, 1:3] : (tensor<10x4xf32>) -> tensor<2x2xf32>
  %3 = stablehlo.slice %0 [4:7, 0:4] : (tensor<10x4xf32>) -> tensor<3x4xf32>
  return %1, %2, %3 : tensor<2x4xf32>, tensor<2x2xf32>, tensor<3x4xf32>
}""", present=[r"stablehlo.slice %arg1 \[1:3, 0:4\]", r"stablehlo.slice %arg0 \[1:3, 1:3\]",
               r"slice %0 \[4:7, 0:4\]"]),
    rcase("slice_dynamic_update_slice", """
func.func @main(%a: tensor<10x4xf32>, %u: tensor<3x4xf32>) -> (tensor<10x4xf32>, tensor<2x4xf32>) {
  %i = stablehlo.constant dense<5> : tensor<i32>
  %j = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %j : (tensor<10x4xf32>, tensor<3x4xf32>, tensor<i32>, tensor<i32>) -> tensor<10x4xf32>
  %1 = stablehlo.slice %0 [6:8, 0:4] : (tensor<10x4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<10x4xf32>, tensor<2x4xf32>
}""", changed=False, id="update_kept_reads_stay_on_it"),
    rcase("dynamic_slice_of_updated_element", """
func.func @main(%a: tensor<6x6xf32>, %v: tensor<1x1xf32>, %i: tensor<i32>, %j: tensor<i32>) -> (tensor<1x1xf32>, tensor<1x1xf32>, tensor<6x6xf32>) {
  %0 = stablehlo.dynamic_update_slice %a, %v, %i, %j : (tensor<6x6xf32>, tensor<1x1xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  %1 = stablehlo.dynamic_slice %0, %j, %j, sizes = [1, 1] : (tensor<6x6xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1xf32>
  %2 = stablehlo.dynamic_slice %0, %i, %j, sizes = [1, 1] : (tensor<6x6xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1xf32>
  return %1, %2, %0 : tensor<1x1xf32>, tensor<1x1xf32>, tensor<6x6xf32>
}""", present=[r"stablehlo.select", r"dynamic_slice %arg0, %arg3, %arg3", r"return %\d+, %arg1, %0"],
          absent=[r"dynamic_slice %0"], int_range=(-2, 8), id="element_read_after_element_write"),
    rcase("dynamic_slice_of_updated_element", """
func.func @main(%a: tensor<6x6xf32>, %v: tensor<1x1xf32>, %w: tensor<1x1xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<1x1xf32> {
  %0 = stablehlo.dynamic_update_slice %a, %v, %i, %j : (tensor<6x6xf32>, tensor<1x1xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  %1 = stablehlo.dynamic_update_slice %0, %w, %j, %i : (tensor<6x6xf32>, tensor<1x1xf32>, tensor<i32>, tensor<i32>) -> tensor<6x6xf32>
  %2 = stablehlo.dynamic_slice %1, %j, %j, sizes = [1, 1] : (tensor<6x6xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1xf32>
  return %2 : tensor<1x1xf32>
}""", changed=False, id="chains_of_writes_stay"),
    rcase("slice_dynamic_slice", """
func.func @main(%a: tensor<10x6xf32>, %i: tensor<i32>) -> tensor<2x3xf32> {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %a, %i, %z, sizes = [4, 6] : (tensor<10x6xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>
  %1 = stablehlo.slice %0 [1:3, 2:5] : (tensor<4x6xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}""", present=[r"stablehlo.clamp", r"dynamic_slice .* sizes = \[2, 3\]"], absent=[r"tensor<4x6xf32>"],
         int_range=(-3, 12)),
    # -- concatenate ---------------------------------------------------------------------------------
    rcase("concat_single_operand", """
func.func @main(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.concatenate %a, dim = 0 : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}""", present=[r"return %arg0"]),
    rcase("concat_remove_empty", """
func.func @main(%a: tensor<4x3xf32>, %b: tensor<0x3xf32>, %c: tensor<2x3xf32>) -> tensor<6x3xf32> {
  %0 = stablehlo.concatenate %a, %b, %c, dim = 0 : (tensor<4x3xf32>, tensor<0x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}""", present=[r"concatenate %arg0, %arg2, dim = 0"]),
    rcase("concat_flatten", """
func.func @main(%a: tensor<4x3xf32>, %b: tensor<1x3xf32>, %c: tensor<2x3xf32>) -> tensor<11x3xf32> {
  %0 = stablehlo.concatenate %b, %c, dim = 0 : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %1 = stablehlo.concatenate %a, %0, %a, dim = 0 : (tensor<4x3xf32>, tensor<3x3xf32>, tensor<4x3xf32>) -> tensor<11x3xf32>
  return %1 : tensor<11x3xf32>
}""", present=[r"concatenate %arg0, %arg1, %arg2, %arg0, dim = 0"]),
    rcase("concat_adjacent_slices", """
func.func @main(%a: tensor<10x3xf32>, %b: tensor<2x2xf32>) -> tensor<9x2xf32> {
  %0 = stablehlo.slice %a [1:4, 0:2] : (tensor<10x3xf32>) -> tensor<3x2xf32>
  %1 = stablehlo.slice %a [4:8, 0:2] : (tensor<10x3xf32>) -> tensor<4x2xf32>
  %2 = stablehlo.concatenate %0, %1, %b, dim = 0 : (tensor<3x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<9x2xf32>
  return %2 : tensor<9x2xf32>
}""", present=[r"stablehlo.slice %arg0 \[1:8, 0:2\]"], absent=[r"\[4:8, 0:2\]"]),
    rcase("concat_adjacent_slices", """
func.func @main(%a: tensor<10x3xf32>) -> tensor<7x2xf32> {
  %0 = stablehlo.slice %a [1:4, 0:2] : (tensor<10x3xf32>) -> tensor<3x2xf32>
  %1 = stablehlo.slice %a [4:8, 1:3] : (tensor<10x3xf32>) -> tensor<4x2xf32>
  %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<7x2xf32>
  return %2 : tensor<7x2xf32>
}""", changed=False, id="other-window-neg"),
    rcase("concat_merge_constants", """
func.func @main(%a: tensor<2xf32>) -> tensor<6xf32> {
  %c1 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c2 = stablehlo.constant dense<3.0> : tensor<2xf32>
  %0 = stablehlo.concatenate %a, %c1, %c2, dim = 0 : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}""", present=[r"dense<\[1.000000e\+00, 2.000000e\+00, 3.000000e\+00, 3.000000e\+00\]>"]),
    rcase("concat_same_splat", """
func.func @main(%s: tensor<f32>) -> (tensor<6xf32>, tensor<5xf32>) {
  %0 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2xf32>
  %1 = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<2xf32>, tensor<4xf32>) -> tensor<6xf32>
  %c = stablehlo.constant dense<1.5> : tensor<2xf32>
  %d = stablehlo.constant dense<1.5> : tensor<3xf32>
  %3 = stablehlo.concatenate %c, %d, dim = 0 : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
  return %2, %3 : tensor<6xf32>, tensor<5xf32>
}""", present=[r"broadcast_in_dim %arg0, dims = \[\] : \(tensor<f32>\) -> tensor<6xf32>"], absent=["concatenate"]),
    rcase("concat_splat_to_pad", """
func.func @main(%a: tensor<4x3xf32>) -> tensor<4x8xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<4x2xf32>
  %y = stablehlo.constant dense<0.0> : tensor<4x3xf32>
  %0 = stablehlo.concatenate %z, %a, %y, dim = 1 : (tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}""", present=[r"stablehlo.pad %arg0, .* low = \[0, 2\], high = \[0, 3\]"], absent=["concatenate"]),
    rcase("concat_splat_to_pad", """
func.func @main(%a: tensor<4x3xf32>) -> tensor<4x5xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<4x2xf32>
  %0 = stablehlo.concatenate %a, %z, dim = 1 : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}""", present=[r"low = \[0, 0\], high = \[0, 2\]"], id="trailing"),
    # -- pad -----------------------------------------------------------------------------------------------
    rcase("pad_noop", """
func.func @main(%a: tensor<4x3xf32>, %v: tensor<f32>) -> tensor<4x3xf32> {
  %0 = stablehlo.pad %a, %v, low = [0, 0], high = [0, 0], interior = [0, 0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}""", present=[r"return %arg0"]),
    rcase("pad_pad", """
func.func @main(%a: tensor<4x3xf32>, %v: tensor<f32>) -> tensor<8x4xf32> {
  %0 = stablehlo.pad %a, %v, low = [1, 0], high = [0, 2], interior = [0, 0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<5x5xf32>
  %1 = stablehlo.pad %0, %v, low = [2, -1], high = [1, 0], interior = [0, 0] : (tensor<5x5xf32>, tensor<f32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}""", present=[r"low = \[3, -1\], high = \[1, 2\]"], absent=[r"tensor<5x5xf32>"]),
    rcase("pad_pad", """
func.func @main(%a: tensor<4x3xf32>, %v: tensor<f32>) -> tensor<4x3xf32> {
  %0 = stablehlo.pad %a, %v, low = [0, -1], high = [0, 0], interior = [0, 0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x2xf32>
  %1 = stablehlo.pad %0, %v, low = [0, 1], high = [0, 0], interior = [0, 0] : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}""", changed=False, id="inner-negative-neg"),
    rcase("pad_negative_to_slice", """
func.func @main(%a: tensor<6x5xf32>, %v: tensor<f32>) -> tensor<5x4xf32> {
  %0 = stablehlo.pad %a, %v, low = [-2, 1], high = [1, -2], interior = [0, 0] : (tensor<6x5xf32>, tensor<f32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}""", present=[r"stablehlo.slice %arg0 \[2:6, 0:3\]", r"low = \[0, 1\], high = \[1, 0\]"]),
    rcase("pad_of_splat", """
func.func @main(%v: tensor<f32>) -> tensor<6x5xf32> {
  %0 = stablehlo.broadcast_in_dim %v, dims = [] : (tensor<f32>) -> tensor<4x3xf32>
  %1 = stablehlo.pad %0, %v, low = [1, 1], high = [1, 0], interior = [0, 1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<6x6xf32>
  %2 = stablehlo.slice %1 [0:6, 0:5] : (tensor<6x6xf32>) -> tensor<6x5xf32>
  return %2 : tensor<6x5xf32>
}""", present=[r"broadcast_in_dim %arg0, dims = \[\] : \(tensor<f32>\) -> tensor<6x6xf32>"], absent=["stablehlo.pad"]),
    rcase("elementwise_of_pads@add", """
func.func @main(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<6x5xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %o = stablehlo.constant dense<1.5> : tensor<f32>
  %0 = stablehlo.pad %a, %z, low = [1, 2], high = [1, 0], interior = [0, 0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<6x5xf32>
  %1 = stablehlo.pad %b, %o, low = [1, 2], high = [1, 0], interior = [0, 0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<6x5xf32>
  %2 = stablehlo.add %0, %1 : tensor<6x5xf32>
  return %2 : tensor<6x5xf32>
}""", present=[r"stablehlo.add %arg0, %arg1 : tensor<4x3xf32>", r"dense<1.500000e\+00> : tensor<f32>"],
         absent=[r"stablehlo.add .*tensor<6x5xf32>"]),
    rcase("elementwise_of_pads@multiply", """
func.func @main(%a: tensor<4x3xf32>) -> tensor<4x7xf32> {
  %z = stablehlo.constant dense<2.0> : tensor<f32>
  %k = stablehlo.constant dense<3.0> : tensor<4x7xf32>
  %0 = stablehlo.pad %a, %z, low = [0, 1], high = [0, 1], interior = [0, 1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x7xf32>
  %1 = stablehlo.multiply %0, %k : tensor<4x7xf32>
  return %1 : tensor<4x7xf32>
}""", present=[r"stablehlo.multiply %arg0, .* : tensor<4x3xf32>", r"dense<6.000000e\+00> : tensor<f32>"]),
    rcase("elementwise_of_pads@exponential", """
func.func @main(%a: tensor<4x3xf32>, %v: tensor<f32>) -> tensor<5x3xf32> {
  %0 = stablehlo.pad %a, %v, low = [1, 0], high = [0, 0], interior = [0, 0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<5x3xf32>
  %1 = stablehlo.exponential %0 : tensor<5x3xf32>
  return %1 : tensor<5x3xf32>
}""", present=[r"stablehlo.exponential %arg0 : tensor<4x3xf32>", r"stablehlo.exponential %arg1 : tensor<f32>"]),
    rcase("elementwise_of_pads@add", """
func.func @main(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<6x5xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %a, %z, low = [1, 2], high = [1, 0], interior = [0, 0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<6x5xf32>
  %1 = stablehlo.pad %b, %z, low = [2, 2], high = [0, 0], interior = [0, 0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<6x5xf32>
  %2 = stablehlo.add %0, %1 : tensor<6x5xf32>
  return %2 : tensor<6x5xf32>
}""", changed=False, id="different-padding-neg"),
    rcase("mul_pad_zero", """
func.func @main(%a: tensor<4x3xf32>, %y: tensor<6x7xf32>) -> tensor<6x7xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.pad %a, %z, low = [1, 2], high = [1, 0], interior = [0, 1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<6x7xf32>
  %1 = stablehlo.multiply %y, %0 : tensor<6x7xf32>
  return %1 : tensor<6x7xf32>
}""", present=[r"stablehlo.slice %arg1 \[1:5, 2:7:2\]", r"stablehlo.multiply .* tensor<4x3xf32>"]),
    # -- dynamic slices --------------------------------------------------------------------------------------
    rcase("dynamic_slice_full", """
func.func @main(%a: tensor<4x3xf32>, %i: tensor<i32>) -> tensor<4x3xf32> {
  %0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [4, 3] : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}""", present=[r"return %arg0"]),
    rcase("dynamic_slice_const_index", """
func.func @main(%a: tensor<10x3xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>) {
  %i = stablehlo.constant dense<4> : tensor<i32>
  %j = stablehlo.constant dense<0> : tensor<i32>
  %k = stablehlo.constant dense<-5> : tensor<i32>
  %n = stablehlo.constant dense<9> : tensor<i32>
  %0 = stablehlo.dynamic_slice %a, %i, %j, sizes = [2, 3] : (tensor<10x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %1 = stablehlo.dynamic_slice %a, %n, %k, sizes = [2, 2] : (tensor<10x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x2xf32>
}""", present=[r"stablehlo.slice %arg0 \[4:6, 0:3\]", r"stablehlo.slice %arg0 \[8:10, 0:2\]"],
         absent=["dynamic_slice"]),
    rcase("dynamic_slice_of_iota", """
func.func @main(%i: tensor<i32>) -> (tensor<1xi32>, tensor<3x4xf32>) {
  %0 = stablehlo.iota dim = 0 : tensor<10xi32>
  %1 = stablehlo.dynamic_slice %0, %i, sizes = [1] : (tensor<10xi32>, tensor<i32>) -> tensor<1xi32>
  %2 = stablehlo.iota dim = 1 : tensor<5x8xf32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %3 = stablehlo.dynamic_slice %2, %z, %i, sizes = [3, 4] : (tensor<5x8xf32>, tensor<i32>, tensor<i32>) -> tensor<3x4xf32>
  return %1, %3 : tensor<1xi32>, tensor<3x4xf32>
}""", present=[r"stablehlo.clamp", r"stablehlo.convert", r"iota dim = 1 : tensor<3x4xf32>"],
         absent=[r"dynamic_slice"], int_range=(-3, 12)),
    rcase("dynamic_slice_of_splat", """
func.func @main(%s: tensor<f32>, %i: tensor<i32>) -> (tensor<2xf32>, tensor<3xf32>) {
  %x = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %0 = stablehlo.dynamic_slice %x, %i, sizes = [2] : (tensor<8xf32>, tensor<i32>) -> tensor<2xf32>
  %c = stablehlo.constant dense<2.0> : tensor<8xf32>
  %1 = stablehlo.dynamic_slice %c, %i, sizes = [3] : (tensor<8xf32>, tensor<i32>) -> tensor<3xf32>
  return %0, %1 : tensor<2xf32>, tensor<3xf32>
}""", absent=["dynamic_slice"], int_range=(-2, 10)),
    rcase("dynamic_slice_of_broadcast", """
func.func @main(%a: tensor<6xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<2x3x4xf32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<6xf32>) -> tensor<8x6x4xf32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.dynamic_slice %0, %i, %j, %z, sizes = [2, 3, 4] : (tensor<8x6x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}""", present=[r"dynamic_slice %arg0, %arg2, sizes = \[3\]", r"broadcast_in_dim .* -> tensor<2x3x4xf32>"],
         absent=[r"tensor<8x6x4xf32>"], int_range=(-2, 9)),
    rcase("dynamic_slice_elementwise", """
func.func @main(%a: tensor<10x4xf32>, %b: tensor<10x4xf32>, %i: tensor<i32>) -> tensor<2x4xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<10x4xf32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.dynamic_slice %0, %i, %z, sizes = [2, 4] : (tensor<10x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}""", present=[r"stablehlo.multiply .* : tensor<2x4xf32>"], absent=[r"multiply .*tensor<10x4xf32>"],
         int_range=(-3, 13)),
    rcase("dynamic_slice_of_concat", """
func.func @main(%a: tensor<4xf32>, %b: tensor<10xf32>) -> tensor<2xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<4xf32>, tensor<10xf32>) -> tensor<14xf32>
  %i = stablehlo.iota dim = 0 : tensor<3xi32>
  %s = stablehlo.slice %i [1:2] : (tensor<3xi32>) -> tensor<1xi32>
  %k = stablehlo.reshape %s : (tensor<1xi32>) -> tensor<i32>
  %c = stablehlo.constant dense<5> : tensor<i32>
  %j = stablehlo.add %k, %c : tensor<i32>
  %1 = stablehlo.dynamic_slice %0, %j, sizes = [2] : (tensor<14xf32>, tensor<i32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}""", present=[r"dynamic_slice %arg1"], absent=[r"concatenate"]),
    rcase("dynamic_slice_of_concat", """
func.func @main(%a: tensor<4xf32>, %b: tensor<10xf32>, %j: tensor<i32>) -> tensor<2xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<4xf32>, tensor<10xf32>) -> tensor<14xf32>
  %1 = stablehlo.dynamic_slice %0, %j, sizes = [2] : (tensor<14xf32>, tensor<i32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}""", changed=False, id="unknown-index-neg"),
    rcase("dynamic_slice_of_pad", """
func.func @main(%x: tensor<100xf32>) -> tensor<100xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.pad %x, %z, low = [1], high = [1], interior = [0] : (tensor<100xf32>, tensor<f32>) -> tensor<102xf32>
  %acc0 = stablehlo.constant dense<0.0> : tensor<100xf32>
  %0:2 = stablehlo.while(%i = %c0, %acc = %acc0) : tensor<i32>, tensor<100xf32>
  cond {
    %n = stablehlo.constant dense<100> : tensor<i32>
    %q = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %q : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %e = stablehlo.dynamic_slice %p, %j, sizes = [1] : (tensor<102xf32>, tensor<i32>) -> tensor<1xf32>
    %s = stablehlo.sine %e : tensor<1xf32>
    %u = stablehlo.dynamic_update_slice %acc, %s, %i : (tensor<100xf32>, tensor<1xf32>, tensor<i32>) -> tensor<100xf32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i1, %u : tensor<i32>, tensor<100xf32>
  }
  return %0#1 : tensor<100xf32>
}""", present=[r"dynamic_slice %arg0, "], absent=[r"dynamic_slice %\d+, "]),
    rcase("dynamic_update_slice_of_own_slice", """
func.func @main(%x: tensor<10x4xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<10x4xf32> {
  %0 = stablehlo.dynamic_slice %x, %i, %j, sizes = [3, 2] : (tensor<10x4xf32>, tensor<i32>, tensor<i32>) -> tensor<3x2xf32>
  %1 = stablehlo.dynamic_update_slice %x, %0, %i, %j : (tensor<10x4xf32>, tensor<3x2xf32>, tensor<i32>, tensor<i32>) -> tensor<10x4xf32>
  return %1 : tensor<10x4xf32>
}""", present=[r"return %arg0"], int_range=(-3, 12)),
    rcase("dynamic_update_slice_full", """
func.func @main(%a: tensor<4x3xf32>, %u: tensor<4x3xf32>, %i: tensor<i32>) -> tensor<4x3xf32> {
  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}""", present=[r"return %arg1"]),
    rcase("dynamic_update_slice_splat_to_pad", """
func.func @main(%u: tensor<2x3xf32>) -> tensor<10x3xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<10x3xf32>
  %i = stablehlo.constant dense<20> : tensor<i32>
  %j = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %z, %u, %i, %j : (tensor<10x3xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<10x3xf32>
  return %0 : tensor<10x3xf32>
}""", present=[r"stablehlo.pad %arg0, .* low = \[8, 0\], high = \[0, 0\]"]),
    rcase("dynamic_update_slice_twice", """
func.func @main(%a: tensor<10x3xf32>, %u: tensor<2x3xf32>, %w: tensor<2x3xf32>, %i: tensor<i32>) -> tensor<10x3xf32> {
  %j = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %j : (tensor<10x3xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<10x3xf32>
  %1 = stablehlo.dynamic_update_slice %0, %w, %i, %j : (tensor<10x3xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<10x3xf32>
  return %1 : tensor<10x3xf32>
}""", present=[r"dynamic_update_slice %arg0, %arg2"], absent=[r"%arg1,"], int_range=(-2, 12)),
    # -- reverse ------------------------------------------------------------------------------------------------
    rcase("reverse_reverse", """
func.func @main(%a: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = stablehlo.reverse %a, dims = [0, 1] : tensor<4x3xf32>
  %1 = stablehlo.reverse %0, dims = [0] : tensor<4x3xf32>
  %2 = stablehlo.reverse %a, dims = [1] : tensor<4x3xf32>
  %3 = stablehlo.reverse %2, dims = [1] : tensor<4x3xf32>
  return %1, %3 : tensor<4x3xf32>, tensor<4x3xf32>
}""", present=[r"stablehlo.reverse %arg0, dims = \[1\]", r"return %[0-9]+, %arg0"]),
    rcase("reverse_unit_dims", """
func.func @main(%a: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>) {
  %0 = stablehlo.reverse %a, dims = [1] : tensor<4x1xf32>
  %1 = stablehlo.reverse %a, dims = [0, 1] : tensor<4x1xf32>
  return %0, %1 : tensor<4x1xf32>, tensor<4x1xf32>
}""", present=[r"return %arg0, %0", r"reverse %arg0, dims = \[0\]"]),
    rcase("reverse_broadcast", """
func.func @main(%a: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %1 = stablehlo.reverse %0, dims = [0] : tensor<4x3xf32>
  %2 = stablehlo.reverse %0, dims = [0, 1] : tensor<4x3xf32>
  return %1, %2 : tensor<4x3xf32>, tensor<4x3xf32>
}""", present=[r"stablehlo.reverse %arg0, dims = \[0\] : tensor<3xf32>"], absent=[r"reverse .*tensor<4x3xf32>"]),
]


@pytest.mark.parametrize("case", params(CASES))
def test_case(case):
    """The rewrite, its IR, and the module before and after run through PJRT."""
    check_case(case)


def test_every_slicing_pattern_has_a_case():
    from reactant.optimize.patterns import PATTERNS

    mine = {n.split("@")[0] for n, p in PATTERNS.items() if p.family == "slicing"}
    covered = {c.name.split("@")[0] for c in CASES if c.fires}
    assert mine <= covered, sorted(mine - covered)


SEED = """
func.func @main(%arg0: tensor<100000xf32>, %arg1: tensor<100000xf32>, %arg2: tensor<100000xf32>) -> tensor<10xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0] x [0] : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<f32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<100000xf32>
  %2 = stablehlo.multiply %1, %arg2 : tensor<100000xf32>
  %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
  %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<100000xf32>
  %4 = stablehlo.add %2, %3 : tensor<100000xf32>
  %5 = stablehlo.slice %4 [0:10] : (tensor<100000xf32>) -> tensor<10xf32>
  return %5 : tensor<10xf32>
}"""

SEED_MATRIX = """
func.func @main(%x: tensor<1000x16xf32>, %y: tensor<16x8xf32>, %z: tensor<1000x8xf32>) -> tensor<10x8xf32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] : (tensor<1000x16xf32>, tensor<16x8xf32>) -> tensor<1000x8xf32>
  %1 = stablehlo.multiply %0, %z : tensor<1000x8xf32>
  %c = stablehlo.constant dense<4.0> : tensor<1000x8xf32>
  %2 = stablehlo.add %1, %c : tensor<1000x8xf32>
  %3 = stablehlo.slice %2 [0:10, 0:8] : (tensor<1000x8xf32>) -> tensor<10x8xf32>
  return %3 : tensor<10x8xf32>
}"""


@pytest.mark.parametrize("text,big", [(SEED, "-> tensor<100000xf32>"), (SEED_MATRIX, "-> tensor<1000x8xf32>")],
                         ids=["vector", "matrix"])
def test_seed_slice_of_dot_computes_ten_rows(text, big):
    """The seed case: (dot(x, y) * z + 4)[0:10] ends up computing only the 10 rows."""
    from reactant.optimize.patterns import PATTERNS

    names = [n for n, p in PATTERNS.items() if p.family == "slicing" and not p.fast_math]
    out = to_text(apply_named(text, names))
    body = out.split("func.func")[1]
    assert "stablehlo.slice %arg" in body
    for line in body.splitlines():
        if "multiply" in line or "add" in line:
            assert "tensor<10" in line, out
    assert big not in body, out
    check_case(rcase("slice_elementwise", text, also=tuple(names)))
