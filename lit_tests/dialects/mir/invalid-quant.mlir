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

// -----

func.func @qmatmul_float(%x: tensor<2x3xf32>, %w: tensor<3x4xi8>, %b: tensor<4xi32>) -> tensor<2x4xi8> {
  // expected-error@+1 {{'mir.qmatmul' x must have element type i8 or ui8, got f32}}
  %0 = mir.qmatmul %x, %w, %b x_zp = 0 w_zp = 0 out_zp = 0 mult = 1.000000e-02 : (tensor<2x3xf32>, tensor<3x4xi8>, tensor<4xi32>) -> tensor<2x4xi8>
  func.return %0 : tensor<2x4xi8>
}

// -----

func.func @qmatmul_x_zp(%x: tensor<2x3xi8>, %w: tensor<3x4xi8>, %b: tensor<4xi32>) -> tensor<2x4xi8> {
  // expected-error@+1 {{'mir.qmatmul' x_zp 128 is outside the range of i8 [-128, 127]}}
  %0 = mir.qmatmul %x, %w, %b x_zp = 128 w_zp = 0 out_zp = 0 mult = 1.000000e-02 : (tensor<2x3xi8>, tensor<3x4xi8>, tensor<4xi32>) -> tensor<2x4xi8>
  func.return %0 : tensor<2x4xi8>
}

// -----

func.func @qmatmul_out_zp(%x: tensor<2x3xi8>, %w: tensor<3x4xi8>, %b: tensor<4xi32>) -> tensor<2x4xi8> {
  // expected-error@+1 {{'mir.qmatmul' out_zp 256 fits neither i8 nor ui8}}
  %0 = mir.qmatmul %x, %w, %b x_zp = 0 w_zp = 0 out_zp = 256 mult = 1.000000e-02 : (tensor<2x3xi8>, tensor<3x4xi8>, tensor<4xi32>) -> tensor<2x4xi8>
  func.return %0 : tensor<2x4xi8>
}

// -----

func.func @qmatmul_mult(%x: tensor<2x3xi8>, %w: tensor<3x4xi8>, %b: tensor<4xi32>) -> tensor<2x4xi8> {
  // expected-error@+1 {{'mir.qmatmul' mult must be positive and finite, got 0.0}}
  %0 = mir.qmatmul %x, %w, %b x_zp = 0 w_zp = 0 out_zp = 0 mult = 0.000000e+00 : (tensor<2x3xi8>, tensor<3x4xi8>, tensor<4xi32>) -> tensor<2x4xi8>
  func.return %0 : tensor<2x4xi8>
}

// -----

func.func @qmatmul_bias_dtype(%x: tensor<2x3xi8>, %w: tensor<3x4xi8>, %b: tensor<4xi64>) -> tensor<2x4xi8> {
  // expected-error@+1 {{'mir.qmatmul' bias must have element type i32, got i64}}
  %0 = mir.qmatmul %x, %w, %b x_zp = 0 w_zp = 0 out_zp = 0 mult = 1.000000e-02 : (tensor<2x3xi8>, tensor<3x4xi8>, tensor<4xi64>) -> tensor<2x4xi8>
  func.return %0 : tensor<2x4xi8>
}

// -----

func.func @qmatmul_bias_shape(%x: tensor<2x3xi8>, %w: tensor<3x4xi8>, %b: tensor<3xi32>) -> tensor<2x4xi8> {
  // expected-error@+1 {{'mir.qmatmul' bias must have shape [4] (one per output channel), got [3]}}
  %0 = mir.qmatmul %x, %w, %b x_zp = 0 w_zp = 0 out_zp = 0 mult = 1.000000e-02 : (tensor<2x3xi8>, tensor<3x4xi8>, tensor<3xi32>) -> tensor<2x4xi8>
  func.return %0 : tensor<2x4xi8>
}

// -----

func.func @qmatmul_k(%x: tensor<2x3xi8>, %w: tensor<2x4xi8>, %b: tensor<4xi32>) -> tensor<2x4xi8> {
  // expected-error@+1 {{'mir.qmatmul' contraction dims 3 and 2 differ}}
  %0 = mir.qmatmul %x, %w, %b x_zp = 0 w_zp = 0 out_zp = 0 mult = 1.000000e-02 : (tensor<2x3xi8>, tensor<2x4xi8>, tensor<4xi32>) -> tensor<2x4xi8>
  func.return %0 : tensor<2x4xi8>
}

// -----

func.func @qmatmul_w_rank(%x: tensor<2x3xi8>, %w: tensor<1x3x4xi8>, %b: tensor<4xi32>) -> tensor<2x4xi8> {
  // expected-error@+1 {{'mir.qmatmul' w must have rank 2, got [1, 3, 4]}}
  %0 = mir.qmatmul %x, %w, %b x_zp = 0 w_zp = 0 out_zp = 0 mult = 1.000000e-02 : (tensor<2x3xi8>, tensor<1x3x4xi8>, tensor<4xi32>) -> tensor<2x4xi8>
  func.return %0 : tensor<2x4xi8>
}

// -----

func.func @qconv2d_bias(%x: tensor<1x4x5x5xi8>, %w: tensor<6x4x3x3xi8>, %b: tensor<4xi32>) -> tensor<1x6x3x3xi8> {
  // expected-error@+1 {{'mir.qconv2d' bias must have shape [6] (one per output channel), got [4]}}
  %0 = mir.qconv2d %x, %w, %b kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 x_zp = 0 w_zp = 0 out_zp = 0 mult = 1.000000e-02 : (tensor<1x4x5x5xi8>, tensor<6x4x3x3xi8>, tensor<4xi32>) -> tensor<1x6x3x3xi8>
  func.return %0 : tensor<1x6x3x3xi8>
}

// -----

func.func @qconv2d_groups(%x: tensor<1x4x5x5xi8>, %w: tensor<6x4x3x3xi8>, %b: tensor<6xi32>) -> tensor<1x6x3x3xi8> {
  // expected-error@+1 {{'mir.qconv2d' w has 4 input channels per group, expected 4 / 2 = 2}}
  %0 = mir.qconv2d %x, %w, %b kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 x_zp = 0 w_zp = 0 out_zp = 0 mult = 1.000000e-02 : (tensor<1x4x5x5xi8>, tensor<6x4x3x3xi8>, tensor<6xi32>) -> tensor<1x6x3x3xi8>
  func.return %0 : tensor<1x6x3x3xi8>
}

// -----

func.func @qconv2d_w_dtype(%x: tensor<1x4x5x5xi8>, %w: tensor<6x4x3x3xi32>, %b: tensor<6xi32>) -> tensor<1x6x3x3xi8> {
  // expected-error@+1 {{'mir.qconv2d' w must have element type i8 or ui8, got i32}}
  %0 = mir.qconv2d %x, %w, %b kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 x_zp = 0 w_zp = 0 out_zp = 0 mult = 1.000000e-02 : (tensor<1x4x5x5xi8>, tensor<6x4x3x3xi32>, tensor<6xi32>) -> tensor<1x6x3x3xi8>
  func.return %0 : tensor<1x6x3x3xi8>
}

// -----

func.func @dq_k_block(%x: tensor<2x6xf32>, %w: tensor<6x3xi8>, %s: tensor<1x3xf32>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' K = 6 is not a multiple of the block size 4}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = int8_block block_size = 4 : (tensor<2x6xf32>, tensor<6x3xi8>, tensor<1x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_packed_size(%x: tensor<2x8xf32>, %w: tensor<8x3xui8>, %s: tensor<2x3xf32>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' w_q must have shape [4, 3] (two 4-bit values per byte along K), got [8, 3]}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = int4_block block_size = 4 : (tensor<2x8xf32>, tensor<8x3xui8>, tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_no_block(%x: tensor<2x8xf32>, %w: tensor<8x3xi8>, %s: tensor<2x3xf32>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' scheme int8_block requires a block_size}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = int8_block : (tensor<2x8xf32>, tensor<8x3xi8>, tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_fp8_block(%x: tensor<2x8xf32>, %w: tensor<8x3xui8>, %s: tensor<3xf32>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' scheme fp8_e4m3 takes no block_size}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = fp8_e4m3 block_size = 4 : (tensor<2x8xf32>, tensor<8x3xui8>, tensor<3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_odd_int4_block(%x: tensor<2x6xf32>, %w: tensor<3x3xui8>, %s: tensor<2x3xf32>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' int4_block needs an even block_size (whole bytes), got 3}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = int4_block block_size = 3 : (tensor<2x6xf32>, tensor<3x3xui8>, tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_scale_shape(%x: tensor<2x8xf32>, %w: tensor<8x3xi8>, %s: tensor<3xf32>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' scale must have shape [2, 3] (one per block and column), got [3]}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = int8_block block_size = 4 : (tensor<2x8xf32>, tensor<8x3xi8>, tensor<3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_w_dtype(%x: tensor<2x8xf32>, %w: tensor<8x3xi8>, %s: tensor<3xf32>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' w_q must have element type ui8, got i8}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = fp8_e5m2 : (tensor<2x8xf32>, tensor<8x3xi8>, tensor<3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_fp8_scale(%x: tensor<2x8xf32>, %w: tensor<8x3xui8>, %s: tensor<2xf32>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' scale must have shape [1] or [3] (per tensor or per column), got [2]}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = fp8_e5m2 : (tensor<2x8xf32>, tensor<8x3xui8>, tensor<2xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_nvfp4_scale(%x: tensor<2x32xf32>, %w: tensor<16x3xui8>, %s: tensor<2x3xf32>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' scale must have element type ui8, got f32}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = nvfp4_block : (tensor<2x32xf32>, tensor<16x3xui8>, tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_nvfp4_k(%x: tensor<2x24xf32>, %w: tensor<12x3xui8>, %s: tensor<1x3xui8>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' K = 24 is not a multiple of the block size 16}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = nvfp4_block : (tensor<2x24xf32>, tensor<12x3xui8>, tensor<1x3xui8>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_asym_zp(%x: tensor<2x8xf32>, %w: tensor<8x3xi8>, %s: tensor<2x3xf32>, %z: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' zp must have shape [2, 3] (one per block and column), got [1]}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = int8_block_asym block_size = 4 : (tensor<2x8xf32>, tensor<8x3xi8>, tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @dq_x_int(%x: tensor<2x8xi32>, %w: tensor<8x3xi8>, %s: tensor<2x3xf32>, %z: tensor<1xf32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'mir.dequant_matmul' x must have a floating-point element type, got i32}}
  %0 = mir.dequant_matmul %x, %w, %s, %z scheme = int8_block block_size = 4 : (tensor<2x8xi32>, tensor<8x3xi8>, tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}

// -----

func.func @gguf_bytes(%x: tensor<2x64xf32>, %p: tensor<100xui8>) -> tensor<2x1xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' packed has 100 bytes, not a whole number of rows of K = 64 values (2 blocks of 34 bytes = 68 bytes per row)}}
  %0 = mir.dequant_matmul %x, %p scheme = gguf_q8_0 : (tensor<2x64xf32>, tensor<100xui8>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}

// -----

func.func @gguf_k(%x: tensor<2x48xf32>, %p: tensor<36xui8>) -> tensor<2x1xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' K = 48 is not a multiple of gguf_q4_0's block of 32 values}}
  %0 = mir.dequant_matmul %x, %p scheme = gguf_q4_0 : (tensor<2x48xf32>, tensor<36xui8>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}

// -----

func.func @gguf_extra(%x: tensor<2x64xf32>, %p: tensor<68xui8>, %s: tensor<1xf32>) -> tensor<2x1xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' scheme gguf_q8_0 takes [x, packed], got 4 operands}}
  %0 = mir.dequant_matmul %x, %p, %s, %s scheme = gguf_q8_0 : (tensor<2x64xf32>, tensor<68xui8>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}

// -----

func.func @dq_missing(%x: tensor<2x64xf32>, %p: tensor<68xui8>) -> tensor<2x1xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' scheme int8_block takes [x, w_q, scale, zp], got 2 operands}}
  %0 = mir.dequant_matmul %x, %p scheme = int8_block block_size = 4 : (tensor<2x64xf32>, tensor<68xui8>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}

// -----

func.func @gguf_q6_k_k(%x: tensor<2x64xf32>, %p: tensor<210xui8>) -> tensor<2x1xf32> {
  // expected-error@+1 {{'mir.dequant_matmul' K = 64 is not a multiple of gguf_q6_k's block of 256 values}}
  %0 = mir.dequant_matmul %x, %p scheme = gguf_q6_k : (tensor<2x64xf32>, tensor<210xui8>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}
