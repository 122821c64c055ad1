// RUN: rlx-opt %s -p rlx-convert-mir-to-linalg | filecheck %s
// RUN: rlx-opt %s -p rlx-convert-mir-to-linalg | rlx-opt - | filecheck %s

// lora_matmul lowers through its rlx-unfuse expansion: x @ a, then @ b, scaled, plus x @ w.
// CHECK-LABEL: func.func @lora
// CHECK:         %[[XA:.*]] = linalg.matmul ins(%x, %a : tensor<3x4xf32>, tensor<4x2xf32>)
// CHECK:         %[[AB:.*]] = linalg.matmul ins(%[[XA]], %b : tensor<3x2xf32>, tensor<2x5xf32>)
// CHECK:         arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK:         arith.mulf
// CHECK:         linalg.matmul ins(%x, %w : tensor<3x4xf32>, tensor<4x5xf32>)
// CHECK:         arith.addf
func.func @lora(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x2xf32>, %b: tensor<2x5xf32>) -> tensor<3x5xf32> {
  %0 = mir.lora_matmul %x, %w, %a, %b scale = 5.000000e-01 : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// grouped_matmul with a dynamic number of rows: each row's expert weight gathered, then a
// batched [?, 1, 4] x [?, 4, 5] contraction.
// CHECK-LABEL: func.func @grouped
// CHECK:         %[[W:.*]] = linalg.generic {{.*}} ins(%e : tensor<?xi64>) outs(%{{.*}} : tensor<?x4x5xf32>)
// CHECK:           tensor.extract %w
// CHECK:         tensor.expand_shape {{.*}} into tensor<?x1x4xf32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %[[W]] : tensor<?x1x4xf32>, tensor<?x4x5xf32>)
// CHECK:         tensor.expand_shape {{.*}} into tensor<?x5xf32>
func.func @grouped(%x: tensor<?x4xf32>, %w: tensor<3x4x5xf32>, %e: tensor<?xi64>) -> tensor<?x5xf32> {
  %0 = mir.grouped_matmul %x, %w, %e : (tensor<?x4xf32>, tensor<3x4x5xf32>, tensor<?xi64>) -> tensor<?x5xf32>
  func.return %0 : tensor<?x5xf32>
}
