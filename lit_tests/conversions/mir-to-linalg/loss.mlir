// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// The row max and the row sum of exp(x - max), both reductions over the classes; then
// one parallel loop over the rows reads the label's logit with tensor.extract (a
// gather, no `class == label` mask over the row): a label outside [0, C) picks class 0
// and the select on `valid` gives max + log(sum) instead.
// CHECK-LABEL: func.func @with_logits
// CHECK:         arith.maximumf
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%l, %{{.*}} : tensor<4x5xf32>, tensor<4xf32>)
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%y, %{{.*}}, %{{.*}} : tensor<4xi32>, tensor<4xf32>, tensor<4xf32>)
// CHECK:           %[[ABOVE:.*]] = arith.cmpi sge
// CHECK:           %[[BELOW:.*]] = arith.cmpi slt
// CHECK:           %[[VALID:.*]] = arith.andi %[[ABOVE]], %[[BELOW]] : i1
// CHECK:           %[[CLASS:.*]] = arith.select %[[VALID]], %{{.*}}, %{{.*}} : index
// CHECK:           %[[ROW:.*]] = linalg.index 0 : index
// CHECK:           tensor.extract %l[%[[ROW]], %[[CLASS]]] : tensor<4x5xf32>
// CHECK:           math.log
// CHECK:           arith.select %[[VALID]]
// CHECK-NOT:     linalg.index 1
// CHECK:         func.return
func.func @with_logits(%l: tensor<4x5xf32>, %y: tensor<4xi32>) -> tensor<4xf32> {
  %0 = mir.softmax_cross_entropy_with_logits %l, %y : (tensor<4x5xf32>, tensor<4xi32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @dense
// CHECK-COUNT-3: ins(%l, {{%.*}}, %t : tensor<4x5xf32>, tensor<4xf32>, tensor<4x5xf32>)
func.func @dense(%l: tensor<4x5xf32>, %t: tensor<4x5xf32>) -> tensor<4xf32> {
  %0 = mir.softmax_cross_entropy %l, %t : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// The gradient: (softmax - one_hot) * d_loss, per element, after the row statistics.
// CHECK-LABEL: func.func @backward
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK:           linalg.index 1
// CHECK:           arith.subf
// CHECK:           arith.mulf
func.func @backward(%l: tensor<4x5xf32>, %y: tensor<4xi64>, %d: tensor<4xf32>) -> tensor<4x5xf32> {
  %0 = mir.softmax_cross_entropy_backward %l, %y, %d : (tensor<4x5xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// -----

// Labels [N, 1] are read at (n, 0); rows labelled ignore_index get 0 from a last
// select on the label, in the same loop as the gather.
// CHECK-LABEL: func.func @ignored
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%y, %{{.*}}, %{{.*}} : tensor<4x1xi64>, tensor<4xf32>, tensor<4xf32>)
// CHECK:           tensor.extract %l
// CHECK:           %[[IGNORE:.*]] = arith.constant -100 : i64
// CHECK-NEXT:      %[[IGNORED:.*]] = arith.cmpi eq, %{{.*}}, %[[IGNORE]] : i64
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      arith.select %[[IGNORED]], %[[ZERO]], %{{.*}} : f32
func.func @ignored(%l: tensor<4x5xf32>, %y: tensor<4x1xi64>) -> tensor<4xf32> {
  %0 = mir.softmax_cross_entropy_with_logits %l, %y ignore_index = -100 : (tensor<4x5xf32>, tensor<4x1xi64>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
