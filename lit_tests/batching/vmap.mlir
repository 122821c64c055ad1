// rlx-vmap adds @NAME_vmap: the batch axis in front of the batched arguments, parameters shared.
// RUN: rlx-opt %s --split-input-file -p 'rlx-vmap{func=f batched=x size=8}' | filecheck %s

// Elementwise ops and matmul broadcast: the shared weight and bias are never broadcast
// up front; softmax's axis moves past the batch axis; the loss's reduce keeps the batch.
func.func @f(%x: tensor<3x4xf32>, %w: tensor<4x2xf32> {rlx.param}, %b: tensor<2xf32> {rlx.param}) -> (tensor<3x2xf32>, tensor<f32>) {
  %h = mir.matmul %x, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  %z = mir.add %h, %b : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %s = mir.softmax %z axis = 1 : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %l = mir.reduce sum %s axes = [0, 1] : (tensor<3x2xf32>) -> tensor<f32>
  func.return %s, %l : tensor<3x2xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @f(
// CHECK-LABEL: func.func @f_vmap(%x: tensor<8x3x4xf32>, %w: tensor<4x2xf32> {rlx.param}, %b: tensor<2xf32> {rlx.param}) -> (tensor<8x3x2xf32>, tensor<8xf32>) {
// CHECK-NEXT:    %h = mir.matmul %x, %w : (tensor<8x3x4xf32>, tensor<4x2xf32>) -> tensor<8x3x2xf32>
// CHECK-NEXT:    %z = mir.add %h, %b : (tensor<8x3x2xf32>, tensor<2xf32>) -> tensor<8x3x2xf32>
// CHECK-NEXT:    %s = mir.softmax %z axis = 2 : (tensor<8x3x2xf32>) -> tensor<8x3x2xf32>
// CHECK-NEXT:    %l = mir.reduce sum %s axes = [1, 2] : (tensor<8x3x2xf32>) -> tensor<8xf32>
// CHECK-NEXT:    func.return %s, %l : tensor<8x3x2xf32>, tensor<8xf32>

// -----

// A lower-rank batched operand is padded to line up with a higher-rank shared one; a
// result that does not depend on the batch is broadcast at the end.
func.func @f(%x: tensor<3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = mir.mul %x, %y : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = mir.exp %y : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a, %e : tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @f_vmap(%x: tensor<8x3xf32>, %y: tensor<2x3xf32>)
// CHECK-NEXT:    [[X:%.*]] = mir.reshape %x new_shape = [8, 1, 3] : (tensor<8x3xf32>) -> tensor<8x1x3xf32>
// CHECK-NEXT:    %a = mir.mul [[X]], %y : (tensor<8x1x3xf32>, tensor<2x3xf32>) -> tensor<8x2x3xf32>
// CHECK-NEXT:    %e = mir.exp %y : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    [[E:%.*]] = mir.expand %e target_shape = [8, -1, -1] : (tensor<2x3xf32>) -> tensor<8x2x3xf32>
// CHECK-NEXT:    func.return %a, [[E]]

// -----

// Convolution folds the batch into its own N and splits it out again.
func.func @f(%x: tensor<2x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %y = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<2x3x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x3x3xf32>
  func.return %y : tensor<2x4x3x3xf32>
}

// CHECK-LABEL: func.func @f_vmap(%x: tensor<8x2x3x5x5xf32>, %w: tensor<4x3x3x3xf32>)
// CHECK-NEXT:    [[F:%.*]] = mir.reshape %x new_shape = [16, 3, 5, 5]
// CHECK-NEXT:    [[C:%.*]] = mir.conv [[F]], %w {{.*}} : (tensor<16x3x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<16x4x3x3xf32>
// CHECK-NEXT:    %y = mir.reshape [[C]] new_shape = [8, 2, 4, 3, 3]
// CHECK-NEXT:    func.return %y : tensor<8x2x4x3x3xf32>

// -----

// Batched gather indices put the batch at the gather axis: moved in front.
func.func @f(%x: tensor<3xi64>, %t: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %g = mir.gather %t, %x axis = 1 : (tensor<4x5xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  func.return %g : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @f_vmap(%x: tensor<8x3xi64>, %t: tensor<4x5xf32>)
// CHECK-NEXT:    [[G:%.*]] = mir.gather %t, %x axis = 1 : (tensor<4x5xf32>, tensor<8x3xi64>) -> tensor<4x8x3xf32>
// CHECK-NEXT:    %g = mir.transpose [[G]] perm = [1, 0, 2]
// CHECK-NEXT:    func.return %g : tensor<8x4x3xf32>

// -----

// A batched predicate picks a branch per example: both branches run on the batch and
// mir.where keeps each example's own result.
func.func @f(%x: tensor<i1>, %v: tensor<3xf32>) -> tensor<3xf32> {
  %r = mir.if %x (%v) : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>):
    %n = mir.neg %a : (tensor<3xf32>) -> tensor<3xf32>
    mir.yield %n : tensor<3xf32>
  } else {
  ^bb0(%a: tensor<3xf32>):
    mir.yield %a : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}

// CHECK-LABEL: func.func @f_vmap(%x: tensor<8xi1>, %v: tensor<3xf32>)
// CHECK-NEXT:    %n = mir.neg %v : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    [[ZERO:%.*]] = mir.constant dense<false> : tensor<i1>
// CHECK-NEXT:    [[HOLDS:%.*]] = mir.compare ne, %x, [[ZERO]]
// CHECK-NEXT:    [[P:%.*]] = mir.reshape [[HOLDS]] new_shape = [8, 1] : (tensor<8xi1>) -> tensor<8x1xi1>
// CHECK-NEXT:    [[T:%.*]] = mir.expand %n target_shape = [8, -1]
// CHECK-NEXT:    %r = mir.where [[P]], [[T]], %v : (tensor<8x1xi1>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    func.return %r : tensor<8x3xf32>

// -----

// A shared predicate keeps the mir.if, on batched branches.
func.func @f(%x: tensor<3xf32>, %p: tensor<i1>) -> tensor<3xf32> {
  %r = mir.if %p (%x) : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>):
    %n = mir.neg %a : (tensor<3xf32>) -> tensor<3xf32>
    mir.yield %n : tensor<3xf32>
  } else {
  ^bb0(%a: tensor<3xf32>):
    mir.yield %a : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}

// CHECK-LABEL: func.func @f_vmap(%x: tensor<8x3xf32>, %p: tensor<i1>)
// CHECK-NEXT:    %r = mir.if %p (%x) : (tensor<i1>, tensor<8x3xf32>) -> tensor<8x3xf32> {
// CHECK-NEXT:    ^{{.*}}(%a: tensor<8x3xf32>):
// CHECK-NEXT:      %n = mir.neg %a : (tensor<8x3xf32>) -> tensor<8x3xf32>
