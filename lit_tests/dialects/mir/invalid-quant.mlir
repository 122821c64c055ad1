// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @quantize_integer(%x: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error@+1 {{'mir.quantize' operand must have a floating-point element type, got i32}}
  %0 = mir.quantize %x scales = [1.000000e+00] zero_points = [0] : (tensor<4xi32>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @quantize_zero_scale(%x: tensor<4xf32>) -> tensor<4xi8> {
  // expected-error@+1 {{'mir.quantize' scales must be positive and finite, got 0.0}}
  %0 = mir.quantize %x scales = [0.000000e+00] zero_points = [0] : (tensor<4xf32>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @quantize_counts_differ(%x: tensor<2x2xf32>) -> tensor<2x2xi8> {
  // expected-error@+1 {{'mir.quantize' has 2 scales but 1 zero points}}
  %0 = mir.quantize %x scales = [1.000000e+00, 2.000000e+00] zero_points = [0] axis = 0 : (tensor<2x2xf32>) -> tensor<2x2xi8>
  func.return %0 : tensor<2x2xi8>
}

// -----

func.func @quantize_no_scale(%x: tensor<2x2xf32>) -> tensor<2x2xi8> {
  // expected-error@+1 {{'mir.quantize' needs at least one scale}}
  %0 = mir.quantize %x scales = [] zero_points = [] : (tensor<2x2xf32>) -> tensor<2x2xi8>
  func.return %0 : tensor<2x2xi8>
}

// -----

func.func @quantize_per_tensor_many_scales(%x: tensor<2x2xf32>) -> tensor<2x2xi8> {
  // expected-error@+1 {{'mir.quantize' without an axis (per tensor) takes one scale, got 2}}
  %0 = mir.quantize %x scales = [1.000000e+00, 2.000000e+00] zero_points = [0, 0] : (tensor<2x2xf32>) -> tensor<2x2xi8>
  func.return %0 : tensor<2x2xi8>
}

// -----

func.func @quantize_channel_count(%x: tensor<2x3xf32>) -> tensor<2x3xi8> {
  // expected-error@+1 {{'mir.quantize' has 2 scales but dim 1 of the operand has 3 channels}}
  %0 = mir.quantize %x scales = [1.000000e+00, 2.000000e+00] zero_points = [0, 0] axis = 1 : (tensor<2x3xf32>) -> tensor<2x3xi8>
  func.return %0 : tensor<2x3xi8>
}

// -----

func.func @quantize_axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<2x3xi8> {
  // expected-error@+1 {{'mir.quantize' axis 2 is out of range for rank 2}}
  %0 = mir.quantize %x scales = [1.000000e+00] zero_points = [0] axis = 2 : (tensor<2x3xf32>) -> tensor<2x3xi8>
  func.return %0 : tensor<2x3xi8>
}

// -----

func.func @quantize_zero_points_fit_nothing(%x: tensor<2xf32>) -> tensor<2xi8> {
  // expected-error@+1 {{'mir.quantize' zero points [-1, 200] fit neither i8 nor ui8}}
  %0 = mir.quantize %x scales = [1.000000e+00, 1.000000e+00] zero_points = [-1, 200] axis = 0 : (tensor<2xf32>) -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}

// -----

func.func @quantize_declared_signedness(%x: tensor<2xf32>) -> tensor<2xi8> {
  // expected-error@+1 {{'mir.quantize' inferred result type tensor<2xui8> does not match declared type tensor<2xi8>}}
  %0 = mir.quantize %x scales = [1.000000e+00] zero_points = [128] : (tensor<2xf32>) -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}

// -----

func.func @dequantize_float(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.dequantize' operand must have element type i8 or ui8, got f32}}
  %0 = mir.dequantize %x scales = [1.000000e+00] zero_points = [0] : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @dequantize_zero_point_range(%x: tensor<2xi8>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.dequantize' zero point 200 is outside the range of i8 [-128, 127]}}
  %0 = mir.dequantize %x scales = [1.000000e+00] zero_points = [200] : (tensor<2xi8>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @fq_bits(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.fake_quantize' bits must be in 2..8, got 9}}
  %0 = mir.fake_quantize %x bits = 9 ste = identity scale_mode = per_batch : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fq_bits_low(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.fake_quantize_lsq' bits must be in 2..8, got 1}}
  %0 = mir.fake_quantize_lsq %x, %x bits = 1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fq_integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'mir.fake_quantize' operand must have a floating-point element type, got i32}}
  %0 = mir.fake_quantize %x bits = 8 ste = identity scale_mode = per_batch : (tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @fq_state_missing(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.fake_quantize' scale_mode fixed requires a state operand}}
  %0 = mir.fake_quantize %x bits = 8 ste = identity scale_mode = fixed : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fq_state_extra(%x: tensor<4xf32>, %s: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.fake_quantize' scale_mode per_batch takes no state operand}}
  %0 = mir.fake_quantize %x, %s bits = 8 ste = identity scale_mode = per_batch : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fq_decay_missing(%x: tensor<4xf32>, %s: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.fake_quantize' scale_mode ema requires a decay}}
  %0 = mir.fake_quantize %x, %s bits = 8 ste = identity scale_mode = ema : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fq_decay_range(%x: tensor<4xf32>, %s: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.fake_quantize' decay must be in (0, 1), got 1.5}}
  %0 = mir.fake_quantize %x, %s bits = 8 ste = identity scale_mode = ema decay = 1.500000e+00 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fq_decay_not_ema(%x: tensor<4xf32>, %s: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.fake_quantize' decay is set only with scale_mode ema, not fixed}}
  %0 = mir.fake_quantize %x, %s bits = 8 ste = identity scale_mode = fixed decay = 5.000000e-01 : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fq_state_channels(%x: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.fake_quantize' state must have shape [3] (one per channel along axis 1), got [2]}}
  %0 = mir.fake_quantize %x, %s bits = 8 axis = 1 ste = identity scale_mode = fixed : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @fq_state_per_tensor(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.fake_quantize' state must have shape [] or [1] per tensor, got [3]}}
  %0 = mir.fake_quantize %x, %s bits = 8 ste = identity scale_mode = fixed : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @fq_state_dtype(%x: tensor<2x3xf32>, %s: tensor<1xf16>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.fake_quantize' state element type f16 differs from x's f32}}
  %0 = mir.fake_quantize %x, %s bits = 8 ste = identity scale_mode = fixed : (tensor<2x3xf32>, tensor<1xf16>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @fq_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.fake_quantize' axis -3 is out of range for rank 2}}
  %0 = mir.fake_quantize %x bits = 8 axis = -3 ste = identity scale_mode = per_batch : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @fq_backward_dy(%x: tensor<2x3xf32>, %s: tensor<3x2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.fake_quantize_backward' dy type tensor<3x2xf32> differs from x's tensor<2x3xf32>}}
  %0 = mir.fake_quantize_backward %x, %s bits = 8 ste = tanh scale_mode = per_batch : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @lsq_scale_channels(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.fake_quantize_lsq' scale must have shape [2] (one per channel along axis 0), got [3]}}
  %0 = mir.fake_quantize_lsq %x, %s bits = 4 axis = 0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @lsq_backward_scale_type(%x: tensor<2x3xf32>, %s: tensor<1xf32>) -> tensor<f32> {
  // expected-error@+1 {{'mir.fake_quantize_lsq_backward_scale' inferred result type tensor<1xf32> does not match declared type tensor<f32>}}
  %0 = mir.fake_quantize_lsq_backward_scale %x, %s, %x bits = 4 : (tensor<2x3xf32>, tensor<1xf32>, tensor<2x3xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
