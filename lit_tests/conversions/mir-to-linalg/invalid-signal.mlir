// fft needs a static length (its DFT matrix is a constant): a located error, nothing is printed.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-convert-mir-to-linalg
// RUN: not rlx-opt %s -p rlx-convert-mir-to-linalg 2>&1 | filecheck %s

// CHECK: invalid-signal.mlir:[[# @LINE + 3]]:3: error: cannot lower 'mir.fft': fft needs a static last dim (the DFT matrix is a constant)
// CHECK-NOT: func.func
func.func @fft_complex_dynamic_length(%z: tensor<2x?xcomplex<f32>>) -> tensor<2x?xcomplex<f32>> {
  %0 = mir.fft %z norm = ortho : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xcomplex<f32>> // expected-error {{cannot lower 'mir.fft': fft needs a static last dim (the DFT matrix is a constant)}}
  func.return %0 : tensor<2x?xcomplex<f32>>
}

// -----

func.func @fft_dynamic_length(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = mir.fft %x norm = backward : (tensor<2x?xf32>) -> tensor<2x?xf32> // expected-error {{cannot lower 'mir.fft': fft on the real layout needs a static last dim (the DFT matrix is a constant)}}
  func.return %0 : tensor<2x?xf32>
}
