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
