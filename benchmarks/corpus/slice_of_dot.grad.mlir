module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<100000xf32>, %arg1: tensor<100000xf32>, %arg2: tensor<100000xf32>, %arg3: tensor<10xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<100000xf32> {jax.result_info = "result[1][0]"}, tensor<100000xf32> {jax.result_info = "result[1][1]"}, tensor<100000xf32> {jax.result_info = "result[1][2]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<100000xf32>
    %2 = stablehlo.multiply %1, %arg2 : tensor<100000xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<100000xf32>
    %4 = stablehlo.add %2, %3 : tensor<100000xf32>
    %5 = stablehlo.slice %4 [0:10] : (tensor<100000xf32>) -> tensor<10xf32>
    %6 = stablehlo.multiply %5, %arg3 : tensor<10xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<10xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %9 = stablehlo.multiply %8, %arg3 : tensor<10xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.pad %9, %cst_2, low = [0], high = [99990], interior = [0] : (tensor<10xf32>, tensor<f32>) -> tensor<100000xf32>
    %11 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<100000xf32>
    %12 = stablehlo.multiply %11, %10 : tensor<100000xf32>
    %13 = stablehlo.multiply %10, %arg2 : tensor<100000xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.reduce(%13 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<100000xf32>, tensor<f32>) -> tensor<f32>
    %15 = stablehlo.dot_general %14, %arg0, contracting_dims = [] x [], precision = [DEFAULT, DEFAULT] : (tensor<f32>, tensor<100000xf32>) -> tensor<100000xf32>
    %16 = stablehlo.dot_general %14, %arg1, contracting_dims = [] x [], precision = [DEFAULT, DEFAULT] : (tensor<f32>, tensor<100000xf32>) -> tensor<100000xf32>
    return %7, %16, %15, %12 : tensor<f32>, tensor<100000xf32>, tensor<100000xf32>, tensor<100000xf32>
  }
}
