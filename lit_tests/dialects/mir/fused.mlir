// RUN: RLX_ROUNDTRIP
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

// -----

// The sum as a second result: the signature lists both result types, normalised first.
// CHECK-LABEL: func.func @fused_residual_norms_keep_the_sum
// GENERIC-LABEL: "func.func"() <{sym_name = "fused_residual_norms_keep_the_sum"
func.func @fused_residual_norms_keep_the_sum(%x: tensor<2x4xf32>, %r: tensor<1x4xf32>, %c: tensor<4xf32>, %g: tensor<4xf32>, %be: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK-NEXT: %n, %h = mir.fused_residual_rms_norm %x, %r, %g, %be axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  // GENERIC: %n, %h = "mir.fused_residual_rms_norm"(%x, %r, %g, %be) <{axis = -1 : i64, eps = 1.000000e-06 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 1, 1>}> : (tensor<2x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  %n, %h = mir.fused_residual_rms_norm %x, %r, %g, %be axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  // CHECK-NEXT: %m, %h2 = mir.fused_residual_layer_norm %x, %h, bias %c, %g, %be axis = -1 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  %m, %h2 = mir.fused_residual_layer_norm %x, %h, bias %c, %g, %be axis = -1 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  func.return %n, %m, %h2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @fused_residual_layer_norm
// GENERIC-LABEL: "func.func"() <{sym_name = "fused_residual_layer_norm"
func.func @fused_residual_layer_norm(%x: tensor<2x4xbf16>, %r: tensor<2x4xbf16>, %b: tensor<4xbf16>, %g: tensor<4xbf16>, %be: tensor<4xbf16>) -> tensor<2x4xbf16> {
  // CHECK-NEXT: %0 = mir.fused_residual_layer_norm %x, %r, bias %b, %g, %be axis = -1 eps = 1.000000e-05 : (tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
  // GENERIC: "mir.fused_residual_layer_norm"(%x, %r, %b, %g, %be) <{axis = -1 : i64, eps = 1.000000e-05 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>}>
  %0 = mir.fused_residual_layer_norm %x, %r, bias %b, %g, %be axis = -1 eps = 1.000000e-05 : (tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
  func.return %0 : tensor<2x4xbf16>
}

// -----

// CHECK-LABEL: func.func @fused_attention_block
// GENERIC-LABEL: "func.func"() <{sym_name = "fused_attention_block"
func.func @fused_attention_block(%h: tensor<2x5x32xf32>, %wqkv: tensor<32x64xf32>, %wo: tensor<32x32xf32>, %cos: tensor<5x4xf32>, %sin: tensor<5x4xf32>, %bq: tensor<64xf32>, %bo: tensor<32xf32>, %m: tensor<2x5xf32>, %wqkv4: tensor<32x96xf32>, %bq4: tensor<96xf32>, %cos2: tensor<5x2xf32>, %sin2: tensor<5x2xf32>) -> tensor<2x5x32xf32> {
  // Grouped-query attention (2 kv heads for 4 query heads) with rope and a qkv bias.
  // CHECK-NEXT: %0 = mir.fused_attention_block %h, %wqkv, %wo qkv_bias %bq rope(%cos, %sin) num_heads = 4 head_dim = 8 num_kv_heads = 2 mask_kind = causal : (tensor<2x5x32xf32>, tensor<32x64xf32>, tensor<32x32xf32>, tensor<64xf32>, tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<2x5x32xf32>
  // GENERIC: "mir.fused_attention_block"(%h, %wqkv, %wo, %bq, %cos, %sin) <{num_heads = 4 : i64, head_dim = 8 : i64, num_kv_heads = 2 : i64, mask_kind = #mir<mask_kind causal>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 1, 1>}>
  %0 = mir.fused_attention_block %h, %wqkv, %wo qkv_bias %bq rope(%cos, %sin) num_heads = 4 head_dim = 8 num_kv_heads = 2 mask_kind = causal : (tensor<2x5x32xf32>, tensor<32x64xf32>, tensor<32x32xf32>, tensor<64xf32>, tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<2x5x32xf32>
  // RLX's form: a custom mask, both biases, rope over half of each head, every attention option.
  // CHECK-NEXT: %1 = mir.fused_attention_block %h, %wqkv4, %wo mask %m qkv_bias %bq4 out_bias %bo rope(%cos2, %sin2) num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = custom score_scale = 2.500000e-01 attn_logit_softcap = 3.000000e+01 n_rot = 4 : (tensor<2x5x32xf32>, tensor<32x96xf32>, tensor<32x32xf32>, tensor<2x5xf32>, tensor<96xf32>, tensor<32xf32>, tensor<5x2xf32>, tensor<5x2xf32>) -> tensor<2x5x32xf32>
  %1 = mir.fused_attention_block %h, %wqkv4, %wo mask %m qkv_bias %bq4 out_bias %bo rope(%cos2, %sin2) num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = custom score_scale = 2.500000e-01 attn_logit_softcap = 3.000000e+01 n_rot = 4 : (tensor<2x5x32xf32>, tensor<32x96xf32>, tensor<32x32xf32>, tensor<2x5xf32>, tensor<96xf32>, tensor<32xf32>, tensor<5x2xf32>, tensor<5x2xf32>) -> tensor<2x5x32xf32>
  func.return %0 : tensor<2x5x32xf32>
}

// -----

// CHECK-LABEL: func.func @fused_transformer_layer
// GENERIC-LABEL: "func.func"() <{sym_name = "fused_transformer_layer"
func.func @fused_transformer_layer(%h: tensor<2x5x8xf32>, %wqkv: tensor<8x24xf32>, %wo: tensor<8x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %up: tensor<8x16xf32>, %down: tensor<16x8xf32>, %bqkv: tensor<24xf32>, %bup: tensor<16xf32>) -> tensor<2x5x8xf32> {
  // CHECK-NEXT: %0 = mir.fused_transformer_layer %h, %wqkv, %wo, %g, %b, %up, %down, %g, %b num_heads = 2 head_dim = 4 mask_kind = none activation = gelu eps1 = 1.000000e-12 eps2 = 1.000000e-12 : (tensor<2x5x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  // GENERIC: "mir.fused_transformer_layer"(%h, %wqkv, %wo, %g, %b, %up, %down, %g, %b) <{num_heads = 2 : i64, head_dim = 4 : i64, mask_kind = #mir<mask_kind none>, activation = #mir<activation gelu>
  %0 = mir.fused_transformer_layer %h, %wqkv, %wo, %g, %b, %up, %down, %g, %b num_heads = 2 head_dim = 4 mask_kind = none activation = gelu eps1 = 1.000000e-12 eps2 = 1.000000e-12 : (tensor<2x5x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  // With all four biases and a causal mask.
  // CHECK-NEXT: %1 = mir.fused_transformer_layer %h, %wqkv, %wo, %g, %b, %up, %down, %g, %b qkv_bias %bqkv out_bias %b up_bias %bup down_bias %b num_heads = 2 head_dim = 4 mask_kind = causal activation = relu eps1 = 1.000000e-05 eps2 = 1.000000e-05 : (tensor<2x5x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<24xf32>, tensor<8xf32>, tensor<16xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %1 = mir.fused_transformer_layer %h, %wqkv, %wo, %g, %b, %up, %down, %g, %b qkv_bias %bqkv out_bias %b up_bias %bup down_bias %b num_heads = 2 head_dim = 4 mask_kind = causal activation = relu eps1 = 1.000000e-05 eps2 = 1.000000e-05 : (tensor<2x5x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<24xf32>, tensor<8xf32>, tensor<16xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  func.return %1 : tensor<2x5x8xf32>
}

// -----

// Batch and seq both dynamic: the type follows the projections (the chain's head reshapes can be
// written once rlx-specialize binds one of them).
// CHECK-LABEL: func.func @fused_attention_block_dynamic
func.func @fused_attention_block_dynamic(%h: tensor<?x?x32xf32>, %w: tensor<32x96xf32>, %o: tensor<32x16xf32>) -> tensor<?x?x16xf32> {
  // CHECK-NEXT: %0 = mir.fused_attention_block %h, %w, %o num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = causal : (tensor<?x?x32xf32>, tensor<32x96xf32>, tensor<32x16xf32>) -> tensor<?x?x16xf32>
  %0 = mir.fused_attention_block %h, %w, %o num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = causal : (tensor<?x?x32xf32>, tensor<32x96xf32>, tensor<32x16xf32>) -> tensor<?x?x16xf32>
  func.return %0 : tensor<?x?x16xf32>
}
