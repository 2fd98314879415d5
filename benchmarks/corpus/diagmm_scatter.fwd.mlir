module @jit_diagmm_scatter_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1024xf32>, %arg1: tensor<1024x1024xf32>, %arg2: tensor<1024x1024xf32>) -> (tensor<f32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<1024xi32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1024x1024xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1024xi32>
    %3 = stablehlo.compare LT, %0, %2, SIGNED : (tensor<1024xi32>, tensor<1024xi32>) -> tensor<1024xi1>
    %c_0 = stablehlo.constant dense<1024> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1024xi32>
    %5 = stablehlo.add %0, %4 : tensor<1024xi32>
    %6 = stablehlo.select %3, %5, %0 : tensor<1024xi1>, tensor<1024xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<1024xi32>
    %8 = stablehlo.compare LT, %0, %7, SIGNED : (tensor<1024xi32>, tensor<1024xi32>) -> tensor<1024xi1>
    %c_2 = stablehlo.constant dense<1024> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1024xi32>
    %10 = stablehlo.add %0, %9 : tensor<1024xi32>
    %11 = stablehlo.select %8, %10, %0 : tensor<1024xi1>, tensor<1024xi32>
    %12 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<1024xi32>) -> tensor<1024x1xi32>
    %13 = stablehlo.broadcast_in_dim %11, dims = [0] : (tensor<1024xi32>) -> tensor<1024x1xi32>
    %14 = stablehlo.concatenate %12, %13, dim = 1 : (tensor<1024x1xi32>, tensor<1024x1xi32>) -> tensor<1024x2xi32>
    %15 = "stablehlo.scatter"(%1, %14, %arg0) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      stablehlo.return %arg4 : tensor<f32>
    }) : (tensor<1024x1024xf32>, tensor<1024x2xi32>, tensor<1024xf32>) -> tensor<1024x1024xf32>
    %16 = stablehlo.dot_general %15, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %17 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %18 = stablehlo.add %16, %17 : tensor<1024x1024xf32>
    %19 = stablehlo.multiply %18, %18 : tensor<1024x1024xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.reduce(%19 init: %cst_3) applies stablehlo.add across dimensions = [0, 1] : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<f32>
    return %20 : tensor<f32>
  }
}
