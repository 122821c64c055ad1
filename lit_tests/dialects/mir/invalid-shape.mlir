// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @reshape_bad_entry(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error@+1 {{'mir.reshape' new_shape entries must be >= -1, got -2}}
  %0 = mir.reshape %x new_shape = [-2] : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}

// -----

func.func @reshape_two_wildcards(%x: tensor<2x3xf32>) -> tensor<6x1xf32> {
  // expected-error@+1 {{'mir.reshape' new_shape [-1, -1] has more than one -1}}
  %0 = mir.reshape %x new_shape = [-1, -1] : (tensor<2x3xf32>) -> tensor<6x1xf32>
  func.return %0 : tensor<6x1xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'mir.reshape' cannot reshape [2, 3] (6 elements) to new_shape [4, 2]}}
  %0 = mir.reshape %x new_shape = [4, 2] : (tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

// -----

func.func @reshape_indivisible(%x: tensor<2x3xf32>) -> tensor<4x?xf32> {
  // expected-error@+1 {{'mir.reshape' cannot reshape [2, 3] (6 elements) to new_shape [4, -1]}}
  %0 = mir.reshape %x new_shape = [4, -1] : (tensor<2x3xf32>) -> tensor<4x?xf32>
  func.return %0 : tensor<4x?xf32>
}

// -----

func.func @reshape_result(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mir.reshape' inferred result type tensor<6xf32> does not match declared type tensor<3x2xf32>}}
  %0 = mir.reshape %x new_shape = [-1] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_length(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mir.transpose' perm [1, 0, 2] is not a permutation of the 2 axes}}
  %0 = mir.transpose %x perm = [1, 0, 2] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_repeat(%x: tensor<2x3xf32>) -> tensor<3x3xf32> {
  // expected-error@+1 {{'mir.transpose' perm [1, 1] is not a permutation of the 2 axes}}
  %0 = mir.transpose %x perm = [1, 1] : (tensor<2x3xf32>) -> tensor<3x3xf32>
  func.return %0 : tensor<3x3xf32>
}

// -----

func.func @transpose_result(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.transpose' inferred result type tensor<3x2xf32> does not match declared type tensor<2x3xf32>}}
  %0 = mir.transpose %x perm = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @narrow_negative_start(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.narrow' start must be >= 0, got -1}}
  %0 = mir.narrow %x axis = 0 start = -1 len = 2 : (tensor<4xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @narrow_negative_len(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.narrow' len must be >= 0, got -2}}
  %0 = mir.narrow %x axis = 0 start = 0 len = -2 : (tensor<4xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @narrow_axis(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.narrow' axis 1 is out of range for rank 1}}
  %0 = mir.narrow %x axis = 1 start = 0 len = 2 : (tensor<4xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @narrow_past_end(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mir.narrow' start 3 + len 2 exceeds dim 4 of axis 1}}
  %0 = mir.narrow %x axis = -1 start = 3 len = 2 : (tensor<3x4xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @narrow_result(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.narrow' inferred result type tensor<3x2xf32> does not match declared type tensor<3x4xf32>}}
  %0 = mir.narrow %x axis = 1 start = 0 len = 2 : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @concat_no_operands() -> tensor<2xf32> {
  // expected-error@+1 {{'mir.concat' needs at least one operand}}
  %0 = "mir.concat"() <{axis = 0 : i64}> : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @concat_dtype(%a: tensor<2xf32>, %b: tensor<2xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.concat' operand #1 has element type f16, expected f32}}
  %0 = mir.concat %a, %b axis = 0 : (tensor<2xf32>, tensor<2xf16>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @concat_rank(%a: tensor<2xf32>, %b: tensor<2x1xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.concat' operand #1 has rank 2, expected 1}}
  %0 = mir.concat %a, %b axis = 0 : (tensor<2xf32>, tensor<2x1xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @concat_other_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.concat' operand #1 has shape [2, 4], which differs from [2, 3] outside axis 0}}
  %0 = mir.concat %a, %b axis = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.concat' axis -3 is out of range for rank 2}}
  %0 = mir.concat %a, %a axis = -3 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @concat_result(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.concat' inferred result type tensor<2x6xf32> does not match declared type tensor<4x3xf32>}}
  %0 = mir.concat %a, %a axis = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @expand_bad_entry(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.expand' target_shape entries must be >= -1, got -3}}
  %0 = mir.expand %x target_shape = [-3] : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @expand_fewer_dims(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.expand' cannot expand [2, 3] to target_shape [3]: it has fewer dims than the input}}
  %0 = mir.expand %x target_shape = [3] : (tensor<2x3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @expand_new_wildcard(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.expand' cannot expand [3] to target_shape [-1, 3]: -1 at dim 0 has no input dim to keep}}
  %0 = mir.expand %x target_shape = [-1, 3] : (tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @expand_dim(%x: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.expand' cannot expand [3, 2] to target_shape [3, 4]: input dim 2 is neither 1 nor 4}}
  %0 = mir.expand %x target_shape = [3, 4] : (tensor<3x2xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @expand_result(%x: tensor<3x1xf32>) -> tensor<3x1xf32> {
  // expected-error@+1 {{'mir.expand' inferred result type tensor<3x4xf32> does not match declared type tensor<3x1xf32>}}
  %0 = mir.expand %x target_shape = [3, 4] : (tensor<3x1xf32>) -> tensor<3x1xf32>
  func.return %0 : tensor<3x1xf32>
}

// -----

func.func @expand_like_not_one(%x: tensor<2x8xf32>, %ids: tensor<?x8xi64>) -> tensor<?x8xf32> {
  // expected-error@+1 {{'mir.expand' input dim 0 is [2], not 1: only a dim of 1 (or a new leading dim) broadcasts to `like`'s size}}
  %0 = mir.expand %x target_shape = [-1, 8] like %ids like_dims = [0, -1] : (tensor<2x8xf32>, tensor<?x8xi64>) -> tensor<?x8xf32>
  func.return %0 : tensor<?x8xf32>
}

// -----

func.func @expand_like_target(%x: tensor<1x8xf32>, %ids: tensor<?x8xi64>) -> tensor<?x8xf32> {
  // expected-error@+1 {{'mir.expand' target_shape entry 0 must be -1: `like` gives its size}}
  %0 = mir.expand %x target_shape = [4, 8] like %ids like_dims = [0, -1] : (tensor<1x8xf32>, tensor<?x8xi64>) -> tensor<?x8xf32>
  func.return %0 : tensor<?x8xf32>
}

// -----

func.func @expand_like_dims_count(%x: tensor<1x8xf32>, %ids: tensor<?x8xi64>) -> tensor<?x8xf32> {
  // expected-error@+1 {{'mir.expand' like_dims has 1 entries for a result of rank 2}}
  %0 = mir.expand %x target_shape = [-1, 8] like %ids like_dims = [0] : (tensor<1x8xf32>, tensor<?x8xi64>) -> tensor<?x8xf32>
  func.return %0 : tensor<?x8xf32>
}

// -----

func.func @expand_like_without_dims(%x: tensor<1x8xf32>, %ids: tensor<?x8xi64>) -> tensor<1x8xf32> {
  // expected-error@+1 {{'mir.expand' `like` and `like_dims` must be given together}}
  %0 = "mir.expand"(%x, %ids) <{target_shape = array<i64: -1, 8>}> : (tensor<1x8xf32>, tensor<?x8xi64>) -> tensor<1x8xf32>
  func.return %0 : tensor<1x8xf32>
}

// -----

func.func @reshape_like_entry(%x: tensor<?x32xf32>, %ids: tensor<?x?xi64>) -> tensor<?x?x32xf32> {
  // expected-error@+1 {{'mir.reshape' new_shape entry 1 must be -1: `like` gives its size}}
  %0 = mir.reshape %x new_shape = [-1, 4, 32] like %ids like_dims = [0, 1, -1] : (tensor<?x32xf32>, tensor<?x?xi64>) -> tensor<?x?x32xf32>
  func.return %0 : tensor<?x?x32xf32>
}

// -----

func.func @reshape_like_two_inferred(%x: tensor<?x32xf32>, %ids: tensor<?x?xi64>) -> tensor<?x?x?xf32> {
  // expected-error@+1 {{'mir.reshape' new_shape [-1, -1, -1] has more than one -1}}
  %0 = mir.reshape %x new_shape = [-1, -1, -1] like %ids like_dims = [0, -1, -1] : (tensor<?x32xf32>, tensor<?x?xi64>) -> tensor<?x?x?xf32>
  func.return %0 : tensor<?x?x?xf32>
}

// -----

func.func @narrow_like_len(%x: tensor<1x32xi64>, %ids: tensor<?x?xi64>) -> tensor<1x?xi64> {
  // expected-error@+1 {{'mir.narrow' len must be -1: `like` gives the length}}
  %0 = mir.narrow %x axis = 1 start = 0 len = 4 like %ids like_dims = [-1, 1] : (tensor<1x32xi64>, tensor<?x?xi64>) -> tensor<1x?xi64>
  func.return %0 : tensor<1x?xi64>
}

// -----

func.func @narrow_like_other_dim(%x: tensor<1x32xi64>, %ids: tensor<?x?xi64>) -> tensor<?x?xi64> {
  // expected-error@+1 {{'mir.narrow' like_dims must size axis 1 and no other dim}}
  %0 = mir.narrow %x axis = 1 start = 0 len = -1 like %ids like_dims = [0, 1] : (tensor<1x32xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  func.return %0 : tensor<?x?xi64>
}
