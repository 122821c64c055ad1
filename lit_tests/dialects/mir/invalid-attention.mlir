// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @zero_heads(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' num_heads must be >= 1, got 0}}
  %0 = mir.attention %q, %q, %q num_heads = 0 head_dim = 4 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @zero_head_dim(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' head_dim must be >= 1, got 0}}
  %0 = mir.attention %q, %q, %q num_heads = 2 head_dim = 0 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @sliding_without_window(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' window must be set exactly when mask_kind is sliding_window}}
  %0 = mir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = sliding_window : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @window_without_sliding(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' window must be set exactly when mask_kind is sliding_window}}
  %0 = mir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = causal window = 2 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @zero_window(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' window must be >= 1, got 0}}
  %0 = mir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = sliding_window window = 0 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @negative_softcap(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' attn_logit_softcap must be > 0, got -1.0}}
  %0 = mir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = none attn_logit_softcap = -1.0 : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @q_rank(%q: tensor<2x3x4xf32>, %k: tensor<1x2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' q must have rank 4, got [2, 3, 4]}}
  %0 = mir.attention %q, %k, %k num_heads = 2 head_dim = 4 mask_kind = none : (tensor<2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @v_rank(%q: tensor<1x2x3x4xf32>, %v: tensor<2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' v must have rank 4, got [2, 3, 4]}}
  %0 = mir.attention %q, %q, %v num_heads = 2 head_dim = 4 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @integer_q(%q: tensor<1x2x3x4xi32>) -> tensor<1x2x3x4xi32> {
  // expected-error@+1 {{'mir.attention' q must have a floating-point element type, got i32}}
  %0 = mir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = none : (tensor<1x2x3x4xi32>, tensor<1x2x3x4xi32>, tensor<1x2x3x4xi32>) -> tensor<1x2x3x4xi32>
  func.return %0 : tensor<1x2x3x4xi32>
}

// -----

func.func @mixed_dtypes(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf16>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' k must have element type f32, got f16}}
  %0 = mir.attention %q, %k, %q num_heads = 2 head_dim = 4 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf16>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @wrong_num_heads(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' q has 2 heads but num_heads is 4}}
  %0 = mir.attention %q, %q, %q num_heads = 4 head_dim = 4 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @wrong_head_dim(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' q head dim 4 differs from head_dim 8}}
  %0 = mir.attention %q, %q, %q num_heads = 2 head_dim = 8 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @k_v_differ(%q: tensor<1x2x3x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' k shape [1, 2, 3, 4] differs from v shape [1, 2, 5, 4]}}
  %0 = mir.attention %q, %q, %v num_heads = 2 head_dim = 4 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @batch_differs(%q: tensor<1x2x3x4xf32>, %k: tensor<3x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' k/v batch 3 differs from q batch 1}}
  %0 = mir.attention %q, %k, %k num_heads = 2 head_dim = 4 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<3x2x3x4xf32>, tensor<3x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @kv_head_dim(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x8xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' k/v head dim 8 differs from head_dim 4}}
  %0 = mir.attention %q, %k, %k num_heads = 2 head_dim = 4 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @uneven_groups(%q: tensor<1x4x3x4xf32>, %k: tensor<1x3x3x4xf32>) -> tensor<1x4x3x4xf32> {
  // expected-error@+1 {{'mir.attention' num_heads 4 is not a multiple of the 3 k/v heads}}
  %0 = mir.attention %q, %k, %k num_heads = 4 head_dim = 4 mask_kind = none : (tensor<1x4x3x4xf32>, tensor<1x3x3x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x4x3x4xf32>
  func.return %0 : tensor<1x4x3x4xf32>
}

// -----

func.func @custom_without_mask(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' mask_kind custom requires a mask operand}}
  %0 = mir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = custom : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @causal_with_mask(%q: tensor<1x2x3x4xf32>, %m: tensor<1x3xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' mask_kind causal takes no mask operand}}
  %0 = mir.attention %q, %q, %q, %m num_heads = 2 head_dim = 4 mask_kind = causal : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x3xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @custom_mask_shape(%q: tensor<1x2x3x4xf32>, %m: tensor<1x3x3xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' custom mask shape [1, 3, 3] must be [batch, keys] = [1, 3]}}
  %0 = mir.attention %q, %q, %q, %m num_heads = 2 head_dim = 4 mask_kind = custom : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x3x3xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @integer_bias(%q: tensor<1x2x3x4xf32>, %m: tensor<3x3xi32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' bias mask must have a floating-point element type, got i32}}
  %0 = mir.attention %q, %q, %q, %m num_heads = 2 head_dim = 4 mask_kind = bias : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<3x3xi32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @bias_shape(%q: tensor<1x2x3x4xf32>, %m: tensor<2x3xf32>) -> tensor<1x2x3x4xf32> {
  // expected-error@+1 {{'mir.attention' bias mask shape [2, 3] does not broadcast to the scores shape [1, 2, 3, 3]}}
  %0 = mir.attention %q, %q, %q, %m num_heads = 2 head_dim = 4 mask_kind = bias : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<2x3xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @attention_result(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf16> {
  // expected-error@+1 {{'mir.attention' inferred result type tensor<1x2x3x4xf32> does not match declared type tensor<1x2x3x4xf16>}}
  %0 = mir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = none : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf16>
  func.return %0 : tensor<1x2x3x4xf16>
}

// -----

func.func @rope_head_dim(%x: tensor<3x4xf32>, %t: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.rope' head_dim must be >= 1, got 0}}
  %0 = mir.rope %x, %t, %t head_dim = 0 n_rot = 4 : (tensor<3x4xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @rope_odd_n_rot(%x: tensor<3x4xf32>, %t: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.rope' n_rot must be even and in (0, head_dim = 4], got 3}}
  %0 = mir.rope %x, %t, %t head_dim = 4 n_rot = 3 : (tensor<3x4xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @rope_n_rot_too_big(%x: tensor<3x4xf32>, %t: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.rope' n_rot must be even and in (0, head_dim = 4], got 6}}
  %0 = mir.rope %x, %t, %t head_dim = 4 n_rot = 6 : (tensor<3x4xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @rope_zero_n_rot(%x: tensor<3x4xf32>, %t: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.rope' n_rot must be even and in (0, head_dim = 4], got 0}}
  %0 = mir.rope %x, %t, %t head_dim = 4 n_rot = 0 : (tensor<3x4xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @rope_rank(%x: tensor<4xf32>, %t: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.rope' x must have rank >= 2, got [4]}}
  %0 = mir.rope %x, %t, %t head_dim = 4 n_rot = 4 : (tensor<4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @rope_integer(%x: tensor<3x4xi32>, %t: tensor<3x2xi32>) -> tensor<3x4xi32> {
  // expected-error@+1 {{'mir.rope' x must have a floating-point element type, got i32}}
  %0 = mir.rope %x, %t, %t head_dim = 4 n_rot = 4 : (tensor<3x4xi32>, tensor<3x2xi32>, tensor<3x2xi32>) -> tensor<3x4xi32>
  func.return %0 : tensor<3x4xi32>
}

// -----

func.func @rope_table_dtype(%x: tensor<3x4xf32>, %c: tensor<3x2xf32>, %s: tensor<3x2xf16>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.rope' sin must have element type f32, got f16}}
  %0 = mir.rope %x, %c, %s head_dim = 4 n_rot = 4 : (tensor<3x4xf32>, tensor<3x2xf32>, tensor<3x2xf16>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @rope_last_dim(%x: tensor<3x6xf32>, %t: tensor<3x2xf32>) -> tensor<3x6xf32> {
  // expected-error@+1 {{'mir.rope' x last dim 6 differs from head_dim 4}}
  %0 = mir.rope %x, %t, %t head_dim = 4 n_rot = 4 : (tensor<3x6xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x6xf32>
  func.return %0 : tensor<3x6xf32>
}

// -----

func.func @rope_table_shape(%x: tensor<2x3x4xf32>, %c: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'mir.rope' cos shape [3, 4] does not broadcast to [2, 3, 2]}}
  %0 = mir.rope %x, %c, %c head_dim = 4 n_rot = 4 : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @rope_result(%x: tensor<3x4xf32>, %t: tensor<3x2xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'mir.rope' inferred result type tensor<3x4xf32> does not match declared type tensor<4x4xf32>}}
  %0 = mir.rope %x, %t, %t head_dim = 4 n_rot = 4 : (tensor<3x4xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}
