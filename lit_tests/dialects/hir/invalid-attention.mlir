// RUN: rlx-opt %s --split-input-file --verify-diagnostics

// RLX's `WrongInputCount` for attention: the mask operand comes with the custom and bias kinds only.
func.func @custom_without_mask(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'hir.attention' mask_kind custom requires a mask operand}}
  %0 = hir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = custom : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @causal_with_mask(%q: tensor<1x2x3x4xf32>, %m: tensor<1x3xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'hir.attention' mask_kind causal takes no mask operand}}
  %0 = hir.attention %q, %q, %q, %m num_heads = 2 head_dim = 4 mask_kind = causal : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x3xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @window_without_sliding(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'hir.attention' window must be set exactly when mask_kind is sliding_window}}
  %0 = hir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = causal window = 2 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @heads(%q: tensor<1x2x3x4xf32>) -> tensor<1x3x3x4xf32> {
  // expected-error@+1 {{'hir.attention' q has 2 heads but num_heads is 3}}
  %0 = hir.attention %q, %q, %q num_heads = 3 head_dim = 4 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x3x3x4xf32>
  func.return %0 : tensor<1x3x3x4xf32>
}

// -----

func.func @grouped_heads(%q: tensor<1x4x3x4xf32>, %k: tensor<1x3x3x4xf32>) -> tensor<1x4x3x4xf32> {
  // expected-error@+1 {{'hir.attention' num_heads 4 is not a multiple of the 3 k/v heads}}
  %0 = hir.attention %q, %k, %k num_heads = 4 head_dim = 4 mask_kind = none : (tensor<1x4x3x4xf32>, tensor<1x3x3x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x4x3x4xf32>
  func.return %0 : tensor<1x4x3x4xf32>
}

// -----

func.func @q_rank(%q: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.attention' q must have rank 4, got [2, 3, 4]}}
  %0 = hir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = none : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @rope_n_rot(%x: tensor<2x3x4xf32>, %c: tensor<3x2xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.rope' n_rot must be even and in (0, head_dim = 4], got 3}}
  %0 = hir.rope %x, %c, %c head_dim = 4 n_rot = 3 : (tensor<2x3x4xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @rope_head_dim(%x: tensor<2x3x4xf32>, %c: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.rope' x last dim 4 differs from head_dim 8}}
  %0 = hir.rope %x, %c, %c head_dim = 8 n_rot = 8 : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @rope_table(%x: tensor<2x3x4xf32>, %c: tensor<5x2xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.rope' cos shape [5, 2] does not broadcast to [2, 3, 2]}}
  %0 = hir.rope %x, %c, %c head_dim = 4 n_rot = 4 : (tensor<2x3x4xf32>, tensor<5x2xf32>, tensor<5x2xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
