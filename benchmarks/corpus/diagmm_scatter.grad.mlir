module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1024xf32>, %arg1: tensor<1024x1024xf32>, %arg2: tensor<1024x1024xf32>, %arg3: tensor<f32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<1024xf32> {jax.result_info = "result[1][0]"}, tensor<1024x1024xf32> {jax.result_info = "result[1][1]"}, tensor<1024x1024xf32> {jax.result_info = "result[1][2]"}) {
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
    %15 = stablehlo.iota dim = 0 : tensor<1024xui32>
    %c_3 = stablehlo.constant dense<1> : tensor<ui32>
    %16 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<ui32>) -> tensor<1024xui32>
    %17 = stablehlo.add %15, %16 : tensor<1024xui32>
    %c_4 = stablehlo.constant dense<0> : tensor<ui32>
    %18 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<ui32>) -> tensor<1024x1024xui32>
    %19 = "stablehlo.scatter"(%18, %14, %17) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg4: tensor<ui32>, %arg5: tensor<ui32>):
      stablehlo.return %arg5 : tensor<ui32>
    }) : (tensor<1024x1024xui32>, tensor<1024x2xi32>, tensor<1024xui32>) -> tensor<1024x1024xui32>
    %20 = "stablehlo.gather"(%19, %14) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<1024x1024xui32>, tensor<1024x2xi32>) -> tensor<1024xui32>
    %c_5 = stablehlo.constant dense<0> : tensor<ui32>
    %21 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<ui32>) -> tensor<1024x1024xui32>
    %22 = stablehlo.compare EQ, %19, %21, UNSIGNED : (tensor<1024x1024xui32>, tensor<1024x1024xui32>) -> tensor<1024x1024xi1>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<1024x1024xf32>
    %24 = stablehlo.select %22, %1, %23 : tensor<1024x1024xi1>, tensor<1024x1024xf32>
    %25 = stablehlo.compare EQ, %17, %20, UNSIGNED : (tensor<1024xui32>, tensor<1024xui32>) -> tensor<1024xi1>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<1024xf32>
    %27 = stablehlo.select %25, %arg0, %26 : tensor<1024xi1>, tensor<1024xf32>
    %28 = stablehlo.compare EQ, %17, %20, UNSIGNED : (tensor<1024xui32>, tensor<1024xui32>) -> tensor<1024xi1>
    %29 = "stablehlo.scatter"(%24, %14, %27) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %58 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %58 : tensor<f32>
    }) : (tensor<1024x1024xf32>, tensor<1024x2xi32>, tensor<1024xf32>) -> tensor<1024x1024xf32>
    %30 = stablehlo.dot_general %29, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %31 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %32 = stablehlo.add %30, %31 : tensor<1024x1024xf32>
    %33 = stablehlo.multiply %32, %32 : tensor<1024x1024xf32>
    %cst_8 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<1024x1024xf32>
    %35 = stablehlo.multiply %34, %32 : tensor<1024x1024xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.reduce(%33 init: %cst_9) applies stablehlo.add across dimensions = [0, 1] : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<f32>
    %37 = stablehlo.multiply %36, %arg3 : tensor<f32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %38 = stablehlo.reduce(%37 init: %cst_10) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %cst_11 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %39 = stablehlo.multiply %cst_11, %arg3 : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %39, dims = [] : (tensor<f32>) -> tensor<1024x1024xf32>
    %41 = stablehlo.multiply %40, %35 : tensor<1024x1024xf32>
    %42 = stablehlo.transpose %41, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %43 = stablehlo.dot_general %41, %29, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %44 = stablehlo.transpose %43, dims = [1, 0] : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %45 = stablehlo.dot_general %41, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %c_12 = stablehlo.constant dense<1023> : tensor<2xi32>
    %c_13 = stablehlo.constant dense<0> : tensor<i32>
    %46 = stablehlo.broadcast_in_dim %c_13, dims = [] : (tensor<i32>) -> tensor<1024x2xi32>
    %47 = stablehlo.compare GE, %14, %46, SIGNED : (tensor<1024x2xi32>, tensor<1024x2xi32>) -> tensor<1024x2xi1>
    %48 = stablehlo.broadcast_in_dim %c_12, dims = [1] : (tensor<2xi32>) -> tensor<1x2xi32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1] : (tensor<1x2xi32>) -> tensor<1024x2xi32>
    %50 = stablehlo.compare LE, %14, %49, SIGNED : (tensor<1024x2xi32>, tensor<1024x2xi32>) -> tensor<1024x2xi1>
    %51 = stablehlo.and %47, %50 : tensor<1024x2xi1>
    %c_14 = stablehlo.constant dense<true> : tensor<i1>
    %52 = stablehlo.reduce(%51 init: %c_14) applies stablehlo.and across dimensions = [1] : (tensor<1024x2xi1>, tensor<i1>) -> tensor<1024xi1>
    %53 = "stablehlo.gather"(%45, %14) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<1024x1024xf32>, tensor<1024x2xi32>) -> tensor<1024xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<1024xf32>
    %55 = stablehlo.select %52, %53, %54 : tensor<1024xi1>, tensor<1024xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %56 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<1024xf32>
    %57 = stablehlo.select %28, %55, %56 : tensor<1024xi1>, tensor<1024xf32>
    return %38, %57, %44, %42 : tensor<f32>, tensor<1024xf32>, tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
}
