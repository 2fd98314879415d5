module @jit_slice_of_dot_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<100000xf32>, %arg1: tensor<100000xf32>, %arg2: tensor<100000xf32>) -> (tensor<10xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<100000xf32>
    %2 = stablehlo.multiply %1, %arg2 : tensor<100000xf32>
    %cst = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<100000xf32>
    %4 = stablehlo.add %2, %3 : tensor<100000xf32>
    %5 = stablehlo.slice %4 [0:10] : (tensor<100000xf32>) -> tensor<10xf32>
    return %5 : tensor<10xf32>
  }
}
