module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<256x1024xf32>, %arg1: tensor<1024xf32>, %arg2: tensor<1024xf32>, %arg3: tensor<256x1024xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<256x1024xf32> {jax.result_info = "result[1][0]"}, tensor<1024xf32> {jax.result_info = "result[1][1]"}, tensor<1024xf32> {jax.result_info = "result[1][2]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<256xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<256xf32>) -> tensor<256x1xf32>
    %cst_0 = stablehlo.constant dense<1.024000e+03> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<256x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<256x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<256x1xf32>) -> tensor<256x1024xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<256x1024xf32>
    %6 = stablehlo.multiply %5, %5 : tensor<256x1024xf32>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<256x1024xf32>
    %8 = stablehlo.multiply %7, %5 : tensor<256x1024xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%6 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<256xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<256xf32>) -> tensor<256x1xf32>
    %cst_3 = stablehlo.constant dense<1.024000e+03> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<256x1xf32>
    %12 = stablehlo.divide %10, %11 : tensor<256x1xf32>
    %13 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<256x1xf32>) -> tensor<256x1024xf32>
    %14 = stablehlo.subtract %arg0, %13 : tensor<256x1024xf32>
    %cst_4 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<256x1xf32>
    %16 = stablehlo.add %12, %15 : tensor<256x1xf32>
    %17 = stablehlo.sqrt %16 : tensor<256x1xf32>
    %cst_5 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<256x1xf32>
    %19 = stablehlo.divide %18, %17 : tensor<256x1xf32>
    %20 = stablehlo.broadcast_in_dim %17, dims = [0, 1] : (tensor<256x1xf32>) -> tensor<256x1024xf32>
    %21 = stablehlo.divide %14, %20 : tensor<256x1024xf32>
    %22 = stablehlo.multiply %17, %17 : tensor<256x1xf32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<256x1xf32>
    %24 = stablehlo.divide %23, %22 : tensor<256x1xf32>
    %25 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<1024xf32>) -> tensor<1x1024xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0, 1] : (tensor<1x1024xf32>) -> tensor<256x1024xf32>
    %27 = stablehlo.multiply %21, %26 : tensor<256x1024xf32>
    %28 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<1024xf32>) -> tensor<1x1024xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0, 1] : (tensor<1x1024xf32>) -> tensor<256x1024xf32>
    %30 = stablehlo.add %27, %29 : tensor<256x1024xf32>
    %31 = stablehlo.multiply %30, %arg3 : tensor<256x1024xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.reduce(%31 init: %cst_7) applies stablehlo.add across dimensions = [0, 1] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<f32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<256x1024xf32>
    %34 = stablehlo.multiply %33, %arg3 : tensor<256x1024xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %35 = stablehlo.reduce(%34 init: %cst_9) applies stablehlo.add across dimensions = [0] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<1024xf32>
    %36 = stablehlo.reshape %35 : (tensor<1024xf32>) -> tensor<1x1024xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %37 = stablehlo.reduce(%36 init: %cst_10) applies stablehlo.add across dimensions = [0] : (tensor<1x1024xf32>, tensor<f32>) -> tensor<1024xf32>
    %38 = stablehlo.multiply %21, %34 : tensor<256x1024xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %39 = stablehlo.reduce(%38 init: %cst_11) applies stablehlo.add across dimensions = [0] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<1024xf32>
    %40 = stablehlo.reshape %39 : (tensor<1024xf32>) -> tensor<1x1024xf32>
    %41 = stablehlo.broadcast_in_dim %25, dims = [0, 1] : (tensor<1x1024xf32>) -> tensor<256x1024xf32>
    %42 = stablehlo.multiply %34, %41 : tensor<256x1024xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %43 = stablehlo.reduce(%40 init: %cst_12) applies stablehlo.add across dimensions = [0] : (tensor<1x1024xf32>, tensor<f32>) -> tensor<1024xf32>
    %44 = stablehlo.broadcast_in_dim %24, dims = [0, 1] : (tensor<256x1xf32>) -> tensor<256x1024xf32>
    %45 = stablehlo.multiply %42, %44 : tensor<256x1024xf32>
    %46 = stablehlo.multiply %45, %14 : tensor<256x1024xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %47 = stablehlo.reduce(%46 init: %cst_13) applies stablehlo.add across dimensions = [1] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<256xf32>
    %48 = stablehlo.reshape %47 : (tensor<256xf32>) -> tensor<256x1xf32>
    %49 = stablehlo.negate %48 : tensor<256x1xf32>
    %50 = stablehlo.broadcast_in_dim %17, dims = [0, 1] : (tensor<256x1xf32>) -> tensor<256x1024xf32>
    %51 = stablehlo.divide %42, %50 : tensor<256x1024xf32>
    %52 = stablehlo.multiply %49, %19 : tensor<256x1xf32>
    %53 = stablehlo.negate %51 : tensor<256x1024xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54 = stablehlo.reduce(%53 init: %cst_14) applies stablehlo.add across dimensions = [1] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<256xf32>
    %55 = stablehlo.reshape %54 : (tensor<256xf32>) -> tensor<256x1xf32>
    %cst_15 = stablehlo.constant dense<1.024000e+03> : tensor<f32>
    %56 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<256x1xf32>
    %57 = stablehlo.divide %52, %56 : tensor<256x1xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %58 = stablehlo.reduce(%57 init: %cst_16) applies stablehlo.add across dimensions = [1] : (tensor<256x1xf32>, tensor<f32>) -> tensor<256xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [0] : (tensor<256xf32>) -> tensor<256x1024xf32>
    %60 = stablehlo.multiply %59, %8 : tensor<256x1024xf32>
    %61 = stablehlo.negate %60 : tensor<256x1024xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %62 = stablehlo.reduce(%61 init: %cst_17) applies stablehlo.add across dimensions = [1] : (tensor<256x1024xf32>, tensor<f32>) -> tensor<256xf32>
    %63 = stablehlo.reshape %62 : (tensor<256xf32>) -> tensor<256x1xf32>
    %64 = stablehlo.add %51, %60 : tensor<256x1024xf32>
    %65 = stablehlo.add %55, %63 : tensor<256x1xf32>
    %cst_18 = stablehlo.constant dense<1.024000e+03> : tensor<f32>
    %66 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<256x1xf32>
    %67 = stablehlo.divide %65, %66 : tensor<256x1xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %68 = stablehlo.reduce(%67 init: %cst_19) applies stablehlo.add across dimensions = [1] : (tensor<256x1xf32>, tensor<f32>) -> tensor<256xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [0] : (tensor<256xf32>) -> tensor<256x1024xf32>
    %70 = stablehlo.add %64, %69 : tensor<256x1024xf32>
    return %32, %70, %43, %37 : tensor<f32>, tensor<256x1024xf32>, tensor<1024xf32>, tensor<1024xf32>
  }
}
