// rlx-jvp pushes the tangent of %x forward; %w and %b are not in wrt, so their tangents are
// symbolic zeros: no op is emitted for them (the add of %b passes the tangent through), and
// the second result, which does not depend on %x, returns a zeros constant.
// RUN: rlx-opt %s -p 'rlx-jvp{func=f wrt=x}' | filecheck %s

func.func @f(%x: tensor<2x3xf32> {rlx.name = "x"}, %w: tensor<3x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %m = mir.matmul %x, %w : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %a = mir.add %m, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %t = mir.tanh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = mir.exp %b : (tensor<3xf32>) -> tensor<3xf32>
  func.return %t, %e : tensor<2x3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @f_jvp(%x: tensor<2x3xf32> {rlx.name = "x"}, %w: tensor<3x3xf32>, %b: tensor<3xf32>, %t_x: tensor<2x3xf32> {rlx.name = "tangent_x"})
// CHECK-SAME:    -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>)
// CHECK-NEXT:    %m = mir.matmul %x, %w
// CHECK-NEXT:    %[[TM:.*]] = mir.matmul %t_x, %w
// CHECK-NEXT:    %a = mir.add %m, %b
// CHECK-NEXT:    %t = mir.tanh %a
// CHECK-NEXT:    %[[TT:.*]] = mir.activation_backward tanh %a, %[[TM]]
// CHECK-NEXT:    %e = mir.exp %b
// CHECK-NEXT:    %[[Z:.*]] = mir.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK-NEXT:    func.return %t, %e, %[[TT]], %[[Z]]
