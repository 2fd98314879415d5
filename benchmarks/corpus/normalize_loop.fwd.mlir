module @jit_normalize_loop_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10000xf32>) -> (tensor<10000xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10000xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1:4 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %c_0, %iterArg_2 = %c, %iterArg_3 = %0) : tensor<10000xf32>, tensor<i32>, tensor<i32>, tensor<10000xf32>
    cond {
      %c_4 = stablehlo.constant dense<10000> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg_1, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %2:2 = func.call @closed_call(%iterArg, %iterArg_2, %iterArg_3) : (tensor<10000xf32>, tensor<i32>, tensor<10000xf32>) -> (tensor<i32>, tensor<10000xf32>)
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %3 = stablehlo.add %iterArg_1, %c_4 : tensor<i32>
      stablehlo.return %iterArg, %3, %2#0, %2#1 : tensor<10000xf32>, tensor<i32>, tensor<i32>, tensor<10000xf32>
    }
    return %1#3 : tensor<10000xf32>
  }
  func.func private @closed_call(%arg0: tensor<10000xf32>, %arg1: tensor<i32>, %arg2: tensor<10000xf32>) -> (tensor<i32>, tensor<10000xf32>) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg1, %c : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare LT, %arg1, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = stablehlo.convert %arg1 : tensor<i32>
    %c_1 = stablehlo.constant dense<10000> : tensor<i32>
    %3 = stablehlo.add %2, %c_1 : tensor<i32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<i1>, tensor<i32>
    %5 = stablehlo.dynamic_slice %arg0, %4, sizes = [1] : (tensor<10000xf32>, tensor<i32>) -> tensor<1xf32>
    %6 = stablehlo.reshape %5 : (tensor<1xf32>) -> tensor<f32>
    %7 = stablehlo.multiply %arg0, %arg0 : tensor<10000xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<10000xf32>, tensor<f32>) -> tensor<f32>
    %9 = stablehlo.sqrt %8 : tensor<f32>
    %10 = stablehlo.divide %6, %9 : tensor<f32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %11 = stablehlo.compare LT, %arg1, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<10000> : tensor<i32>
    %12 = stablehlo.add %arg1, %c_3 : tensor<i32>
    %13 = stablehlo.select %11, %12, %arg1 : tensor<i1>, tensor<i32>
    %14 = stablehlo.convert %13 : tensor<i32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %16 = "stablehlo.scatter"(%arg2, %15, %10) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      stablehlo.return %arg4 : tensor<f32>
    }) : (tensor<10000xf32>, tensor<1xi32>, tensor<f32>) -> tensor<10000xf32>
    return %0, %16 : tensor<i32>, tensor<10000xf32>
  }
}
