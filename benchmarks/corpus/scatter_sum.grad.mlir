module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1000000xf32>, %arg1: tensor<1000000xf32>, %arg2: tensor<1000000xi32>, %arg3: tensor<10000xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<1000000xf32> {jax.result_info = "result[1][0]"}, tensor<1000000xf32> {jax.result_info = "result[1][1]"}) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<1000000xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10000xf32>
    %2 = stablehlo.broadcast_in_dim %arg2, dims = [0] : (tensor<1000000xi32>) -> tensor<1000000x1xi32>
    %3 = "stablehlo.scatter"(%1, %2, %0) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %20 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %20 : tensor<f32>
    }) : (tensor<10000xf32>, tensor<1000000x1xi32>, tensor<1000000xf32>) -> tensor<10000xf32>
    %4 = stablehlo.multiply %3, %arg3 : tensor<10000xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<10000xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<10000xf32>
    %7 = stablehlo.multiply %6, %arg3 : tensor<10000xf32>
    %c = stablehlo.constant dense<9999> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1000000x1xi32>
    %9 = stablehlo.compare GE, %2, %8, SIGNED : (tensor<1000000x1xi32>, tensor<1000000x1xi32>) -> tensor<1000000x1xi1>
    %10 = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<1xi32>) -> tensor<1x1xi32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<1x1xi32>) -> tensor<1000000x1xi32>
    %12 = stablehlo.compare LE, %2, %11, SIGNED : (tensor<1000000x1xi32>, tensor<1000000x1xi32>) -> tensor<1000000x1xi1>
    %13 = stablehlo.and %9, %12 : tensor<1000000x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %14 = stablehlo.reduce(%13 init: %c_3) applies stablehlo.and across dimensions = [1] : (tensor<1000000x1xi1>, tensor<i1>) -> tensor<1000000xi1>
    %15 = "stablehlo.gather"(%7, %2) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<10000xf32>, tensor<1000000x1xi32>) -> tensor<1000000xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %17 = stablehlo.select %14, %15, %16 : tensor<1000000xi1>, tensor<1000000xf32>
    %18 = stablehlo.multiply %arg0, %17 : tensor<1000000xf32>
    %19 = stablehlo.multiply %17, %arg1 : tensor<1000000xf32>
    return %5, %19, %18 : tensor<f32>, tensor<1000000xf32>, tensor<1000000xf32>
  }
}
