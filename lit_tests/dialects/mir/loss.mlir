// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @indexed
// GENERIC-LABEL: "func.func"() <{sym_name = "indexed"
func.func @indexed(%logits: tensor<4x10xf32>, %labels: tensor<4xf32>, %ids: tensor<4xi64>, %d: tensor<4xf32>) -> tensor<4x10xf32> {
  // CHECK-NEXT: %loss = mir.softmax_cross_entropy_with_logits %logits, %labels : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<4xf32>
  // GENERIC: "mir.softmax_cross_entropy_with_logits"(%logits, %labels) : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<4xf32>
  %loss = mir.softmax_cross_entropy_with_logits %logits, %labels : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<4xf32>
  // Integer class indices are accepted as well as RLX's f32-encoded ones.
  // CHECK-NEXT: %loss_i = mir.softmax_cross_entropy_with_logits %logits, %ids : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  %loss_i = mir.softmax_cross_entropy_with_logits %logits, %ids : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  // CHECK-NEXT: %grad = mir.softmax_cross_entropy_backward %logits, %labels, %d : (tensor<4x10xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x10xf32>
  // GENERIC: "mir.softmax_cross_entropy_backward"(%logits, %labels, %d) : (tensor<4x10xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x10xf32>
  %grad = mir.softmax_cross_entropy_backward %logits, %labels, %d : (tensor<4x10xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x10xf32>
  func.return %grad : tensor<4x10xf32>
}

// -----

// Labels may be a column [N, 1]; ignore_index marks the rows that count for nothing.
// CHECK-LABEL: func.func @ignore_index
// GENERIC-LABEL: "func.func"() <{sym_name = "ignore_index"
func.func @ignore_index(%logits: tensor<4x10xf32>, %labels: tensor<4x1xi64>, %d: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x10xf32>) {
  // CHECK-NEXT: %loss = mir.softmax_cross_entropy_with_logits %logits, %labels ignore_index = -100 : (tensor<4x10xf32>, tensor<4x1xi64>) -> tensor<4xf32>
  // GENERIC: "mir.softmax_cross_entropy_with_logits"(%logits, %labels) <{ignore_index = -100 : i64}> : (tensor<4x10xf32>, tensor<4x1xi64>) -> tensor<4xf32>
  %loss = mir.softmax_cross_entropy_with_logits %logits, %labels ignore_index = -100 : (tensor<4x10xf32>, tensor<4x1xi64>) -> tensor<4xf32>
  // CHECK-NEXT: %grad = mir.softmax_cross_entropy_backward %logits, %labels, %d ignore_index = 3 : (tensor<4x10xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<4x10xf32>
  // GENERIC: "mir.softmax_cross_entropy_backward"(%logits, %labels, %d) <{ignore_index = 3 : i64}> : (tensor<4x10xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<4x10xf32>
  %grad = mir.softmax_cross_entropy_backward %logits, %labels, %d ignore_index = 3 : (tensor<4x10xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<4x10xf32>
  func.return %loss, %grad : tensor<4xf32>, tensor<4x10xf32>
}

// -----

// CHECK-LABEL: func.func @dense
func.func @dense(%logits: tensor<?x8xf16>, %targets: tensor<?x8xf16>) -> tensor<?xf16> {
  // CHECK-NEXT: %loss = mir.softmax_cross_entropy %logits, %targets : (tensor<?x8xf16>, tensor<?x8xf16>) -> tensor<?xf16>
  // GENERIC: "mir.softmax_cross_entropy"(%logits, %targets) : (tensor<?x8xf16>, tensor<?x8xf16>) -> tensor<?xf16>
  %loss = mir.softmax_cross_entropy %logits, %targets : (tensor<?x8xf16>, tensor<?x8xf16>) -> tensor<?xf16>
  func.return %loss : tensor<?xf16>
}

// -----

// A dynamic batch on one operand is resolved by the other.
// CHECK-LABEL: func.func @dynamic_rows
func.func @dynamic_rows(%logits: tensor<?x3xbf16>, %labels: tensor<5xi32>, %d: tensor<?xbf16>) -> tensor<5x3xbf16> {
  // CHECK-NEXT: %loss = mir.softmax_cross_entropy_with_logits %logits, %labels : (tensor<?x3xbf16>, tensor<5xi32>) -> tensor<5xbf16>
  %loss = mir.softmax_cross_entropy_with_logits %logits, %labels : (tensor<?x3xbf16>, tensor<5xi32>) -> tensor<5xbf16>
  // CHECK-NEXT: %grad = mir.softmax_cross_entropy_backward %logits, %labels, %d : (tensor<?x3xbf16>, tensor<5xi32>, tensor<?xbf16>) -> tensor<5x3xbf16>
  %grad = mir.softmax_cross_entropy_backward %logits, %labels, %d : (tensor<?x3xbf16>, tensor<5xi32>, tensor<?xbf16>) -> tensor<5x3xbf16>
  func.return %grad : tensor<5x3xbf16>
}
