// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// A mean is a sum reduction then a division by the count; keep_dim re-inserts unit dims.
// CHECK-LABEL: func.func @mean_keep_dim
// CHECK:         linalg.fill ins({{%.*}} : f32) outs({{%.*}} : tensor<2xf32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK:           arith.addf
// CHECK:         arith.divf
// CHECK:         tensor.expand_shape {{.*}} output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
func.func @mean_keep_dim(%x: tensor<2x3x4xf32>) -> tensor<2x1x1xf32> {
  %0 = mir.reduce mean %x axes = [1, -1] keep_dim : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  func.return %0 : tensor<2x1x1xf32>
}

// -----

// bf16 reductions accumulate in f32 and round once.
// CHECK-LABEL: func.func @max_bf16
// CHECK:         [[NEG:%.*]] = arith.constant 0xff800000 : f32
// CHECK:         linalg.fill ins([[NEG]] : f32)
// CHECK:           arith.extf {{%.*}} : bf16 to f32
// CHECK:           arith.maximumf
// CHECK:         arith.truncf {{%.*}} : f32 to bf16
func.func @max_bf16(%x: tensor<3x5xbf16>) -> tensor<3xbf16> {
  %0 = mir.reduce max %x axes = [1] : (tensor<3x5xbf16>) -> tensor<3xbf16>
  func.return %0 : tensor<3xbf16>
}

// -----

// softmax: the row max, the sum of exp(x - max), then exp(x - max) / sum.
// CHECK-LABEL: func.func @softmax
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:           arith.maximumf
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:           math.exp
// CHECK:         iterator_types = ["parallel", "parallel"]
// CHECK:           math.exp
// CHECK:           arith.divf
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = mir.softmax %x axis = -1 : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

// cumsum: an extra reduction loop j over the axis; element j counts toward i when j <= i (j < i exclusive).
// CHECK-LABEL: func.func @cumsum
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:           [[I:%.*]] = linalg.index 1 : index
// CHECK-NEXT:      [[J:%.*]] = linalg.index 2 : index
// CHECK-NEXT:      arith.cmpi sgt, [[I]], [[J]] : index
func.func @cumsum(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = mir.cumsum %x axis = 1 exclusive : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

// topk: each element's rank in its row, then the values and the indices ranked 0..k-1.
// CHECK-LABEL: func.func @topk
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %x : tensor<3x6xf32>, tensor<3x6xf32>) outs({{%.*}} : tensor<3x6xi64>)
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, {{%.*}} : tensor<3x6xf32>, tensor<3x6xi64>) outs({{%.*}} : tensor<3x2xf32>)
// CHECK:         iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, {{%.*}} : tensor<3x6xf32>, tensor<3x6xi64>) outs({{%.*}} : tensor<3x2xi64>)
func.func @topk(%x: tensor<3x6xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %0, %1 = mir.topk %x k = 2 : (tensor<3x6xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  func.return %0, %1 : tensor<3x2xf32>, tensor<3x2xi64>
}
