module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x32x32x16xf32>, %arg1: tensor<3x3x16x32xf32>, %arg2: tensor<32xf32>, %arg3: tensor<8x32x32x32xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<8x32x32x16xf32> {jax.result_info = "result[1][0]"}, tensor<3x3x16x32xf32> {jax.result_info = "result[1][1]"}, tensor<32xf32> {jax.result_info = "result[1][2]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<8x32x32x16xf32>, tensor<i32>) -> tensor<8x34x34x16xf32>
    %1 = stablehlo.slice %0 [0:8, 0:32, 0:32, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %2 = stablehlo.slice %0 [0:8, 0:32, 1:33, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %3 = stablehlo.slice %0 [0:8, 0:32, 2:34, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %4 = stablehlo.slice %0 [0:8, 1:33, 0:32, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %5 = stablehlo.slice %0 [0:8, 1:33, 1:33, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %6 = stablehlo.slice %0 [0:8, 1:33, 2:34, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %7 = stablehlo.slice %0 [0:8, 2:34, 0:32, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %8 = stablehlo.slice %0 [0:8, 2:34, 1:33, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %9 = stablehlo.slice %0 [0:8, 2:34, 2:34, 0:16] : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    %10 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %11 = stablehlo.broadcast_in_dim %2, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %12 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %13 = stablehlo.broadcast_in_dim %4, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %14 = stablehlo.broadcast_in_dim %5, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %15 = stablehlo.broadcast_in_dim %6, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %16 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %17 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %18 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2, 4] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x1x16xf32>
    %19 = stablehlo.concatenate %10, %11, %12, %13, %14, %15, %16, %17, %18, dim = 3 : (tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>, tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x9x16xf32>
    %20 = stablehlo.reshape %arg1 : (tensor<3x3x16x32xf32>) -> tensor<9x16x32xf32>
    %21 = stablehlo.dot_general %19, %20, contracting_dims = [4, 3] x [1, 0], precision = [DEFAULT, DEFAULT] : (tensor<8x32x32x9x16xf32>, tensor<9x16x32xf32>) -> tensor<8x32x32x32xf32>
    %22 = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<32xf32>) -> tensor<1x1x1x32xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 1, 2, 3] : (tensor<1x1x1x32xf32>) -> tensor<8x32x32x32xf32>
    %24 = stablehlo.add %21, %23 : tensor<8x32x32x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x32x32x32xf32>
    %26 = stablehlo.maximum %24, %25 : tensor<8x32x32x32xf32>
    %27 = stablehlo.compare EQ, %24, %26, FLOAT : (tensor<8x32x32x32xf32>, tensor<8x32x32x32xf32>) -> tensor<8x32x32x32xi1>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x32x32x32xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x32x32x32xf32>
    %30 = stablehlo.select %27, %28, %29 : tensor<8x32x32x32xi1>, tensor<8x32x32x32xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %31 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x32x32x32xf32>
    %32 = stablehlo.compare EQ, %31, %26, FLOAT : (tensor<8x32x32x32xf32>, tensor<8x32x32x32xf32>) -> tensor<8x32x32x32xi1>
    %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x32x32x32xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x32x32x32xf32>
    %35 = stablehlo.select %32, %33, %34 : tensor<8x32x32x32xi1>, tensor<8x32x32x32xf32>
    %36 = stablehlo.divide %30, %35 : tensor<8x32x32x32xf32>
    %37 = stablehlo.multiply %26, %arg3 : tensor<8x32x32x32xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %38 = stablehlo.reduce(%37 init: %cst_5) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<8x32x32x32xf32>, tensor<f32>) -> tensor<f32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %39 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x32x32x32xf32>
    %40 = stablehlo.multiply %39, %arg3 : tensor<8x32x32x32xf32>
    %41 = stablehlo.multiply %40, %36 : tensor<8x32x32x32xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %42 = stablehlo.reduce(%41 init: %cst_7) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x32x32x32xf32>, tensor<f32>) -> tensor<32xf32>
    %43 = stablehlo.reshape %42 : (tensor<32xf32>) -> tensor<1x1x1x32xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %44 = stablehlo.reduce(%43 init: %cst_8) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %45 = stablehlo.dot_general %41, %19, contracting_dims = [0, 1, 2] x [0, 1, 2], precision = [DEFAULT, DEFAULT] : (tensor<8x32x32x32xf32>, tensor<8x32x32x9x16xf32>) -> tensor<32x9x16xf32>
    %46 = stablehlo.transpose %45, dims = [1, 2, 0] : (tensor<32x9x16xf32>) -> tensor<9x16x32xf32>
    %47 = stablehlo.dot_general %41, %20, contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x32x32x32xf32>, tensor<9x16x32xf32>) -> tensor<8x32x32x9x16xf32>
    %48 = stablehlo.reshape %46 : (tensor<9x16x32xf32>) -> tensor<3x3x16x32xf32>
    %49 = stablehlo.slice %47 [0:8, 0:32, 0:32, 0:1, 0:16] : (tensor<8x32x32x9x16xf32>) -> tensor<8x32x32x1x16xf32>
    %50 = stablehlo.reshape %49 : (tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x16xf32>
    %51 = stablehlo.slice %47 [0:8, 0:32, 0:32, 1:2, 0:16] : (tensor<8x32x32x9x16xf32>) -> tensor<8x32x32x1x16xf32>
    %52 = stablehlo.reshape %51 : (tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x16xf32>
    %53 = stablehlo.slice %47 [0:8, 0:32, 0:32, 2:3, 0:16] : (tensor<8x32x32x9x16xf32>) -> tensor<8x32x32x1x16xf32>
    %54 = stablehlo.reshape %53 : (tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x16xf32>
    %55 = stablehlo.slice %47 [0:8, 0:32, 0:32, 3:4, 0:16] : (tensor<8x32x32x9x16xf32>) -> tensor<8x32x32x1x16xf32>
    %56 = stablehlo.reshape %55 : (tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x16xf32>
    %57 = stablehlo.slice %47 [0:8, 0:32, 0:32, 4:5, 0:16] : (tensor<8x32x32x9x16xf32>) -> tensor<8x32x32x1x16xf32>
    %58 = stablehlo.reshape %57 : (tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x16xf32>
    %59 = stablehlo.slice %47 [0:8, 0:32, 0:32, 5:6, 0:16] : (tensor<8x32x32x9x16xf32>) -> tensor<8x32x32x1x16xf32>
    %60 = stablehlo.reshape %59 : (tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x16xf32>
    %61 = stablehlo.slice %47 [0:8, 0:32, 0:32, 6:7, 0:16] : (tensor<8x32x32x9x16xf32>) -> tensor<8x32x32x1x16xf32>
    %62 = stablehlo.reshape %61 : (tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x16xf32>
    %63 = stablehlo.slice %47 [0:8, 0:32, 0:32, 7:8, 0:16] : (tensor<8x32x32x9x16xf32>) -> tensor<8x32x32x1x16xf32>
    %64 = stablehlo.reshape %63 : (tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x16xf32>
    %65 = stablehlo.slice %47 [0:8, 0:32, 0:32, 8:9, 0:16] : (tensor<8x32x32x9x16xf32>) -> tensor<8x32x32x1x16xf32>
    %66 = stablehlo.reshape %65 : (tensor<8x32x32x1x16xf32>) -> tensor<8x32x32x16xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %67 = stablehlo.pad %66, %cst_9, low = [0, 2, 2, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %68 = stablehlo.pad %64, %cst_10, low = [0, 2, 1, 0], high = [0, 0, 1, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    %69 = stablehlo.add %67, %68 : tensor<8x34x34x16xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %70 = stablehlo.pad %62, %cst_11, low = [0, 2, 0, 0], high = [0, 0, 2, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    %71 = stablehlo.add %69, %70 : tensor<8x34x34x16xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %72 = stablehlo.pad %60, %cst_12, low = [0, 1, 2, 0], high = [0, 1, 0, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    %73 = stablehlo.add %71, %72 : tensor<8x34x34x16xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %74 = stablehlo.pad %58, %cst_13, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    %75 = stablehlo.add %73, %74 : tensor<8x34x34x16xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %76 = stablehlo.pad %56, %cst_14, low = [0, 1, 0, 0], high = [0, 1, 2, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    %77 = stablehlo.add %75, %76 : tensor<8x34x34x16xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %78 = stablehlo.pad %54, %cst_15, low = [0, 0, 2, 0], high = [0, 2, 0, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    %79 = stablehlo.add %77, %78 : tensor<8x34x34x16xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %80 = stablehlo.pad %52, %cst_16, low = [0, 0, 1, 0], high = [0, 2, 1, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    %81 = stablehlo.add %79, %80 : tensor<8x34x34x16xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %82 = stablehlo.pad %50, %cst_17, low = [0, 0, 0, 0], high = [0, 2, 2, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    %83 = stablehlo.add %81, %82 : tensor<8x34x34x16xf32>
    %84 = call @_pad_0(%83) : (tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32>
    return %38, %84, %48, %44 : tensor<f32>, tensor<8x32x32x16xf32>, tensor<3x3x16x32xf32>, tensor<32xf32>
  }
  func.func private @_pad(%arg0: tensor<8x32x32x16xf32>, %arg1: tensor<i32>) -> tensor<8x34x34x16xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<8x32x32x16xf32>, tensor<f32>) -> tensor<8x34x34x16xf32>
    return %1 : tensor<8x34x34x16xf32>
  }
  func.func private @_pad_0(%arg0: tensor<8x34x34x16xf32>) -> tensor<8x32x32x16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [0, -1, -1, 0], high = [0, -1, -1, 0], interior = [0, 0, 0, 0] : (tensor<8x34x34x16xf32>, tensor<f32>) -> tensor<8x32x32x16xf32>
    %1 = stablehlo.slice %0 [0:8, 0:32, 0:32, 0:16] : (tensor<8x32x32x16xf32>) -> tensor<8x32x32x16xf32>
    return %1 : tensor<8x32x32x16xf32>
  }
}
