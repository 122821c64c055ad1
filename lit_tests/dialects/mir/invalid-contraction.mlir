// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @matmul_lhs_rank(%a: tensor<4xf32>, %b: tensor<4x2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.matmul' lhs must have rank >= 2, got [4]}}
  %0 = mir.matmul %a, %b : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @matmul_rhs_rank(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.matmul' rhs must have rank >= 2, got [4]}}
  %0 = mir.matmul %a, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<3x5xf32>, %b: tensor<4x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mir.matmul' contraction dims 5 and 4 differ}}
  %0 = mir.matmul %a, %b : (tensor<3x5xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) -> tensor<2x3x5xf32> {
  // expected-error@+1 {{'mir.matmul' batch dims [2] and [3] do not broadcast}}
  %0 = mir.matmul %a, %b : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

func.func @matmul_result(%a: tensor<3x4xf16>, %b: tensor<4x2xbf16>) -> tensor<3x2xf16> {
  // expected-error@+1 {{'mir.matmul' inferred result type tensor<3x2xf32> does not match declared type tensor<3x2xf16>}}
  %0 = mir.matmul %a, %b : (tensor<3x4xf16>, tensor<4x2xbf16>) -> tensor<3x2xf16>
  func.return %0 : tensor<3x2xf16>
}

// -----

func.func @matmul_arity(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{Expected 2 operands, but got 1}}
  %0 = "mir.matmul"(%a) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @dot_general_contracting_lengths(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.dot_general' lhs_contracting [1] and rhs_contracting [] differ in length}}
  %0 = mir.dot_general %a, %b lhs_contracting = [1] rhs_contracting = [] lhs_batch = [] rhs_batch = [] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @dot_general_batch_lengths(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  // expected-error@+1 {{'mir.dot_general' lhs_batch [0] and rhs_batch [] differ in length}}
  %0 = mir.dot_general %a, %b lhs_contracting = [2] rhs_contracting = [1] lhs_batch = [0] rhs_batch = [] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

func.func @dot_general_repeated_axis(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.dot_general' lhs batch and contracting axes repeat an axis}}
  %0 = mir.dot_general %a, %b lhs_contracting = [1] rhs_contracting = [1] lhs_batch = [1] rhs_batch = [0] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @dot_general_axis_range(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.dot_general' rhs axis 2 is out of range for rank 2}}
  %0 = mir.dot_general %a, %b lhs_contracting = [1] rhs_contracting = [2] lhs_batch = [] rhs_batch = [] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @dot_general_contracting_dims(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.dot_general' contracting dims lhs[1] = 4 and rhs[0] = 5 differ}}
  %0 = mir.dot_general %a, %b lhs_contracting = [1] rhs_contracting = [0] lhs_batch = [] rhs_batch = [] : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @dot_general_batch_dims(%a: tensor<2x3x4xf32>, %b: tensor<7x4x5xf32>) -> tensor<2x3x5xf32> {
  // expected-error@+1 {{'mir.dot_general' batch dims lhs[0] = 2 and rhs[0] = 7 differ}}
  %0 = mir.dot_general %a, %b lhs_contracting = [2] rhs_contracting = [1] lhs_batch = [0] rhs_batch = [0] : (tensor<2x3x4xf32>, tensor<7x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

func.func @dot_general_result(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<5x3xf32> {
  // expected-error@+1 {{'mir.dot_general' inferred result type tensor<3x5xf32> does not match declared type tensor<5x3xf32>}}
  %0 = mir.dot_general %a, %b lhs_contracting = [1] rhs_contracting = [0] lhs_batch = [] rhs_batch = [] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<5x3xf32>
  func.return %0 : tensor<5x3xf32>
}

// -----

func.func @dense_solve_int_matrix(%a: tensor<3x3xi32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.dense_solve' matrix must have a floating-point element type, got i32}}
  %0 = mir.dense_solve %a, %b : (tensor<3x3xi32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @dense_solve_int_rhs(%a: tensor<3x3xf32>, %b: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.dense_solve' rhs must have a floating-point element type, got i64}}
  %0 = mir.dense_solve %a, %b : (tensor<3x3xf32>, tensor<3xi64>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @dense_solve_matrix_rank(%a: tensor<2x3x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.dense_solve' matrix must have rank 2, got [2, 3, 3]}}
  %0 = mir.dense_solve %a, %b : (tensor<2x3x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @dense_solve_rhs_rank(%a: tensor<3x3xf32>, %b: tensor<3x2x2xf32>) -> tensor<3x2x2xf32> {
  // expected-error@+1 {{'mir.dense_solve' rhs must have rank 1 or 2, got [3, 2, 2]}}
  %0 = mir.dense_solve %a, %b : (tensor<3x3xf32>, tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  func.return %0 : tensor<3x2x2xf32>
}

// -----

func.func @dense_solve_square(%a: tensor<3x4xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.dense_solve' matrix must be square, got [3, 4]}}
  %0 = mir.dense_solve %a, %b : (tensor<3x4xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @dense_solve_rows(%a: tensor<?x3xf32>, %b: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'mir.dense_solve' rhs has 4 rows but the matrix has 3}}
  %0 = mir.dense_solve %a, %b : (tensor<?x3xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

// -----

func.func @dense_solve_result(%a: tensor<3x3xf32>, %b: tensor<3x2xf64>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'mir.dense_solve' inferred result type tensor<3x2xf64> does not match declared type tensor<3x2xf32>}}
  %0 = mir.dense_solve %a, %b : (tensor<3x3xf32>, tensor<3x2xf64>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @batched_dense_solve_rank(%a: tensor<3x3xf32>, %b: tensor<3x3xf32>) -> tensor<3x3xf32> {
  // expected-error@+1 {{'mir.batched_dense_solve' matrix must have rank 3, got [3, 3]}}
  %0 = mir.batched_dense_solve %a, %b : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return %0 : tensor<3x3xf32>
}

// -----

func.func @batched_dense_solve_square(%a: tensor<2x3x4xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.batched_dense_solve' matrices must be square, got [2, 3, 4]}}
  %0 = mir.batched_dense_solve %a, %b : (tensor<2x3x4xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @batched_dense_solve_batch(%a: tensor<2x3x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.batched_dense_solve' rhs has batch 4 but the matrix has 2}}
  %0 = mir.batched_dense_solve %a, %b : (tensor<2x3x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @batched_dense_solve_rows(%a: tensor<2x3x3xf32>, %b: tensor<2x5x1xf32>) -> tensor<2x5x1xf32> {
  // expected-error@+1 {{'mir.batched_dense_solve' rhs has 5 rows but the matrices have 3}}
  %0 = mir.batched_dense_solve %a, %b : (tensor<2x3x3xf32>, tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  func.return %0 : tensor<2x5x1xf32>
}

// -----

func.func @batched_dense_solve_int(%a: tensor<2x3x3xf32>, %b: tensor<2x3xi64>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.batched_dense_solve' rhs must have a floating-point element type, got i64}}
  %0 = mir.batched_dense_solve %a, %b : (tensor<2x3x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
