// RUN: rlx-opt %s --split-input-file --verify-diagnostics

// Operands: x [1, 4, 8], norms [8], every weight [8, 8] (2 heads of 4, ffn 8), cos/sin [4, 2].

// RLX's `WrongInputCount`: 14 inputs, or 15 with a mask.
func.func @thirteen_operands(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' expects 14 operands (x, ln1_g, ln1_b, q_w, k_w, v_w, o_w, ln2_g, ln2_b, gate_w, up_w, down_w, cos, sin) or 15 with mask, got 13: missing sin}}
  %0 = "hir.llama_decoder_block"(%x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c) <{num_heads = 2 : i64, head_dim = 4 : i64, num_kv_heads = 2 : i64, eps = 1.0e-6 : f32, mask_kind = #mir<mask_kind causal>}> : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @sixteen_operands(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>, %m: tensor<1x4xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' expects 14 operands (x, ln1_g, ln1_b, q_w, k_w, v_w, o_w, ln2_g, ln2_b, gate_w, up_w, down_w, cos, sin) or 15 with mask, got 16}}
  %0 = "hir.llama_decoder_block"(%x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c, %m, %m) <{num_heads = 2 : i64, head_dim = 4 : i64, num_kv_heads = 2 : i64, eps = 1.0e-6 : f32, mask_kind = #mir<mask_kind causal>}> : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @custom_without_mask(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' mask_kind custom requires a mask operand}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = custom : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @causal_with_mask(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>, %m: tensor<1x4xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' mask_kind causal takes no mask operand}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c, %m num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x4xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @custom_mask_shape(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>, %m: tensor<1x5xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' custom mask shape [1, 5] must be [batch, keys] = [1, 4]}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c, %m num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = custom : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x5xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @window_without_sliding(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' window must be set exactly when mask_kind is sliding_window}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal window = 2 : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @kv_heads_zero(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' num_kv_heads must be >= 1, got 0}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 0 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @kv_heads_group(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' num_heads 2 is not a multiple of num_kv_heads 3}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 3 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @odd_head_dim(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' head_dim must be even for RoPE, got 3}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 3 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @eps(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' eps must be positive, got 0.0}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 0.0 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @x_rank(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' x must have rank 3, got [4, 8]}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// -----

func.func @two_dynamic(%x: tensor<?x?x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<?x?x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' x shape [?, ?, 8] may have at most one dynamic dim among batch and sequence (the lowering reshapes with one -1)}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<?x?x8xf32>
  func.return %0 : tensor<?x?x8xf32>
}

// -----

func.func @dtype_mix(%x: tensor<1x4x8xf32>, %h: tensor<8xf16>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' ln1_g element type f16 differs from x's f32}}
  %0 = hir.llama_decoder_block %x, %h, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf16>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @norm_shape(%x: tensor<1x4x8xf32>, %h: tensor<4xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' ln1_g shape [4] does not broadcast to the hidden dim [8]}}
  %0 = hir.llama_decoder_block %x, %h, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @q_weight(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %q: tensor<8x4xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' q_w shape [8, 4] must be [8, 8]}}
  %0 = hir.llama_decoder_block %x, %g, %g, %q, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @kv_weight(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' k_w shape [8, 8] must be [8, 4]}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 1 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @out_weight(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %o: tensor<4x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' o_w shape [4, 8] must be [8, 8]}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %o, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @up_weight(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %u: tensor<8x4xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' up_w shape [8, 4] must be [8, 8]}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %u, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @down_weight(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %d: tensor<4x8xf32>, %c: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' down_w shape [4, 8] must be [8, 8]}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %d, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

func.func @rope_table(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %c: tensor<5x2xf32>) -> tensor<1x4x8xf32> {
  // expected-error@+1 {{'hir.llama_decoder_block' cos shape [5, 2] does not broadcast to [1, 2, 4, 2]}}
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %w, %w, %w, %c, %c num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<5x2xf32>, tensor<5x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}
