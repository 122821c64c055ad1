// Complex and signal ops have no linalg lowering: each is a located error, nothing is printed.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-convert-mir-to-linalg
// RUN: not rlx-opt %s -p rlx-convert-mir-to-linalg 2>&1 | filecheck %s

// CHECK: invalid-signal.mlir:[[# @LINE + 3]]:3: error: cannot lower 'mir.fft': no lowering to linalg: the lowered IR has no complex<f32> values
// CHECK-NOT: func.func
func.func @fft_complex(%z: tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>> {
  %0 = mir.fft %z norm = ortho : (tensor<2x4xcomplex<f32>>) -> tensor<2x4xcomplex<f32>> // expected-error {{cannot lower 'mir.fft': no lowering to linalg: the lowered IR has no complex<f32> values (the interpreter, rlx-run's default backend, runs it)}}
  func.return %0 : tensor<2x4xcomplex<f32>>
}

// -----

func.func @fft_dynamic_length(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = mir.fft %x norm = backward : (tensor<2x?xf32>) -> tensor<2x?xf32> // expected-error {{cannot lower 'mir.fft': fft on the real layout needs a static last dim (the DFT matrix is a constant)}}
  func.return %0 : tensor<2x?xf32>
}

// -----

func.func @conjugate(%z: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = mir.conjugate %z : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> // expected-error {{cannot lower 'mir.conjugate': no lowering to linalg}}
  func.return %0 : tensor<2xcomplex<f32>>
}

// -----

func.func @norm_sq(%z: tensor<2xcomplex<f32>>) -> tensor<2xf32> {
  %0 = mir.complex_norm_sq %z : (tensor<2xcomplex<f32>>) -> tensor<2xf32> // expected-error {{cannot lower 'mir.complex_norm_sq': no lowering to linalg}}
  func.return %0 : tensor<2xf32>
}

// -----

func.func @norm_sq_backward(%z: tensor<2xcomplex<f32>>, %g: tensor<2xf32>) -> tensor<2xcomplex<f32>> {
  %0 = mir.complex_norm_sq_backward %z, %g : (tensor<2xcomplex<f32>>, tensor<2xf32>) -> tensor<2xcomplex<f32>> // expected-error {{cannot lower 'mir.complex_norm_sq_backward': no lowering to linalg}}
  func.return %0 : tensor<2xcomplex<f32>>
}
