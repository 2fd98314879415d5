module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1024xf32>, %arg1: tensor<1024x1024xf32>, %arg2: tensor<1024x1024xf32>, %arg3: tensor<f32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<1024xf32> {jax.result_info = "result[1][0]"}, tensor<1024x1024xf32> {jax.result_info = "result[1][1]"}, tensor<1024x1024xf32> {jax.result_info = "result[1][2]"}) {
    %0:2 = call @_diag(%arg0) : (tensor<1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xi1>)
    %1 = stablehlo.dot_general %0#0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %2 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %3 = stablehlo.add %1, %2 : tensor<1024x1024xf32>
    %4 = stablehlo.multiply %3, %3 : tensor<1024x1024xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1024x1024xf32>
    %6 = stablehlo.multiply %5, %3 : tensor<1024x1024xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<f32>
    %8 = stablehlo.multiply %7, %arg3 : tensor<f32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst_1) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.multiply %cst_2, %arg3 : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<f32>) -> tensor<1024x1024xf32>
    %12 = stablehlo.multiply %11, %6 : tensor<1024x1024xf32>
    %13 = stablehlo.transpose %12, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %14 = stablehlo.dot_general %12, %0#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %15 = stablehlo.transpose %14, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %16 = stablehlo.dot_general %12, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %17 = call @_diag_0(%0#1, %16) : (tensor<1024x1024xi1>, tensor<1024x1024xf32>) -> tensor<1024xf32>
    return %9, %17, %15, %13 : tensor<f32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
  func.func private @_diag(%arg0: tensor<1024xf32>) -> (tensor<1024x1024xf32>, tensor<1024x1024xi1>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [0], high = [0], interior = [0] : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
    %1 = stablehlo.iota dim = 0 : tensor<1024x1024xi32>
    %2 = stablehlo.iota dim = 1 : tensor<1024x1024xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1024x1024xi32>
    %4 = stablehlo.add %1, %3 : tensor<1024x1024xi32>
    %5 = stablehlo.compare EQ, %4, %2, SIGNED : (tensor<1024x1024xi32>, tensor<1024x1024xi32>) -> tensor<1024x1024xi1>
    %6 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<1024xf32>) -> tensor<1024x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = call @_where(%5, %6, %cst_0) : (tensor<1024x1024xi1>, tensor<1024x1xf32>, tensor<f32>) -> tensor<1024x1024xf32>
    return %7, %5 : tensor<1024x1024xf32>, tensor<1024x1024xi1>
  }
  func.func private @_where(%arg0: tensor<1024x1024xi1>, %arg1: tensor<1024x1xf32>, %arg2: tensor<f32>) -> tensor<1024x1024xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0, 1] : (tensor<1024x1xf32>) -> tensor<1024x1024xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<1024x1024xf32>
    %2 = stablehlo.select %arg0, %0, %1 : tensor<1024x1024xi1>, tensor<1024x1024xf32>
    return %2 : tensor<1024x1024xf32>
  }
  func.func private @_diag_0(%arg0: tensor<1024x1024xi1>, %arg1: tensor<1024x1024xf32>) -> tensor<1024xf32> {
    %0 = call @_where_1(%arg0, %arg1) : (tensor<1024x1024xi1>, tensor<1024x1024xf32>) -> tensor<1024x1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<1024x1xf32>, tensor<f32>) -> tensor<1024xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.pad %1, %cst_0, low = [0], high = [0], interior = [0] : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
    %3 = stablehlo.slice %2 [0:1024] : (tensor<1024xf32>) -> tensor<1024xf32>
    return %3 : tensor<1024xf32>
  }
  func.func private @_where_1(%arg0: tensor<1024x1024xi1>, %arg1: tensor<1024x1024xf32>) -> tensor<1024x1xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1024x1024xf32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<1024x1024xi1>, tensor<1024x1024xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<1024xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<1024xf32>) -> tensor<1024x1xf32>
    return %3 : tensor<1024x1xf32>
  }
}
