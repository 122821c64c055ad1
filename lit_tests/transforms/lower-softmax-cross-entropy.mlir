// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-lower-softmax-cross-entropy | filecheck %s
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-lower-softmax-cross-entropy,rlx-dce | filecheck %s --check-prefix=DCE
// RUN: not rlx-opt %s --split-input-file -p rlx-lower-softmax-cross-entropy 2>&1 | filecheck %s --check-prefix=ERR

// The indexed loss: float labels become i64 class ids (truncated toward zero; a NaN
// label, which the cast would make 0, becomes -1 and selects no class), one comparison
// with an iota ramp gives the one-hot rows, and the loss is
// log(sum exp(x - m)) - sum_{t != 0} t (x - m) + m (1 - sum t). The weighted sum keeps
// only the selected classes with a `where`: `0 * (x - m)` would be NaN for a -inf logit.
// CHECK-LABEL: func.func @indexed
// CHECK-NEXT:    %0 = mir.compare eq, %labels, %labels : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT:    %1 = mir.cast %labels : (tensor<4xf32>) -> tensor<4xi64>
// CHECK-NEXT:    %2 = mir.constant dense<-1> : tensor<i64>
// CHECK-NEXT:    %3 = mir.where %0, %1, %2
// CHECK-NEXT:    %4 = mir.reshape %3 new_shape = [-1, 1] : (tensor<4xi64>) -> tensor<4x1xi64>
// CHECK-NEXT:    %5 = mir.iota dimension = 1 : tensor<1x50000xi64>
// CHECK-NEXT:    %6 = mir.compare eq, %4, %5 : (tensor<4x1xi64>, tensor<1x50000xi64>) -> tensor<4x50000xi1>
// CHECK-NEXT:    %7 = mir.cast %6 : (tensor<4x50000xi1>) -> tensor<4x50000xf32>
// CHECK-NEXT:    %8 = mir.reduce max %logits axes = [1] keep_dim : (tensor<4x50000xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %9 = mir.sub %logits, %8
// CHECK-NEXT:    %10 = mir.exp %9
// CHECK-NEXT:    %11 = mir.reduce sum %10 axes = [1] keep_dim
// CHECK-NEXT:    %12 = mir.mul %7, %9
// CHECK-NEXT:    %13 = mir.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %14 = mir.where %6, %12, %13
// CHECK-NEXT:    %15 = mir.reduce sum %14 axes = [1] keep_dim
// CHECK-NEXT:    %16 = mir.reduce sum %7 axes = [1] keep_dim
// CHECK-NEXT:    %17 = mir.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %18 = mir.sub %17, %16
// CHECK-NEXT:    %19 = mir.mul %8, %18
// CHECK-NEXT:    %20 = mir.log %11
// CHECK-NEXT:    %21 = mir.sub %20, %15
// CHECK-NEXT:    %22 = mir.add %21, %19
// CHECK-NEXT:    %loss = mir.reshape %22 new_shape = [-1] : (tensor<4x1xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %loss : tensor<4xf32>
func.func @indexed(%logits: tensor<4x50000xf32>, %labels: tensor<4xf32>) -> tensor<4xf32> {
  %loss = mir.softmax_cross_entropy_with_logits %logits, %labels : (tensor<4x50000xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %loss : tensor<4xf32>
}

// -----

// Integer labels are compared as they are; the backward is
// (softmax(x) - one_hot) * d_loss[:, None].
// CHECK-LABEL: func.func @backward
// CHECK-NEXT:    %0 = mir.reshape %labels new_shape = [-1, 1] : (tensor<2xi32>) -> tensor<2x1xi32>
// CHECK-NEXT:    %1 = mir.iota dimension = 1 : tensor<1x3xi64>
// CHECK-NEXT:    %2 = mir.compare eq, %0, %1 : (tensor<2x1xi32>, tensor<1x3xi64>) -> tensor<2x3xi1>
// CHECK-NEXT:    %3 = mir.cast %2 : (tensor<2x3xi1>) -> tensor<2x3xf16>
// CHECK-NEXT:    %4 = mir.softmax %logits axis = 1 : (tensor<2x3xf16>) -> tensor<2x3xf16>
// CHECK-NEXT:    %5 = mir.sub %4, %3
// CHECK-NEXT:    %6 = mir.reshape %d new_shape = [-1, 1] : (tensor<2xf16>) -> tensor<2x1xf16>
// CHECK-NEXT:    %grad = mir.mul %5, %6 : (tensor<2x3xf16>, tensor<2x1xf16>) -> tensor<2x3xf16>
// CHECK-NEXT:    func.return %grad
func.func @backward(%logits: tensor<2x3xf16>, %labels: tensor<2xi32>, %d: tensor<2xf16>) -> tensor<2x3xf16> {
  %grad = mir.softmax_cross_entropy_backward %logits, %labels, %d : (tensor<2x3xf16>, tensor<2xi32>, tensor<2xf16>) -> tensor<2x3xf16>
  func.return %grad : tensor<2x3xf16>
}

// -----

// Dense targets need no ramp, so a dynamic class count is fine; the classes whose
// target is not 0 are the ones the weighted sum keeps. A `?` row count that the op's
// result knows statically is restored by the final reshape.
// CHECK-LABEL: func.func @dense
// CHECK-NOT:     mir.iota
// CHECK:         %[[ZERO:.*]] = mir.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[SELECTED:.*]] = mir.compare ne, %t, %[[ZERO]] : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi1>
// CHECK:         %[[PRODUCT:.*]] = mir.mul %t, %{{.*}} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK:         mir.where %[[SELECTED]], %[[PRODUCT]], %{{.*}}
// CHECK:         %{{.*}} = mir.reduce sum %t axes = [1] keep_dim : (tensor<?x?xf32>) -> tensor<?x1xf32>
// CHECK:         %loss = mir.reshape %{{.*}} new_shape = [-1] : (tensor<?x1xf32>) -> tensor<?xf32>
// DCE-LABEL: func.func @dense
// DCE-NOT:     mir.softmax_cross_entropy
func.func @dense(%x: tensor<?x?xf32>, %t: tensor<?x?xf32>) -> tensor<?xf32> {
  %loss = mir.softmax_cross_entropy %x, %t : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
  func.return %loss : tensor<?xf32>
}

// -----

// Labels [N, 1] need no reshape; rows labelled ignore_index get 0 from a final `where`
// on the ids (loss and gradient alike).
// CHECK-LABEL: func.func @ignored
// CHECK-NEXT:    %[[RAMP:.*]] = mir.iota dimension = 1 : tensor<1x5xi64>
// CHECK-NEXT:    %[[HIT:.*]] = mir.compare eq, %labels, %[[RAMP]] : (tensor<3x1xi64>, tensor<1x5xi64>) -> tensor<3x5xi1>
// CHECK:         %[[IGNORE:.*]] = mir.constant dense<-100> : tensor<i64>
// CHECK-NEXT:    %[[IGNORED:.*]] = mir.compare eq, %labels, %[[IGNORE]] : (tensor<3x1xi64>, tensor<i64>) -> tensor<3x1xi1>
// CHECK-NEXT:    %[[ZERO:.*]] = mir.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[KEPT:.*]] = mir.where %[[IGNORED]], %[[ZERO]], %{{.*}} : (tensor<3x1xi1>, tensor<f32>, tensor<3x1xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %loss = mir.reshape %[[KEPT]] new_shape = [-1] : (tensor<3x1xf32>) -> tensor<3xf32>
// CHECK:         %[[IGNORED2:.*]] = mir.compare eq, %labels, %{{.*}} : (tensor<3x1xi64>, tensor<i64>) -> tensor<3x1xi1>
// CHECK-NEXT:    %[[ZERO2:.*]] = mir.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %grad = mir.where %[[IGNORED2]], %[[ZERO2]], %{{.*}} : (tensor<3x1xi1>, tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    func.return %loss, %grad
// CHECK-NOT:     mir.softmax_cross_entropy
func.func @ignored(%logits: tensor<3x5xf32>, %labels: tensor<3x1xi64>, %d: tensor<3xf32>) -> (tensor<3xf32>, tensor<3x5xf32>) {
  %loss = mir.softmax_cross_entropy_with_logits %logits, %labels ignore_index = -100 : (tensor<3x5xf32>, tensor<3x1xi64>) -> tensor<3xf32>
  %grad = mir.softmax_cross_entropy_backward %logits, %labels, %d ignore_index = -100 : (tensor<3x5xf32>, tensor<3x1xi64>, tensor<3xf32>) -> tensor<3x5xf32>
  func.return %loss, %grad : tensor<3xf32>, tensor<3x5xf32>
}

// -----

// The one-hot ramp needs the class count; a dynamic one is reported at the op.
// ERR: lower-softmax-cross-entropy.mlir:[[# @LINE + 3]]:3: error: 'mir.softmax_cross_entropy_backward' cannot be lowered: logits [2, ?] have a dynamic class count, and the one-hot's mir.iota ramp needs it static
func.func @dynamic_classes(%x: tensor<2x?xf32>, %l: tensor<2xi64>, %d: tensor<2xf32>) -> tensor<2x?xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_backward' cannot be lowered: logits [2, ?] have a dynamic class count}}
  %grad = mir.softmax_cross_entropy_backward %x, %l, %d : (tensor<2x?xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<2x?xf32>
  func.return %grad : tensor<2x?xf32>
}
