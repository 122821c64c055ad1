// RUN: rlx-opt %s -p rlx-convert-mir-to-linalg | filecheck %s
// RUN: rlx-opt %s -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// A residual norm keeping its sum lowers through its expansion: the sum's generic is computed
// once, feeds the norm's reduction and its normalisation, and is the second result.
// CHECK-LABEL: func.func @residual_rms_norm_keeping_the_sum
// CHECK:         %h = linalg.generic {{.*}} ins(%x, %r : tensor<2x4xf32>, tensor<2x4xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%h : tensor<2x4xf32>)
// CHECK:         %n = linalg.generic {{.*}} ins(%h, %{{.*}}, %g, %b :
// CHECK:           math.sqrt
// CHECK:         func.return %n, %h : tensor<2x4xf32>, tensor<2x4xf32>
func.func @residual_rms_norm_keeping_the_sum(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %n, %h = mir.fused_residual_rms_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  func.return %n, %h : tensor<2x4xf32>, tensor<2x4xf32>
}
