module @jit_lstm_cell_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x256xf32>, %arg1: tensor<64x512xf32>, %arg2: tensor<64x512xf32>, %arg3: tensor<256x2048xf32>, %arg4: tensor<512x2048xf32>, %arg5: tensor<2048xf32>) -> (tensor<64x512xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x2048xf32>) -> tensor<64x2048xf32>
    %1 = stablehlo.dot_general %arg1, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x512xf32>, tensor<512x2048xf32>) -> tensor<64x2048xf32>
    %2 = stablehlo.add %0, %1 : tensor<64x2048xf32>
    %3 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x2048xf32>) -> tensor<64x2048xf32>
    %5 = stablehlo.add %2, %4 : tensor<64x2048xf32>
    %6 = stablehlo.slice %5 [0:64, 0:512] : (tensor<64x2048xf32>) -> tensor<64x512xf32>
    %7 = stablehlo.slice %5 [0:64, 512:1024] : (tensor<64x2048xf32>) -> tensor<64x512xf32>
    %8 = stablehlo.slice %5 [0:64, 1024:1536] : (tensor<64x2048xf32>) -> tensor<64x512xf32>
    %9 = stablehlo.slice %5 [0:64, 1536:2048] : (tensor<64x2048xf32>) -> tensor<64x512xf32>
    %10 = stablehlo.negate %7 : tensor<64x512xf32>
    %11 = stablehlo.exponential %10 : tensor<64x512xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %13 = stablehlo.add %12, %11 : tensor<64x512xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %15 = stablehlo.divide %14, %13 : tensor<64x512xf32>
    %16 = stablehlo.multiply %15, %arg2 : tensor<64x512xf32>
    %17 = stablehlo.negate %6 : tensor<64x512xf32>
    %18 = stablehlo.exponential %17 : tensor<64x512xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %20 = stablehlo.add %19, %18 : tensor<64x512xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %22 = stablehlo.divide %21, %20 : tensor<64x512xf32>
    %23 = stablehlo.tanh %8 : tensor<64x512xf32>
    %24 = stablehlo.multiply %22, %23 : tensor<64x512xf32>
    %25 = stablehlo.add %16, %24 : tensor<64x512xf32>
    %26 = stablehlo.negate %9 : tensor<64x512xf32>
    %27 = stablehlo.exponential %26 : tensor<64x512xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %29 = stablehlo.add %28, %27 : tensor<64x512xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %31 = stablehlo.divide %30, %29 : tensor<64x512xf32>
    %32 = stablehlo.tanh %25 : tensor<64x512xf32>
    %33 = stablehlo.multiply %31, %32 : tensor<64x512xf32>
    %34 = stablehlo.add %33, %25 : tensor<64x512xf32>
    return %34 : tensor<64x512xf32>
  }
}
