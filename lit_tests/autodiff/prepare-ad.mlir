// rlx-prepare-ad rewrites what rlx-grad has no rule for; the rest is kept.
// RUN: rlx-opt %s --split-input-file -p 'rlx-prepare-ad' | filecheck %s

// A multi-axis reduce becomes single-axis keep_dim reduces and a reshape, in
// place: its user still follows it (RLX appends the chain at the end).
func.func @f(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %r = mir.reduce max %x axes = [2, 0] : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %s = mir.add %r, %r : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %s : tensor<3xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    [[A:%.*]] = mir.reduce max %x axes = [0] keep_dim : (tensor<2x3x4xf32>) -> tensor<1x3x4xf32>
// CHECK-NEXT:    [[B:%.*]] = mir.reduce max [[A]] axes = [2] keep_dim : (tensor<1x3x4xf32>) -> tensor<1x3x1xf32>
// CHECK-NEXT:    %r = mir.reshape [[B]] new_shape = [3] : (tensor<1x3x1xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %s = mir.add %r, %r

// -----

// An integer mean stays whole (a mean of truncated means is not the mean);
// single-axis reduces are left as they are.
func.func @f(%x: tensor<2x3xi32>, %y: tensor<2x3xf32>) -> (tensor<i32>, tensor<3xf32>) {
  %m = mir.reduce mean %x axes = [0, 1] : (tensor<2x3xi32>) -> tensor<i32>
  %s = mir.reduce sum %y axes = [0] : (tensor<2x3xf32>) -> tensor<3xf32>
  func.return %m, %s : tensor<i32>, tensor<3xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %m = mir.reduce mean %x axes = [0, 1] : (tensor<2x3xi32>) -> tensor<i32>
// CHECK-NEXT:    %s = mir.reduce sum %y axes = [0] : (tensor<2x3xf32>) -> tensor<3xf32>

// -----

// Backward kernels (no VJP rules of their own) become primitives, so that a
// gradient of a gradient can be taken.
func.func @f(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf32> {
  %g = mir.activation_backward tanh %x, %dy : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NOT:     mir.activation_backward
// CHECK:         mir.tanh %x
// CHECK:         func.return

// -----

// Composite ops without a rule are expanded by their rlx-unfuse rule: a
// selective scan unrolled in time.
func.func @f(%x: tensor<1x2x3xf32>, %d: tensor<1x2x3xf32>, %a: tensor<3x4xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NOT:     mir.selective_scan
// CHECK-COUNT-2: mir.exp
// CHECK:         %y = mir.concat
// CHECK-NEXT:    func.return %y

// -----

// Ops with rules are left alone, whatever their group (dot_general, attention).
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = mir.dot_general %a, %b lhs_contracting = [1] rhs_contracting = [0] lhs_batch = [] rhs_batch = [] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %0 = mir.dot_general %a, %b
// CHECK-NEXT:    func.return %0

// -----

// inline-if (rlx-lower-control-flow's pattern): both branches inlined, the result
// selected by where, which rlx-grad differentiates.
func.func @f(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %n = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %n : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    %e = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %e : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %n = mir.neg %a
// CHECK-NEXT:    %e = mir.exp %a
// CHECK-NEXT:    [[P:%.*]] = mir.reshape %p new_shape = []
// CHECK-NEXT:    %r = mir.where [[P]], %n, %e
// CHECK-NEXT:    func.return %r

// -----

// unroll-while: a bounded loop becomes max_iterations copies of cond and body, each
// carried value frozen by where once a condition fails.
func.func @f(%x: tensor<1xf32>) -> tensor<1xf32> {
  %r = mir.while (%x) max_iterations = 2 : (tensor<1xf32>) -> tensor<1xf32> cond {
  ^bb0(%a: tensor<1xf32>):
    %ten = mir.constant dense<10.0> : tensor<1xf32>
    %t = mir.compare lt, %a, %ten : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    mir.yield %t : tensor<1xi1>
  } do {
  ^bb0(%a: tensor<1xf32>):
    %s = mir.sin %a : (tensor<1xf32>) -> tensor<1xf32>
    mir.yield %s : tensor<1xf32>
  }
  func.return %r : tensor<1xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NOT:     mir.while
// CHECK:         %s = mir.sin %x
// CHECK-NEXT:    [[H1:%.*]] = mir.where {{.*}}, %s, %x
// CHECK:         %s_1 = mir.sin [[H1]]
// CHECK-NEXT:    %r = mir.where {{.*}}, %s_1, [[H1]]
// CHECK-NEXT:    func.return %r

// -----

// Fused ops and fused regions are differentiated through their rlx-unfuse expansion.
func.func @f(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>, %g: tensor<4xf32>, %be: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = mir.fused_residual_layer_norm %x, %r, %g, %be axis = -1 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = mir.elementwise_region (%0, %g) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<4xf32>):
    %m = mir.mul %a, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %t = mir.tanh %m : (tensor<2x4xf32>) -> tensor<2x4xf32>
    mir.yield %t : tensor<2x4xf32>
  }
  func.return %1 : tensor<2x4xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    [[S:%.*]] = mir.add %x, %r
// CHECK-NEXT:    [[N:%.*]] = mir.layer_norm [[S]], %g, %be axis = -1
// CHECK-NEXT:    %m = mir.mul [[N]], %g
// CHECK-NEXT:    %t = mir.tanh %m
// CHECK-NEXT:    func.return %t
