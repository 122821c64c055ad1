// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @depthwise
// GENERIC-LABEL: "func.func"() <{sym_name = "depthwise"
func.func @depthwise(%x: tensor<2x8x16xf32>, %w: tensor<16x1x1x3xf32>, %pad: tensor<2x2x16xf32>) -> tensor<2x8x16xf32> {
  // CHECK-NEXT: %0 = hir.depthwise_conv1d_causal %x, %w, %pad kernel_size = 3 : (tensor<2x8x16xf32>, tensor<16x1x1x3xf32>, tensor<2x2x16xf32>) -> tensor<2x8x16xf32>
  // GENERIC: "hir.depthwise_conv1d_causal"(%x, %w, %pad) <{kernel_size = 3 : i64}> : (tensor<2x8x16xf32>, tensor<16x1x1x3xf32>, tensor<2x2x16xf32>) -> tensor<2x8x16xf32>
  %0 = hir.depthwise_conv1d_causal %x, %w, %pad kernel_size = 3 : (tensor<2x8x16xf32>, tensor<16x1x1x3xf32>, tensor<2x2x16xf32>) -> tensor<2x8x16xf32>
  func.return %0 : tensor<2x8x16xf32>
}

// -----

// A dynamic sequence; the batch of the left context refines x's.
// CHECK-LABEL: func.func @streaming
func.func @streaming(%x: tensor<?x?x4xbf16>, %w: tensor<4x1x1x2xbf16>, %pad: tensor<1x1x4xbf16>) -> tensor<1x?x4xbf16> {
  // CHECK-NEXT: %0 = hir.depthwise_conv1d_causal %x, %w, %pad kernel_size = 2 : (tensor<?x?x4xbf16>, tensor<4x1x1x2xbf16>, tensor<1x1x4xbf16>) -> tensor<1x?x4xbf16>
  %0 = hir.depthwise_conv1d_causal %x, %w, %pad kernel_size = 2 : (tensor<?x?x4xbf16>, tensor<4x1x1x2xbf16>, tensor<1x1x4xbf16>) -> tensor<1x?x4xbf16>
  func.return %0 : tensor<1x?x4xbf16>
}
