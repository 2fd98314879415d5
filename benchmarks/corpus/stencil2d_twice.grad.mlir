module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2048x2048xf32>, %arg1: tensor<2044x2044xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<2048x2048xf32> {jax.result_info = "result[1][0]"}) {
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
    %22 = stablehlo.multiply %21, %arg1 : tensor<2044x2044xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %23 = stablehlo.reduce(%22 init: %cst_1) applies stablehlo.add across dimensions = [0, 1] : (tensor<2044x2044xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2044x2044xf32>
    %25 = stablehlo.multiply %24, %arg1 : tensor<2044x2044xf32>
    %26 = stablehlo.negate %25 : tensor<2044x2044xf32>
    %cst_3 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2044x2044xf32>
    %28 = stablehlo.multiply %27, %26 : tensor<2044x2044xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = stablehlo.pad %28, %cst_4, low = [1, 1], high = [1, 1], interior = [0, 0] : (tensor<2044x2044xf32>, tensor<f32>) -> tensor<2046x2046xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %30 = stablehlo.pad %25, %cst_5, low = [1, 2], high = [1, 0], interior = [0, 0] : (tensor<2044x2044xf32>, tensor<f32>) -> tensor<2046x2046xf32>
    %31 = stablehlo.add %29, %30 : tensor<2046x2046xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.pad %25, %cst_6, low = [1, 0], high = [1, 2], interior = [0, 0] : (tensor<2044x2044xf32>, tensor<f32>) -> tensor<2046x2046xf32>
    %33 = stablehlo.add %31, %32 : tensor<2046x2046xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %34 = stablehlo.pad %25, %cst_7, low = [2, 1], high = [0, 1], interior = [0, 0] : (tensor<2044x2044xf32>, tensor<f32>) -> tensor<2046x2046xf32>
    %35 = stablehlo.add %33, %34 : tensor<2046x2046xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.pad %25, %cst_8, low = [0, 1], high = [2, 1], interior = [0, 0] : (tensor<2044x2044xf32>, tensor<f32>) -> tensor<2046x2046xf32>
    %37 = stablehlo.add %35, %36 : tensor<2046x2046xf32>
    %38 = stablehlo.negate %37 : tensor<2046x2046xf32>
    %cst_9 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %39 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2046x2046xf32>
    %40 = stablehlo.multiply %39, %38 : tensor<2046x2046xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.pad %40, %cst_10, low = [1, 1], high = [1, 1], interior = [0, 0] : (tensor<2046x2046xf32>, tensor<f32>) -> tensor<2048x2048xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %42 = stablehlo.pad %37, %cst_11, low = [1, 2], high = [1, 0], interior = [0, 0] : (tensor<2046x2046xf32>, tensor<f32>) -> tensor<2048x2048xf32>
    %43 = stablehlo.add %41, %42 : tensor<2048x2048xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %44 = stablehlo.pad %37, %cst_12, low = [1, 0], high = [1, 2], interior = [0, 0] : (tensor<2046x2046xf32>, tensor<f32>) -> tensor<2048x2048xf32>
    %45 = stablehlo.add %43, %44 : tensor<2048x2048xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.pad %37, %cst_13, low = [2, 1], high = [0, 1], interior = [0, 0] : (tensor<2046x2046xf32>, tensor<f32>) -> tensor<2048x2048xf32>
    %47 = stablehlo.add %45, %46 : tensor<2048x2048xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %48 = stablehlo.pad %37, %cst_14, low = [0, 1], high = [2, 1], interior = [0, 0] : (tensor<2046x2046xf32>, tensor<f32>) -> tensor<2048x2048xf32>
    %49 = stablehlo.add %47, %48 : tensor<2048x2048xf32>
    return %23, %49 : tensor<f32>, tensor<2048x2048xf32>
  }
}
