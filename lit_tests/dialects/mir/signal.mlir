// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @complex_ops
// GENERIC-LABEL: "func.func"() <{sym_name = "complex_ops"
func.func @complex_ops(%z: tensor<2x?xcomplex<f32>>, %g: tensor<2x?xf32>) -> tensor<2x?xcomplex<f32>> {
  // CHECK-NEXT: %0 = mir.conjugate %z : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xcomplex<f32>>
  // GENERIC: "mir.conjugate"(%z) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xcomplex<f32>>
  %0 = mir.conjugate %z : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xcomplex<f32>>
  // CHECK-NEXT: %1 = mir.complex_norm_sq %0 : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xf32>
  // GENERIC: "mir.complex_norm_sq"(%0) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xf32>
  %1 = mir.complex_norm_sq %0 : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xf32>
  // CHECK-NEXT: %2 = mir.complex_norm_sq_backward %z, %g : (tensor<2x?xcomplex<f32>>, tensor<2x?xf32>) -> tensor<2x?xcomplex<f32>>
  // GENERIC: "mir.complex_norm_sq_backward"(%z, %g) : (tensor<2x?xcomplex<f32>>, tensor<2x?xf32>) -> tensor<2x?xcomplex<f32>>
  %2 = mir.complex_norm_sq_backward %z, %g : (tensor<2x?xcomplex<f32>>, tensor<2x?xf32>) -> tensor<2x?xcomplex<f32>>
  func.return %2 : tensor<2x?xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @fft
// GENERIC-LABEL: "func.func"() <{sym_name = "fft"
func.func @fft(%z: tensor<3x4xcomplex<f32>>, %x: tensor<3x8xf32>) -> (tensor<3x4xcomplex<f32>>, tensor<3x8xf32>) {
  // CHECK-NEXT: %0 = mir.fft %z norm = backward : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  // GENERIC: "mir.fft"(%z) <{norm = #mir<fft_norm backward>}> : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  %0 = mir.fft %z norm = backward : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
  // The real layout: 4 complex numbers interleaved in 8 reals.
  // CHECK-NEXT: %1 = mir.fft %x inverse norm = ortho : (tensor<3x8xf32>) -> tensor<3x8xf32>
  // GENERIC: "mir.fft"(%x) <{inverse, norm = #mir<fft_norm ortho>}> : (tensor<3x8xf32>) -> tensor<3x8xf32>
  %1 = mir.fft %x inverse norm = ortho : (tensor<3x8xf32>) -> tensor<3x8xf32>
  func.return %0, %1 : tensor<3x4xcomplex<f32>>, tensor<3x8xf32>
}

// -----

// CHECK-LABEL: func.func @log_mel
// GENERIC-LABEL: "func.func"() <{sym_name = "log_mel"
func.func @log_mel(%s: tensor<?x201xf32>, %w: tensor<201x80xf32>, %g: tensor<?x80xf32>) -> (tensor<?x80xf32>, tensor<?x201xf32>) {
  // CHECK-NEXT: %0 = mir.log_mel %s, %w eps = 1.000000e-10 : (tensor<?x201xf32>, tensor<201x80xf32>) -> tensor<?x80xf32>
  // GENERIC: "mir.log_mel"(%s, %w) <{eps = 1.000000e-10 : f32}> : (tensor<?x201xf32>, tensor<201x80xf32>) -> tensor<?x80xf32>
  %0 = mir.log_mel %s, %w eps = 1.000000e-10 : (tensor<?x201xf32>, tensor<201x80xf32>) -> tensor<?x80xf32>
  // CHECK-NEXT: %1 = mir.log_mel_backward %s, %w, %g eps = 1.000000e-10 : (tensor<?x201xf32>, tensor<201x80xf32>, tensor<?x80xf32>) -> tensor<?x201xf32>
  // GENERIC: "mir.log_mel_backward"(%s, %w, %g) <{eps = 1.000000e-10 : f32}> : (tensor<?x201xf32>, tensor<201x80xf32>, tensor<?x80xf32>) -> tensor<?x201xf32>
  %1 = mir.log_mel_backward %s, %w, %g eps = 1.000000e-10 : (tensor<?x201xf32>, tensor<201x80xf32>, tensor<?x80xf32>) -> tensor<?x201xf32>
  func.return %0, %1 : tensor<?x80xf32>, tensor<?x201xf32>
}
