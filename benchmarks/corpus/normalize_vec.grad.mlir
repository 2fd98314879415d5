module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1000000xf32>, %arg1: tensor<1000000xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<1000000xf32> {jax.result_info = "result[1][0]"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<1000000xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1000000xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.sqrt %1 : tensor<f32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %3 = stablehlo.divide %cst_0, %2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %5 = stablehlo.divide %arg0, %4 : tensor<1000000xf32>
    %6 = stablehlo.multiply %2, %2 : tensor<f32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.divide %cst_1, %6 : tensor<f32>
    %8 = stablehlo.multiply %5, %arg1 : tensor<1000000xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<1000000xf32>, tensor<f32>) -> tensor<f32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %11 = stablehlo.multiply %10, %arg1 : tensor<1000000xf32>
    %12 = stablehlo.broadcast_in_dim %7, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %13 = stablehlo.multiply %11, %12 : tensor<1000000xf32>
    %14 = stablehlo.multiply %13, %arg0 : tensor<1000000xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.reduce(%14 init: %cst_4) applies stablehlo.add across dimensions = [0] : (tensor<1000000xf32>, tensor<f32>) -> tensor<f32>
    %16 = stablehlo.negate %15 : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %18 = stablehlo.divide %11, %17 : tensor<1000000xf32>
    %19 = stablehlo.multiply %16, %3 : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %21 = stablehlo.multiply %arg0, %20 : tensor<1000000xf32>
    %22 = stablehlo.add %18, %21 : tensor<1000000xf32>
    %23 = stablehlo.multiply %20, %arg0 : tensor<1000000xf32>
    %24 = stablehlo.add %22, %23 : tensor<1000000xf32>
    return %9, %24 : tensor<f32>, tensor<1000000xf32>
  }
}
