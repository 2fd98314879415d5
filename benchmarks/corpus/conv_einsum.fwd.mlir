module @jit_conv_einsum_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x32x32x16xf32>, %arg1: tensor<3x3x16x32xf32>, %arg2: tensor<32xf32>) -> (tensor<8x32x32x32xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<8x32x32x16xf32>, tensor<i32>) -> tensor<8x34x34x16xf32>
    %1 = stablehlo.slice %0 [0:8, 0:32, 0:32, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %2 = stablehlo.slice %0 [0:8, 0:32, 1:33, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %3 = stablehlo.slice %0 [0:8, 0:32, 2:34, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %4 = stablehlo.slice %0 [0:8, 1:33, 0:32, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %5 = stablehlo.slice %0 [0:8, 1:33, 1:33, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %6 = stablehlo.slice %0 [0:8, 1:33, 2:34, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %7 = stablehlo.slice %0 [0:8, 2:34, 0:32, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %8 = stablehlo.slice %0 [0:8, 2:34, 1:33, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %9 = stablehlo.slice %0 [0:8, 2:34, 2:34, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %10 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %11 = stablehlo.broadcast_in_dim %2, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %12 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %13 = stablehlo.broadcast_in_dim %4, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %14 = stablehlo.broadcast_in_dim %5, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %15 = stablehlo.broadcast_in_dim %6, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %16 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %17 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %18 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %19 = stablehlo.concatenate %10, %11, %12, %13, %14, %15, %16, %17, %18, dim = 3 : (tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x9x16xf32>
    %20 = stablehlo.reshape %arg1 : (tensor<3x3x16x32xf32>) -> tensor<9x16x32xf32>
    %21 = stablehlo.dot_general %19, %20, contracting_dims = [4, 3] x [1, 0], precision = [DEFAULT, DEFAULT] : (tensor<8x32x32x9x16xf32>, tensor<9x16x32xf32>) -> tensor<8x32x32x32xf32>
    %22 = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<32xf32>) -> tensor<1x1x1x32xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1, 2, 3] : (tensor<1x1x1x32xf32>) -> tensor<8x32x32x32xf32>
    %24 = stablehlo.add %21, %23 : tensor<8x32x32x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x32x32x32xf32>
    %26 = stablehlo.maximum %24, %25 : tensor<8x32x32x32xf32>
    return %26 : tensor<8x32x32x32xf32>
  }
  func.func private @_pad(%arg0: tensor<8x32x32x16xf32>, %arg1: tensor<i32>) -> tensor<8x34x34x16xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    return %1 : tensor<8x34x34x16xf32>
  }
}
