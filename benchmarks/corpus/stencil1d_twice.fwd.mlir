module @jit_stencil1d_twice_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2048x2048xf32>) -> (tensor<2044x2048xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:2046, 0:2048] : (tensor<2048x2048xf32>) -> tensor<2046x2048xf32>
    %1 = stablehlo.slice %arg0 [1:2047, 0:2048] : (tensor<2048x2048xf32>) -> tensor<2046x2048xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2046x2048xf32>
    %3 = stablehlo.multiply %2, %1 : tensor<2046x2048xf32>
    %4 = stablehlo.subtract %0, %3 : tensor<2046x2048xf32>
    %5 = stablehlo.slice %arg0 [2:2048, 0:2048] : (tensor<2048x2048xf32>) -> tensor<2046x2048xf32>
    %6 = stablehlo.add %4, %5 : tensor<2046x2048xf32>
    %7 = stablehlo.slice %6 [0:2044, 0:2048] : (tensor<2046x2048xf32>) -> tensor<2044x2048xf32>
    %8 = stablehlo.slice %6 [1:2045, 0:2048] : (tensor<2046x2048xf32>) -> tensor<2044x2048xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2044x2048xf32>
    %10 = stablehlo.multiply %9, %8 : tensor<2044x2048xf32>
    %11 = stablehlo.subtract %7, %10 : tensor<2044x2048xf32>
    %12 = stablehlo.slice %6 [2:2046, 0:2048] : (tensor<2046x2048xf32>) -> tensor<2044x2048xf32>
    %13 = stablehlo.add %11, %12 : tensor<2044x2048xf32>
    return %13 : tensor<2044x2048xf32>
  }
}
