// rlx-vmap's errors point at the function (bad options) or at the op that cannot be batched.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p 'rlx-vmap{func=f batched=x size=4}'
// RUN: not rlx-opt %s --split-input-file -p 'rlx-vmap{func=f batched=x size=4}' 2>&1 | filecheck %s
// CHECK-NOT: Traceback

// expected-error@+1 {{'rlx-vmap' @f has no argument 'x' (its arguments: y, arg1; positions 0..1)}}
func.func @f(%a: tensor<3xf32> {rlx.name = "y"}, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = mir.exp %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// Folding the batch into N needs the other dims of the image static.
func.func @f(%x: tensor<?x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32> {
  // expected-error@+1 {{'rlx-vmap' cannot batch 'mir.conv': folding the batch into a dynamic leading dim needs the other dims static}}
  %y = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32>
  func.return %y : tensor<?x4x?x?xf32>
}
