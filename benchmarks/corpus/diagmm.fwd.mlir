module @jit_diagmm_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1024xf32>, %arg1: tensor<1024x1024xf32>, %arg2: tensor<1024x1024xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = call @_diag(%arg0) : (tensor<1024xf32>) -> tensor<1024x1024xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %2 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %3 = stablehlo.add %1, %2 : tensor<1024x1024xf32>
    %4 = stablehlo.multiply %3, %3 : tensor<1024x1024xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<f32>
    return %5 : tensor<f32>
  }
  func.func private @_diag(%arg0: tensor<1024xf32>) -> tensor<1024x1024xf32> {
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
    return %7 : tensor<1024x1024xf32>
  }
  func.func private @_where(%arg0: tensor<1024x1024xi1>, %arg1: tensor<1024x1xf32>, %arg2: tensor<f32>) -> tensor<1024x1024xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0, 1] : (tensor<1024x1xf32>) -> tensor<1024x1024xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<1024x1024xf32>
    %2 = stablehlo.select %arg0, %0, %1 : tensor<1024x1024xi1>, tensor<1024x1024xf32>
    return %2 : tensor<1024x1024xf32>
  }
}
