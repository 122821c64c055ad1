// An op the conversion cannot lower is reported at the op, and nothing is printed.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-convert-mir-to-linalg
// RUN: not rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg 2>&1 | filecheck %s

// complex<f32> has no order: max (like min, pow, comparisons) is refused.
// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: cannot lower 'mir.max': max of element type complex<f32> has no lowering to linalg
// CHECK-NOT: linalg.generic
func.func @complex(%z: tensor<2xcomplex<f32>>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xcomplex<f32>>) {
  %0 = mir.max %z, %z : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> // expected-error {{cannot lower 'mir.max': max of element type complex<f32> has no lowering to linalg}}
  %1 = mir.exp %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %1, %0 : tensor<2xf32>, tensor<2xcomplex<f32>>
}

// -----

func.func @complex_compare(%z: tensor<2xcomplex<f32>>) -> tensor<2xi1> {
  %0 = mir.compare eq, %z, %z : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xi1> // expected-error {{cannot lower 'mir.compare': a comparison of element type complex<f32> has no lowering to linalg}}
  func.return %0 : tensor<2xi1>
}
