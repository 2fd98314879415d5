module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<512x1000xf32>, %arg1: tensor<512x1000xf32>, %arg2: tensor<f32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<512x1000xf32> {jax.result_info = "result[1][0]"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<512x1000xf32>, tensor<f32>) -> tensor<512xf32>
    %1 = stablehlo.reshape %0 : (tensor<512xf32>) -> tensor<512x1xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<512x1xf32>) -> tensor<512x1000xf32>
    %3 = stablehlo.compare EQ, %arg0, %2, FLOAT : (tensor<512x1000xf32>, tensor<512x1000xf32>) -> tensor<512x1000xi1>
    %4 = stablehlo.convert %3 : (tensor<512x1000xi1>) -> tensor<512x1000xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<512x1000xf32>, tensor<f32>) -> tensor<512xf32>
    %6 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<512xf32>) -> tensor<512x1xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<512x1xf32>) -> tensor<512x1000xf32>
    %8 = stablehlo.subtract %arg0, %7 : tensor<512x1000xf32>
    %9 = stablehlo.exponential %8 : tensor<512x1000xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.reduce(%9 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<512x1000xf32>, tensor<f32>) -> tensor<512xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0] : (tensor<512xf32>) -> tensor<512x1xf32>
    %12 = stablehlo.log %11 : tensor<512x1xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<512x1xf32>) -> tensor<512x1000xf32>
    %14 = stablehlo.subtract %8, %13 : tensor<512x1000xf32>
    %15 = stablehlo.multiply %14, %arg1 : tensor<512x1000xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.reduce(%15 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<512x1000xf32>, tensor<f32>) -> tensor<512xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = stablehlo.reduce(%16 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<512xf32>, tensor<f32>) -> tensor<f32>
    %cst_4 = stablehlo.constant dense<5.120000e+02> : tensor<f32>
    %18 = stablehlo.divide %17, %cst_4 : tensor<f32>
    %19 = stablehlo.negate %18 : tensor<f32>
    %20 = stablehlo.multiply %19, %arg2 : tensor<f32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %21 = stablehlo.reduce(%20 init: %cst_5) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %22 = stablehlo.multiply %cst_6, %arg2 : tensor<f32>
    %23 = stablehlo.negate %22 : tensor<f32>
    %cst_7 = stablehlo.constant dense<5.120000e+02> : tensor<f32>
    %24 = stablehlo.divide %23, %cst_7 : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0] : (tensor<512xf32>) -> tensor<512x1000xf32>
    %27 = stablehlo.multiply %26, %arg1 : tensor<512x1000xf32>
    %28 = stablehlo.negate %27 : tensor<512x1000xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = stablehlo.reduce(%28 init: %cst_8) applies stablehlo.add across dimensions = [1] : (tensor<512x1000xf32>, tensor<f32>) -> tensor<512xf32>
    %30 = stablehlo.reshape %29 : (tensor<512xf32>) -> tensor<512x1xf32>
    %31 = stablehlo.divide %30, %11 : tensor<512x1xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.reduce(%31 init: %cst_9) applies stablehlo.add across dimensions = [1] : (tensor<512x1xf32>, tensor<f32>) -> tensor<512xf32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0] : (tensor<512xf32>) -> tensor<512x1000xf32>
    %34 = stablehlo.multiply %33, %9 : tensor<512x1000xf32>
    %35 = stablehlo.add %27, %34 : tensor<512x1000xf32>
    %36 = stablehlo.negate %35 : tensor<512x1000xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %37 = stablehlo.reduce(%36 init: %cst_10) applies stablehlo.add across dimensions = [1] : (tensor<512x1000xf32>, tensor<f32>) -> tensor<512xf32>
    %38 = stablehlo.reshape %37 : (tensor<512xf32>) -> tensor<512x1xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %39 = stablehlo.reduce(%38 init: %cst_11) applies stablehlo.add across dimensions = [1] : (tensor<512x1xf32>, tensor<f32>) -> tensor<512xf32>
    %40 = stablehlo.divide %39, %5 : tensor<512xf32>
    %41 = stablehlo.broadcast_in_dim %40, dims = [0] : (tensor<512xf32>) -> tensor<512x1000xf32>
    %42 = stablehlo.multiply %41, %4 : tensor<512x1000xf32>
    %43 = stablehlo.add %35, %42 : tensor<512x1000xf32>
    return %21, %43 : tensor<f32>, tensor<512x1000xf32>
  }
}
