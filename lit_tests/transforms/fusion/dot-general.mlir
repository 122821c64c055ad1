// RUN: rlx-opt %s --split-input-file -p rlx-lower-dot-general | filecheck %s

// RLX's only case: [M, K] x [K, N] is a bare matmul.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT:    %0 = mir.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    func.return %0
func.func @plain(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = mir.dot_general %a, %b lhs_contracting = [1] rhs_contracting = [0] lhs_batch = [] rhs_batch = [] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

// A leading batch dim on both sides: a batched matmul, nothing else.
// CHECK-LABEL: func.func @batched
// CHECK-NEXT:    %0 = mir.matmul %a, %b : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    func.return %0
func.func @batched(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = mir.dot_general %a, %b lhs_contracting = [2] rhs_contracting = [1] lhs_batch = [0] rhs_batch = [0] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

// Transposed operands: transposes bring the contracting dims in place.
// CHECK-LABEL: func.func @transposed
// CHECK-NEXT:    %0 = mir.transpose %a perm = [1, 0] : (tensor<4x3xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %1 = mir.transpose %b perm = [1, 0] : (tensor<5x4xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %2 = mir.matmul %0, %1
// CHECK-NEXT:    func.return %2
func.func @transposed(%a: tensor<4x3xf32>, %b: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %0 = mir.dot_general %a, %b lhs_contracting = [0] rhs_contracting = [1] lhs_batch = [] rhs_batch = [] : (tensor<4x3xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

// Two contracting dims, a batch dim that is not leading, several free dims: transpose, group by
// reshape, one batched matmul, reshape to the result.
// CHECK-LABEL: func.func @general
// CHECK-NEXT:    %0 = mir.transpose %a perm = [1, 0, 2, 3] : (tensor<3x2x4x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK-NEXT:    %1 = mir.reshape %0 new_shape = [2, 3, 20] : (tensor<2x3x4x5xf32>) -> tensor<2x3x20xf32>
// CHECK-NEXT:    %2 = mir.transpose %b perm = [2, 0, 1, 3] : (tensor<4x5x2x6xf32>) -> tensor<2x4x5x6xf32>
// CHECK-NEXT:    %3 = mir.reshape %2 new_shape = [2, 20, 6] : (tensor<2x4x5x6xf32>) -> tensor<2x20x6xf32>
// CHECK-NEXT:    %4 = mir.matmul %1, %3 : (tensor<2x3x20xf32>, tensor<2x20x6xf32>) -> tensor<2x3x6xf32>
// CHECK-NEXT:    func.return %4
func.func @general(%a: tensor<3x2x4x5xf32>, %b: tensor<4x5x2x6xf32>) -> tensor<2x3x6xf32> {
  %0 = mir.dot_general %a, %b lhs_contracting = [2, 3] rhs_contracting = [0, 1] lhs_batch = [1] rhs_batch = [2] : (tensor<3x2x4x5xf32>, tensor<4x5x2x6xf32>) -> tensor<2x3x6xf32>
  func.return %0 : tensor<2x3x6xf32>
}

// -----

// An outer product (nothing contracted) and a vector dot product (no free dims).
// CHECK-LABEL: func.func @outer_and_dot
// CHECK-NEXT:    %0 = mir.reshape %a new_shape = [3, 1] : (tensor<3xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %1 = mir.reshape %b new_shape = [1, 4] : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %2 = mir.matmul %0, %1 : (tensor<3x1xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %3 = mir.reshape %b new_shape = [1, 4] : (tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %4 = mir.reshape %b new_shape = [4, 1] : (tensor<4xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %5 = mir.matmul %3, %4 : (tensor<1x4xf32>, tensor<4x1xf32>) -> tensor<1x1xf32>
// CHECK-NEXT:    %6 = mir.reshape %5 new_shape = [] : (tensor<1x1xf32>) -> tensor<f32>
func.func @outer_and_dot(%a: tensor<3xf32>, %b: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<f32>) {
  %0 = mir.dot_general %a, %b lhs_contracting = [] rhs_contracting = [] lhs_batch = [] rhs_batch = [] : (tensor<3xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %1 = mir.dot_general %b, %b lhs_contracting = [0] rhs_contracting = [0] lhs_batch = [] rhs_batch = [] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  func.return %0, %1 : tensor<3x4xf32>, tensor<f32>
}

// -----

// A dynamic dim becomes the one -1 of its reshape; two dynamic dims in one group cannot be
// reshaped, so that dot_general stays.
// CHECK-LABEL: func.func @dynamic
// CHECK-NEXT:    %0 = mir.matmul %a, %b : (tensor<?x4xf32>, tensor<4x5xf32>) -> tensor<?x5xf32>
// CHECK-NEXT:    %1 = mir.dot_general %c, %b
func.func @dynamic(%a: tensor<?x4xf32>, %b: tensor<4x5xf32>, %c: tensor<?x?x4xf32>) -> (tensor<?x5xf32>, tensor<?x?x5xf32>) {
  %0 = mir.dot_general %a, %b lhs_contracting = [1] rhs_contracting = [0] lhs_batch = [] rhs_batch = [] : (tensor<?x4xf32>, tensor<4x5xf32>) -> tensor<?x5xf32>
  %1 = mir.dot_general %c, %b lhs_contracting = [2] rhs_contracting = [0] lhs_batch = [] rhs_batch = [] : (tensor<?x?x4xf32>, tensor<4x5xf32>) -> tensor<?x?x5xf32>
  func.return %0, %1 : tensor<?x5xf32>, tensor<?x?x5xf32>
}
