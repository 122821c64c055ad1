// --verify-diagnostics fails (exit 1) on an unexpected diagnostic and on an
// expectation nothing met, reporting each MLIR-style.
// RUN: not rlx-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

func.func @unexpected(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // CHECK:      verify-diagnostics-mismatch.mlir:[[# @LINE + 3]]:3: error: unexpected error: 'mir.add' shapes [2, 3], [4] do not broadcast
  // CHECK-NEXT: {{^}}  %0 = mir.add %a, %b
  // CHECK-NEXT: {{^}}  ^{{$}}
  %0 = mir.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}

// -----

func.func @missing() {
  // CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:6: error: expected error "never happens" was not produced
  // expected-error@+1 {{never happens}}
  func.return
}

// -----

// Right message on the wrong line: reported both ways.
func.func @wrong_line(%a: tensor<2xf32>) -> tensor<2xi32> {
  // CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 3]]:3: error: unexpected error: 'mir.relu' inferred result type
  // CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:6: error: expected error "inferred result type" was not produced
  // expected-error@+2 {{inferred result type}}
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// -----

// Right line, wrong message.
func.func @wrong_message(%a: tensor<2xf32>) -> tensor<2xi32> {
  // CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:3: error: unexpected error: 'mir.relu' inferred result type
  // CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:58: error: expected error "operand must be a float" was not produced
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xi32> // expected-error {{operand must be a float}}
  func.return %0 : tensor<2xi32>
}

// -----

// Notes, warnings and remarks must be met too.
func.func @no_warning() {
  // CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:6: error: expected warning "deprecated" was not produced
  // expected-warning@+1 {{deprecated}}
  func.return
}
