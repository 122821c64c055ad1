// A value must be defined before it is used, as mlir-opt checks (xDSL does not).
// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @swapped(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{operand #0 does not dominate this use}}
  %c = mir.add %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = mir.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// -----

func.func @self_use(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{operand #1 does not dominate this use}}
  %b = mir.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// -----

func.func @in_a_region(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error@+1 {{operand #0 does not dominate this use}}
    %z = mir.add %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %y = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %z : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
