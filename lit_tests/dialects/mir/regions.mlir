// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @if_two_results
// GENERIC-LABEL: "func.func"() <{sym_name = "if_two_results"
func.func @if_two_results(%p: tensor<1xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %r, %s = mir.if %p (%a, %b) : (tensor<1xi1>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-NEXT: ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
  // CHECK-NEXT:   %z = mir.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT:   mir.yield %z, %y : tensor<4xf32>, tensor<4xf32>
  // CHECK-NEXT: } else {
  // CHECK-NEXT: ^bb0(%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>):
  // CHECK-NEXT:   mir.yield %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>
  // CHECK-NEXT: }
  // GENERIC:      %r, %s = "mir.if"(%p, %a, %b) ({
  // GENERIC-NEXT: ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
  // GENERIC:        "mir.yield"(%z, %y) : (tensor<4xf32>, tensor<4xf32>) -> ()
  // GENERIC-NEXT: }, {
  // GENERIC:      }) : (tensor<1xi1>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %r, %s = mir.if %p (%a, %b) : (tensor<1xi1>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %z = mir.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %z, %y : tensor<4xf32>, tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    mir.yield %y, %x : tensor<4xf32>, tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// A numeric rank-0 predicate (nonzero is true), and no captures: the regions
// build their values from constants.
// CHECK-LABEL: func.func @if_no_captures
func.func @if_no_captures(%p: tensor<f32>) -> tensor<2xi32> {
  // CHECK-NEXT: %r = mir.if %p () : (tensor<f32>) -> tensor<2xi32> {
  // CHECK-NEXT:   %c = mir.constant dense<1> : tensor<2xi32>
  // CHECK-NEXT:   mir.yield %c : tensor<2xi32>
  // CHECK-NEXT: } else {
  // GENERIC: "mir.if"(%p) ({
  %r = mir.if %p () : (tensor<f32>) -> tensor<2xi32> {
    %c = mir.constant dense<1> : tensor<2xi32>
    mir.yield %c : tensor<2xi32>
  } else {
    %c = mir.constant dense<0> : tensor<2xi32>
    mir.yield %c : tensor<2xi32>
  }
  func.return %r : tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @bounded_while
func.func @bounded_while(%v: tensor<?x4xf32>, %i: tensor<1xf32>) -> tensor<?x4xf32> {
  // CHECK-NEXT: %r, %n = mir.while (%v, %i) max_iterations = 10 : (tensor<?x4xf32>, tensor<1xf32>) -> (tensor<?x4xf32>, tensor<1xf32>) cond {
  // CHECK-NEXT: ^bb0(%{{.*}}: tensor<?x4xf32>, %{{.*}}: tensor<1xf32>):
  // CHECK:        mir.yield %{{.*}} : tensor<1xi1>
  // CHECK-NEXT: } do {
  // CHECK:        mir.yield %{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<1xf32>
  // CHECK-NEXT: }
  // GENERIC: "mir.while"(%v, %i) <{max_iterations = 10 : i64}> ({
  // GENERIC: }) : (tensor<?x4xf32>, tensor<1xf32>) -> (tensor<?x4xf32>, tensor<1xf32>)
  %r, %n = mir.while (%v, %i) max_iterations = 10 : (tensor<?x4xf32>, tensor<1xf32>) -> (tensor<?x4xf32>, tensor<1xf32>) cond {
  ^bb0(%x: tensor<?x4xf32>, %k: tensor<1xf32>):
    %limit = mir.constant dense<3.0> : tensor<1xf32>
    %more = mir.compare lt, %k, %limit : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    mir.yield %more : tensor<1xi1>
  } do {
  ^bb0(%x: tensor<?x4xf32>, %k: tensor<1xf32>):
    %two = mir.constant dense<2.0> : tensor<1xf32>
    %one = mir.constant dense<1.0> : tensor<1xf32>
    %x2 = mir.mul %x, %two : (tensor<?x4xf32>, tensor<1xf32>) -> tensor<?x4xf32>
    %k1 = mir.add %k, %one : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    mir.yield %x2, %k1 : tensor<?x4xf32>, tensor<1xf32>
  }
  func.return %r : tensor<?x4xf32>
}

// -----

// Without max_iterations the loop is unbounded; regions nest.
// CHECK-LABEL: func.func @nested
func.func @nested(%p: tensor<1x1xi1>, %v: tensor<3xf64>) -> tensor<3xf64> {
  // CHECK-NEXT: %r = mir.while (%v) : (tensor<3xf64>) -> tensor<3xf64> cond {
  // CHECK:        mir.yield %{{.*}} : tensor<i1>
  // CHECK-NEXT: } do {
  // CHECK:        %{{.*}} = mir.if %{{.*}} (%{{.*}}) : (tensor<i1>, tensor<3xf64>) -> tensor<3xf64> {
  // GENERIC: "mir.while"(%v) ({
  // GENERIC-NOT: max_iterations
  // GENERIC: "mir.if"
  %r = mir.while (%v) : (tensor<3xf64>) -> tensor<3xf64> cond {
  ^bb0(%x: tensor<3xf64>):
    %t = mir.constant dense<false> : tensor<i1>
    mir.yield %t : tensor<i1>
  } do {
  ^bb0(%x: tensor<3xf64>):
    %t = mir.constant dense<true> : tensor<i1>
    %y = mir.if %t (%x) : (tensor<i1>, tensor<3xf64>) -> tensor<3xf64> {
    ^bb0(%u: tensor<3xf64>):
      %w = mir.neg %u : (tensor<3xf64>) -> tensor<3xf64>
      mir.yield %w : tensor<3xf64>
    } else {
    ^bb0(%u: tensor<3xf64>):
      mir.yield %u : tensor<3xf64>
    }
    mir.yield %y : tensor<3xf64>
  }
  func.return %r : tensor<3xf64>
}
