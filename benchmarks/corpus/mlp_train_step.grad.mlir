module @jit_mlp_grad_jnp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<784x512xf32>, %arg1: tensor<512x512xf32>, %arg2: tensor<512x10xf32>, %arg3: tensor<512xf32>, %arg4: tensor<512xf32>, %arg5: tensor<10xf32>, %arg6: tensor<128x784xf32>, %arg7: tensor<128x10xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<784x512xf32> {jax.result_info = "result[1]['W1']"}, tensor<512x512xf32> {jax.result_info = "result[1]['W2']"}, tensor<512x10xf32> {jax.result_info = "result[1]['W3']"}, tensor<512xf32> {jax.result_info = "result[1]['b1']"}, tensor<512xf32> {jax.result_info = "result[1]['b2']"}, tensor<10xf32> {jax.result_info = "result[1]['b3']"}) {
    %0 = stablehlo.dot_general %arg6, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<128x784xf32>, tensor<784x512xf32>) -> tensor<128x512xf32>
    %1 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<512xf32>) -> tensor<1x512xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x512xf32>) -> tensor<128x512xf32>
    %3 = stablehlo.add %0, %2 : tensor<128x512xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %5 = stablehlo.maximum %3, %4 : tensor<128x512xf32>
    %6 = stablehlo.compare EQ, %3, %5, FLOAT : (tensor<128x512xf32>, tensor<128x512xf32>) -> tensor<128x512xi1>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %9 = stablehlo.select %6, %7, %8 : tensor<128x512xi1>, tensor<128x512xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %11 = stablehlo.compare EQ, %10, %5, FLOAT : (tensor<128x512xf32>, tensor<128x512xf32>) -> tensor<128x512xi1>
    %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %14 = stablehlo.select %11, %12, %13 : tensor<128x512xi1>, tensor<128x512xf32>
    %15 = stablehlo.divide %9, %14 : tensor<128x512xf32>
    %16 = stablehlo.dot_general %5, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<128x512xf32>, tensor<512x512xf32>) -> tensor<128x512xf32>
    %17 = stablehlo.broadcast_in_dim %arg4, dims = [1] : (tensor<512xf32>) -> tensor<1x512xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1] : (tensor<1x512xf32>) -> tensor<128x512xf32>
    %19 = stablehlo.add %16, %18 : tensor<128x512xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %21 = stablehlo.maximum %19, %20 : tensor<128x512xf32>
    %22 = stablehlo.compare EQ, %19, %21, FLOAT : (tensor<128x512xf32>, tensor<128x512xf32>) -> tensor<128x512xi1>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %25 = stablehlo.select %22, %23, %24 : tensor<128x512xi1>, tensor<128x512xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %27 = stablehlo.compare EQ, %26, %21, FLOAT : (tensor<128x512xf32>, tensor<128x512xf32>) -> tensor<128x512xi1>
    %cst_9 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<128x512xf32>
    %30 = stablehlo.select %27, %28, %29 : tensor<128x512xi1>, tensor<128x512xf32>
    %31 = stablehlo.divide %25, %30 : tensor<128x512xf32>
    %32 = stablehlo.dot_general %21, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<128x512xf32>, tensor<512x10xf32>) -> tensor<128x10xf32>
    %33 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<10xf32>) -> tensor<1x10xf32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<128x10xf32>
    %35 = stablehlo.add %32, %34 : tensor<128x10xf32>
    %cst_11 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %36 = stablehlo.reduce(%35 init: %cst_11) applies stablehlo.maximum across dimensions = [1] : (tensor<128x10xf32>, tensor<f32>) -> tensor<128xf32>
    %37 = stablehlo.reshape %36 : (tensor<128xf32>) -> tensor<128x1xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0, 1] : (tensor<128x1xf32>) -> tensor<128x10xf32>
    %39 = stablehlo.compare EQ, %35, %38, FLOAT : (tensor<128x10xf32>, tensor<128x10xf32>) -> tensor<128x10xi1>
    %40 = stablehlo.convert %39 : (tensor<128x10xi1>) -> tensor<128x10xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.reduce(%40 init: %cst_12) applies stablehlo.add across dimensions = [1] : (tensor<128x10xf32>, tensor<f32>) -> tensor<128xf32>
    %42 = stablehlo.broadcast_in_dim %36, dims = [0] : (tensor<128xf32>) -> tensor<128x1xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [0, 1] : (tensor<128x1xf32>) -> tensor<128x10xf32>
    %44 = stablehlo.subtract %35, %43 : tensor<128x10xf32>
    %45 = stablehlo.exponential %44 : tensor<128x10xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.reduce(%45 init: %cst_13) applies stablehlo.add across dimensions = [1] : (tensor<128x10xf32>, tensor<f32>) -> tensor<128xf32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [0] : (tensor<128xf32>) -> tensor<128x1xf32>
    %48 = stablehlo.log %47 : tensor<128x1xf32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1] : (tensor<128x1xf32>) -> tensor<128x10xf32>
    %50 = stablehlo.subtract %44, %49 : tensor<128x10xf32>
    %51 = stablehlo.multiply %50, %arg7 : tensor<128x10xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %52 = stablehlo.reduce(%51 init: %cst_14) applies stablehlo.add across dimensions = [0, 1] : (tensor<128x10xf32>, tensor<f32>) -> tensor<f32>
    %53 = stablehlo.negate %52 : tensor<f32>
    %cst_15 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %54 = stablehlo.divide %53, %cst_15 : tensor<f32>
    %cst_16 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_17 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %55 = stablehlo.divide %cst_16, %cst_17 : tensor<f32>
    %56 = stablehlo.negate %55 : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %56, dims = [] : (tensor<f32>) -> tensor<128x10xf32>
    %58 = stablehlo.multiply %57, %arg7 : tensor<128x10xf32>
    %59 = stablehlo.negate %58 : tensor<128x10xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %60 = stablehlo.reduce(%59 init: %cst_18) applies stablehlo.add across dimensions = [1] : (tensor<128x10xf32>, tensor<f32>) -> tensor<128xf32>
    %61 = stablehlo.reshape %60 : (tensor<128xf32>) -> tensor<128x1xf32>
    %62 = stablehlo.divide %61, %47 : tensor<128x1xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %63 = stablehlo.reduce(%62 init: %cst_19) applies stablehlo.add across dimensions = [1] : (tensor<128x1xf32>, tensor<f32>) -> tensor<128xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0] : (tensor<128xf32>) -> tensor<128x10xf32>
    %65 = stablehlo.multiply %64, %45 : tensor<128x10xf32>
    %66 = stablehlo.add %58, %65 : tensor<128x10xf32>
    %67 = stablehlo.negate %66 : tensor<128x10xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %68 = stablehlo.reduce(%67 init: %cst_20) applies stablehlo.add across dimensions = [1] : (tensor<128x10xf32>, tensor<f32>) -> tensor<128xf32>
    %69 = stablehlo.reshape %68 : (tensor<128xf32>) -> tensor<128x1xf32>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %70 = stablehlo.reduce(%69 init: %cst_21) applies stablehlo.add across dimensions = [1] : (tensor<128x1xf32>, tensor<f32>) -> tensor<128xf32>
    %71 = stablehlo.divide %70, %41 : tensor<128xf32>
    %72 = stablehlo.broadcast_in_dim %71, dims = [0] : (tensor<128xf32>) -> tensor<128x10xf32>
    %73 = stablehlo.multiply %72, %40 : tensor<128x10xf32>
    %74 = stablehlo.add %66, %73 : tensor<128x10xf32>
    %cst_22 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %75 = stablehlo.reduce(%74 init: %cst_22) applies stablehlo.add across dimensions = [0] : (tensor<128x10xf32>, tensor<f32>) -> tensor<10xf32>
    %76 = stablehlo.reshape %75 : (tensor<10xf32>) -> tensor<1x10xf32>
    %cst_23 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %77 = stablehlo.reduce(%76 init: %cst_23) applies stablehlo.add across dimensions = [0] : (tensor<1x10xf32>, tensor<f32>) -> tensor<10xf32>
    %78 = stablehlo.dot_general %74, %21, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<128x10xf32>, tensor<128x512xf32>) -> tensor<10x512xf32>
    %79 = stablehlo.transpose %78, dims = [1, 0] : (tensor<10x512xf32>) -> tensor<512x10xf32>
    %80 = stablehlo.dot_general %74, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<128x10xf32>, tensor<512x10xf32>) -> tensor<128x512xf32>
    %81 = stablehlo.multiply %80, %31 : tensor<128x512xf32>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %82 = stablehlo.reduce(%81 init: %cst_24) applies stablehlo.add across dimensions = [0] : (tensor<128x512xf32>, tensor<f32>) -> tensor<512xf32>
    %83 = stablehlo.reshape %82 : (tensor<512xf32>) -> tensor<1x512xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %84 = stablehlo.reduce(%83 init: %cst_25) applies stablehlo.add across dimensions = [0] : (tensor<1x512xf32>, tensor<f32>) -> tensor<512xf32>
    %85 = stablehlo.dot_general %81, %5, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<128x512xf32>, tensor<128x512xf32>) -> tensor<512x512xf32>
    %86 = stablehlo.transpose %85, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %87 = stablehlo.dot_general %81, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<128x512xf32>, tensor<512x512xf32>) -> tensor<128x512xf32>
    %88 = stablehlo.multiply %87, %15 : tensor<128x512xf32>
    %cst_26 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %89 = stablehlo.reduce(%88 init: %cst_26) applies stablehlo.add across dimensions = [0] : (tensor<128x512xf32>, tensor<f32>) -> tensor<512xf32>
    %90 = stablehlo.reshape %89 : (tensor<512xf32>) -> tensor<1x512xf32>
    %cst_27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %91 = stablehlo.reduce(%90 init: %cst_27) applies stablehlo.add across dimensions = [0] : (tensor<1x512xf32>, tensor<f32>) -> tensor<512xf32>
    %92 = stablehlo.dot_general %88, %arg6, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<128x512xf32>, tensor<128x784xf32>) -> tensor<512x784xf32>
    %93 = stablehlo.transpose %92, dims = [1, 0] : (tensor<512x784xf32>) -> tensor<784x512xf32>
    %cst_28 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %94 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<784x512xf32>
    %95 = stablehlo.multiply %94, %93 : tensor<784x512xf32>
    %96 = stablehlo.subtract %arg0, %95 : tensor<784x512xf32>
    %cst_29 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %97 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %98 = stablehlo.multiply %97, %86 : tensor<512x512xf32>
    %99 = stablehlo.subtract %arg1, %98 : tensor<512x512xf32>
    %cst_30 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %100 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<512x10xf32>
    %101 = stablehlo.multiply %100, %79 : tensor<512x10xf32>
    %102 = stablehlo.subtract %arg2, %101 : tensor<512x10xf32>
    %cst_31 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %103 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %104 = stablehlo.multiply %103, %91 : tensor<512xf32>
    %105 = stablehlo.subtract %arg3, %104 : tensor<512xf32>
    %cst_32 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %106 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<512xf32>
    %107 = stablehlo.multiply %106, %84 : tensor<512xf32>
    %108 = stablehlo.subtract %arg4, %107 : tensor<512xf32>
    %cst_33 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %109 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<10xf32>
    %110 = stablehlo.multiply %109, %77 : tensor<10xf32>
    %111 = stablehlo.subtract %arg5, %110 : tensor<10xf32>
    return %54, %96, %99, %102, %105, %108, %111 : tensor<f32>, tensor<784x512xf32>, tensor<512x512xf32>, tensor<512x10xf32>, tensor<512xf32>, tensor<512xf32>, tensor<10xf32>
  }
}
