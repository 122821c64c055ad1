// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @if_pred_shape(%p: tensor<2xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.if' predicate must have exactly one element, got shape [2]}}
  %r = mir.if %p (%a) : (tensor<2xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_pred_complex(%p: tensor<complex<f32>>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.if' predicate must have an i1 or real numeric element type, got complex<f32>}}
  %r = mir.if %p (%a) : (tensor<complex<f32>>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_then_args(%p: tensor<1xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.if' then region argument types (tensor<4xf32>) do not match the capture types (tensor<4xf32>, tensor<4xf32>)}}
  %r = mir.if %p (%a, %b) : (tensor<1xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_else_args(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.if' else region argument types (tensor<4xf16>) do not match the capture types (tensor<4xf32>)}}
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf16>):
    %c = mir.constant dense<1.0> : tensor<4xf32>
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_yields_differ(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.if' then region yields (tensor<4xf32>) but else region yields (tensor<4xf16>)}}
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    %h = mir.cast %x : (tensor<4xf32>) -> tensor<4xf16>
    mir.yield %h : tensor<4xf16>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_no_values(%p: tensor<1xi1>, %a: tensor<4xf32>) {
  // expected-error@+1 {{'mir.if' regions must yield at least one value}}
  mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> () {
  ^bb0(%x: tensor<4xf32>):
    mir.yield
  } else {
  ^bb0(%x: tensor<4xf32>):
    mir.yield
  }
  func.return
}

// -----

func.func @if_result_type(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{'mir.if' inferred result type tensor<4xf32> does not match declared type tensor<4xf16>}}
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf16>
}

// -----

func.func @if_result_count(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.if' expected 1 results, got 2}}
  %r, %s = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_not_yield(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.if' else region must end with 'mir.yield'}}
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    "llvm.unreachable"() : () -> ()
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_two_blocks(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{Region 'then_region' at position 0 expected a single block, but got 2 blocks}}
  %r = "mir.if"(%p, %a) ({
  ^bb0(%x: tensor<4xf32>):
    "mir.yield"(%x) : (tensor<4xf32>) -> ()
  ^bb1(%y: tensor<4xf32>):
    "mir.yield"(%y) : (tensor<4xf32>) -> ()
  }, {
  ^bb0(%x: tensor<4xf32>):
    "mir.yield"(%x) : (tensor<4xf32>) -> ()
  }) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Regions capture explicitly: using %a directly instead of a block argument is rejected.
func.func @if_implicit_capture(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{Operation using value defined out of its IsolatedFromAbove parent}}
  %r = mir.if %p () : (tensor<1xi1>) -> tensor<4xf32> {
    mir.yield %a : tensor<4xf32>
  } else {
    mir.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @yield_outside(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.yield' expects parent op to be one of 'mir.if', 'mir.while'}}
  mir.yield %a : tensor<4xf32>
}

// -----

func.func @yield_dtype(%p: tensor<1xi1>, %a: tensor<4xi3>) -> tensor<4xi3> {
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xi3>) -> tensor<4xi3> {
  ^bb0(%x: tensor<4xi3>):
    // expected-error@+1 {{'mir.yield' operand type tensor<4xi3> has an element type outside RLX's dtypes}}
    mir.yield %x : tensor<4xi3>
  } else {
  ^bb0(%x: tensor<4xi3>):
    mir.yield %x : tensor<4xi3>
  }
  func.return %r : tensor<4xi3>
}

// -----

func.func @while_max_iterations(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.while' max_iterations must be >= 1, got 0}}
  %r = mir.while (%a) max_iterations = 0 : (tensor<4xf32>) -> tensor<4xf32> cond {
  ^bb0(%x: tensor<4xf32>):
    %t = mir.constant dense<true> : tensor<i1>
    mir.yield %t : tensor<i1>
  } do {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @while_nothing_carried() {
  // expected-error@+1 {{'mir.while' must carry at least one value}}
  mir.while () : () -> () cond {
    %t = mir.constant dense<true> : tensor<i1>
    mir.yield %t : tensor<i1>
  } do {
    mir.yield
  }
  func.return
}

// -----

func.func @while_cond_args(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.while' cond region argument types (tensor<4xf64>) do not match the carried types (tensor<4xf32>)}}
  %r = mir.while (%a) : (tensor<4xf32>) -> tensor<4xf32> cond {
  ^bb0(%x: tensor<4xf64>):
    %t = mir.constant dense<true> : tensor<i1>
    mir.yield %t : tensor<i1>
  } do {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @while_cond_two_values(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.while' cond region must yield exactly one value, got 2}}
  %r = mir.while (%a) : (tensor<4xf32>) -> tensor<4xf32> cond {
  ^bb0(%x: tensor<4xf32>):
    %t = mir.constant dense<true> : tensor<i1>
    mir.yield %t, %t : tensor<i1>, tensor<i1>
  } do {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @while_cond_shape(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.while' cond region's yielded value must have exactly one element, got shape [4]}}
  %r = mir.while (%a) : (tensor<4xf32>) -> tensor<4xf32> cond {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  } do {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @while_cond_complex(%a: tensor<1xcomplex<f32>>) -> tensor<1xcomplex<f32>> {
  // expected-error@+1 {{'mir.while' cond region's yielded value must have an i1 or real numeric element type, got complex<f32>}}
  %r = mir.while (%a) : (tensor<1xcomplex<f32>>) -> tensor<1xcomplex<f32>> cond {
  ^bb0(%x: tensor<1xcomplex<f32>>):
    mir.yield %x : tensor<1xcomplex<f32>>
  } do {
  ^bb0(%x: tensor<1xcomplex<f32>>):
    mir.yield %x : tensor<1xcomplex<f32>>
  }
  func.return %r : tensor<1xcomplex<f32>>
}

// -----

func.func @while_body_args(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.while' body region argument types () do not match the carried types (tensor<4xf32>)}}
  %r = mir.while (%a) : (tensor<4xf32>) -> tensor<4xf32> cond {
  ^bb0(%x: tensor<4xf32>):
    %t = mir.constant dense<true> : tensor<i1>
    mir.yield %t : tensor<i1>
  } do {
    %c = mir.constant dense<1.0> : tensor<4xf32>
    mir.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @while_body_yield(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.while' body region yields (tensor<4xf16>) but the carried types are (tensor<4xf32>)}}
  %r = mir.while (%a) : (tensor<4xf32>) -> tensor<4xf32> cond {
  ^bb0(%x: tensor<4xf32>):
    %t = mir.constant dense<true> : tensor<i1>
    mir.yield %t : tensor<i1>
  } do {
  ^bb0(%x: tensor<4xf32>):
    %h = mir.cast %x : (tensor<4xf32>) -> tensor<4xf16>
    mir.yield %h : tensor<4xf16>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @while_body_not_yield(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.while' body region must end with 'mir.yield'}}
  %r = mir.while (%a) : (tensor<4xf32>) -> tensor<4xf32> cond {
  ^bb0(%x: tensor<4xf32>):
    %t = mir.constant dense<true> : tensor<i1>
    mir.yield %t : tensor<i1>
  } do {
  ^bb0(%x: tensor<4xf32>):
    "llvm.unreachable"() : () -> ()
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @while_result_type(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{'mir.while' inferred result type tensor<4xf32> does not match declared type tensor<4xf16>}}
  %r = mir.while (%a) : (tensor<4xf32>) -> tensor<4xf16> cond {
  ^bb0(%x: tensor<4xf32>):
    %t = mir.constant dense<true> : tensor<i1>
    mir.yield %t : tensor<i1>
  } do {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf16>
}
