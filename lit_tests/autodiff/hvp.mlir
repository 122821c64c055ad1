// rlx-hvp: forward mode over the gradient function. For loss = sum((x w)^2) with respect to w,
// the gradient is 2 x^T (x w) and Hv = 2 x^T (x v): the tangent of the backward matmul.
// %x is not differentiated, so no tangent op mentions it except as a primal operand.
// RUN: rlx-opt %s -p 'rlx-hvp{func=f wrt=w}' | filecheck %s

func.func @f(%x: tensor<2x3xf32>, %w: tensor<3x3xf32> {rlx.name = "w"}) -> tensor<f32> {
  %m = mir.matmul %x, %w : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %s = mir.mul %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = mir.reduce sum %s axes = [0, 1] : (tensor<2x3xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// CHECK-LABEL: func.func @f_hvp(%x: tensor<2x3xf32>, %w: tensor<3x3xf32> {rlx.name = "w"}, %t_w: tensor<3x3xf32> {rlx.name = "tangent_w"})
// CHECK-SAME:    -> (tensor<f32>, tensor<3x3xf32>, tensor<3x3xf32>)
// CHECK:         %[[TM:.*]] = mir.matmul %x, %t_w
// CHECK:         %[[DW:.*]] = mir.dot_general %x, %{{.*}}
// CHECK:         %[[HV:.*]] = mir.dot_general %x, %{{.*}}
// CHECK:         func.return %l, %[[DW]], %[[HV]] : tensor<f32>, tensor<3x3xf32>, tensor<3x3xf32>
// CHECK-NOT:     func.func @f_grad
