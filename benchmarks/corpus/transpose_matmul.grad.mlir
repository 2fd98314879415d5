module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<512x512xf32>, %arg1: tensor<512x512xf32>, %arg2: tensor<512x512xf32>, %arg3: tensor<512x512xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<512x512xf32> {jax.result_info = "result[1][0]"}, tensor<512x512xf32> {jax.result_info = "result[1][1]"}, tensor<512x512xf32> {jax.result_info = "result[1][2]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %3 = stablehlo.multiply %2, %arg3 : tensor<512x512xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<512x512xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %6 = stablehlo.multiply %5, %arg3 : tensor<512x512xf32>
    %7 = stablehlo.dot_general %6, %1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = stablehlo.transpose %7, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %9 = stablehlo.dot_general %6, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %10 = stablehlo.transpose %9, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %11 = stablehlo.dot_general %10, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %12 = stablehlo.transpose %11, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %13 = stablehlo.dot_general %10, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    return %4, %13, %12, %8 : tensor<f32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>
  }
}
