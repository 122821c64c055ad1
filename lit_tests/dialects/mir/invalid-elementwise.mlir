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

func.func @cast_unsupported(%a: tensor<3xf32>) -> tensor<3xi4> {
  // expected-error@+1 {{'mir.cast' cannot cast to unsupported element type i4}}
  %0 = mir.cast %a : (tensor<3xf32>) -> tensor<3xi4>
  func.return %0 : tensor<3xi4>
}

// -----

func.func @unsupported_operand(%a: tensor<3xi4>) -> tensor<3xi4> {
  // expected-error@+1 {{'mir.neg' operand type tensor<3xi4> has an element type outside RLX's dtypes}}
  %0 = mir.neg %a : (tensor<3xi4>) -> tensor<3xi4>
  func.return %0 : tensor<3xi4>
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
