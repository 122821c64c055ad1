// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @conv
// GENERIC-LABEL: "func.func"() <{sym_name = "conv"
func.func @conv(%x: tensor<2x4x9x9xf32>, %w: tensor<8x4x3x3xf32>, %wg: tensor<6x2x3x3xf32>) -> tensor<2x6x5x5xf32> {
  // CHECK-NEXT: %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  // GENERIC: "mir.conv"(%x, %w) <{kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}> : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x7xf32>
  // Grouped, strided, padded and dilated: H = (9 + 2 - 3) / 2 + 1, W = (9 + 0 - 5) / 1 + 1.
  // CHECK-NEXT: %1 = mir.conv %x, %wg kernel_size = [3, 3] stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x5x5xf32>
  // GENERIC: "mir.conv"(%x, %wg) <{kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 1>, padding = array<i64: 1, 0>, dilation = array<i64: 1, 2>, groups = 2 : i64}>
  %1 = mir.conv %x, %wg kernel_size = [3, 3] stride = [2, 1] padding = [1, 0] dilation = [1, 2] groups = 2 : (tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) -> tensor<2x6x5x5xf32>
  func.return %1 : tensor<2x6x5x5xf32>
}

// -----

// A `?` batch and width flow through to the result.
// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%x: tensor<?x3x8x?xf16>, %w: tensor<5x3x2x2xf16>) -> tensor<?x5x4x?xf16> {
  // CHECK-NEXT: %0 = mir.conv %x, %w kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<?x3x8x?xf16>, tensor<5x3x2x2xf16>) -> tensor<?x5x4x?xf16>
  %0 = mir.conv %x, %w kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<?x3x8x?xf16>, tensor<5x3x2x2xf16>) -> tensor<?x5x4x?xf16>
  func.return %0 : tensor<?x5x4x?xf16>
}

// -----

// CHECK-LABEL: func.func @pool
// GENERIC-LABEL: "func.func"() <{sym_name = "pool"
func.func @pool(%x: tensor<?x4x9x8xf32>) -> tensor<?x4x5x4xf32> {
  // CHECK-NEXT: %0 = mir.pool %x kind = max kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<?x4x9x8xf32>) -> tensor<?x4x4x4xf32>
  // GENERIC: "mir.pool"(%x) <{kind = #mir<reduce_kind max>, kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>}> : (tensor<?x4x9x8xf32>) -> tensor<?x4x4x4xf32>
  %0 = mir.pool %x kind = max kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<?x4x9x8xf32>) -> tensor<?x4x4x4xf32>
  // CHECK-NEXT: %1 = mir.pool %x kind = mean kernel_size = [3, 2] stride = [2, 2] padding = [1, 0] : (tensor<?x4x9x8xf32>) -> tensor<?x4x5x4xf32>
  // GENERIC: "mir.pool"(%x) <{kind = #mir<reduce_kind mean>, kernel_size = array<i64: 3, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 0>}>
  %1 = mir.pool %x kind = mean kernel_size = [3, 2] stride = [2, 2] padding = [1, 0] : (tensor<?x4x9x8xf32>) -> tensor<?x4x5x4xf32>
  func.return %1 : tensor<?x4x5x4xf32>
}
