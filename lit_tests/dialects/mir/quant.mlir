// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @affine
// GENERIC-LABEL: "func.func"() <{sym_name = "affine"
func.func @affine(%x: tensor<2x3xf32>, %h: tensor<?x3xbf16>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x3xui8>) {
  // Per tensor: i8.
  // CHECK-NEXT: %0 = mir.quantize %x scales = [5.000000e-01] zero_points = [-3] : (tensor<2x3xf32>) -> tensor<2x3xi8>
  // GENERIC: "mir.quantize"(%x) <{scales = array<f32: 5.000000e-01>, zero_points = array<i64: -3>}> : (tensor<2x3xf32>) -> tensor<2x3xi8>
  %0 = mir.quantize %x scales = [5.000000e-01] zero_points = [-3] : (tensor<2x3xf32>) -> tensor<2x3xi8>
  // CHECK-NEXT: %1 = mir.dequantize %0 scales = [5.000000e-01] zero_points = [-3] : (tensor<2x3xi8>) -> tensor<2x3xf32>
  %1 = mir.dequantize %0 scales = [5.000000e-01] zero_points = [-3] : (tensor<2x3xi8>) -> tensor<2x3xf32>
  // Per channel along axis 1; a zero point past 127 makes the type ui8.
  // CHECK-NEXT: %2 = mir.quantize %x scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = 1 : (tensor<2x3xf32>) -> tensor<2x3xui8>
  // GENERIC: "mir.quantize"(%x) <{scales = array<f32: 1.000000e+00, 2.500000e-01, 2.000000e+00>, zero_points = array<i64: 0, 128, 255>, axis = 1 : i64}> : (tensor<2x3xf32>) -> tensor<2x3xui8>
  %2 = mir.quantize %x scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = 1 : (tensor<2x3xf32>) -> tensor<2x3xui8>
  // CHECK-NEXT: %3 = mir.dequantize %2 scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = -1 : (tensor<2x3xui8>) -> tensor<2x3xf32>
  %3 = mir.dequantize %2 scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = -1 : (tensor<2x3xui8>) -> tensor<2x3xf32>
  // A dynamic batch and a bf16 operand.
  // CHECK-NEXT: %4 = mir.quantize %h scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = 1 : (tensor<?x3xbf16>) -> tensor<?x3xui8>
  %4 = mir.quantize %h scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = 1 : (tensor<?x3xbf16>) -> tensor<?x3xui8>
  func.return %1, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x3xui8>
}

// -----

// CHECK-LABEL: func.func @fake_quantize
// GENERIC-LABEL: "func.func"() <{sym_name = "fake_quantize"
func.func @fake_quantize(%x: tensor<4x3xf32>, %r: tensor<3xf32>, %r1: tensor<1xbf16>, %xb: tensor<4x3xbf16>, %dy: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xbf16>, tensor<4x3xf32>) {
  // CHECK-NEXT: %0 = mir.fake_quantize %x bits = 8 ste = identity scale_mode = per_batch : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // GENERIC: "mir.fake_quantize"(%x) <{bits = 8 : i64, ste = #mir<ste identity>, scale_mode = #mir<scale_mode per_batch>}> : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %0 = mir.fake_quantize %x bits = 8 ste = identity scale_mode = per_batch : (tensor<4x3xf32>) -> tensor<4x3xf32>
  // CHECK-NEXT: %1 = mir.fake_quantize %x, %r bits = 4 axis = 1 ste = tanh scale_mode = ema decay = 9.000000e-01 : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // GENERIC: "mir.fake_quantize"(%x, %r) <{bits = 4 : i64, axis = 1 : i64, ste = #mir<ste tanh>, scale_mode = #mir<scale_mode ema>, decay = 9.000000e-01 : f32}> : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %1 = mir.fake_quantize %x, %r bits = 4 axis = 1 ste = tanh scale_mode = ema decay = 9.000000e-01 : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK-NEXT: %2 = mir.fake_quantize %xb, %r1 bits = 2 ste = hard_tanh scale_mode = fixed : (tensor<4x3xbf16>, tensor<1xbf16>) -> tensor<4x3xbf16>
  %2 = mir.fake_quantize %xb, %r1 bits = 2 ste = hard_tanh scale_mode = fixed : (tensor<4x3xbf16>, tensor<1xbf16>) -> tensor<4x3xbf16>
  // CHECK-NEXT: %3 = mir.fake_quantize_backward %x, %dy, %r bits = 4 axis = -1 ste = clipped_identity scale_mode = fixed : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %3 = mir.fake_quantize_backward %x, %dy, %r bits = 4 axis = -1 ste = clipped_identity scale_mode = fixed : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return %0, %1, %2, %3 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xbf16>, tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @lsq
func.func @lsq(%x: tensor<?x3xf32>, %s: tensor<3xf32>, %t: tensor<f32>, %dy: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<3xf32>, tensor<f32>) {
  // CHECK-NEXT: %0 = mir.fake_quantize_lsq %x, %s bits = 3 axis = 1 : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  // GENERIC: "mir.fake_quantize_lsq"(%x, %s) <{bits = 3 : i64, axis = 1 : i64}> : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %0 = mir.fake_quantize_lsq %x, %s bits = 3 axis = 1 : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  // CHECK-NEXT: %1 = mir.fake_quantize_lsq_backward_x %x, %t, %dy bits = 8 : (tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %1 = mir.fake_quantize_lsq_backward_x %x, %t, %dy bits = 8 : (tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  // CHECK-NEXT: %2 = mir.fake_quantize_lsq_backward_scale %x, %s, %dy bits = 3 axis = 1 : (tensor<?x3xf32>, tensor<3xf32>, tensor<?x3xf32>) -> tensor<3xf32>
  %2 = mir.fake_quantize_lsq_backward_scale %x, %s, %dy bits = 3 axis = 1 : (tensor<?x3xf32>, tensor<3xf32>, tensor<?x3xf32>) -> tensor<3xf32>
  // CHECK-NEXT: %3 = mir.fake_quantize_lsq_backward_scale %x, %t, %dy bits = 2 : (tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>) -> tensor<f32>
  %3 = mir.fake_quantize_lsq_backward_scale %x, %t, %dy bits = 2 : (tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>) -> tensor<f32>
  func.return %0, %1, %2, %3 : tensor<?x3xf32>, tensor<?x3xf32>, tensor<3xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @integer_contractions
func.func @integer_contractions(%x: tensor<2x3x5xi8>, %w: tensor<5x4xui8>, %b: tensor<4xi32>, %xc: tensor<?x4x5x6xui8>, %wc: tensor<6x2x3x3xi8>, %bc: tensor<6xi32>) -> (tensor<2x3x4xi8>, tensor<?x6x3x4xui8>) {
  // CHECK-NEXT: %0 = mir.qmatmul %x, %w, %b x_zp = 3 w_zp = 130 out_zp = -5 mult = 3.000000e-02 : (tensor<2x3x5xi8>, tensor<5x4xui8>, tensor<4xi32>) -> tensor<2x3x4xi8>
  // GENERIC: "mir.qmatmul"(%x, %w, %b) <{x_zp = 3 : i64, w_zp = 130 : i64, out_zp = -5 : i64, mult = 3.000000e-02 : f32}> : (tensor<2x3x5xi8>, tensor<5x4xui8>, tensor<4xi32>) -> tensor<2x3x4xi8>
  %0 = mir.qmatmul %x, %w, %b x_zp = 3 w_zp = 130 out_zp = -5 mult = 3.000000e-02 : (tensor<2x3x5xi8>, tensor<5x4xui8>, tensor<4xi32>) -> tensor<2x3x4xi8>
  // An out_zp past 127 makes the result ui8.
  // CHECK-NEXT: %1 = mir.qconv2d %xc, %wc, %bc kernel_size = [3, 3] stride = [2, 1] padding = [1, 1] dilation = [1, 2] groups = 2 x_zp = 120 w_zp = -2 out_zp = 200 mult = 2.000000e-03 : (tensor<?x4x5x6xui8>, tensor<6x2x3x3xi8>, tensor<6xi32>) -> tensor<?x6x3x4xui8>
  %1 = mir.qconv2d %xc, %wc, %bc kernel_size = [3, 3] stride = [2, 1] padding = [1, 1] dilation = [1, 2] groups = 2 x_zp = 120 w_zp = -2 out_zp = 200 mult = 2.000000e-03 : (tensor<?x4x5x6xui8>, tensor<6x2x3x3xi8>, tensor<6xi32>) -> tensor<?x6x3x4xui8>
  func.return %0, %1 : tensor<2x3x4xi8>, tensor<?x6x3x4xui8>
}

// -----

// CHECK-LABEL: func.func @dequant_matmul
func.func @dequant_matmul(%x: tensor<3x8xf32>, %w8: tensor<8x4xi8>, %w4: tensor<4x4xui8>, %s: tensor<2x4xf32>, %z: tensor<2x4xf32>, %one: tensor<1xf32>, %f8: tensor<8x4xui8>, %col: tensor<4xf32>, %x32: tensor<2x32xbf16>, %e2m1: tensor<16x3xui8>, %e4m3: tensor<2x3xui8>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x3xbf16>) {
  // CHECK-NEXT: %0 = mir.dequant_matmul %x, %w8, %s, %one scheme = int8_block block_size = 4 : (tensor<3x8xf32>, tensor<8x4xi8>, tensor<2x4xf32>, tensor<1xf32>) -> tensor<3x4xf32>
  // GENERIC: "mir.dequant_matmul"(%x, %w8, %s, %one) <{scheme = #mir<quant_scheme int8_block>, block_size = 4 : i64}> : (tensor<3x8xf32>, tensor<8x4xi8>, tensor<2x4xf32>, tensor<1xf32>) -> tensor<3x4xf32>
  %0 = mir.dequant_matmul %x, %w8, %s, %one scheme = int8_block block_size = 4 : (tensor<3x8xf32>, tensor<8x4xi8>, tensor<2x4xf32>, tensor<1xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: %1 = mir.dequant_matmul %x, %w8, %s, %z scheme = int8_block_asym block_size = 4 : (tensor<3x8xf32>, tensor<8x4xi8>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %1 = mir.dequant_matmul %x, %w8, %s, %z scheme = int8_block_asym block_size = 4 : (tensor<3x8xf32>, tensor<8x4xi8>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  // Two signed 4-bit weights per byte: K/2 rows.
  // CHECK-NEXT: %2 = mir.dequant_matmul %x, %w4, %s, %one scheme = int4_block block_size = 4 : (tensor<3x8xf32>, tensor<4x4xui8>, tensor<2x4xf32>, tensor<1xf32>) -> tensor<3x4xf32>
  %2 = mir.dequant_matmul %x, %w4, %s, %one scheme = int4_block block_size = 4 : (tensor<3x8xf32>, tensor<4x4xui8>, tensor<2x4xf32>, tensor<1xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: %3 = mir.dequant_matmul %x, %f8, %col, %one scheme = fp8_e5m2 : (tensor<3x8xf32>, tensor<8x4xui8>, tensor<4xf32>, tensor<1xf32>) -> tensor<3x4xf32>
  %3 = mir.dequant_matmul %x, %f8, %col, %one scheme = fp8_e5m2 : (tensor<3x8xf32>, tensor<8x4xui8>, tensor<4xf32>, tensor<1xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: %4 = mir.dequant_matmul %x32, %e2m1, %e4m3, %one scheme = nvfp4_block : (tensor<2x32xbf16>, tensor<16x3xui8>, tensor<2x3xui8>, tensor<1xf32>) -> tensor<2x3xbf16>
  %4 = mir.dequant_matmul %x32, %e2m1, %e4m3, %one scheme = nvfp4_block : (tensor<2x32xbf16>, tensor<16x3xui8>, tensor<2x3xui8>, tensor<1xf32>) -> tensor<2x3xbf16>
  func.return %0, %1, %2, %3, %4 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x3xbf16>
}

// -----

// GGUF: the weight as a GGUF file stores it; N = bytes / (K/32 blocks of 34 or 18 bytes).
// CHECK-LABEL: func.func @gguf
func.func @gguf(%x: tensor<2x64xf32>, %q8: tensor<204xui8>, %q4: tensor<?xui8>, %x256: tensor<2x256xf32>, %q6: tensor<420xui8>, %q4k: tensor<288xui8>, %q5k: tensor<176xui8>, %q2k: tensor<84xui8>, %q3k: tensor<110xui8>, %q8k: tensor<292xui8>) -> (tensor<2x3xf32>, tensor<2x?xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  // CHECK-NEXT: %0 = mir.dequant_matmul %x, %q8 scheme = gguf_q8_0 : (tensor<2x64xf32>, tensor<204xui8>) -> tensor<2x3xf32>
  // GENERIC: "mir.dequant_matmul"(%x, %q8) <{scheme = #mir<quant_scheme gguf_q8_0>}> : (tensor<2x64xf32>, tensor<204xui8>) -> tensor<2x3xf32>
  %0 = mir.dequant_matmul %x, %q8 scheme = gguf_q8_0 : (tensor<2x64xf32>, tensor<204xui8>) -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = mir.dequant_matmul %x, %q4 scheme = gguf_q4_0 : (tensor<2x64xf32>, tensor<?xui8>) -> tensor<2x?xf32>
  %1 = mir.dequant_matmul %x, %q4 scheme = gguf_q4_0 : (tensor<2x64xf32>, tensor<?xui8>) -> tensor<2x?xf32>
  // Q6_K: one 210-byte block per 256 values.
  // CHECK-NEXT: %2 = mir.dequant_matmul %x256, %q6 scheme = gguf_q6_k : (tensor<2x256xf32>, tensor<420xui8>) -> tensor<2x2xf32>
  %2 = mir.dequant_matmul %x256, %q6 scheme = gguf_q6_k : (tensor<2x256xf32>, tensor<420xui8>) -> tensor<2x2xf32>
  // CHECK-NEXT: %3 = mir.dequant_matmul %x256, %q4k scheme = gguf_q4_k : (tensor<2x256xf32>, tensor<288xui8>) -> tensor<2x2xf32>
  %3 = mir.dequant_matmul %x256, %q4k scheme = gguf_q4_k : (tensor<2x256xf32>, tensor<288xui8>) -> tensor<2x2xf32>
  // CHECK-NEXT: %4 = mir.dequant_matmul %x256, %q5k scheme = gguf_q5_k : (tensor<2x256xf32>, tensor<176xui8>) -> tensor<2x1xf32>
  %4 = mir.dequant_matmul %x256, %q5k scheme = gguf_q5_k : (tensor<2x256xf32>, tensor<176xui8>) -> tensor<2x1xf32>
  // CHECK-NEXT: %5 = mir.dequant_matmul %x256, %q2k scheme = gguf_q2_k : (tensor<2x256xf32>, tensor<84xui8>) -> tensor<2x1xf32>
  %5 = mir.dequant_matmul %x256, %q2k scheme = gguf_q2_k : (tensor<2x256xf32>, tensor<84xui8>) -> tensor<2x1xf32>
  // CHECK-NEXT: %6 = mir.dequant_matmul %x256, %q3k scheme = gguf_q3_k : (tensor<2x256xf32>, tensor<110xui8>) -> tensor<2x1xf32>
  %6 = mir.dequant_matmul %x256, %q3k scheme = gguf_q3_k : (tensor<2x256xf32>, tensor<110xui8>) -> tensor<2x1xf32>
  // CHECK-NEXT: %7 = mir.dequant_matmul %x256, %q8k scheme = gguf_q8_k : (tensor<2x256xf32>, tensor<292xui8>) -> tensor<2x1xf32>
  %7 = mir.dequant_matmul %x256, %q8k scheme = gguf_q8_k : (tensor<2x256xf32>, tensor<292xui8>) -> tensor<2x1xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xf32>, tensor<2x?xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}
