// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @logits_rank(%x: tensor<4xf32>, %l: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_with_logits' logits must have rank 2, got [4]}}
  %0 = mir.softmax_cross_entropy_with_logits %x, %l : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @logits_int(%x: tensor<4x10xi32>, %l: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_with_logits' logits must have a floating-point element type, got i32}}
  %0 = mir.softmax_cross_entropy_with_logits %x, %l : (tensor<4x10xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @labels_bool(%x: tensor<4x10xf32>, %l: tensor<4xi1>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_with_logits' labels must have an integer or floating-point element type, got i1}}
  %0 = mir.softmax_cross_entropy_with_logits %x, %l : (tensor<4x10xf32>, tensor<4xi1>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// Labels are [N] or [N, 1]; any other shape is an error.
func.func @labels_width(%x: tensor<4x10xf32>, %l: tensor<4x2xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_with_logits' labels must have shape [N] or [N, 1], got [4, 2]}}
  %0 = mir.softmax_cross_entropy_with_logits %x, %l : (tensor<4x10xf32>, tensor<4x2xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @labels_rank(%x: tensor<4x10xf32>, %l: tensor<4x1x1xi64>, %d: tensor<4xf32>) -> tensor<4x10xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_backward' labels must have shape [N] or [N, 1], got [4, 1, 1]}}
  %0 = mir.softmax_cross_entropy_backward %x, %l, %d : (tensor<4x10xf32>, tensor<4x1x1xi64>, tensor<4xf32>) -> tensor<4x10xf32>
  func.return %0 : tensor<4x10xf32>
}

// -----

func.func @labels_column_rows(%x: tensor<4x10xf32>, %l: tensor<3x1xi32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_with_logits' labels has 3 rows but logits has 4}}
  %0 = mir.softmax_cross_entropy_with_logits %x, %l : (tensor<4x10xf32>, tensor<3x1xi32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// ignore_index is an i64 property; the dense loss has none.
func.func @ignore_index_type(%x: tensor<4x10xf32>, %l: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error@+1 {{1.500000e+00 : f32 should be of base attribute integer}}
  %0 = "mir.softmax_cross_entropy_with_logits"(%x, %l) <{ignore_index = 1.5 : f32}> : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @dense_ignore_index(%x: tensor<4x10xf32>, %t: tensor<4x10xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{ignore_index}}
  %0 = "mir.softmax_cross_entropy"(%x, %t) <{ignore_index = 1 : i64}> : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @labels_rows(%x: tensor<4x10xf32>, %l: tensor<5xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_with_logits' labels has 5 rows but logits has 4}}
  %0 = mir.softmax_cross_entropy_with_logits %x, %l : (tensor<4x10xf32>, tensor<5xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @loss_result(%x: tensor<4x10xf32>, %l: tensor<4xf32>) -> tensor<4x10xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_with_logits' inferred result type tensor<4xf32> does not match declared type tensor<4x10xf32>}}
  %0 = mir.softmax_cross_entropy_with_logits %x, %l : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<4x10xf32>
  func.return %0 : tensor<4x10xf32>
}

// -----

func.func @loss_arity(%x: tensor<4x10xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{Expected 2 operands, but got 1}}
  %0 = "mir.softmax_cross_entropy_with_logits"(%x) : (tensor<4x10xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @dense_logits_rank(%x: tensor<2x4x10xf32>, %t: tensor<2x4x10xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy' logits must have rank 2, got [2, 4, 10]}}
  %0 = mir.softmax_cross_entropy %x, %t : (tensor<2x4x10xf32>, tensor<2x4x10xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @dense_targets_shape(%x: tensor<4x10xf32>, %t: tensor<4x9xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy' targets shape [4, 9] does not match logits shape [4, 10]}}
  %0 = mir.softmax_cross_entropy %x, %t : (tensor<4x10xf32>, tensor<4x9xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @dense_targets_dtype(%x: tensor<4x10xf32>, %t: tensor<4x10xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy' targets element type f16 does not match logits element type f32}}
  %0 = mir.softmax_cross_entropy %x, %t : (tensor<4x10xf32>, tensor<4x10xf16>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @dense_result(%x: tensor<4x10xf32>, %t: tensor<4x10xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{'mir.softmax_cross_entropy' inferred result type tensor<4xf32> does not match declared type tensor<4xf16>}}
  %0 = mir.softmax_cross_entropy %x, %t : (tensor<4x10xf32>, tensor<4x10xf32>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

func.func @backward_logits_int(%x: tensor<4x10xi8>, %l: tensor<4xf32>, %d: tensor<4xi8>) -> tensor<4x10xi8> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_backward' logits must have a floating-point element type, got i8}}
  %0 = mir.softmax_cross_entropy_backward %x, %l, %d : (tensor<4x10xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<4x10xi8>
  func.return %0 : tensor<4x10xi8>
}

// -----

func.func @backward_labels_complex(%x: tensor<4x10xf32>, %l: tensor<4xcomplex<f32>>, %d: tensor<4xf32>) -> tensor<4x10xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_backward' labels must have an integer or floating-point element type, got complex<f32>}}
  %0 = mir.softmax_cross_entropy_backward %x, %l, %d : (tensor<4x10xf32>, tensor<4xcomplex<f32>>, tensor<4xf32>) -> tensor<4x10xf32>
  func.return %0 : tensor<4x10xf32>
}

// -----

func.func @backward_labels_rows(%x: tensor<4x10xf32>, %l: tensor<3xi64>, %d: tensor<4xf32>) -> tensor<4x10xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_backward' labels has 3 rows but logits has 4}}
  %0 = mir.softmax_cross_entropy_backward %x, %l, %d : (tensor<4x10xf32>, tensor<3xi64>, tensor<4xf32>) -> tensor<4x10xf32>
  func.return %0 : tensor<4x10xf32>
}

// -----

func.func @backward_dloss_rank(%x: tensor<4x10xf32>, %l: tensor<4xf32>, %d: tensor<4x1xf32>) -> tensor<4x10xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_backward' d_loss must have rank 1, got [4, 1]}}
  %0 = mir.softmax_cross_entropy_backward %x, %l, %d : (tensor<4x10xf32>, tensor<4xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  func.return %0 : tensor<4x10xf32>
}

// -----

func.func @backward_dloss_rows(%x: tensor<?x10xf32>, %l: tensor<4xf32>, %d: tensor<3xf32>) -> tensor<4x10xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_backward' d_loss has 3 rows but logits has 4}}
  %0 = mir.softmax_cross_entropy_backward %x, %l, %d : (tensor<?x10xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<4x10xf32>
  func.return %0 : tensor<4x10xf32>
}

// -----

func.func @backward_dloss_dtype(%x: tensor<4x10xf32>, %l: tensor<4xf32>, %d: tensor<4xf64>) -> tensor<4x10xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_backward' d_loss element type f64 does not match logits element type f32}}
  %0 = mir.softmax_cross_entropy_backward %x, %l, %d : (tensor<4x10xf32>, tensor<4xf32>, tensor<4xf64>) -> tensor<4x10xf32>
  func.return %0 : tensor<4x10xf32>
}

// -----

func.func @backward_result(%x: tensor<4x10xf32>, %l: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.softmax_cross_entropy_backward' inferred result type tensor<4x10xf32> does not match declared type tensor<4xf32>}}
  %0 = mir.softmax_cross_entropy_backward %x, %l, %d : (tensor<4x10xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
