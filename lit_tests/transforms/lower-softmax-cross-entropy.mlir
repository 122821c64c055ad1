// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-lower-softmax-cross-entropy | filecheck %s
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-lower-softmax-cross-entropy,rlx-dce | filecheck %s --check-prefix=DCE
// RUN: not rlx-opt %s --split-input-file -p rlx-lower-softmax-cross-entropy 2>&1 | filecheck %s --check-prefix=ERR

// The indexed loss: float labels become i64 class ids (truncated toward zero),
// one comparison with an iota ramp gives the one-hot rows, and the loss is
// log(sum exp(x - m)) - sum t (x - m) + m (1 - sum t).
// CHECK-LABEL: func.func @indexed
// CHECK-NEXT:    %0 = mir.cast %labels : (tensor<4xf32>) -> tensor<4xi64>
// CHECK-NEXT:    %1 = mir.reshape %0 new_shape = [-1, 1] : (tensor<4xi64>) -> tensor<4x1xi64>
// CHECK-NEXT:    %2 = mir.iota dimension = 1 : tensor<1x50000xi64>
// CHECK-NEXT:    %3 = mir.compare eq, %1, %2 : (tensor<4x1xi64>, tensor<1x50000xi64>) -> tensor<4x50000xi1>
// CHECK-NEXT:    %4 = mir.cast %3 : (tensor<4x50000xi1>) -> tensor<4x50000xf32>
// CHECK-NEXT:    %5 = mir.reduce max %logits axes = [1] keep_dim : (tensor<4x50000xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %6 = mir.sub %logits, %5
// CHECK-NEXT:    %7 = mir.exp %6
// CHECK-NEXT:    %8 = mir.reduce sum %7 axes = [1] keep_dim
// CHECK-NEXT:    %9 = mir.mul %4, %6
// CHECK-NEXT:    %10 = mir.reduce sum %9 axes = [1] keep_dim
// CHECK-NEXT:    %11 = mir.reduce sum %4 axes = [1] keep_dim
// CHECK-NEXT:    %12 = mir.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %13 = mir.sub %12, %11
// CHECK-NEXT:    %14 = mir.mul %5, %13
// CHECK-NEXT:    %15 = mir.log %8
// CHECK-NEXT:    %16 = mir.sub %15, %10
// CHECK-NEXT:    %17 = mir.add %16, %14
// CHECK-NEXT:    %loss = mir.reshape %17 new_shape = [-1] : (tensor<4x1xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %loss : tensor<4xf32>
func.func @indexed(%logits: tensor<4x50000xf32>, %labels: tensor<4xf32>) -> tensor<4xf32> {
  %loss = mir.softmax_cross_entropy_with_logits %logits, %labels : (tensor<4x50000xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %loss : tensor<4xf32>
}

// -----

// Integer labels are compared as they are; the backward is
// (softmax(x) - one_hot) * d_loss[:, None].
// CHECK-LABEL: func.func @backward
// CHECK-NEXT:    %0 = mir.softmax %logits axis = 1 : (tensor<2x3xf16>) -> tensor<2x3xf16>
// CHECK-NEXT:    %1 = mir.reshape %labels new_shape = [-1, 1] : (tensor<2xi32>) -> tensor<2x1xi32>
// CHECK-NEXT:    %2 = mir.iota dimension = 1 : tensor<1x3xi64>
// CHECK-NEXT:    %3 = mir.compare eq, %1, %2 : (tensor<2x1xi32>, tensor<1x3xi64>) -> tensor<2x3xi1>
// CHECK-NEXT:    %4 = mir.cast %3 : (tensor<2x3xi1>) -> tensor<2x3xf16>
// CHECK-NEXT:    %5 = mir.sub %0, %4
// CHECK-NEXT:    %6 = mir.reshape %d new_shape = [-1, 1] : (tensor<2xf16>) -> tensor<2x1xf16>
// CHECK-NEXT:    %grad = mir.mul %5, %6 : (tensor<2x3xf16>, tensor<2x1xf16>) -> tensor<2x3xf16>
// CHECK-NEXT:    func.return %grad
func.func @backward(%logits: tensor<2x3xf16>, %labels: tensor<2xi32>, %d: tensor<2xf16>) -> tensor<2x3xf16> {
  %grad = mir.softmax_cross_entropy_backward %logits, %labels, %d : (tensor<2x3xf16>, tensor<2xi32>, tensor<2xf16>) -> tensor<2x3xf16>
  func.return %grad : tensor<2x3xf16>
}

// -----

// Dense targets need no ramp, so a dynamic class count is fine; a `?` row count
// that the op's result knows statically is restored by the final reshape.
// CHECK-LABEL: func.func @dense
// CHECK-NOT:     mir.iota
// CHECK:         %{{.*}} = mir.reduce sum %t axes = [1] keep_dim : (tensor<?x?xf32>) -> tensor<?x1xf32>
// CHECK:         %loss = mir.reshape %{{.*}} new_shape = [-1] : (tensor<?x1xf32>) -> tensor<?xf32>
// DCE-LABEL: func.func @dense
// DCE-NOT:     mir.softmax_cross_entropy
func.func @dense(%x: tensor<?x?xf32>, %t: tensor<?x?xf32>) -> tensor<?xf32> {
  %loss = mir.softmax_cross_entropy %x, %t : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?xf32>
  func.return %loss : tensor<?xf32>
}

// -----

// The one-hot ramp needs the class count; a dynamic one is reported at the op.
// ERR: lower-softmax-cross-entropy.mlir:[[# @LINE + 3]]:3: error: 'mir.softmax_cross_entropy_backward' cannot be lowered: logits [2, ?] have a dynamic class count, and the one-hot's mir.iota ramp needs it static
func.func @dynamic_classes(%x: tensor<2x?xf32>, %l: tensor<2xi64>, %d: tensor<2xf32>) -> tensor<2x?xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_backward' cannot be lowered: logits [2, ?] have a dynamic class count}}
  %grad = mir.softmax_cross_entropy_backward %x, %l, %d : (tensor<2x?xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<2x?xf32>
  func.return %grad : tensor<2x?xf32>
}
