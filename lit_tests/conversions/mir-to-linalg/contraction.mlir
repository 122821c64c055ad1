// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// A plain 2-D product is linalg.matmul on a zero-filled accumulator.
// CHECK-LABEL: func.func @matmul
// CHECK-NEXT:    [[E:%.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:    [[Z:%.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    [[F:%.*]] = linalg.fill ins([[Z]] : f32) outs([[E]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    [[R:%.*]] = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs([[F]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return [[R]]
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = mir.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// Batched bf16: one contraction generic accumulating in f32 (rhs batch broadcast), then one rounding.
// CHECK-LABEL: func.func @batched
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:      outs({{%.*}} : tensor<5x2x4xf32>)
// CHECK:           arith.extf {{%.*}} : bf16 to f32
// CHECK:         arith.truncf {{%.*}} : f32 to bf16
// CHECK:         -> tensor<5x2x4xbf16>
func.func @batched(%a: tensor<5x2x3xbf16>, %b: tensor<3x4xbf16>) -> tensor<5x2x4xbf16> {
  %0 = mir.matmul %a, %b : (tensor<5x2x3xbf16>, tensor<3x4xbf16>) -> tensor<5x2x4xbf16>
  func.return %0 : tensor<5x2x4xbf16>
}

// -----

// dot_general: loops are batch, lhs free, rhs free, then contracted dims.
// CHECK-LABEL: func.func @dot_general
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
func.func @dot_general(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = mir.dot_general %a, %b lhs_contracting = [2] rhs_contracting = [1] lhs_batch = [0] rhs_batch = [0] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

// dense_solve: Gauss-Jordan steps in an scf.for over the columns, carrying the matrix and rhs.
// Each step's update writes over the carried tensors (one-shot bufferization needs that).
// CHECK-LABEL: func.func @solve
// CHECK:         tensor.expand_shape %b {{.*}} into tensor<3x1xf32>
// CHECK:         scf.for {{%.*}} = {{%.*}} to {{%.*}} step {{%.*}} iter_args([[A:%[0-9a-z_]+]] = %a, [[B:%[0-9a-z_]+]] = {{%.*}}) -> (tensor<3x3xf32>, tensor<3x1xf32>) {
// CHECK:           math.absf
// CHECK:           tensor.extract
// CHECK:           [[NA:%.*]] = linalg.generic {{.*}} outs([[A]] : tensor<3x3xf32>)
// CHECK:           [[NB:%.*]] = linalg.generic {{.*}} outs([[B]] : tensor<3x1xf32>)
// CHECK:           scf.yield [[NA]], [[NB]] : tensor<3x3xf32>, tensor<3x1xf32>
// CHECK:         tensor.collapse_shape {{.*}} into tensor<3xf32>
func.func @solve(%a: tensor<3x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = mir.dense_solve %a, %b : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
