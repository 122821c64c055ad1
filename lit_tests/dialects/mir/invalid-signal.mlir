// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @conjugate_real(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.conjugate' operand must have element type complex<f32>, got f32}}
  %0 = mir.conjugate %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @norm_sq_declared_complex(%z: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error@+1 {{'mir.complex_norm_sq' inferred result type tensor<4xf32> does not match declared type tensor<4xcomplex<f32>>}}
  %0 = mir.complex_norm_sq %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  func.return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @norm_sq_backward_g_dtype(%z: tensor<4xcomplex<f32>>, %g: tensor<4xf16>) -> tensor<4xcomplex<f32>> {
  // expected-error@+1 {{'mir.complex_norm_sq_backward' g must have element type f32, got f16}}
  %0 = mir.complex_norm_sq_backward %z, %g : (tensor<4xcomplex<f32>>, tensor<4xf16>) -> tensor<4xcomplex<f32>>
  func.return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @norm_sq_backward_shape(%z: tensor<4xcomplex<f32>>, %g: tensor<3xf32>) -> tensor<4xcomplex<f32>> {
  // expected-error@+1 {{'mir.complex_norm_sq_backward' g shape [3] differs from z shape [4]}}
  %0 = mir.complex_norm_sq_backward %z, %g : (tensor<4xcomplex<f32>>, tensor<3xf32>) -> tensor<4xcomplex<f32>>
  func.return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @fft_odd_real_layout(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{'mir.fft' the real layout needs an even last dim (N interleaved complex numbers), got 5}}
  %0 = mir.fft %x norm = backward : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @fft_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'mir.fft' operand must be complex<f32> or floating point (interleaved real layout), got i32}}
  %0 = mir.fft %x norm = backward : (tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @fft_scalar(%x: tensor<complex<f32>>) -> tensor<complex<f32>> {
  // expected-error@+1 {{'mir.fft' operand must have rank >= 1 (the transform axis), got a scalar}}
  %0 = mir.fft %x norm = backward : (tensor<complex<f32>>) -> tensor<complex<f32>>
  func.return %0 : tensor<complex<f32>>
}

// -----

func.func @fft_unknown_norm(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error@+1 {{Expected `backward`, `forward`, or `ortho`.}}
  %0 = mir.fft %x norm = sideways : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  func.return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @log_mel_bins(%s: tensor<3x5xf32>, %w: tensor<6x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.log_mel' spectrum has 5 frequency bins but the filters have 6}}
  %0 = mir.log_mel %s, %w eps = 1.000000e-10 : (tensor<3x5xf32>, tensor<6x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @log_mel_eps(%s: tensor<3x5xf32>, %w: tensor<5x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.log_mel' eps must be positive, got 0.0}}
  %0 = mir.log_mel %s, %w eps = 0.000000e+00 : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @log_mel_filters_rank(%s: tensor<3x5xf32>, %w: tensor<5xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.log_mel' filters must have rank 2, got [5]}}
  %0 = mir.log_mel %s, %w eps = 1.000000e-10 : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @log_mel_filters_dtype(%s: tensor<3x5xf32>, %w: tensor<5x4xf16>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.log_mel' filters element type f16 differs from the spectrum's f32}}
  %0 = mir.log_mel %s, %w eps = 1.000000e-10 : (tensor<3x5xf32>, tensor<5x4xf16>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @log_mel_backward_dy(%s: tensor<3x5xf32>, %w: tensor<5x4xf32>, %g: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.log_mel_backward' dy shape [3, 5] differs from the log-mel shape [3, 4]}}
  %0 = mir.log_mel_backward %s, %w, %g eps = 1.000000e-10 : (tensor<3x5xf32>, tensor<5x4xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}
