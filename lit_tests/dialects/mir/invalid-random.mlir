// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @rng_dynamic() -> tensor<?x3xf32> {
  // expected-error@+1 {{'mir.rng_uniform' result shape [?, 3] must be static (no operand gives the size of a `?` dim)}}
  %0 = mir.rng_uniform seed = 1 low = 0.0 high = 1.0 : () -> tensor<?x3xf32>
  func.return %0 : tensor<?x3xf32>
}

// -----

func.func @rng_integer() -> tensor<3xi32> {
  // expected-error@+1 {{'mir.rng_normal' result must have a floating-point element type, got i32}}
  %0 = mir.rng_normal seed = 1 mean = 0.0 std = 1.0 : () -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @rng_empty_range() -> tensor<3xf32> {
  // expected-error@+1 {{'mir.rng_uniform' low (1.0) must be less than high (1.0)}}
  %0 = mir.rng_uniform seed = 1 low = 1.0 high = 1.0 : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @rng_negative_std() -> tensor<3xf32> {
  // expected-error@+1 {{'mir.rng_normal' std must be non-negative, got -1.0}}
  %0 = mir.rng_normal seed = 1 mean = 0.0 std = -1.0 : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @rng_offset_shape(%o: tensor<1xi64>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.rng_uniform' offset must be a rank-0 tensor<i64>, got tensor<1xi64>}}
  %0 = mir.rng_uniform offset %o seed = 1 low = 0.0 high = 1.0 : (tensor<1xi64>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @sample_rank(%l: tensor<8xf32>) -> tensor<1xi64> {
  // expected-error@+1 {{'mir.sample' logits must have rank 2 ([B, V]), got [8]}}
  %0 = mir.sample %l top_k = 0 top_p = 1.0 temperature = 1.0 seed = 0 : (tensor<8xf32>) -> tensor<1xi64>
  func.return %0 : tensor<1xi64>
}

// -----

func.func @sample_integer(%l: tensor<2x8xi32>) -> tensor<2xi64> {
  // expected-error@+1 {{'mir.sample' logits must have a floating-point element type, got i32}}
  %0 = mir.sample %l top_k = 0 top_p = 1.0 temperature = 1.0 seed = 0 : (tensor<2x8xi32>) -> tensor<2xi64>
  func.return %0 : tensor<2xi64>
}

// -----

func.func @sample_top_k(%l: tensor<2x8xf32>) -> tensor<2xi64> {
  // expected-error@+1 {{'mir.sample' top_k = 9 exceeds the vocabulary size 8}}
  %0 = mir.sample %l top_k = 9 top_p = 1.0 temperature = 1.0 seed = 0 : (tensor<2x8xf32>) -> tensor<2xi64>
  func.return %0 : tensor<2xi64>
}

// -----

func.func @sample_negative_top_k(%l: tensor<2x8xf32>) -> tensor<2xi64> {
  // expected-error@+1 {{'mir.sample' top_k must be non-negative (0: no top-k), got -1}}
  %0 = mir.sample %l top_k = -1 top_p = 1.0 temperature = 1.0 seed = 0 : (tensor<2x8xf32>) -> tensor<2xi64>
  func.return %0 : tensor<2xi64>
}

// -----

func.func @sample_top_p(%l: tensor<2x8xf32>) -> tensor<2xi64> {
  // expected-error@+1 {{'mir.sample' top_p must be in (0, 1], got 0.0}}
  %0 = mir.sample %l top_k = 0 top_p = 0.0 temperature = 1.0 seed = 0 : (tensor<2x8xf32>) -> tensor<2xi64>
  func.return %0 : tensor<2xi64>
}

// -----

func.func @sample_temperature(%l: tensor<2x8xf32>) -> tensor<2xi64> {
  // expected-error@+1 {{'mir.sample' temperature must be finite and non-negative, got -1.0}}
  %0 = mir.sample %l top_k = 0 top_p = 1.0 temperature = -1.0 seed = 0 : (tensor<2x8xf32>) -> tensor<2xi64>
  func.return %0 : tensor<2xi64>
}

// -----

func.func @sample_result(%l: tensor<2x8xf32>) -> tensor<2xi32> {
  // expected-error@+1 {{'mir.sample' inferred result type tensor<2xi64> does not match declared type tensor<2xi32>}}
  %0 = mir.sample %l top_k = 0 top_p = 1.0 temperature = 1.0 seed = 0 : (tensor<2x8xf32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}
