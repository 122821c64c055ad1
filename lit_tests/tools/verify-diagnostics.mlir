// --verify-diagnostics (MLIR's meaning): every diagnostic must be announced by
// an expected-* annotation on its line, and then the run succeeds silently.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s --allow-empty --check-prefix=SILENT
// SILENT-NOT: {{.}}

func.func @next_line(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.add' shapes [2, 3], [4] do not broadcast}}
  %0 = mir.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}

// -----

func.func @same_line(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = mir.exp %x : (tensor<4xi32>) -> tensor<4xi32> // expected-error {{floating-point element type}}
  func.return %x : tensor<4xi32>
}

// -----

func.func @line_above(%a: tensor<2xf32>) -> tensor<2xi32> {
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xi32>
  // expected-error@-1 {{inferred result type tensor<2xf32> does not match declared type tensor<2xi32>}}
  func.return %0 : tensor<2xi32>
}

// -----

func.func @above_and_below(%a: tensor<2xf32>) -> tensor<2xi32> {
  // expected-error@below {{does not match declared type}}
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// -----

func.func @regex(%a: tensor<3xf32>, %b: tensor<5xf32>) -> tensor<3xf32> {
  %0 = mir.mul %a, %b : (tensor<3xf32>, tensor<5xf32>) -> tensor<3xf32>
  // expected-error-re@above {{shapes [{{[0-9]+}}], [{{[0-9]+}}] do not broadcast}}
  func.return %a : tensor<3xf32>
}

// -----

// Parse errors are diagnostics too.
func.func @parse_error() {
  // expected-error@+1 {{use of undefined value '%nowhere'}}
  %0 = mir.relu %nowhere : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

// An error deep inside nested regions is matched at that op's own line.
builtin.module {
  func.func @nested(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = mir.compare lt, %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> // expected-error {{'mir.compare' inferred result type tensor<2xi1>}}
    func.return %a : tensor<2xf32>
  }
}
