// RLX's autodiff unit tests (rlx-autodiff/src/autodiff.rs), ported: the node-count
// assertions become CHECKs on the gradient function. The numbers are checked by
// tests/autodiff/test_seed.py.
// RUN: rlx-opt %s --split-input-file -p 'rlx-grad{func=f wrt=x,y}' | filecheck %s

// grad_of_add_is_identity and grad_with_loss_returns_loss_first: [loss, dx, dy],
// and both gradients are the seed itself.
func.func @f(%x: tensor<4xf32> {rlx.name = "x"}, %y: tensor<4xf32> {rlx.name = "y"}) -> tensor<4xf32> {
  %z = mir.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
// CHECK-LABEL: func.func @f_grad(
// CHECK-SAME:    %d_output: tensor<4xf32> {rlx.name = "d_output"}) -> (tensor<4xf32> {rlx.name = "loss"}, tensor<4xf32> {rlx.name = "d_x"}, tensor<4xf32> {rlx.name = "d_y"})
// CHECK-NEXT:    %z = mir.add %x, %y
// CHECK-NEXT:    func.return %z, %d_output, %d_output

// -----

// grad_of_mul_uses_other_operand: two muls, each by the other operand.
func.func @f(%x: tensor<4xf32> {rlx.name = "x"}, %y: tensor<4xf32> {rlx.name = "y"}) -> tensor<4xf32> {
  %z = mir.mul %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
// CHECK-LABEL: func.func @f_grad(
// CHECK-NEXT:    %z = mir.mul %x, %y
// CHECK-NEXT:    %d_x = mir.mul %d_output, %y
// CHECK-NEXT:    %d_y = mir.mul %d_output, %x
// CHECK-NEXT:    func.return %z, %d_x, %d_y

// -----

// grad_of_dense_solve_emits_implicit_function_rule: a second dense_solve with A^T,
// a matmul for the outer product and a neg for its sign.
func.func @f(%x: tensor<2x2xf32> {rlx.name = "x"}, %y: tensor<2xf32> {rlx.name = "y"}) -> tensor<f32> {
  %s = mir.dense_solve %x, %y : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %l = mir.reduce sum %s axes = [0] : (tensor<2xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
// CHECK-LABEL: func.func @f_grad(
// CHECK-NEXT:    %s = mir.dense_solve %x, %y
// CHECK-NEXT:    %l = mir.reduce sum %s axes = [0]
// CHECK-NEXT:    [[G:%.*]] = mir.reshape %d_output new_shape = [1]
// CHECK-NEXT:    [[DS:%.*]] = mir.expand [[G]] target_shape = [2]
// CHECK-NEXT:    [[XT:%.*]] = mir.transpose %x perm = [1, 0]
// CHECK-NEXT:    %d_y = mir.dense_solve [[XT]], [[DS]] : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    [[COL:%.*]] = mir.reshape %d_y new_shape = [-1, 1]
// CHECK-NEXT:    [[ROW:%.*]] = mir.reshape %s new_shape = [1, -1]
// CHECK-NEXT:    [[OUTER:%.*]] = mir.matmul [[COL]], [[ROW]] : (tensor<2x1xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    %d_x = mir.neg [[OUTER]]
// CHECK-NEXT:    func.return %l, %d_x, %d_y
