// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-decompose-backward | filecheck %s
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p 'rlx-decompose-backward{keep=mir.relu_backward,mir.softmax_cross_entropy_backward}' | filecheck %s --check-prefix=KEEP
// RUN: not rlx-opt %s --split-input-file -p 'rlx-decompose-backward{keep=mir.relu}' 2>&1 | filecheck %s --check-prefix=BADKEEP
// RUN: not rlx-opt %s --split-input-file -p rlx-decompose-backward 2>&1 | filecheck %s --check-prefix=ERR

// relu_backward is a select; activation_backward multiplies dy by f'(x) built from x.
// CHECK-LABEL: func.func @activations
// CHECK-NEXT:    %0 = mir.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %1 = mir.compare gt, %x, %0 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %2 = mir.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %r = mir.where %1, %dy, %2 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %3 = mir.tanh %x
// CHECK-NEXT:    %4 = mir.mul %3, %3
// CHECK-NEXT:    %5 = mir.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %6 = mir.sub %5, %4
// CHECK-NEXT:    %t = mir.mul %dy, %6 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %s = mir.stop_gradient %t
// CHECK-NEXT:    func.return %r, %s
// KEEP-LABEL: func.func @activations
// KEEP:          %r = mir.relu_backward %x, %dy
// KEEP-NOT:      mir.activation_backward
// BADKEEP: error: rlx-decompose-backward: keep=mir.relu names no backward kernel with a decomposition; expected op names among: mir.activation_backward, mir.attention_backward,
func.func @activations(%x: tensor<2x3xf32>, %dy: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r = mir.relu_backward %x, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = mir.activation_backward tanh %x, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = mir.stop_gradient %t : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r, %s : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// The norm gradients recompute x_hat and rstd with kept-dim reductions.
// CHECK-LABEL: func.func @rms_norm
// CHECK-NEXT:    %0 = mir.mul %x, %x
// CHECK-NEXT:    %1 = mir.reduce mean %0 axes = [1] keep_dim : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %2 = mir.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:    %3 = mir.add %1, %2
// CHECK-NEXT:    %4 = mir.rsqrt %3
// CHECK-NEXT:    %5 = mir.mul %x, %4
// CHECK-NEXT:    %6 = mir.mul %dy, %g
// CHECK-NEXT:    %7 = mir.mul %6, %5
// CHECK-NEXT:    %8 = mir.reduce mean %7 axes = [1] keep_dim
// CHECK-NEXT:    %9 = mir.mul %5, %8
// CHECK-NEXT:    %10 = mir.sub %6, %9
// CHECK-NEXT:    %dx = mir.mul %4, %10 : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:         %db = mir.reduce sum %dy axes = [0] : (tensor<4x8xf32>) -> tensor<8xf32>
// KEEP-LABEL: func.func @rms_norm
// KEEP-NOT:      _backward
func.func @rms_norm(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %dy: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %dx = mir.rms_norm_backward_input %x, %g, %dy axis = -1 eps = 1.0e-06 : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %db = mir.rms_norm_backward_beta %dy axis = -1 : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return %dx, %db : tensor<4x8xf32>, tensor<8xf32>
}

// -----

// The conv weight gradient is a conv of x with dy as the kernel: stride and
// dilation swap roles, batch and channels swap places. The row and column the
// stride leaves over reach past the kernel and are dropped.
// CHECK-LABEL: func.func @conv_weight
// CHECK:         %3 = mir.transpose %dy perm = [1, 0, 2, 3] : (tensor<?x4x2x2xf32>) -> tensor<4x?x2x2xf32>
// CHECK-NEXT:    %4 = mir.conv %2, %3 kernel_size = [2, 2] stride = [1, 1] padding = [0, 0] dilation = [2, 2] groups = 1 : (tensor<3x?x5x5xf32>, tensor<4x?x2x2xf32>) -> tensor<3x4x3x3xf32>
// CHECK-NEXT:    %5 = mir.narrow %4 axis = 2 start = 0 len = 2
// CHECK-NEXT:    %6 = mir.narrow %5 axis = 3 start = 0 len = 2
// CHECK-NEXT:    %dw = mir.transpose %6 perm = [1, 0, 2, 3] : (tensor<3x4x2x2xf32>) -> tensor<4x3x2x2xf32>
func.func @conv_weight(%x: tensor<?x3x5x5xf32>, %dy: tensor<?x4x2x2xf32>) -> tensor<4x3x2x2xf32> {
  %dw = mir.conv_backward_weight %x, %dy kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<?x3x5x5xf32>, tensor<?x4x2x2xf32>) -> tensor<4x3x2x2xf32>
  func.return %dw : tensor<4x3x2x2xf32>
}

// -----

// Causal masks come from iota ramps of the query and key positions; they need static lengths.
// ERR: decompose-backward.mlir:[[# @LINE + 3]]:3: error: 'mir.attention_backward' cannot be decomposed: the query and key lengths of a causal mask [?, 4] must be static
func.func @dynamic_causal(%q: tensor<1x2x?x4xf32>, %k: tensor<1x2x4x4xf32>) -> tensor<1x2x?x4xf32> {
  // expected-error@+1 {{'mir.attention_backward' cannot be decomposed: the query and key lengths of a causal mask [?, 4] must be static}}
  %0 = mir.attention_backward query %q, %k, %k, %q num_heads = 2 head_dim = 4 mask_kind = causal : (tensor<1x2x?x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  func.return %0 : tensor<1x2x?x4xf32>
}
