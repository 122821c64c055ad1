// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @linear_fused_missing_bias(%x: tensor<2x16xf32>, %w: tensor<16x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'hir.linear_fused' expects 3 operands (x, w, bias), got 2: missing bias}}
  %0 = "hir.linear_fused"(%x, %w) : (tensor<2x16xf32>, tensor<16x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_too_many_operands(%x: tensor<2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'hir.linear' expects 2 operands (x, w) or 3 with bias, got 4}}
  %0 = "hir.linear"(%x, %w, %b, %b) : (tensor<2x16xf32>, tensor<16x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_label_not_a_string(%x: tensor<2x16xf32>, %w: tensor<16x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'hir.linear' attribute rlx.label must be a string, got 3 : i64}}
  %0 = hir.linear %x, %w {rlx.label = 3 : i64} : (tensor<2x16xf32>, tensor<16x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_integer_x(%x: tensor<2x16xi32>, %w: tensor<16x4xi32>) -> tensor<2x4xi32> {
  // expected-error@+1 {{'hir.linear' x must have a floating-point element type, got i32}}
  %0 = hir.linear %x, %w : (tensor<2x16xi32>, tensor<16x4xi32>) -> tensor<2x4xi32>
  func.return %0 : tensor<2x4xi32>
}

// -----

func.func @linear_dtype_mix(%x: tensor<2x16xf32>, %w: tensor<16x4xbf16>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'hir.linear' w element type bf16 differs from x's f32}}
  %0 = hir.linear %x, %w : (tensor<2x16xf32>, tensor<16x4xbf16>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_x_rank(%x: tensor<16xf32>, %w: tensor<16x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'hir.linear' x must have rank >= 2, got [16]}}
  %0 = hir.linear %x, %w : (tensor<16xf32>, tensor<16x4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @linear_weight_rank(%x: tensor<2x16xf32>, %w: tensor<1x16x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'hir.linear' w must have rank 2, got [1, 16, 4]}}
  %0 = hir.linear %x, %w : (tensor<2x16xf32>, tensor<1x16x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_contraction(%x: tensor<2x16xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'hir.linear' w has 8 rows but x has 16 features}}
  %0 = hir.linear %x, %w : (tensor<2x16xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_bias_shape(%x: tensor<2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<5xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'hir.linear' bias shape [5] does not broadcast to the projection [2, 4]}}
  %0 = hir.linear %x, %w, %b : (tensor<2x16xf32>, tensor<16x4xf32>, tensor<5xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// A bias may not make a `?` of the projection static: `direct` and `fusable` would disagree.
func.func @linear_bias_refines(%x: tensor<?x16xf32>, %w: tensor<16x4xf32>, %b: tensor<3x4xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{'hir.linear_fused' bias shape [3, 4] does not broadcast to the projection [?, 4]}}
  %0 = hir.linear_fused %x, %w, %b : (tensor<?x16xf32>, tensor<16x4xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}

// -----

func.func @linear_result(%x: tensor<2x16xf32>, %w: tensor<16x4xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{'hir.linear' inferred result type tensor<2x4xf32> does not match declared type tensor<2x5xf32>}}
  %0 = hir.linear %x, %w : (tensor<2x16xf32>, tensor<16x4xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @pair_second_weight(%x: tensor<2x16xf32>, %w1: tensor<16x4xf32>, %w2: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // expected-error@+1 {{'hir.shared_linear_pair' w2 has 8 rows but x has 16 features}}
  %0, %1 = hir.shared_linear_pair %x, %w1, %w2 : (tensor<2x16xf32>, tensor<16x4xf32>, tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  func.return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

func.func @pair_result(%x: tensor<2x16xf32>, %w1: tensor<16x4xf32>, %w2: tensor<16x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // expected-error@+1 {{'hir.shared_linear_pair' inferred result #1 type tensor<2x8xf32> does not match declared type tensor<2x4xf32>}}
  %0, %1 = hir.shared_linear_pair %x, %w1, %w2 : (tensor<2x16xf32>, tensor<16x4xf32>, tensor<16x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
  func.return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

func.func @swiglu_gate_shape(%x: tensor<2x16xf32>, %up: tensor<16x8xf32>, %gate: tensor<16x4xf32>, %down: tensor<8x16xf32>) -> tensor<2x16xf32> {
  // expected-error@+1 {{'hir.swiglu' gate_w shape [16, 4] must be [16, 8]}}
  %0 = hir.swiglu %x, %up, %gate, %down : (tensor<2x16xf32>, tensor<16x8xf32>, tensor<16x4xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  func.return %0 : tensor<2x16xf32>
}

// -----

func.func @swiglu_down_rows(%x: tensor<2x16xf32>, %up: tensor<16x8xf32>, %gate: tensor<16x8xf32>, %down: tensor<4x16xf32>) -> tensor<2x16xf32> {
  // expected-error@+1 {{'hir.swiglu' down_w has 4 rows but the gated hidden layer has 8 features}}
  %0 = hir.swiglu %x, %up, %gate, %down : (tensor<2x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<4x16xf32>) -> tensor<2x16xf32>
  func.return %0 : tensor<2x16xf32>
}

// -----

func.func @swiglu_missing_down(%x: tensor<2x16xf32>, %up: tensor<16x8xf32>, %gate: tensor<16x8xf32>) -> tensor<2x16xf32> {
  // expected-error@+1 {{'hir.swiglu' expects 4 operands (x, up_w, gate_w, down_w), got 3: missing down_w}}
  %0 = "hir.swiglu"(%x, %up, %gate) : (tensor<2x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<2x16xf32>
  func.return %0 : tensor<2x16xf32>
}
