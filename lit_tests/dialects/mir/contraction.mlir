// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @matmul
// GENERIC-LABEL: "func.func"() <{sym_name = "matmul"
func.func @matmul(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>, %h: tensor<1x4x5xbf16>) -> tensor<2x3x5xf32> {
  // CHECK-NEXT: %0 = mir.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  // GENERIC: "mir.matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %0 = mir.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  // Batch dims broadcast and dtypes promote (bf16 with f32 gives f32).
  // CHECK-NEXT: %1 = mir.matmul %a, %h : (tensor<2x3x4xf32>, tensor<1x4x5xbf16>) -> tensor<2x3x5xf32>
  %1 = mir.matmul %a, %h : (tensor<2x3x4xf32>, tensor<1x4x5xbf16>) -> tensor<2x3x5xf32>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_dynamic
func.func @matmul_dynamic(%a: tensor<?x?x4xf32>, %b: tensor<?x5xf32>) -> tensor<?x?x5xf32> {
  // CHECK-NEXT: %0 = mir.matmul %a, %b : (tensor<?x?x4xf32>, tensor<?x5xf32>) -> tensor<?x?x5xf32>
  %0 = mir.matmul %a, %b : (tensor<?x?x4xf32>, tensor<?x5xf32>) -> tensor<?x?x5xf32>
  func.return %0 : tensor<?x?x5xf32>
}

// -----

// CHECK-LABEL: func.func @dot_general
// GENERIC-LABEL: "func.func"() <{sym_name = "dot_general"
func.func @dot_general(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %x: tensor<?x4xf32>) -> tensor<2x3x5xf32> {
  // CHECK-NEXT: %0 = mir.dot_general %a, %b lhs_contracting = [2] rhs_contracting = [1] lhs_batch = [0] rhs_batch = [0] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  // GENERIC: "mir.dot_general"(%a, %b) <{lhs_contracting = array<i64: 2>, rhs_contracting = array<i64: 1>, lhs_batch = array<i64: 0>, rhs_batch = array<i64: 0>}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %0 = mir.dot_general %a, %b lhs_contracting = [2] rhs_contracting = [1] lhs_batch = [0] rhs_batch = [0] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  // Free dims: lhs's, then rhs's; `?` stays dynamic.
  // CHECK-NEXT: %1 = mir.dot_general %x, %b lhs_contracting = [1] rhs_contracting = [1] lhs_batch = [] rhs_batch = [] : (tensor<?x4xf32>, tensor<2x4x5xf32>) -> tensor<?x2x5xf32>
  // GENERIC: "mir.dot_general"(%x, %b) <{lhs_contracting = array<i64: 1>, rhs_contracting = array<i64: 1>, lhs_batch = array<i64>, rhs_batch = array<i64>}>
  %1 = mir.dot_general %x, %b lhs_contracting = [1] rhs_contracting = [1] lhs_batch = [] rhs_batch = [] : (tensor<?x4xf32>, tensor<2x4x5xf32>) -> tensor<?x2x5xf32>
  // An outer product contracts nothing.
  // CHECK-NEXT: %2 = mir.dot_general %x, %x lhs_contracting = [] rhs_contracting = [] lhs_batch = [] rhs_batch = [] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4x?x4xf32>
  %2 = mir.dot_general %x, %x lhs_contracting = [] rhs_contracting = [] lhs_batch = [] rhs_batch = [] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4x?x4xf32>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @dense_solve
// GENERIC-LABEL: "func.func"() <{sym_name = "dense_solve"
func.func @dense_solve(%a: tensor<3x3xf64>, %b: tensor<3xf64>, %m: tensor<?x?xf32>, %c: tensor<?x2xf32>) -> tensor<3xf64> {
  // CHECK-NEXT: %0 = mir.dense_solve %a, %b : (tensor<3x3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // GENERIC: "mir.dense_solve"(%a, %b) : (tensor<3x3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %0 = mir.dense_solve %a, %b : (tensor<3x3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // CHECK-NEXT: %1 = mir.dense_solve %m, %c : (tensor<?x?xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %1 = mir.dense_solve %m, %c : (tensor<?x?xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  func.return %0 : tensor<3xf64>
}

// -----

// CHECK-LABEL: func.func @batched_dense_solve
// GENERIC-LABEL: "func.func"() <{sym_name = "batched_dense_solve"
func.func @batched_dense_solve(%a: tensor<2x3x3xf32>, %b: tensor<2x3xf32>, %m: tensor<?x3x3xf32>, %c: tensor<?x3x4xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %0 = mir.batched_dense_solve %a, %b : (tensor<2x3x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // GENERIC: "mir.batched_dense_solve"(%a, %b) : (tensor<2x3x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = mir.batched_dense_solve %a, %b : (tensor<2x3x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = mir.batched_dense_solve %m, %c : (tensor<?x3x3xf32>, tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
  %1 = mir.batched_dense_solve %m, %c : (tensor<?x3x3xf32>, tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
  func.return %0 : tensor<2x3xf32>
}
