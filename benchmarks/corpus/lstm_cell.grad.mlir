module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x256xf32>, %arg1: tensor<64x512xf32>, %arg2: tensor<64x512xf32>, %arg3: tensor<256x2048xf32>, %arg4: tensor<512x2048xf32>, %arg5: tensor<2048xf32>, %arg6: tensor<64x512xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<64x256xf32> {jax.result_info = "result[1][0]"}, tensor<64x512xf32> {jax.result_info = "result[1][1]"}, tensor<64x512xf32> {jax.result_info = "result[1][2]"}, tensor<256x2048xf32> {jax.result_info = "result[1][3]"}, tensor<512x2048xf32> {jax.result_info = "result[1][4]"}, tensor<2048xf32> {jax.result_info = "result[1][5]"}) {
    %0 = stablehlo.dot_general %arg0, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x2048xf32>) -> tensor<64x2048xf32>
    %1 = stablehlo.dot_general %arg1, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x512xf32>, tensor<512x2048xf32>) -> tensor<64x2048xf32>
    %2 = stablehlo.add %0, %1 : tensor<64x2048xf32>
    %3 = stablehlo.broadcast_in_dim %arg5, dims = [1] : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x2048xf32>) -> tensor<64x2048xf32>
    %5 = stablehlo.add %2, %4 : tensor<64x2048xf32>
    %6 = stablehlo.slice %5 [0:64, 0:512] : (tensor<64x2048xf32>) -> tensor<64x512xf32>
    %7 = stablehlo.slice %5 [0:64, 512:1024] : (tensor<64x2048xf32>) -> tensor<64x512xf32>
    %8 = stablehlo.slice %5 [0:64, 1024:1536] : (tensor<64x2048xf32>) -> tensor<64x512xf32>
    %9 = stablehlo.slice %5 [0:64, 1536:2048] : (tensor<64x2048xf32>) -> tensor<64x512xf32>
    %10 = stablehlo.negate %7 : tensor<64x512xf32>
    %11 = stablehlo.exponential %10 : tensor<64x512xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %13 = stablehlo.add %12, %11 : tensor<64x512xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %15 = stablehlo.divide %14, %13 : tensor<64x512xf32>
    %16 = stablehlo.multiply %13, %13 : tensor<64x512xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %18 = stablehlo.divide %17, %16 : tensor<64x512xf32>
    %19 = stablehlo.multiply %15, %arg2 : tensor<64x512xf32>
    %20 = stablehlo.negate %6 : tensor<64x512xf32>
    %21 = stablehlo.exponential %20 : tensor<64x512xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %23 = stablehlo.add %22, %21 : tensor<64x512xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %25 = stablehlo.divide %24, %23 : tensor<64x512xf32>
    %26 = stablehlo.multiply %23, %23 : tensor<64x512xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %28 = stablehlo.divide %27, %26 : tensor<64x512xf32>
    %29 = stablehlo.tanh %8 : tensor<64x512xf32>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %31 = stablehlo.subtract %30, %29 : tensor<64x512xf32>
    %32 = stablehlo.multiply %25, %29 : tensor<64x512xf32>
    %33 = stablehlo.add %19, %32 : tensor<64x512xf32>
    %34 = stablehlo.negate %9 : tensor<64x512xf32>
    %35 = stablehlo.exponential %34 : tensor<64x512xf32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %36 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %37 = stablehlo.add %36, %35 : tensor<64x512xf32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %39 = stablehlo.divide %38, %37 : tensor<64x512xf32>
    %40 = stablehlo.multiply %37, %37 : tensor<64x512xf32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %42 = stablehlo.divide %41, %40 : tensor<64x512xf32>
    %43 = stablehlo.tanh %33 : tensor<64x512xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %44 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %45 = stablehlo.subtract %44, %43 : tensor<64x512xf32>
    %46 = stablehlo.multiply %39, %43 : tensor<64x512xf32>
    %47 = stablehlo.add %46, %33 : tensor<64x512xf32>
    %48 = stablehlo.multiply %47, %arg6 : tensor<64x512xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %49 = stablehlo.reduce(%48 init: %cst_10) applies stablehlo.add across dimensions = [0, 1] : (tensor<64x512xf32>, tensor<f32>) -> tensor<f32>
    %cst_11 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %50 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %51 = stablehlo.multiply %50, %arg6 : tensor<64x512xf32>
    %52 = stablehlo.multiply %39, %51 : tensor<64x512xf32>
    %53 = stablehlo.multiply %51, %43 : tensor<64x512xf32>
    %54 = stablehlo.multiply %52, %45 : tensor<64x512xf32>
    %55 = stablehlo.add %51, %54 : tensor<64x512xf32>
    %56 = stablehlo.multiply %54, %43 : tensor<64x512xf32>
    %57 = stablehlo.add %55, %56 : tensor<64x512xf32>
    %58 = stablehlo.multiply %53, %42 : tensor<64x512xf32>
    %cst_12 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %60 = stablehlo.multiply %58, %59 : tensor<64x512xf32>
    %61 = stablehlo.negate %60 : tensor<64x512xf32>
    %62 = stablehlo.multiply %61, %35 : tensor<64x512xf32>
    %63 = stablehlo.negate %62 : tensor<64x512xf32>
    %64 = stablehlo.multiply %25, %57 : tensor<64x512xf32>
    %65 = stablehlo.multiply %57, %29 : tensor<64x512xf32>
    %66 = stablehlo.multiply %64, %31 : tensor<64x512xf32>
    %67 = stablehlo.multiply %66, %29 : tensor<64x512xf32>
    %68 = stablehlo.add %66, %67 : tensor<64x512xf32>
    %69 = stablehlo.multiply %65, %28 : tensor<64x512xf32>
    %cst_13 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %71 = stablehlo.multiply %69, %70 : tensor<64x512xf32>
    %72 = stablehlo.negate %71 : tensor<64x512xf32>
    %73 = stablehlo.multiply %72, %21 : tensor<64x512xf32>
    %74 = stablehlo.negate %73 : tensor<64x512xf32>
    %75 = stablehlo.multiply %15, %57 : tensor<64x512xf32>
    %76 = stablehlo.multiply %57, %arg2 : tensor<64x512xf32>
    %77 = stablehlo.multiply %76, %18 : tensor<64x512xf32>
    %cst_14 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<64x512xf32>
    %79 = stablehlo.multiply %77, %78 : tensor<64x512xf32>
    %80 = stablehlo.negate %79 : tensor<64x512xf32>
    %81 = stablehlo.multiply %80, %11 : tensor<64x512xf32>
    %82 = stablehlo.negate %81 : tensor<64x512xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %83 = stablehlo.pad %63, %cst_15, low = [0, 1536], high = [0, 0], interior = [0, 0] : (tensor<64x512xf32>, tensor<f32>) -> tensor<64x2048xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %84 = stablehlo.pad %68, %cst_16, low = [0, 1024], high = [0, 512], interior = [0, 0] : (tensor<64x512xf32>, tensor<f32>) -> tensor<64x2048xf32>
    %85 = stablehlo.add %83, %84 : tensor<64x2048xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %86 = stablehlo.pad %82, %cst_17, low = [0, 512], high = [0, 1024], interior = [0, 0] : (tensor<64x512xf32>, tensor<f32>) -> tensor<64x2048xf32>
    %87 = stablehlo.add %85, %86 : tensor<64x2048xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %88 = stablehlo.pad %74, %cst_18, low = [0, 0], high = [0, 1536], interior = [0, 0] : (tensor<64x512xf32>, tensor<f32>) -> tensor<64x2048xf32>
    %89 = stablehlo.add %87, %88 : tensor<64x2048xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %90 = stablehlo.reduce(%89 init: %cst_19) applies stablehlo.add across dimensions = [0] : (tensor<64x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %91 = stablehlo.reshape %90 : (tensor<2048xf32>) -> tensor<1x2048xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %92 = stablehlo.reduce(%91 init: %cst_20) applies stablehlo.add across dimensions = [0] : (tensor<1x2048xf32>, tensor<f32>) -> tensor<2048xf32>
    %93 = stablehlo.dot_general %89, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x2048xf32>, tensor<64x512xf32>) -> tensor<2048x512xf32>
    %94 = stablehlo.transpose %93, dims = [1, 0] : (tensor<2048x512xf32>) -> tensor<512x2048xf32>
    %95 = stablehlo.dot_general %89, %arg4, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x2048xf32>, tensor<512x2048xf32>) -> tensor<64x512xf32>
    %96 = stablehlo.dot_general %89, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x2048xf32>, tensor<64x256xf32>) -> tensor<2048x256xf32>
    %97 = stablehlo.transpose %96, dims = [1, 0] : (tensor<2048x256xf32>) -> tensor<256x2048xf32>
    %98 = stablehlo.dot_general %89, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<64x2048xf32>, tensor<256x2048xf32>) -> tensor<64x256xf32>
    return %49, %98, %95, %75, %97, %94, %92 : tensor<f32>, tensor<64x256xf32>, tensor<64x512xf32>, tensor<64x512xf32>, tensor<256x2048xf32>, tensor<512x2048xf32>, tensor<2048xf32>
  }
}
