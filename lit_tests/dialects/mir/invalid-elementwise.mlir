// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.add' shapes [2, 3], [4] do not broadcast}}
  %0 = mir.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @wrong_result_shape(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mir.mul' inferred result type tensor<2x3xf32> does not match declared type tensor<3x2xf32>}}
  %0 = mir.mul %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @wrong_promotion(%a: tensor<3xf16>, %b: tensor<3xbf16>) -> tensor<3xf16> {
  // expected-error@+1 {{'mir.add' inferred result type tensor<3xf32> does not match declared type tensor<3xf16>}}
  %0 = mir.add %a, %b : (tensor<3xf16>, tensor<3xbf16>) -> tensor<3xf16>
  func.return %0 : tensor<3xf16>
}

// -----

func.func @int_activation(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error@+1 {{'mir.exp' operand must have a floating-point element type, got i32}}
  %0 = mir.exp %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @activation_changes_type(%a: tensor<3xf32>) -> tensor<3xf16> {
  // expected-error@+1 {{'mir.tanh' inferred result type tensor<3xf32> does not match declared type tensor<3xf16>}}
  %0 = mir.tanh %a : (tensor<3xf32>) -> tensor<3xf16>
  func.return %0 : tensor<3xf16>
}

// -----

func.func @compare_result_not_bool(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.compare' inferred result type tensor<3xi1> does not match declared type tensor<3xf32>}}
  %0 = mir.compare lt, %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @where_mismatch(%c: tensor<2xi1>, %a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.where' shapes [2], [3], [3] do not broadcast}}
  %0 = mir.where %c, %a, %a : (tensor<2xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @cast_shape(%a: tensor<3xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{'mir.cast' inferred result type tensor<3xf16> does not match declared type tensor<4xf16>}}
  %0 = mir.cast %a : (tensor<3xf32>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

func.func @cast_unsupported(%a: tensor<3xf32>) -> tensor<3xi3> {
  // expected-error@+1 {{'mir.cast' cannot cast to unsupported element type i3}}
  %0 = mir.cast %a : (tensor<3xf32>) -> tensor<3xi3>
  func.return %0 : tensor<3xi3>
}

// -----

func.func @cast_config_block_rank(%a: tensor<4x4xf32>) -> tensor<4x4xf16> {
  // expected-error@+1 {{'mir.cast' sf_block must be [rows, cols], got [4]}}
  %0 = mir.cast %a config <sf_block = [4]> : (tensor<4x4xf32>) -> tensor<4x4xf16>
  func.return %0 : tensor<4x4xf16>
}

// -----

func.func @cast_config_empty_block(%a: tensor<4x4xf32>) -> tensor<4x4xf16> {
  // expected-error@+1 {{'mir.cast' sf_block cols must be >= 1, got 0}}
  %0 = mir.cast %a config <sf_block = [2, 0]> : (tensor<4x4xf32>) -> tensor<4x4xf16>
  func.return %0 : tensor<4x4xf16>
}

// -----

func.func @cast_config_not_float(%a: tensor<4x4xf32>) -> tensor<4x4xi8> {
  // expected-error@+1 {{'mir.cast' a cast with sf_block scales floats to floats, not f32 to i8}}
  %0 = mir.cast %a config <sf_block = [2, 2]> : (tensor<4x4xf32>) -> tensor<4x4xi8>
  func.return %0 : tensor<4x4xi8>
}

// -----

func.func @cast_config_rank(%a: tensor<16xf32>) -> tensor<16xf16> {
  // expected-error@+1 {{'mir.cast' a cast with sf_block needs an operand of rank >= 2 (blocks span the last two dims), got [16]}}
  %0 = mir.cast %a config <sf_block = [1, 4]> : (tensor<16xf32>) -> tensor<16xf16>
  func.return %0 : tensor<16xf16>
}

// -----

func.func @unsupported_operand(%a: tensor<3xi3>) -> tensor<3xi3> {
  // expected-error@+1 {{'mir.neg' operand type tensor<3xi3> has an element type outside RLX's dtypes}}
  %0 = mir.neg %a : (tensor<3xi3>) -> tensor<3xi3>
  func.return %0 : tensor<3xi3>
}

// -----

func.func @add_arity(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{Expected 2 operands, but got 1}}
  %0 = "mir.add"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @bad_predicate(%a: tensor<3xf32>) -> tensor<3xi1> {
  // expected-error@+1 {{Expected `eq`, `ne`, `lt`, `le`, `gt`, or `ge`}}
  %0 = mir.compare less, %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.add' shapes [2, 3], [2] do not broadcast}}
  %0 = mir.add %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @add_result_type(%a: tensor<3xi8>, %b: tensor<3xui8>) -> tensor<3xi8> {
  // expected-error@+1 {{'mir.add' inferred result type tensor<3xi16> does not match declared type tensor<3xi8>}}
  %0 = mir.add %a, %b : (tensor<3xi8>, tensor<3xui8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}
// -----

func.func @sub_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.sub' shapes [2, 3], [2] do not broadcast}}
  %0 = mir.sub %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @sub_result_type(%a: tensor<3xi8>, %b: tensor<3xui8>) -> tensor<3xi8> {
  // expected-error@+1 {{'mir.sub' inferred result type tensor<3xi16> does not match declared type tensor<3xi8>}}
  %0 = mir.sub %a, %b : (tensor<3xi8>, tensor<3xui8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}
// -----

func.func @mul_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.mul' shapes [2, 3], [2] do not broadcast}}
  %0 = mir.mul %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @mul_result_type(%a: tensor<3xi8>, %b: tensor<3xui8>) -> tensor<3xi8> {
  // expected-error@+1 {{'mir.mul' inferred result type tensor<3xi16> does not match declared type tensor<3xi8>}}
  %0 = mir.mul %a, %b : (tensor<3xi8>, tensor<3xui8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}
// -----

func.func @div_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.div' shapes [2, 3], [2] do not broadcast}}
  %0 = mir.div %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @div_result_type(%a: tensor<3xi8>, %b: tensor<3xui8>) -> tensor<3xi8> {
  // expected-error@+1 {{'mir.div' inferred result type tensor<3xi16> does not match declared type tensor<3xi8>}}
  %0 = mir.div %a, %b : (tensor<3xi8>, tensor<3xui8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}
// -----

func.func @max_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.max' shapes [2, 3], [2] do not broadcast}}
  %0 = mir.max %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @max_result_type(%a: tensor<3xi8>, %b: tensor<3xui8>) -> tensor<3xi8> {
  // expected-error@+1 {{'mir.max' inferred result type tensor<3xi16> does not match declared type tensor<3xi8>}}
  %0 = mir.max %a, %b : (tensor<3xi8>, tensor<3xui8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}
// -----

func.func @min_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.min' shapes [2, 3], [2] do not broadcast}}
  %0 = mir.min %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @min_result_type(%a: tensor<3xi8>, %b: tensor<3xui8>) -> tensor<3xi8> {
  // expected-error@+1 {{'mir.min' inferred result type tensor<3xi16> does not match declared type tensor<3xi8>}}
  %0 = mir.min %a, %b : (tensor<3xi8>, tensor<3xui8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}
// -----

func.func @pow_broadcast(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.pow' shapes [2, 3], [2] do not broadcast}}
  %0 = mir.pow %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @pow_result_type(%a: tensor<3xi8>, %b: tensor<3xui8>) -> tensor<3xi8> {
  // expected-error@+1 {{'mir.pow' inferred result type tensor<3xi16> does not match declared type tensor<3xi8>}}
  %0 = mir.pow %a, %b : (tensor<3xi8>, tensor<3xui8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}
// -----

func.func @gelu_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.gelu' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.gelu %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @gelu_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.gelu' operand must have a floating-point element type, got i64}}
  %0 = mir.gelu %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @gelu_approx_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.gelu_approx' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.gelu_approx %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @gelu_approx_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.gelu_approx' operand must have a floating-point element type, got i64}}
  %0 = mir.gelu_approx %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @silu_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.silu' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.silu %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @silu_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.silu' operand must have a floating-point element type, got i64}}
  %0 = mir.silu %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @relu_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.relu' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.relu %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @sigmoid_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.sigmoid' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.sigmoid %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @sigmoid_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.sigmoid' operand must have a floating-point element type, got i64}}
  %0 = mir.sigmoid %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @tanh_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.tanh' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.tanh %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @tanh_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.tanh' operand must have a floating-point element type, got i64}}
  %0 = mir.tanh %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @exp_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.exp' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.exp %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @exp_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.exp' operand must have a floating-point element type, got i64}}
  %0 = mir.exp %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @log_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.log' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.log %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @log_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.log' operand must have a floating-point element type, got i64}}
  %0 = mir.log %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @sqrt_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.sqrt' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.sqrt %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @sqrt_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.sqrt' operand must have a floating-point element type, got i64}}
  %0 = mir.sqrt %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @rsqrt_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.rsqrt' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.rsqrt %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @rsqrt_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.rsqrt' operand must have a floating-point element type, got i64}}
  %0 = mir.rsqrt %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @neg_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.neg' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.neg %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @abs_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.abs' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.abs %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @sin_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.sin' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.sin %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @sin_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.sin' operand must have a floating-point element type, got i64}}
  %0 = mir.sin %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @cos_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.cos' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.cos %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @cos_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.cos' operand must have a floating-point element type, got i64}}
  %0 = mir.cos %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @tan_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.tan' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.tan %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @tan_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.tan' operand must have a floating-point element type, got i64}}
  %0 = mir.tan %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @atan_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.atan' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.atan %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @atan_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.atan' operand must have a floating-point element type, got i64}}
  %0 = mir.atan %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @log1p_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.log1p' operand must have a floating-point element type, got i64}}
  %0 = mir.log1p %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}
// -----

func.func @expm1_integer(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error@+1 {{'mir.expm1' operand must have a floating-point element type, got i32}}
  %0 = mir.expm1 %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}
// -----

func.func @erf_integer(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error@+1 {{'mir.erf' operand must have a floating-point element type, got i32}}
  %0 = mir.erf %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}
// -----

func.func @round_result_type(%a: tensor<2x3xbf16>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'mir.round' inferred result type tensor<2x3xbf16> does not match declared type tensor<3x2xbf16>}}
  %0 = mir.round %a : (tensor<2x3xbf16>) -> tensor<3x2xbf16>
  func.return %0 : tensor<3x2xbf16>
}
// -----

func.func @round_integer(%a: tensor<3xi64>) -> tensor<3xi64> {
  // expected-error@+1 {{'mir.round' operand must have a floating-point element type, got i64}}
  %0 = mir.round %a : (tensor<3xi64>) -> tensor<3xi64>
  func.return %0 : tensor<3xi64>
}

// -----

func.func @iota_dimension() -> tensor<2x3xi64> {
  // expected-error@+1 {{'mir.iota' axis 2 is out of range for rank 2}}
  %0 = mir.iota dimension = 2 : tensor<2x3xi64>
  func.return %0 : tensor<2x3xi64>
}

// -----

func.func @iota_dynamic() -> tensor<?x3xi64> {
  // expected-error@+1 {{'mir.iota' result shape [?, 3] has a `?` at dim 0 that no `like` dim sizes}}
  %0 = mir.iota dimension = 1 : tensor<?x3xi64>
  func.return %0 : tensor<?x3xi64>
}

// -----

func.func @iota_scalar() -> tensor<i64> {
  // expected-error@+1 {{'mir.iota' result must have rank at least 1, got a scalar}}
  %0 = mir.iota dimension = 0 : tensor<i64>
  func.return %0 : tensor<i64>
}

// -----

func.func @iota_bool() -> tensor<4xi1> {
  // expected-error@+1 {{'mir.iota' result must have an integer or floating-point element type, got i1}}
  %0 = mir.iota dimension = 0 : tensor<4xi1>
  func.return %0 : tensor<4xi1>
}

// -----

func.func @iota_like_without_dims(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error@+1 {{'mir.iota' `like` and `like_dims` must be given together}}
  %0 = "mir.iota"(%x) <{dimension = 0 : i64}> : (tensor<4xi64>) -> tensor<4xi64>
  func.return %0 : tensor<4xi64>
}

// -----

func.func @iota_like_dims_count(%x: tensor<?x8xi64>) -> tensor<?xi64> {
  // expected-error@+1 {{'mir.iota' like_dims has 2 entries for a result of rank 1}}
  %0 = mir.iota dimension = 0 like %x like_dims = [0, -1] : tensor<?x8xi64> : tensor<?xi64>
  func.return %0 : tensor<?xi64>
}

// -----

func.func @iota_like_dims_range(%x: tensor<?x8xi64>) -> tensor<?xi64> {
  // expected-error@+1 {{'mir.iota' like_dims entry 2 is neither -1 nor a dim of `like` (rank 2)}}
  %0 = mir.iota dimension = 0 like %x like_dims = [2] : tensor<?x8xi64> : tensor<?xi64>
  func.return %0 : tensor<?xi64>
}

// -----

func.func @iota_like_size(%x: tensor<?x8xi64>) -> tensor<4xi64> {
  // expected-error@+1 {{'mir.iota' result dim 0 is [4] where `like` gives [8]}}
  %0 = mir.iota dimension = 0 like %x like_dims = [1] : tensor<?x8xi64> : tensor<4xi64>
  func.return %0 : tensor<4xi64>
}

// -----

func.func @iota_dynamic_unsized(%x: tensor<?x8xi64>) -> tensor<?x?xi64> {
  // expected-error@+1 {{'mir.iota' result shape [?, ?] has a `?` at dim 1 that no `like` dim sizes}}
  %0 = mir.iota dimension = 0 like %x like_dims = [0, -1] : tensor<?x8xi64> : tensor<?x?xi64>
  func.return %0 : tensor<?x?xi64>
}
