// RUN: rlx-opt %s --split-input-file -p rlx-unfuse | filecheck %s

// The selective scan unfolds into one block of primitives per step, joined by one concat.
// CHECK-LABEL: func.func @ssm
// CHECK-NOT:   mir.selective_scan
// CHECK:       %[[H0:.*]] = mir.constant dense<0.000000e+00> : tensor<1x2x4xf32>
// CHECK:       %[[X0:.*]] = mir.narrow %x axis = 1 start = 0 len = 1 : (tensor<1x2x2xf32>) -> tensor<1x1x2xf32>
// CHECK:       %[[DECAY:.*]] = mir.exp %{{.*}} : (tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
// CHECK:       %[[KEPT:.*]] = mir.mul %[[DECAY]], %[[H0]] : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
// CHECK:       %[[H1:.*]] = mir.add %[[KEPT]], %{{.*}} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
// CHECK:       mir.reduce sum %{{.*}} axes = [-1] : (tensor<1x2x4xf32>) -> tensor<1x2xf32>
// CHECK:       mir.narrow %x axis = 1 start = 1 len = 1
// CHECK:       mir.mul %{{.*}}, %[[H1]]
// CHECK:       %[[Y:.*]] = mir.concat %{{.*}}, %{{.*}} axis = 1 : (tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> tensor<1x2x2xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<1x2x2xf32>
func.func @ssm(%x: tensor<1x2x2xf32>, %d: tensor<1x2x2xf32>, %a: tensor<2x4xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x2xf32> {
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x2xf32>
  func.return %y : tensor<1x2x2xf32>
}

// -----

// The gated delta net starts from its state operand and returns the last state it computes.
// CHECK-LABEL: func.func @gdn_with_state
// CHECK-NOT:   mir.gated_delta_net
// CHECK:       %[[G:.*]] = mir.exp %{{.*}} : (tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
// CHECK-NEXT:  %[[M1:.*]] = mir.mul %s, %[[G]] : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK:       mir.matmul %{{.*}}, %[[M1]] : (tensor<1x2x1x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x1x3xf32>
// CHECK:       %[[OUTER:.*]] = mir.matmul %{{.*}}, %{{.*}} : (tensor<1x2x3x1xf32>, tensor<1x2x1x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:  %[[M2:.*]] = mir.add %[[M1]], %[[OUTER]]
// CHECK:       %[[O:.*]] = mir.concat %{{.*}} axis = 1 : (tensor<1x1x2x3xf32>) -> tensor<1x1x2x3xf32>
// CHECK-NEXT:  func.return %[[O]], %[[M2]] : tensor<1x1x2x3xf32>, tensor<1x2x3x3xf32>
func.func @gdn_with_state(%q: tensor<1x1x2x3xf32>, %g: tensor<1x1x2xf32>, %s: tensor<1x2x3x3xf32>) -> (tensor<1x1x2x3xf32>, tensor<1x2x3x3xf32>) {
  %o, %f = mir.gated_delta_net %q, %q, %q, %g, %g state %s state_size = 3 : (tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x2x3x3xf32>) -> (tensor<1x1x2x3xf32>, tensor<1x2x3x3xf32>)
  func.return %o, %f : tensor<1x1x2x3xf32>, tensor<1x2x3x3xf32>
}
