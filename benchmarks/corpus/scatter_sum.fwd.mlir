module @jit_scatter_sum_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1000000xf32>, %arg1: tensor<1000000xf32>, %arg2: tensor<1000000xi32>) -> (tensor<10000xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<1000000xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10000xf32>
    %2 = stablehlo.broadcast_in_dim %arg2, dims = [0] : (tensor<1000000xi32>) -> tensor<1000000x1xi32>
    %3 = "stablehlo.scatter"(%1, %2, %0) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %4 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %4 : tensor<f32>
    }) : (tensor<10000xf32>, tensor<1000000x1xi32>, tensor<1000000xf32>) -> tensor<10000xf32>
    return %3 : tensor<10000xf32>
  }
}
