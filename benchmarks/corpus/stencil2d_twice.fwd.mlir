module @jit_stencil2d_twice_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2048x2048xf32>) -> (tensor<2044x2044xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [0:2046, 1:2047] : (tensor<2048x2048xf32>) -> tensor<2046x2046xf32>
    %1 = stablehlo.slice %arg0 [2:2048, 1:2047] : (tensor<2048x2048xf32>) -> tensor<2046x2046xf32>
    %2 = stablehlo.add %0, %1 : tensor<2046x2046xf32>
    %3 = stablehlo.slice %arg0 [1:2047, 0:2046] : (tensor<2048x2048xf32>) -> tensor<2046x2046xf32>
    %4 = stablehlo.add %2, %3 : tensor<2046x2046xf32>
    %5 = stablehlo.slice %arg0 [1:2047, 2:2048] : (tensor<2048x2048xf32>) -> tensor<2046x2046xf32>
    %6 = stablehlo.add %4, %5 : tensor<2046x2046xf32>
    %7 = stablehlo.slice %arg0 [1:2047, 1:2047] : (tensor<2048x2048xf32>) -> tensor<2046x2046xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2046x2046xf32>
    %9 = stablehlo.multiply %8, %7 : tensor<2046x2046xf32>
    %10 = stablehlo.subtract %6, %9 : tensor<2046x2046xf32>
    %11 = stablehlo.slice %10 [0:2044, 1:2045] : (tensor<2046x2046xf32>) -> tensor<2044x2044xf32>
    %12 = stablehlo.slice %10 [2:2046, 1:2045] : (tensor<2046x2046xf32>) -> tensor<2044x2044xf32>
    %13 = stablehlo.add %11, %12 : tensor<2044x2044xf32>
    %14 = stablehlo.slice %10 [1:2045, 0:2044] : (tensor<2046x2046xf32>) -> tensor<2044x2044xf32>
    %15 = stablehlo.add %13, %14 : tensor<2044x2044xf32>
    %16 = stablehlo.slice %10 [1:2045, 2:2046] : (tensor<2046x2046xf32>) -> tensor<2044x2044xf32>
    %17 = stablehlo.add %15, %16 : tensor<2044x2044xf32>
    %18 = stablehlo.slice %10 [1:2045, 1:2045] : (tensor<2046x2046xf32>) -> tensor<2044x2044xf32>
    %cst_0 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2044x2044xf32>
    %20 = stablehlo.multiply %19, %18 : tensor<2044x2044xf32>
    %21 = stablehlo.subtract %17, %20 : tensor<2044x2044xf32>
    return %21 : tensor<2044x2044xf32>
  }
}
