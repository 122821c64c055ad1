// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @fmba_x_rank(%x: tensor<4xf32>, %w: tensor<4x2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.fused_matmul_bias_act' x must have rank >= 2, got [4]}}
  %0 = mir.fused_matmul_bias_act %x, %w, %b : (tensor<4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @fmba_contraction(%x: tensor<3x5xf32>, %w: tensor<4x2xf32>, %b: tensor<2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mir.fused_matmul_bias_act' contraction dims 5 and 4 differ}}
  %0 = mir.fused_matmul_bias_act %x, %w, %b : (tensor<3x5xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @fmba_bias_dtype(%x: tensor<3x4xf32>, %w: tensor<4x2xf32>, %b: tensor<2xf16>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mir.fused_matmul_bias_act' bias element type f16 differs from the matmul's f32}}
  %0 = mir.fused_matmul_bias_act %x, %w, %b : (tensor<3x4xf32>, tensor<4x2xf32>, tensor<2xf16>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @fmba_bias_shape(%x: tensor<3x4xf32>, %w: tensor<4x2xf32>, %b: tensor<3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mir.fused_matmul_bias_act' bias shape [3] does not broadcast to the matmul result shape [3, 2]}}
  %0 = mir.fused_matmul_bias_act %x, %w, %b : (tensor<3x4xf32>, tensor<4x2xf32>, tensor<3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @fmba_bias_enlarges(%x: tensor<3x4xf32>, %w: tensor<4x2xf32>, %b: tensor<5x3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mir.fused_matmul_bias_act' bias shape [5, 3, 2] does not broadcast to the matmul result shape [3, 2]}}
  %0 = mir.fused_matmul_bias_act %x, %w, %b : (tensor<3x4xf32>, tensor<4x2xf32>, tensor<5x3x2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @fmba_float_activation(%x: tensor<3x4xi32>, %w: tensor<4x2xi32>, %b: tensor<2xi32>) -> tensor<3x2xi32> {
  // expected-error@+1 {{'mir.fused_matmul_bias_act' the result of activation gelu must have a floating-point element type, got i32}}
  %0 = mir.fused_matmul_bias_act %x, %w, %b activation = gelu : (tensor<3x4xi32>, tensor<4x2xi32>, tensor<2xi32>) -> tensor<3x2xi32>
  func.return %0 : tensor<3x2xi32>
}

// -----

func.func @fmba_result(%x: tensor<3x4xf32>, %w: tensor<4x2xf32>, %b: tensor<2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.fused_matmul_bias_act' inferred result type tensor<3x2xf32> does not match declared type tensor<3x4xf32>}}
  %0 = mir.fused_matmul_bias_act %x, %w, %b : (tensor<3x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @fmba_unknown_activation(%x: tensor<3x4xf32>, %w: tensor<4x2xf32>, %b: tensor<2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{Expected `gelu`, `gelu_approx`, `silu`, `relu`, `sigmoid`, `tanh`, `exp`, `log`, `sqrt`, `rsqrt`, `neg`, `abs`, `sin`, `cos`, `tan`, `atan`, `round`, `log1p`, `expm1`, or `erf`.}}
  %0 = mir.fused_matmul_bias_act %x, %w, %b activation = swish : (tensor<3x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @swiglu_float(%x: tensor<4xi32>) -> tensor<2xi32> {
  // expected-error@+1 {{'mir.fused_swiglu' operand must have a floating-point element type, got i32}}
  %0 = mir.fused_swiglu %x : (tensor<4xi32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// -----

func.func @swiglu_rank(%x: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'mir.fused_swiglu' operand must have rank >= 1, got []}}
  %0 = mir.fused_swiglu %x : (tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @swiglu_odd(%x: tensor<2x5xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'mir.fused_swiglu' last dim 5 does not split into equal up and gate halves}}
  %0 = mir.fused_swiglu %x : (tensor<2x5xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

func.func @swiglu_cast_target(%x: tensor<2x4xf32>) -> tensor<2x2xi3> {
  // expected-error@+1 {{'mir.fused_swiglu' cannot cast to unsupported element type i3}}
  %0 = mir.fused_swiglu %x cast_to = i3 : (tensor<2x4xf32>) -> tensor<2x2xi3>
  func.return %0 : tensor<2x2xi3>
}

// -----

func.func @swiglu_result(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'mir.fused_swiglu' inferred result type tensor<2x2xbf16> does not match declared type tensor<2x2xf32>}}
  %0 = mir.fused_swiglu %x cast_to = bf16 : (tensor<2x4xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

func.func @residual_rms_dtype(%x: tensor<2x4xf32>, %r: tensor<2x4xf16>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.fused_residual_rms_norm' residual element type f16 differs from x's f32}}
  %0 = mir.fused_residual_rms_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<2x4xf16>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @residual_rms_bias_dtype(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %c: tensor<4xbf16>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.fused_residual_rms_norm' bias element type bf16 differs from x's f32}}
  %0 = mir.fused_residual_rms_norm %x, %r, bias %c, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @residual_rms_broadcast(%x: tensor<2x4xf32>, %r: tensor<3x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.fused_residual_rms_norm' shapes [2, 4], [3, 4] do not broadcast}}
  %0 = mir.fused_residual_rms_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @residual_rms_float(%x: tensor<2x4xi32>, %r: tensor<2x4xi32>, %g: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<2x4xi32> {
  // expected-error@+1 {{'mir.fused_residual_rms_norm' operand must have a floating-point element type, got i32}}
  %0 = mir.fused_residual_rms_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xi32>, tensor<2x4xi32>, tensor<4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  func.return %0 : tensor<2x4xi32>
}

// -----

func.func @residual_rms_gamma(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %g: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.fused_residual_rms_norm' gamma shape [3] does not broadcast to the normalised shape [4]}}
  %0 = mir.fused_residual_rms_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @residual_rms_gamma_dtype(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %g: tensor<4xf16>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.fused_residual_rms_norm' gamma element type f16 differs from the operand's f32}}
  %0 = mir.fused_residual_rms_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf16>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @residual_rms_axis(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.fused_residual_rms_norm' axis 2 is out of range for rank 2}}
  %0 = mir.fused_residual_rms_norm %x, %r, %g, %b axis = 2 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @residual_rms_eps(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.fused_residual_rms_norm' eps must be positive, got 0.0}}
  %0 = mir.fused_residual_rms_norm %x, %r, %g, %b axis = -1 eps = 0.0 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @residual_rms_signature(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{expected 4 operand types, got 3}}
  %0 = mir.fused_residual_rms_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @residual_rms_sum_type(%x: tensor<2x4xf32>, %r: tensor<1x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
  // expected-error@+1 {{'mir.fused_residual_rms_norm' inferred result #1 type tensor<2x4xf32> does not match declared type tensor<1x4xf32>}}
  %0, %1 = mir.fused_residual_rms_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<1x4xf32>)
  func.return %1 : tensor<1x4xf32>
}

// -----

func.func @residual_rms_sum_dtype(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf16> {
  // expected-error@+1 {{'mir.fused_residual_rms_norm' inferred result #1 type tensor<2x4xf32> does not match declared type tensor<2x4xf16>}}
  %0, %1 = mir.fused_residual_rms_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf16>)
  func.return %1 : tensor<2x4xf16>
}

// -----

func.func @residual_ln_three_results(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{expected 1 to 2 result types, got 3}}
  %0:3 = mir.fused_residual_layer_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  func.return %0#0 : tensor<2x4xf32>
}

// -----

func.func @residual_ln_dtype(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %g: tensor<4xbf16>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.fused_residual_layer_norm' gamma element type bf16 differs from the operand's f32}}
  %0 = mir.fused_residual_layer_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xbf16>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @residual_ln_result(%x: tensor<2x4xf32>, %r: tensor<1x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
  // expected-error@+1 {{'mir.fused_residual_layer_norm' inferred result type tensor<2x4xf32> does not match declared type tensor<1x4xf32>}}
  %0 = mir.fused_residual_layer_norm %x, %r, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}

// -----

func.func @attention_block_rank(%h: tensor<5x32xf32>, %w: tensor<32x96xf32>, %o: tensor<32x32xf32>) -> tensor<5x32xf32> {
  // expected-error@+1 {{'mir.fused_attention_block' hidden must have rank 3 ([batch, seq, embed]), got [5, 32]}}
  %0 = mir.fused_attention_block %h, %w, %o num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = none : (tensor<5x32xf32>, tensor<32x96xf32>, tensor<32x32xf32>) -> tensor<5x32xf32>
  func.return %0 : tensor<5x32xf32>
}

// -----

func.func @attention_block_dynamic_width(%h: tensor<?x?x32xf32>, %w: tensor<32x64xf32>, %o: tensor<32x32xf32>) -> tensor<?x?x32xf32> {
  // With batch and seq both dynamic the projections' rules still apply.
  // expected-error@+1 {{'mir.fused_attention_block' qkv projection width 64 differs from (num_heads + 2 * num_kv_heads) * head_dim = 96}}
  %0 = mir.fused_attention_block %h, %w, %o num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = none : (tensor<?x?x32xf32>, tensor<32x64xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  func.return %0 : tensor<?x?x32xf32>
}

// -----

func.func @attention_block_width(%h: tensor<2x5x32xf32>, %w: tensor<32x64xf32>, %o: tensor<32x32xf32>) -> tensor<2x5x32xf32> {
  // expected-error@+1 {{'mir.fused_attention_block' qkv projection width 64 differs from (num_heads + 2 * num_kv_heads) * head_dim = 96}}
  %0 = mir.fused_attention_block %h, %w, %o num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = none : (tensor<2x5x32xf32>, tensor<32x64xf32>, tensor<32x32xf32>) -> tensor<2x5x32xf32>
  func.return %0 : tensor<2x5x32xf32>
}

// -----

func.func @attention_block_kv_heads(%h: tensor<2x5x32xf32>, %w: tensor<32x80xf32>, %o: tensor<32x32xf32>) -> tensor<2x5x32xf32> {
  // expected-error@+1 {{'mir.fused_attention_block' num_heads 4 is not a multiple of num_kv_heads 3}}
  %0 = mir.fused_attention_block %h, %w, %o num_heads = 4 head_dim = 8 num_kv_heads = 3 mask_kind = none : (tensor<2x5x32xf32>, tensor<32x80xf32>, tensor<32x32xf32>) -> tensor<2x5x32xf32>
  func.return %0 : tensor<2x5x32xf32>
}

// -----

func.func @attention_block_cos_alone(%h: tensor<2x5x32xf32>, %w: tensor<32x96xf32>, %o: tensor<32x32xf32>, %c: tensor<5x4xf32>) -> tensor<2x5x32xf32> {
  // expected-error@+1 {{'mir.fused_attention_block' cos and sin must be given together}}
  %0 = "mir.fused_attention_block"(%h, %w, %o, %c) <{num_heads = 4 : i64, head_dim = 8 : i64, num_kv_heads = 4 : i64, mask_kind = #mir<mask_kind none>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 0>}> : (tensor<2x5x32xf32>, tensor<32x96xf32>, tensor<32x32xf32>, tensor<5x4xf32>) -> tensor<2x5x32xf32>
  func.return %0 : tensor<2x5x32xf32>
}

// -----

func.func @attention_block_n_rot(%h: tensor<2x5x32xf32>, %w: tensor<32x96xf32>, %o: tensor<32x32xf32>) -> tensor<2x5x32xf32> {
  // expected-error@+1 {{'mir.fused_attention_block' n_rot is only meaningful with rope(%cos, %sin)}}
  %0 = mir.fused_attention_block %h, %w, %o num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = none n_rot = 4 : (tensor<2x5x32xf32>, tensor<32x96xf32>, tensor<32x32xf32>) -> tensor<2x5x32xf32>
  func.return %0 : tensor<2x5x32xf32>
}

// -----

func.func @attention_block_rope_table(%h: tensor<2x5x32xf32>, %w: tensor<32x96xf32>, %o: tensor<32x32xf32>, %c: tensor<3x4xf32>, %s: tensor<3x4xf32>) -> tensor<2x5x32xf32> {
  // expected-error@+1 {{'mir.fused_attention_block' rope: cos shape [3, 4] does not broadcast to [2, 4, 5, 4]}}
  %0 = mir.fused_attention_block %h, %w, %o rope(%c, %s) num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = none : (tensor<2x5x32xf32>, tensor<32x96xf32>, tensor<32x32xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x5x32xf32>
  func.return %0 : tensor<2x5x32xf32>
}

// -----

func.func @attention_block_mask(%h: tensor<2x5x32xf32>, %w: tensor<32x96xf32>, %o: tensor<32x32xf32>) -> tensor<2x5x32xf32> {
  // expected-error@+1 {{'mir.fused_attention_block' attention: mask_kind custom requires a mask operand}}
  %0 = mir.fused_attention_block %h, %w, %o num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = custom : (tensor<2x5x32xf32>, tensor<32x96xf32>, tensor<32x32xf32>) -> tensor<2x5x32xf32>
  func.return %0 : tensor<2x5x32xf32>
}

// -----

func.func @attention_block_out_proj(%h: tensor<2x5x32xf32>, %w: tensor<32x96xf32>, %o: tensor<16x32xf32>) -> tensor<2x5x32xf32> {
  // expected-error@+1 {{'mir.fused_attention_block' matmul: contraction dims 32 and 16 differ}}
  %0 = mir.fused_attention_block %h, %w, %o num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = none : (tensor<2x5x32xf32>, tensor<32x96xf32>, tensor<16x32xf32>) -> tensor<2x5x32xf32>
  func.return %0 : tensor<2x5x32xf32>
}

// -----

func.func @attention_block_result(%h: tensor<2x5x32xf32>, %w: tensor<32x96xf32>, %o: tensor<32x16xf32>) -> tensor<2x5x32xf32> {
  // expected-error@+1 {{'mir.fused_attention_block' inferred result type tensor<2x5x16xf32> does not match declared type tensor<2x5x32xf32>}}
  %0 = mir.fused_attention_block %h, %w, %o num_heads = 4 head_dim = 8 num_kv_heads = 4 mask_kind = none : (tensor<2x5x32xf32>, tensor<32x96xf32>, tensor<32x16xf32>) -> tensor<2x5x32xf32>
  func.return %0 : tensor<2x5x32xf32>
}

// -----

func.func @transformer_eps(%h: tensor<2x5x8xf32>, %w: tensor<8x24xf32>, %o: tensor<8x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %up: tensor<8x16xf32>, %dn: tensor<16x8xf32>) -> tensor<2x5x8xf32> {
  // expected-error@+1 {{'mir.fused_transformer_layer' eps2 must be positive, got 0.0}}
  %0 = mir.fused_transformer_layer %h, %w, %o, %g, %b, %up, %dn, %g, %b num_heads = 2 head_dim = 4 mask_kind = none activation = gelu eps1 = 1.000000e-12 eps2 = 0.0 : (tensor<2x5x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  func.return %0 : tensor<2x5x8xf32>
}

// -----

func.func @transformer_ffn(%h: tensor<2x5x8xf32>, %w: tensor<8x24xf32>, %o: tensor<8x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %up: tensor<8x16xf32>, %dn: tensor<12x8xf32>) -> tensor<2x5x8xf32> {
  // expected-error@+1 {{'mir.fused_transformer_layer' matmul: contraction dims 16 and 12 differ}}
  %0 = mir.fused_transformer_layer %h, %w, %o, %g, %b, %up, %dn, %g, %b num_heads = 2 head_dim = 4 mask_kind = none activation = gelu eps1 = 1.000000e-12 eps2 = 1.000000e-12 : (tensor<2x5x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<12x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  func.return %0 : tensor<2x5x8xf32>
}

// -----

func.func @transformer_norm(%h: tensor<2x5x8xf32>, %w: tensor<8x24xf32>, %o: tensor<8x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>, %up: tensor<8x16xf32>, %dn: tensor<16x8xf32>) -> tensor<2x5x8xf32> {
  // expected-error@+1 {{'mir.fused_transformer_layer' layer_norm: gamma shape [4] does not broadcast to the normalised shape [8]}}
  %0 = mir.fused_transformer_layer %h, %w, %o, %g, %b, %up, %dn, %b, %b num_heads = 2 head_dim = 4 mask_kind = none activation = gelu eps1 = 1.000000e-12 eps2 = 1.000000e-12 : (tensor<2x5x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  func.return %0 : tensor<2x5x8xf32>
}
