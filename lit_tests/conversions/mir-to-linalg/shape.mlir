// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// reshape: collapse to one dim, then expand (a -1 is resolved statically here).
// CHECK-LABEL: func.func @reshape
// CHECK-NEXT:    [[F:%.*]] = tensor.collapse_shape %x {{\[\[}}0 : i64, 1 : i64, 2 : i64]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK-NEXT:    [[R:%.*]] = tensor.expand_shape [[F]] {{\[\[}}0 : i64, 1 : i64]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK-NEXT:    func.return [[R]]
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = mir.reshape %x new_shape = [4, -1] : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}

// -----

// With a dynamic input, the -1 is computed from the element count at run time.
// CHECK-LABEL: func.func @reshape_dynamic
// CHECK:         [[D:%.*]] = tensor.dim %x
// CHECK:         [[N:%.*]] = arith.muli {{%.*}}, [[D]] : index
// CHECK:         [[Q:%.*]] = arith.divui [[N]]
// CHECK:         tensor.expand_shape {{%.*}} {{.*}} output_shape {{\[}}[[Q]], 6] : tensor<?xf32> into tensor<?x6xf32>
func.func @reshape_dynamic(%x: tensor<?x3xf32>) -> tensor<?x6xf32> {
  %0 = mir.reshape %x new_shape = [-1, 6] : (tensor<?x3xf32>) -> tensor<?x6xf32>
  func.return %0 : tensor<?x6xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-NEXT:    [[E:%.*]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK-NEXT:    {{%.*}} = linalg.transpose ins(%x:tensor<2x3x4xf32>) outs([[E]]:tensor<4x2x3xf32>) permutation = [2, 0, 1]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = mir.transpose %x perm = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  func.return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @narrow_concat
// CHECK:         [[S:%.*]] = tensor.extract_slice %x[0, 2] [3, 2] [1, 1] : tensor<3x5xf32> to tensor<3x2xf32>
// CHECK:         tensor.concat dim(1) [[S]], %x : (tensor<3x2xf32>, tensor<3x5xf32>) -> tensor<3x7xf32>
func.func @narrow_concat(%x: tensor<3x5xf32>) -> tensor<3x7xf32> {
  %0 = mir.narrow %x axis = 1 start = 2 len = 2 : (tensor<3x5xf32>) -> tensor<3x2xf32>
  %1 = mir.concat %0, %x axis = -1 : (tensor<3x2xf32>, tensor<3x5xf32>) -> tensor<3x7xf32>
  func.return %1 : tensor<3x7xf32>
}

// -----

// expand is a broadcasting copy.
// CHECK-LABEL: func.func @expand
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<3x1xf32>)
// CHECK-NEXT:    ^bb0([[A:%.*]]: f32, {{%.*}}: f32):
// CHECK-NEXT:      linalg.yield [[A]] : f32
func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = mir.expand %x target_shape = [2, -1, 4] : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
