// RUN: RLX_ROUNDTRIP
// RUN: RLX_GENERIC_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @fused_matmul_bias_act
// GENERIC-LABEL: "func.func"() <{sym_name = "fused_matmul_bias_act"
func.func @fused_matmul_bias_act(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>, %b: tensor<5xf32>, %b2: tensor<1x5xf32>, %i: tensor<3x4xi32>, %wi: tensor<4x2xi32>, %bi: tensor<i32>) -> tensor<2x3x5xf32> {
  // CHECK-NEXT: %0 = mir.fused_matmul_bias_act %x, %w, %b activation = gelu : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  // GENERIC: "mir.fused_matmul_bias_act"(%x, %w, %b) <{activation = #mir<activation gelu>}> : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %0 = mir.fused_matmul_bias_act %x, %w, %b activation = gelu : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  // Without an activation, with a rank-2 bias that broadcasts to the result.
  // CHECK-NEXT: %1 = mir.fused_matmul_bias_act %x, %w, %b2 : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<1x5xf32>) -> tensor<2x3x5xf32>
  // GENERIC: "mir.fused_matmul_bias_act"(%x, %w, %b2) : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<1x5xf32>) -> tensor<2x3x5xf32>
  %1 = mir.fused_matmul_bias_act %x, %w, %b2 : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<1x5xf32>) -> tensor<2x3x5xf32>
  // Integer operands take the activations that are defined on integers (relu, neg, abs).
  // CHECK-NEXT: %2 = mir.fused_matmul_bias_act %i, %wi, %bi activation = relu : (tensor<3x4xi32>, tensor<4x2xi32>, tensor<i32>) -> tensor<3x2xi32>
  %2 = mir.fused_matmul_bias_act %i, %wi, %bi activation = relu : (tensor<3x4xi32>, tensor<4x2xi32>, tensor<i32>) -> tensor<3x2xi32>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @fused_matmul_bias_act_dynamic
func.func @fused_matmul_bias_act_dynamic(%x: tensor<?x?x4xf32>, %w: tensor<4x?xf32>, %b: tensor<?xf32>) -> tensor<?x?x?xf32> {
  // CHECK-NEXT: %0 = mir.fused_matmul_bias_act %x, %w, %b activation = silu : (tensor<?x?x4xf32>, tensor<4x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %0 = mir.fused_matmul_bias_act %x, %w, %b activation = silu : (tensor<?x?x4xf32>, tensor<4x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  func.return %0 : tensor<?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @fused_swiglu
// GENERIC-LABEL: "func.func"() <{sym_name = "fused_swiglu"
func.func @fused_swiglu(%x: tensor<2x3x8xf32>, %h: tensor<4x?xbf16>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %0 = mir.fused_swiglu %x : (tensor<2x3x8xf32>) -> tensor<2x3x4xf32>
  // GENERIC: "mir.fused_swiglu"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x4xf32>
  %0 = mir.fused_swiglu %x : (tensor<2x3x8xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %1 = mir.fused_swiglu %x gate_first cast_to = bf16 : (tensor<2x3x8xf32>) -> tensor<2x3x4xbf16>
  // GENERIC: "mir.fused_swiglu"(%x) <{gate_first, cast_to = bf16}> : (tensor<2x3x8xf32>) -> tensor<2x3x4xbf16>
  %1 = mir.fused_swiglu %x gate_first cast_to = bf16 : (tensor<2x3x8xf32>) -> tensor<2x3x4xbf16>
  // A dynamic last dim gives a dynamic half.
  // CHECK-NEXT: %2 = mir.fused_swiglu %h cast_to = f32 : (tensor<4x?xbf16>) -> tensor<4x?xf32>
  %2 = mir.fused_swiglu %h cast_to = f32 : (tensor<4x?xbf16>) -> tensor<4x?xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @fused_residual_rms_norm
// GENERIC-LABEL: "func.func"() <{sym_name = "fused_residual_rms_norm"
func.func @fused_residual_rms_norm(%x: tensor<2x3x4xf32>, %r: tensor<2x3x4xf32>, %b: tensor<4xf32>, %g: tensor<4xf32>, %be: tensor<4xf32>, %g2: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %0 = mir.fused_residual_rms_norm %x, %r, %g, %be axis = -1 eps = 1.000000e-06 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // GENERIC: "mir.fused_residual_rms_norm"(%x, %r, %g, %be) <{axis = -1 : i64, eps = 1.000000e-06 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 1, 1>}> : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %0 = mir.fused_residual_rms_norm %x, %r, %g, %be axis = -1 eps = 1.000000e-06 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // With a bias (RLX's operand order: x, residual, bias, gamma, beta) and a norm over the last two dims.
  // CHECK-NEXT: %1 = mir.fused_residual_rms_norm %x, %r, bias %b, %g2, %be axis = 1 eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // GENERIC: "mir.fused_residual_rms_norm"(%x, %r, %b, %g2, %be) <{axis = 1 : i64, eps = 1.000000e-05 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>}>
  %1 = mir.fused_residual_rms_norm %x, %r, bias %b, %g2, %be axis = 1 eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %1 : tensor<2x3x4xf32>
}
