module @jit_softmax_xent_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<512x1000xf32>, %arg1: tensor<512x1000xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<512x1000xf32>, tensor<f32>) -> tensor<512xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<512xf32>) -> tensor<512x1xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<512x1xf32>) -> tensor<512x1000xf32>
    %3 = stablehlo.subtract %arg0, %2 : tensor<512x1000xf32>
    %4 = stablehlo.exponential %3 : tensor<512x1000xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<512x1000xf32>, tensor<f32>) -> tensor<512xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<512xf32>) -> tensor<512x1xf32>
    %7 = stablehlo.log %6 : tensor<512x1xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<512x1xf32>) -> tensor<512x1000xf32>
    %9 = stablehlo.subtract %3, %8 : tensor<512x1000xf32>
    %10 = stablehlo.multiply %9, %arg1 : tensor<512x1000xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.reduce(%10 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<512x1000xf32>, tensor<f32>) -> tensor<512xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.reduce(%11 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<512xf32>, tensor<f32>) -> tensor<f32>
    %cst_3 = stablehlo.constant dense<5.120000e+02> : tensor<f32>
    %13 = stablehlo.divide %12, %cst_3 : tensor<f32>
    %14 = stablehlo.negate %13 : tensor<f32>
    return %14 : tensor<f32>
  }
}
