// RUN: not rlx-opt %s -p rlx-lower-hir --split-input-file 2>&1 | filecheck %s --check-prefix=VERIFY

// A malformed block is a located verifier error before any pass runs (RLX's LowerError).
func.func @missing_bias(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // VERIFY: lower-hir-errors.mlir:[[# @LINE + 1]]:3: error: 'hir.linear_fused' expects 3 operands (x, w, bias), got 2: missing bias
  %0 = "hir.linear_fused"(%x, %w) : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @attention_without_mask(%q: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  // VERIFY: lower-hir-errors.mlir:[[# @LINE + 1]]:3: error: 'hir.attention' mask_kind bias requires a mask operand
  %0 = hir.attention %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = bias : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}
