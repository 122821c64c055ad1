// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @rms_norm_eps(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'hir.rms_norm' eps must be positive, got 0.0}}
  %0 = hir.rms_norm %x, %g, %g eps = 0.0 : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @rms_norm_integer(%x: tensor<2x8xi32>, %g: tensor<8xi32>) -> tensor<2x8xi32> {
  // expected-error@+1 {{'hir.rms_norm' operand must have a floating-point element type, got i32}}
  %0 = hir.rms_norm %x, %g, %g eps = 1.0e-6 : (tensor<2x8xi32>, tensor<8xi32>, tensor<8xi32>) -> tensor<2x8xi32>
  func.return %0 : tensor<2x8xi32>
}

// -----

func.func @rms_norm_gamma_dtype(%x: tensor<2x8xf32>, %g: tensor<8xf16>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'hir.rms_norm' gamma element type f16 differs from the operand's f32}}
  %0 = hir.rms_norm %x, %g, %b eps = 1.0e-6 : (tensor<2x8xf32>, tensor<8xf16>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @rms_norm_gamma_shape(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'hir.rms_norm' gamma shape [2, 8] does not broadcast to the normalised shape [8]}}
  %0 = hir.rms_norm %x, %g, %b eps = 1.0e-6 : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @rms_norm_scalar(%x: tensor<f32>, %g: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'hir.rms_norm' x must have rank >= 1, got []}}
  %0 = hir.rms_norm %x, %g, %g eps = 1.0e-6 : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @residual_shape(%x: tensor<2x8xf32>, %r: tensor<3x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'hir.residual_rms_norm' x shape [2, 8] and residual shape [3, 8] do not broadcast}}
  %0 = hir.residual_rms_norm %x, %r, %g, %g eps = 1.0e-6 : (tensor<2x8xf32>, tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @residual_dtype(%x: tensor<2x8xf32>, %r: tensor<2x8xbf16>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'hir.residual_rms_norm' residual element type bf16 differs from the operand's f32}}
  %0 = hir.residual_rms_norm %x, %r, %g, %g eps = 1.0e-6 : (tensor<2x8xf32>, tensor<2x8xbf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @residual_beta_shape(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'hir.residual_rms_norm' beta shape [4] does not broadcast to the normalised shape [8]}}
  %0 = hir.residual_rms_norm %x, %x, %g, %b eps = 1.0e-6 : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @residual_eps(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'hir.residual_rms_norm' eps must be positive, got -1.0}}
  %0 = hir.residual_rms_norm %x, %x, %g, %g eps = -1.0 : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @residual_missing_beta(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'hir.residual_rms_norm' expects 4 operands (x, residual, gamma, beta), got 3: missing beta}}
  %0 = "hir.residual_rms_norm"(%x, %x, %g) <{eps = 1.0e-6 : f32}> : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}
