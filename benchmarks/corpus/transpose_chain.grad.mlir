module @jit_jnp_grad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<512x512xf32>, %arg1: tensor<512x512xf32>, %arg2: tensor<512x512xf32>, %arg3: tensor<512x512xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<512x512xf32> {jax.result_info = "result[1][0]"}, tensor<512x512xf32> {jax.result_info = "result[1][1]"}, tensor<512x512xf32> {jax.result_info = "result[1][2]"}) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %1 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %4 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %5 = stablehlo.dot_general %3, %4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %6 = stablehlo.transpose %5, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %7 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %8 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %9 = stablehlo.transpose %8, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %10 = stablehlo.dot_general %7, %9, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %11 = stablehlo.transpose %10, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %12 = stablehlo.add %6, %11 : tensor<512x512xf32>
    %13 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %14 = stablehlo.dot_general %13, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %15 = stablehlo.transpose %14, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %16 = stablehlo.transpose %15, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %17 = stablehlo.add %12, %16 : tensor<512x512xf32>
    %18 = stablehlo.multiply %17, %arg3 : tensor<512x512xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.reduce(%18 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<512x512xf32>, tensor<f32>) -> tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<512x512xf32>
    %21 = stablehlo.multiply %20, %arg3 : tensor<512x512xf32>
    %22 = stablehlo.transpose %21, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %23 = stablehlo.transpose %22, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %24 = stablehlo.dot_general %23, %13, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %25 = stablehlo.transpose %24, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %26 = stablehlo.dot_general %23, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %27 = stablehlo.transpose %26, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %28 = stablehlo.transpose %21, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %29 = stablehlo.dot_general %28, %7, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %30 = stablehlo.transpose %29, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %31 = stablehlo.dot_general %28, %9, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %32 = stablehlo.transpose %30, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %33 = stablehlo.dot_general %32, %arg1, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %34 = stablehlo.transpose %33, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %35 = stablehlo.add %27, %34 : tensor<512x512xf32>
    %36 = stablehlo.dot_general %32, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %37 = stablehlo.add %25, %36 : tensor<512x512xf32>
    %38 = stablehlo.transpose %31, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %39 = stablehlo.transpose %21, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %40 = stablehlo.dot_general %39, %3, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %41 = stablehlo.transpose %40, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %42 = stablehlo.dot_general %39, %4, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %43 = stablehlo.transpose %41, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %44 = stablehlo.add %38, %43 : tensor<512x512xf32>
    %45 = stablehlo.transpose %42, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %46 = stablehlo.dot_general %45, %0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %47 = stablehlo.transpose %46, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %48 = stablehlo.dot_general %45, %1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    %49 = stablehlo.transpose %47, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %50 = stablehlo.add %37, %49 : tensor<512x512xf32>
    %51 = stablehlo.transpose %48, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
    %52 = stablehlo.add %35, %51 : tensor<512x512xf32>
    return %19, %52, %50, %44 : tensor<f32>, tensor<512x512xf32>, tensor<512x512xf32>, tensor<512x512xf32>
  }
}
