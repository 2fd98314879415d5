module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10000xf32>, %arg1: tensor<10000xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<10000xf32> {jax.result_info = "result[1][0]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<10000xf32>
    %1 = stablehlo.multiply %arg0, %arg0 : tensor<10000xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<10000xf32>, tensor<f32>) -> tensor<f32>
    %3 = stablehlo.sqrt %2 : tensor<f32>
    %cst_1 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %4 = stablehlo.divide %cst_1, %3 : tensor<f32>
    %5 = stablehlo.multiply %3, %3 : tensor<f32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.divide %cst_2, %5 : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<10000xi32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<10000xf32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<10000x1xi32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %10:8 = stablehlo.while(%iterArg = %arg0, %iterArg_11 = %3, %iterArg_12 = %c_6, %iterArg_13 = %c, %iterArg_14 = %0, %iterArg_15 = %7, %iterArg_16 = %8, %iterArg_17 = %9) : tensor<10000xf32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<10000xf32>, tensor<10000xi32>, tensor<10000xf32>, tensor<10000x1xi32>
    cond {
      %c_18 = stablehlo.constant dense<10000> : tensor<i32>
      %17 = stablehlo.compare LT, %iterArg_12, %c_18, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %17 : tensor<i1>
    } do {
      %17:5 = func.call @closed_call(%iterArg, %iterArg_11, %iterArg_13, %iterArg_14) : (tensor<10000xf32>, tensor<f32>, tensor<i32>, tensor<10000xf32>) -> (tensor<i32>, tensor<10000xf32>, tensor<i32>, tensor<f32>, tensor<1xi32>)
      %18 = func.call @dynamic_update_index_in_dim(%iterArg_15, %17#2, %iterArg_12) : (tensor<10000xi32>, tensor<i32>, tensor<i32>) -> tensor<10000xi32>
      %19 = func.call @dynamic_update_index_in_dim_0(%iterArg_16, %17#3, %iterArg_12) : (tensor<10000xf32>, tensor<f32>, tensor<i32>) -> tensor<10000xf32>
      %20 = func.call @dynamic_update_index_in_dim_1(%iterArg_17, %17#4, %iterArg_12) : (tensor<10000x1xi32>, tensor<1xi32>, tensor<i32>) -> tensor<10000x1xi32>
      %c_18 = stablehlo.constant dense<1> : tensor<i32>
      %21 = stablehlo.add %iterArg_12, %c_18 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_11, %21, %17#0, %17#1, %18, %19, %20 : tensor<10000xf32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<10000xf32>, tensor<10000xi32>, tensor<10000xf32>, tensor<10000x1xi32>
    }
    %11 = stablehlo.multiply %10#4, %arg1 : tensor<10000xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.reduce(%11 init: %cst_7) applies stablehlo.add across dimensions = [0] : (tensor<10000xf32>, tensor<f32>) -> tensor<f32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<10000xf32>
    %14 = stablehlo.multiply %13, %arg1 : tensor<10000xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<10000xf32>
    %c_10 = stablehlo.constant dense<0> : tensor<i32>
    %16:10 = stablehlo.while(%iterArg = %10#5, %iterArg_11 = %10#6, %iterArg_12 = %10#7, %iterArg_13 = %arg0, %iterArg_14 = %4, %iterArg_15 = %3, %iterArg_16 = %6, %iterArg_17 = %c_10, %iterArg_18 = %15, %iterArg_19 = %14) : tensor<10000xi32>, tensor<10000xf32>, tensor<10000x1xi32>, tensor<10000xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<10000xf32>, tensor<10000xf32>
    cond {
      %c_20 = stablehlo.constant dense<10000> : tensor<i32>
      %17 = stablehlo.compare LT, %iterArg_17, %c_20, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %17 : tensor<i1>
    } do {
      %c_20 = stablehlo.constant dense<10000> : tensor<i32>
      %17 = stablehlo.subtract %c_20, %iterArg_17 : tensor<i32>
      %c_21 = stablehlo.constant dense<1> : tensor<i32>
      %18 = stablehlo.subtract %17, %c_21 : tensor<i32>
      %19 = func.call @dynamic_index_in_dim(%iterArg, %18) : (tensor<10000xi32>, tensor<i32>) -> tensor<i32>
      %20 = func.call @dynamic_index_in_dim_2(%iterArg_11, %18) : (tensor<10000xf32>, tensor<i32>) -> tensor<f32>
      %21 = func.call @dynamic_index_in_dim_3(%iterArg_12, %18) : (tensor<10000x1xi32>, tensor<i32>) -> tensor<1xi32>
      %22:2 = func.call @closed_call_4(%iterArg_13, %iterArg_14, %iterArg_15, %iterArg_16, %iterArg_18, %iterArg_19, %19, %20, %21) : (tensor<10000xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<10000xf32>, tensor<10000xf32>, tensor<i32>, tensor<f32>, tensor<1xi32>) -> (tensor<10000xf32>, tensor<10000xf32>)
      %c_22 = stablehlo.constant dense<1> : tensor<i32>
      %23 = stablehlo.add %iterArg_17, %c_22 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_11, %iterArg_12, %iterArg_13, %iterArg_14, %iterArg_15, %iterArg_16, %23, %22#0, %22#1 : tensor<10000xi32>, tensor<10000xf32>, tensor<10000x1xi32>, tensor<10000xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<10000xf32>, tensor<10000xf32>
    }
    return %12, %16#8 : tensor<f32>, tensor<10000xf32>
  }
  func.func private @closed_call(%arg0: tensor<10000xf32>, %arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<10000xf32>) -> (tensor<i32>, tensor<10000xf32>, tensor<i32>, tensor<f32>, tensor<1xi32>) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg2, %c : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare LT, %arg2, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = stablehlo.convert %arg2 : tensor<i32>
    %c_1 = stablehlo.constant dense<10000> : tensor<i32>
    %3 = stablehlo.add %2, %c_1 : tensor<i32>
    %4 = stablehlo.select %1, %3, %arg2 : tensor<i1>, tensor<i32>
    %5 = stablehlo.dynamic_slice %arg0, %4, sizes = [1] : (tensor<10000xf32>, tensor<i32>) -> tensor<1xf32>
    %6 = stablehlo.reshape %5 : (tensor<1xf32>) -> tensor<f32>
    %7 = stablehlo.divide %6, %arg1 : tensor<f32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.compare LT, %arg2, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<10000> : tensor<i32>
    %9 = stablehlo.add %arg2, %c_3 : tensor<i32>
    %10 = stablehlo.select %8, %9, %arg2 : tensor<i1>, tensor<i32>
    %11 = stablehlo.convert %10 : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %13 = "stablehlo.scatter"(%arg3, %12, %7) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      stablehlo.return %arg5 : tensor<f32>
    }) : (tensor<10000xf32>, tensor<1xi32>, tensor<f32>) -> tensor<10000xf32>
    return %0, %13, %4, %6, %12 : tensor<i32>, tensor<10000xf32>, tensor<i32>, tensor<f32>, tensor<1xi32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<10000xi32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<10000xi32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2 : (tensor<10000xi32>, tensor<1xi32>, tensor<i32>) -> tensor<10000xi32>
    return %1 : tensor<10000xi32>
  }
  func.func private @dynamic_update_index_in_dim_0(%arg0: tensor<10000xf32>, %arg1: tensor<f32>, %arg2: tensor<i32>) -> tensor<10000xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2 : (tensor<10000xf32>, tensor<1xf32>, tensor<i32>) -> tensor<10000xf32>
    return %1 : tensor<10000xf32>
  }
  func.func private @dynamic_update_index_in_dim_1(%arg0: tensor<10000x1xi32>, %arg1: tensor<1xi32>, %arg2: tensor<i32>) -> tensor<10000x1xi32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<1xi32>) -> tensor<1x1xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<10000x1xi32>, tensor<1x1xi32>, tensor<i32>, tensor<i32>) -> tensor<10000x1xi32>
    return %1 : tensor<10000x1xi32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<10000xi32>, %arg1: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.dynamic_slice %arg0, %arg1, sizes = [1] : (tensor<10000xi32>, tensor<i32>) -> tensor<1xi32>
    %1 = stablehlo.reshape %0 : (tensor<1xi32>) -> tensor<i32>
    return %1 : tensor<i32>
  }
  func.func private @dynamic_index_in_dim_2(%arg0: tensor<10000xf32>, %arg1: tensor<i32>) -> tensor<f32> {
    %0 = stablehlo.dynamic_slice %arg0, %arg1, sizes = [1] : (tensor<10000xf32>, tensor<i32>) -> tensor<1xf32>
    %1 = stablehlo.reshape %0 : (tensor<1xf32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
  func.func private @dynamic_index_in_dim_3(%arg0: tensor<10000x1xi32>, %arg1: tensor<i32>) -> tensor<1xi32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 1] : (tensor<10000x1xi32>, tensor<i32>, tensor<i32>) -> tensor<1x1xi32>
    %1 = stablehlo.reshape %0 : (tensor<1x1xi32>) -> tensor<1xi32>
    return %1 : tensor<1xi32>
  }
  func.func private @closed_call_4(%arg0: tensor<10000xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<10000xf32>, %arg5: tensor<10000xf32>, %arg6: tensor<i32>, %arg7: tensor<f32>, %arg8: tensor<1xi32>) -> (tensor<10000xf32>, tensor<10000xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = "stablehlo.scatter"(%arg5, %arg8, %cst) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      stablehlo.return %arg10 : tensor<f32>
    }) : (tensor<10000xf32>, tensor<1xi32>, tensor<f32>) -> tensor<10000xf32>
    %c = stablehlo.constant dense<9999> : tensor<1xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %2 = stablehlo.compare GE, %arg8, %1, SIGNED : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
    %3 = stablehlo.compare LE, %arg8, %c, SIGNED : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
    %4 = stablehlo.and %2, %3 : tensor<1xi1>
    %c_1 = stablehlo.constant dense<true> : tensor<i1>
    %5 = stablehlo.reduce(%4 init: %c_1) applies stablehlo.and across dimensions = [0] : (tensor<1xi1>, tensor<i1>) -> tensor<i1>
    %6 = "stablehlo.gather"(%arg5, %arg8) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0]>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<10000xf32>, tensor<1xi32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.select %5, %6, %cst_2 : tensor<i1>, tensor<f32>
    %8 = stablehlo.multiply %7, %arg3 : tensor<f32>
    %9 = stablehlo.multiply %8, %arg7 : tensor<f32>
    %10 = stablehlo.negate %9 : tensor<f32>
    %11 = stablehlo.divide %7, %arg2 : tensor<f32>
    %12 = stablehlo.multiply %10, %arg1 : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<f32>) -> tensor<10000xf32>
    %14 = stablehlo.multiply %arg0, %13 : tensor<10000xf32>
    %15 = stablehlo.add %arg4, %14 : tensor<10000xf32>
    %16 = stablehlo.multiply %13, %arg0 : tensor<10000xf32>
    %17 = stablehlo.add %15, %16 : tensor<10000xf32>
    %18 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<10000xf32>
    %20 = stablehlo.dynamic_update_slice %19, %18, %arg6 : (tensor<10000xf32>, tensor<1xf32>, tensor<i32>) -> tensor<10000xf32>
    %21 = stablehlo.add %17, %20 : tensor<10000xf32>
    return %21, %0 : tensor<10000xf32>, tensor<10000xf32>
  }
}
