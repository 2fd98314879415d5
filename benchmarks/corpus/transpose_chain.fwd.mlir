module @jit_transpose_chain_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<512x512xf32>, %arg1: tensor<512x512xf32>, %arg2: tensor<512x512xf32>) -> (tensor<512x512xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %1 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %4 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %5 = stablehlo.dot_general %3, %4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %6 = stablehlo.transpose %5, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %9 = stablehlo.transpose %8, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %10 = stablehlo.dot_general %7, %9, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %11 = stablehlo.transpose %10, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %12 = stablehlo.add %6, %11 : tensor<512x512xf32>
    %13 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %14 = stablehlo.dot_general %13, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %15 = stablehlo.transpose %14, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %16 = stablehlo.transpose %15, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %17 = stablehlo.add %12, %16 : tensor<512x512xf32>
    return %17 : tensor<512x512xf32>
  }
}
