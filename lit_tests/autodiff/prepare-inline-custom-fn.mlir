// inline-custom-fn (a step of rlx-prepare-ad): a mir.custom_fn without a vjp body is
// replaced by its forward body; one with a vjp body is kept for its rule.
// RUN: rlx-opt %s --split-input-file -p 'rlx-prepare-ad' | filecheck %s

func.func @f(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %y, %z = mir.custom_fn (%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %p = mir.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %s = mir.sin %p : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %s, %a : tensor<4xf32>, tensor<4xf32>
  }
  %r = mir.add %y, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %p = mir.mul %x, %w
// CHECK-NEXT:    %s = mir.sin %p
// CHECK-NEXT:    %r = mir.add %s, %x
// CHECK-NEXT:    func.return %r
// CHECK-NOT:     mir.custom_fn

// -----

// Only a jvp body: inlined too (RLX keeps it, and its VJP then panics).
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mir.custom_fn (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = mir.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %s : tensor<4xf32>
  } jvp {
  ^bb0(%a: tensor<4xf32>, %y0: tensor<4xf32>, %t: tensor<4xf32>):
    %d = mir.mul %a, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %d : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %s = mir.mul %x, %x
// CHECK-NEXT:    func.return %s

// -----

// A vjp body: the op stays (rlx-grad inlines the vjp body instead).
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mir.custom_fn (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = mir.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %s : tensor<4xf32>
  } vjp {
  ^bb0(%a: tensor<4xf32>, %y0: tensor<4xf32>, %dy: tensor<4xf32>):
    %d = mir.sin %dy : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %d : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %y = mir.custom_fn (%x)
