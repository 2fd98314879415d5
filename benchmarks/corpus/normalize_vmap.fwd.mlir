module @jit_normalize_vmap_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1000000xf32>) -> (tensor<1000000xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<1000000xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1000000xi32>
    %2 = stablehlo.compare LT, %0, %1, SIGNED : (tensor<1000000xi32>, tensor<1000000xi32>) -> tensor<1000000xi1>
    %c_0 = stablehlo.constant dense<1000000> : tensor<i32>
    %3 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1000000xi32>
    %4 = stablehlo.add %0, %3 : tensor<1000000xi32>
    %5 = stablehlo.select %2, %4, %0 : tensor<1000000xi1>, tensor<1000000xi32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0] : (tensor<1000000xi32>) -> tensor<1000000x1xi32>
    %7 = "stablehlo.gather"(%arg0, %6) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<1000000xf32>, tensor<1000000x1xi32>) -> tensor<1000000x1xf32>
    %8 = stablehlo.reshape %7 : (tensor<1000000x1xf32>) -> tensor<1000000xf32>
    %9 = call @norm(%arg0) : (tensor<1000000xf32>) -> tensor<f32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %11 = stablehlo.divide %8, %10 : tensor<1000000xf32>
    return %11 : tensor<1000000xf32>
  }
  func.func private @norm(%arg0: tensor<1000000xf32>) -> tensor<f32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<1000000xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1000000xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.sqrt %1 : tensor<f32>
    return %2 : tensor<f32>
  }
}
