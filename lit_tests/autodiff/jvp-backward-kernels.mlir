// JVP rules of backward kernels: linear in dy, so dy's tangent goes through the kernel itself;
// relu_backward's mask is piecewise constant in x (no term for t_x), conv_backward_weight is
// bilinear (one kernel per tangent), activation_backward's x term goes through its decomposition.
// RUN: rlx-opt %s -p 'rlx-jvp{func=relu wrt=x,dy}' | filecheck %s --check-prefix=RELU
// RUN: rlx-opt %s -p 'rlx-jvp{func=conv wrt=x,dy}' | filecheck %s --check-prefix=CONV
// RUN: rlx-opt %s -p 'rlx-jvp{func=act wrt=x}' | filecheck %s --check-prefix=ACT

func.func @relu(%x: tensor<2x3xf32> {rlx.name = "x"}, %dy: tensor<2x3xf32> {rlx.name = "dy"}) -> tensor<2x3xf32> {
  %g = mir.relu_backward %x, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}

// RELU-LABEL: func.func @relu_jvp(
// RELU:         %g = mir.relu_backward %x, %dy
// RELU-NEXT:    %[[T:.*]] = mir.relu_backward %x, %t_dy
// RELU-NEXT:    func.return %g, %[[T]]

func.func @conv(%x: tensor<1x2x4x4xf32> {rlx.name = "x"}, %dy: tensor<1x3x2x2xf32> {rlx.name = "dy"}) -> tensor<3x2x3x3xf32> {
  %g = mir.conv_backward_weight %x, %dy kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x4x4xf32>, tensor<1x3x2x2xf32>) -> tensor<3x2x3x3xf32>
  func.return %g : tensor<3x2x3x3xf32>
}

// CONV-LABEL: func.func @conv_jvp(
// CONV:         %g = mir.conv_backward_weight %x, %dy
// CONV-NEXT:    %[[TX:.*]] = mir.conv_backward_weight %t_x, %dy
// CONV-NEXT:    %[[TD:.*]] = mir.conv_backward_weight %x, %t_dy
// CONV-NEXT:    %[[T:.*]] = mir.add %[[TX]], %[[TD]]
// CONV-NEXT:    func.return %g, %[[T]]

func.func @act(%x: tensor<2x3xf32> {rlx.name = "x"}, %dy: tensor<2x3xf32> {rlx.name = "dy"}) -> tensor<2x3xf32> {
  %g = mir.activation_backward sigmoid %x, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %g : tensor<2x3xf32>
}

// The decomposition `dy * s (1 - s)`, s = sigmoid(x), pushed forward along t_x only.
// ACT-LABEL: func.func @act_jvp(
// ACT:         %g = mir.activation_backward sigmoid %x, %dy
// ACT-NEXT:    %[[S:.*]] = mir.sigmoid %x
// ACT-NEXT:    %[[TS:.*]] = mir.activation_backward sigmoid %x, %t_x
// ACT:         %[[T:[0-9]+]] = mir.mul %dy, %{{[0-9]+}}
// ACT-NEXT:    func.return %g, %[[T]]
