// rlx-grad adds @NAME_grad: the forward recomputed, then the backward sweep.
// RUN: rlx-opt %s --split-input-file -p 'rlx-grad{func=loss}' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'rlx-grad{func=loss wrt=x,1 mode=training}' | filecheck %s --check-prefix=WRT
// RUN: rlx-opt %s --split-input-file -p 'rlx-grad{func=loss loss=drop}' | filecheck %s --check-prefix=DROP

// The forward is kept; the gradient function takes d_output last and returns
// [loss, aux, d_w, d_b]; x (not a param) gets no gradient by default. x * x
// sends two contributions to the same value, which are summed.
func.func @loss(%x: tensor<3x4xf32> {rlx.name = "x"}, %w: tensor<4x2xf32> {rlx.name = "w", rlx.param}, %b: tensor<2xf32> {rlx.name = "b", rlx.param}) -> (tensor<f32>, tensor<3x2xf32>) {
  %h = mir.matmul %x, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %z = mir.add %h, %b : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %sq = mir.mul %z, %z : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %l = mir.reduce sum %sq axes = [0, 1] : (tensor<3x2xf32>) -> tensor<f32>
  func.return %l, %z : tensor<f32>, tensor<3x2xf32>
}

// CHECK-LABEL: func.func @loss(
// CHECK:         func.return %l, %z : tensor<f32>, tensor<3x2xf32>
// CHECK-LABEL: func.func @loss_grad(%x: tensor<3x4xf32> {rlx.name = "x"}, %w: tensor<4x2xf32> {rlx.name = "w", rlx.param}, %b: tensor<2xf32> {rlx.name = "b", rlx.param}, %d_output: tensor<f32> {rlx.name = "d_output"}) -> (tensor<f32> {rlx.name = "loss"}, tensor<3x2xf32>, tensor<4x2xf32> {rlx.name = "d_w"}, tensor<2xf32> {rlx.name = "d_b"}) {
// CHECK-NEXT:    %h = mir.matmul %x, %w
// CHECK-NEXT:    %z = mir.add %h, %b
// CHECK-NEXT:    %sq = mir.mul %z, %z
// CHECK-NEXT:    %l = mir.reduce sum %sq axes = [0, 1]
// CHECK-NEXT:    [[KEPT:%.*]] = mir.reshape %d_output new_shape = [1, 1] : (tensor<f32>) -> tensor<1x1xf32>
// CHECK-NEXT:    [[DSQ:%.*]] = mir.expand [[KEPT]] target_shape = [3, 2]
// CHECK-NEXT:    [[A:%.*]] = mir.mul [[DSQ]], %z
// CHECK-NEXT:    [[B:%.*]] = mir.mul [[DSQ]], %z
// CHECK-NEXT:    [[DZ:%.*]] = mir.add [[A]], [[B]]
// The weight's gradient contracts over the rows: one dot_general, no transpose.
// CHECK-NEXT:    %d_b = mir.reduce sum [[DZ]] axes = [0] : (tensor<3x2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %d_w = mir.dot_general %x, [[DZ]] lhs_contracting = [0] rhs_contracting = [0] lhs_batch = [] rhs_batch = [] : (tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    func.return %l, %z, %d_w, %d_b : tensor<f32>, tensor<3x2xf32>, tensor<4x2xf32>, tensor<2xf32>

// wrt by name and by position; in training mode every named argument gets a result.
// WRT-LABEL: func.func @loss_grad(
// WRT-SAME:    -> (tensor<f32> {rlx.name = "loss"}, tensor<3x2xf32>, tensor<3x4xf32> {rlx.name = "d_x"}, tensor<4x2xf32> {rlx.name = "d_w"})
// WRT:         %d_x = mir.dot_general
// WRT:         %d_w = mir.dot_general
// WRT:         func.return %l, %z, %d_x, %d_w

// loss=drop (RLX's grad()): the same gradients, no loss result; the ops that only
// computed the loss (z * z, its sum) are gone.
// DROP-LABEL: func.func @loss_grad(
// DROP-SAME:    %d_output: tensor<f32> {rlx.name = "d_output"}) -> (tensor<3x2xf32>, tensor<4x2xf32> {rlx.name = "d_w"}, tensor<2xf32> {rlx.name = "d_b"}) {
// DROP-NEXT:    %h = mir.matmul %x, %w
// DROP-NEXT:    %z = mir.add %h, %b
// DROP-NOT:     %sq
// DROP-NOT:     %l =
// DROP:         func.return %z, %d_w, %d_b : tensor<3x2xf32>, tensor<4x2xf32>, tensor<2xf32>

// -----

// stop_gradient blocks the gradient; in training mode the cut argument gets zeros
// of its type (strict mode reports it: grad-errors.mlir). The loss is not a
// scalar: d_output has its type.
func.func @loss(%x: tensor<3xf32> {rlx.name = "x", rlx.param}, %y: tensor<3xf32> {rlx.name = "y"}) -> tensor<3xf32> {
  %s = mir.stop_gradient %y : (tensor<3xf32>) -> tensor<3xf32>
  %p = mir.mul %x, %s : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %p : tensor<3xf32>
}

// CHECK-LABEL: func.func @loss_grad(
// CHECK:         %d_x = mir.mul %d_output, %s
// CHECK-NEXT:    func.return %p, %d_x : tensor<3xf32>, tensor<3xf32>

// WRT-LABEL: func.func @loss_grad(%x: tensor<3xf32> {rlx.name = "x", rlx.param}, %y: tensor<3xf32> {rlx.name = "y"}, %d_output: tensor<3xf32> {rlx.name = "d_output"}) -> (tensor<3xf32> {rlx.name = "loss"}, tensor<3xf32> {rlx.name = "d_x"}, tensor<3xf32> {rlx.name = "d_y"}) {
// WRT-NEXT:    %s = mir.stop_gradient %y
// WRT-NEXT:    %p = mir.mul %x, %s
// WRT-NEXT:    %d_x = mir.mul %d_output, %s
// WRT-NEXT:    %d_y = mir.constant dense<0.000000e+00> : tensor<3xf32>
// WRT-NEXT:    func.return %p, %d_x, %d_y

// DROP-LABEL: func.func @loss_grad(
// DROP-SAME:    -> (tensor<3xf32> {rlx.name = "d_x"}) {
// DROP:         func.return %d_x : tensor<3xf32>
