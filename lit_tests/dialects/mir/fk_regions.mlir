// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s | filecheck %s

// CHECK: mir.elementwise_region (%a, %x) prologue = resize_nearest_2x on 1
// CHECK: mir.transform_region %x steps = ["resize_nearest_2x", "resize_nearest_2x"]
// CHECK: mir.batch_elementwise_region (%s0, %s1) shared(%m)
// CHECK: mir.batch_elementwise_region (%h0, %h1) shared(%m) prologue = resize_nearest_2x on 0 : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<2x2x4x4xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<1x2x4x4xf32>, %{{.*}}: tensor<1x2x1x1xf32>):
func.func @f(%x: tensor<1x2x2x2xf32>, %a: tensor<1x2x4x4xf32>, %b: tensor<4x2x3x3xf32>, %m: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) {
  %r = mir.elementwise_region (%a, %x) prologue = resize_nearest_2x on 1 : (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%p: tensor<1x2x4x4xf32>, %q: tensor<1x2x4x4xf32>):
    %s = mir.add %p, %q : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    mir.yield %s : tensor<1x2x4x4xf32>
  }
  %t = mir.transform_region %x steps = ["resize_nearest_2x", "resize_nearest_2x"] : (tensor<1x2x2x2xf32>) -> tensor<1x2x8x8xf32>
  %s0 = mir.narrow %b axis = 0 start = 0 len = 2 : (tensor<4x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %s1 = mir.narrow %b axis = 0 start = 2 len = 2 : (tensor<4x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %c = mir.batch_elementwise_region (%s0, %s1) shared (%m) : (tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<4x2x3x3xf32> {
  ^bb0(%v: tensor<2x2x3x3xf32>, %w: tensor<1x2x1x1xf32>):
    %d = mir.sub %v, %w : (tensor<2x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<2x2x3x3xf32>
    %e = mir.relu %d : (tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
    mir.yield %e : tensor<2x2x3x3xf32>
  }
  func.return %r, %t, %c : tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>
}

// A batch region with a prologue on its slices: each [1, 2, 2, 2] slice read as [1, 2, 4, 4].
func.func @g(%x: tensor<1x2x2x2xf32>, %y: tensor<1x2x2x2xf32>, %m: tensor<1x2x1x1xf32>) -> tensor<2x2x4x4xf32> {
  %h0 = mir.relu %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %h1 = mir.relu %y : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = mir.batch_elementwise_region (%h0, %h1) shared (%m) prologue = resize_nearest_2x on 0 : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<2x2x4x4xf32> {
  ^bb0(%v: tensor<1x2x4x4xf32>, %w: tensor<1x2x1x1xf32>):
    %d = mir.sub %v, %w : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    mir.yield %d : tensor<1x2x4x4xf32>
  }
  func.return %c : tensor<2x2x4x4xf32>
}

// Slices whose types differ only where one is `?`: the body reads the static size.
// CHECK-LABEL: func.func @mixed
// CHECK: mir.batch_elementwise_region (%a, %b) shared() : (tensor<1x?xf32>, tensor<1x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<1x3xf32>):
func.func @mixed(%a: tensor<1x?xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %c = mir.batch_elementwise_region (%a, %b) shared () : (tensor<1x?xf32>, tensor<1x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%v: tensor<1x3xf32>):
    %d = mir.neg %v : (tensor<1x3xf32>) -> tensor<1x3xf32>
    mir.yield %d : tensor<1x3xf32>
  }
  func.return %c : tensor<2x3xf32>
}
