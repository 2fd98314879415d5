module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1000000xf32>, %arg1: tensor<1000000xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<1000000xf32> {jax.result_info = "result[1][0]"}) {
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
    %9:2 = call @norm(%arg0) : (tensor<1000000xf32>) -> (tensor<f32>, tensor<f32>)
    %10 = stablehlo.broadcast_in_dim %9#0, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %11 = stablehlo.divide %8, %10 : tensor<1000000xf32>
    %12 = stablehlo.multiply %9#0, %9#0 : tensor<f32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %13 = stablehlo.divide %cst, %12 : tensor<f32>
    %14 = stablehlo.multiply %11, %arg1 : tensor<1000000xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.reduce(%14 init: %cst_1) applies stablehlo.add across dimensions = [0] : (tensor<1000000xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %17 = stablehlo.multiply %16, %arg1 : tensor<1000000xf32>
    %18 = stablehlo.broadcast_in_dim %13, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %19 = stablehlo.multiply %17, %18 : tensor<1000000xf32>
    %20 = stablehlo.multiply %19, %8 : tensor<1000000xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %21 = stablehlo.reduce(%20 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<1000000xf32>, tensor<f32>) -> tensor<f32>
    %22 = stablehlo.negate %21 : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %9#0, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %24 = stablehlo.divide %17, %23 : tensor<1000000xf32>
    %25 = call @norm_0(%arg0, %9#1, %22) : (tensor<1000000xf32>, tensor<f32>, tensor<f32>) -> tensor<1000000xf32>
    %26 = stablehlo.broadcast_in_dim %24, dims = [0] : (tensor<1000000xf32>) -> tensor<1000000x1xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %c_5 = stablehlo.constant dense<999999> : tensor<1xi32>
    %c_6 = stablehlo.constant dense<2147483647> : tensor<i32>
    %28 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %29 = stablehlo.minimum %c_5, %28 : tensor<1xi32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [1] : (tensor<1xi32>) -> tensor<1000000x1xi32>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %31 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<1000000x1xi32>
    %32 = stablehlo.clamp %31, %6, %30 : tensor<1000000x1xi32>
    %33 = "stablehlo.scatter"(%27, %32, %26) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %35 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %35 : tensor<f32>
    }) : (tensor<1000000xf32>, tensor<1000000x1xi32>, tensor<1000000x1xf32>) -> tensor<1000000xf32>
    %34 = stablehlo.add %25, %33 : tensor<1000000xf32>
    return %15, %34 : tensor<f32>, tensor<1000000xf32>
  }
  func.func private @norm(%arg0: tensor<1000000xf32>) -> (tensor<f32>, tensor<f32>) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<1000000xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<1000000xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.sqrt %1 : tensor<f32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %3 = stablehlo.divide %cst_0, %2 : tensor<f32>
    return %2, %3 : tensor<f32>, tensor<f32>
  }
  func.func private @norm_0(%arg0: tensor<1000000xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<1000000xf32> {
    %0 = stablehlo.multiply %arg2, %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<1000000xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<1000000xf32>
    %3 = stablehlo.multiply %1, %arg0 : tensor<1000000xf32>
    %4 = stablehlo.add %2, %3 : tensor<1000000xf32>
    return %4 : tensor<1000000xf32>
  }
}
