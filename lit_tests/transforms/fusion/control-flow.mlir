// RUN: rlx-opt %s --split-input-file -p rlx-lower-control-flow | filecheck %s
// RUN: rlx-opt %s --split-input-file -p rlx-lower-control-flow --print-debuginfo | filecheck %s --check-prefix=LOC

// RLX lower_control_flow_pass_handles_both_if_and_while (if part): both branches are inlined and every
// result is selected with where (RLX keeps only the first). The inlined ops keep their locations.
// CHECK-LABEL: func.func @if_two_results
// CHECK-NEXT:    %n = mir.neg %a
// CHECK-NEXT:    %e = mir.exp %b
// CHECK-NEXT:    %m = mir.abs %a
// CHECK-NEXT:    %0 = mir.reshape %p new_shape = [] : (tensor<1xi1>) -> tensor<i1>
// CHECK-NEXT:    %r = mir.where %0, %n, %m : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %r_1 = mir.where %0, %e, %b : (tensor<i1>, tensor<2x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CHECK-NEXT:    func.return %r, %r_1
// LOC: mir.neg {{.*}} loc("{{.*}}control-flow.mlir":[[# @LINE + 4]]:5)
func.func @if_two_results(%p: tensor<1xi1>, %a: tensor<4xf32>, %b: tensor<2x3xbf16>) -> (tensor<4xf32>, tensor<2x3xbf16>) {
  %r:2 = mir.if %p (%a, %b) : (tensor<1xi1>, tensor<4xf32>, tensor<2x3xbf16>) -> (tensor<4xf32>, tensor<2x3xbf16>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<2x3xbf16>):
    %n = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    %e = mir.exp %y : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
    mir.yield %n, %e : tensor<4xf32>, tensor<2x3xbf16>
  } else {
  ^bb0(%x: tensor<4xf32>, %y: tensor<2x3xbf16>):
    %m = mir.abs %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %m, %y : tensor<4xf32>, tensor<2x3xbf16>
  }
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<2x3xbf16>
}

// -----

// A numeric predicate is true when nonzero.
// CHECK-LABEL: func.func @if_numeric_predicate
// CHECK-NEXT:    %n = mir.neg %a
// CHECK-NEXT:    %[[ZERO:.*]] = mir.constant dense<0> : tensor<i32>
// CHECK-NEXT:    %[[NE:.*]] = mir.compare ne, %p, %[[ZERO]] : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK-NEXT:    %r = mir.where %[[NE]], %a, %n
func.func @if_numeric_predicate(%p: tensor<i32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %r = mir.if %p (%a) : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    %n = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %n : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// RLX unroll_while_multi_carry_cond_freezes_updates: two carried values, both kept (RLX keeps
// carried[0] only). Each of the 2 iterations inlines cond and body; `active` (the conjunction of the
// conditions so far) freezes every carried value once a condition fails.
// CHECK-LABEL: func.func @while_two_carried
// CHECK-NEXT:    %ten = mir.constant dense<1.000000e+01>
// CHECK-NEXT:    %c = mir.compare lt, %i, %ten
// CHECK-NEXT:    %[[A0:.*]] = mir.reshape %c new_shape = []
// CHECK-NEXT:    %one = mir.constant dense<1.000000e+00>
// CHECK-NEXT:    %n = mir.add %i, %one
// CHECK-NEXT:    %sq = mir.mul %s, %s
// CHECK-NEXT:    %[[W1:.*]] = mir.where %[[A0]], %n, %i
// CHECK-NEXT:    %[[W2:.*]] = mir.where %[[A0]], %sq, %s
// CHECK-NEXT:    %ten_1 = mir.constant dense<1.000000e+01>
// CHECK-NEXT:    %c_1 = mir.compare lt, %[[W1]], %ten_1
// CHECK-NEXT:    %[[H1:.*]] = mir.reshape %c_1 new_shape = []
// CHECK-NEXT:    %[[A1:.*]] = mir.where %[[A0]], %[[H1]], %[[A0]] : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1>
// CHECK:         %r = mir.where %[[A1]], %n_1, %[[W1]]
// CHECK-NEXT:    %r_1 = mir.where %[[A1]], %sq_1, %[[W2]]
// CHECK-NEXT:    func.return %r, %r_1
func.func @while_two_carried(%i: tensor<1xf32>, %s: tensor<3xf32>) -> (tensor<1xf32>, tensor<3xf32>) {
  %r:2 = mir.while (%i, %s) max_iterations = 2 : (tensor<1xf32>, tensor<3xf32>) -> (tensor<1xf32>, tensor<3xf32>) cond {
  ^bb0(%a: tensor<1xf32>, %b: tensor<3xf32>):
    %ten = mir.constant dense<10.0> : tensor<1xf32>
    %c = mir.compare lt, %a, %ten : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    mir.yield %c : tensor<1xi1>
  } do {
  ^bb0(%a: tensor<1xf32>, %b: tensor<3xf32>):
    %one = mir.constant dense<1.0> : tensor<1xf32>
    %n = mir.add %a, %one : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    %sq = mir.mul %b, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    mir.yield %n, %sq : tensor<1xf32>, tensor<3xf32>
  }
  func.return %r#0, %r#1 : tensor<1xf32>, tensor<3xf32>
}

// -----

// Nested control flow: an if inside a while body is lowered too.
// CHECK-LABEL: func.func @nested
// CHECK-NOT:     mir.if
// CHECK-NOT:     mir.while
// CHECK:         func.return
func.func @nested(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = mir.while (%x) max_iterations = 3 : (tensor<2xf32>) -> tensor<2xf32> cond {
  ^bb0(%a: tensor<2xf32>):
    %t = mir.constant dense<true> : tensor<i1>
    mir.yield %t : tensor<i1>
  } do {
  ^bb0(%a: tensor<2xf32>):
    %z = mir.constant dense<0.0> : tensor<f32>
    %s = mir.reduce sum %a axes = [0] : (tensor<2xf32>) -> tensor<f32>
    %p = mir.compare gt, %s, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %y = mir.if %p (%a) : (tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
    ^bb0(%u: tensor<2xf32>):
      %n = mir.neg %u : (tensor<2xf32>) -> tensor<2xf32>
      mir.yield %n : tensor<2xf32>
    } else {
    ^bb0(%u: tensor<2xf32>):
      mir.yield %u : tensor<2xf32>
    }
    mir.yield %y : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}
