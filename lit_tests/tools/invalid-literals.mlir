// Literals are read into their type exactly; one the type cannot hold is an error
// at the literal. One chunk per rule.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @f32_overflow() -> tensor<2xf32> {
  // expected-error@+1 {{float literal 1.0e39 is out of range for f32}}
  %c = mir.constant dense<[1.0, 1.0e39]> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

func.func @f16_overflow() -> tensor<f16> {
  // expected-error@+1 {{float literal 7.0e4 is out of range for f16}}
  %c = mir.constant dense<7.0e4> : tensor<f16>
  func.return %c : tensor<f16>
}

// -----

func.func @i8_range() -> tensor<2xi8> {
  // expected-error@+1 {{integer literal 300 is out of range for i8 [-128, 255]}}
  %c = mir.constant dense<[1, 300]> : tensor<2xi8>
  func.return %c : tensor<2xi8>
}

// -----

func.func @hex_too_wide() -> tensor<f32> {
  // expected-error@+1 {{hexadecimal literal 0x1FFFFFFFF does not fit the 32 bits of f32}}
  %c = mir.constant dense<0x1FFFFFFFF> : tensor<f32>
  func.return %c : tensor<f32>
}

// -----

func.func @negative_hex() -> tensor<f32> {
  // expected-error@+1 {{hexadecimal float literal -0x7FC00000 cannot be negative}}
  %c = mir.constant dense<-0x7FC00000> : tensor<f32>
  func.return %c : tensor<f32>
}

// -----

func.func @float_for_integer() -> tensor<1xi32> {
  // expected-error@+1 {{float literal 1.5 for integer type i32}}
  %c = mir.constant dense<[1.5]> : tensor<1xi32>
  func.return %c : tensor<1xi32>
}

// -----

func.func @scalar_attribute() attributes {
  // expected-error@+1 {{float literal 1.0e39 is out of range for f32}}
  a = 1.0e39 : f32} {
  func.return
}

// -----

func.func @unterminated_string() attributes {
  // expected-error@+1 {{unterminated string literal (missing closing '"')}}
  a = "layers.0.attn_norm.gamma} {
  func.return
}
