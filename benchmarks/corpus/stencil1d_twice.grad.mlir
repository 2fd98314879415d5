module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2048x2048xf32>, %arg1: tensor<2044x2048xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<2048x2048xf32> {jax.result_info = "result[1][0]"}) {
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
    %14 = stablehlo.multiply %13, %arg1 : tensor<2044x2048xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.reduce(%14 init: %cst_1) applies stablehlo.add across dimensions = [0, 1] : (tensor<2044x2048xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2044x2048xf32>
    %17 = stablehlo.multiply %16, %arg1 : tensor<2044x2048xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.pad %17, %cst_3, low = [2, 0], high = [0, 0], interior = [0, 0] : (tensor<2044x2048xf32>, tensor<f32>) -> tensor<2046x2048xf32>
    %19 = stablehlo.negate %17 : tensor<2044x2048xf32>
    %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<2044x2048xf32>
    %21 = stablehlo.multiply %20, %19 : tensor<2044x2048xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %22 = stablehlo.pad %21, %cst_5, low = [1, 0], high = [1, 0], interior = [0, 0] : (tensor<2044x2048xf32>, tensor<f32>) -> tensor<2046x2048xf32>
    %23 = stablehlo.add %18, %22 : tensor<2046x2048xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %24 = stablehlo.pad %17, %cst_6, low = [0, 0], high = [2, 0], interior = [0, 0] : (tensor<2044x2048xf32>, tensor<f32>) -> tensor<2046x2048xf32>
    %25 = stablehlo.add %23, %24 : tensor<2046x2048xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.pad %25, %cst_7, low = [2, 0], high = [0, 0], interior = [0, 0] : (tensor<2046x2048xf32>, tensor<f32>) -> tensor<2048x2048xf32>
    %27 = stablehlo.negate %25 : tensor<2046x2048xf32>
    %cst_8 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<2046x2048xf32>
    %29 = stablehlo.multiply %28, %27 : tensor<2046x2048xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %30 = stablehlo.pad %29, %cst_9, low = [1, 0], high = [1, 0], interior = [0, 0] : (tensor<2046x2048xf32>, tensor<f32>) -> tensor<2048x2048xf32>
    %31 = stablehlo.add %26, %30 : tensor<2048x2048xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.pad %25, %cst_10, low = [0, 0], high = [2, 0], interior = [0, 0] : (tensor<2046x2048xf32>, tensor<f32>) -> tensor<2048x2048xf32>
    %33 = stablehlo.add %31, %32 : tensor<2048x2048xf32>
    return %15, %33 : tensor<f32>, tensor<2048x2048xf32>
  }
}
