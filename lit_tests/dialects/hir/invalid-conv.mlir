// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @kernel_size(%x: tensor<2x8x4xf32>, %w: tensor<4x1x1x0xf32>, %p: tensor<2x0x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error@+1 {{'hir.depthwise_conv1d_causal' kernel_size must be >= 1, got 0}}
  %0 = hir.depthwise_conv1d_causal %x, %w, %p kernel_size = 0 : (tensor<2x8x4xf32>, tensor<4x1x1x0xf32>, tensor<2x0x4xf32>) -> tensor<2x8x4xf32>
  func.return %0 : tensor<2x8x4xf32>
}

// -----

func.func @x_rank(%x: tensor<8x4xf32>, %w: tensor<4x1x1x3xf32>, %p: tensor<2x4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'hir.depthwise_conv1d_causal' x must have rank 3, got [8, 4]}}
  %0 = hir.depthwise_conv1d_causal %x, %w, %p kernel_size = 3 : (tensor<8x4xf32>, tensor<4x1x1x3xf32>, tensor<2x4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @dynamic_channels(%x: tensor<2x8x?xf32>, %w: tensor<4x1x1x3xf32>, %p: tensor<2x2x4xf32>) -> tensor<2x8x?xf32> {
  // expected-error@+1 {{'hir.depthwise_conv1d_causal' x must have a static channel dim (the conv's group count)}}
  %0 = hir.depthwise_conv1d_causal %x, %w, %p kernel_size = 3 : (tensor<2x8x?xf32>, tensor<4x1x1x3xf32>, tensor<2x2x4xf32>) -> tensor<2x8x?xf32>
  func.return %0 : tensor<2x8x?xf32>
}

// -----

func.func @weight_shape(%x: tensor<2x8x4xf32>, %w: tensor<4x1x1x2xf32>, %p: tensor<2x2x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error@+1 {{'hir.depthwise_conv1d_causal' w shape [4, 1, 1, 2] must be [4, 1, 1, 3]}}
  %0 = hir.depthwise_conv1d_causal %x, %w, %p kernel_size = 3 : (tensor<2x8x4xf32>, tensor<4x1x1x2xf32>, tensor<2x2x4xf32>) -> tensor<2x8x4xf32>
  func.return %0 : tensor<2x8x4xf32>
}

// -----

func.func @left_pad_shape(%x: tensor<2x8x4xf32>, %w: tensor<4x1x1x3xf32>, %p: tensor<2x3x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error@+1 {{'hir.depthwise_conv1d_causal' left_pad shape [2, 3, 4] must be [2, 2, 4]}}
  %0 = hir.depthwise_conv1d_causal %x, %w, %p kernel_size = 3 : (tensor<2x8x4xf32>, tensor<4x1x1x3xf32>, tensor<2x3x4xf32>) -> tensor<2x8x4xf32>
  func.return %0 : tensor<2x8x4xf32>
}

// -----

func.func @two_dynamic(%x: tensor<?x?x4xf32>, %w: tensor<4x1x1x3xf32>, %p: tensor<?x2x4xf32>) -> tensor<?x?x4xf32> {
  // expected-error@+1 {{'hir.depthwise_conv1d_causal' x shape [?, ?, 4] may have at most one dynamic dim among batch and sequence (the lowering reshapes with one -1)}}
  %0 = hir.depthwise_conv1d_causal %x, %w, %p kernel_size = 3 : (tensor<?x?x4xf32>, tensor<4x1x1x3xf32>, tensor<?x2x4xf32>) -> tensor<?x?x4xf32>
  func.return %0 : tensor<?x?x4xf32>
}

// -----

func.func @dtype_mix(%x: tensor<2x8x4xf32>, %w: tensor<4x1x1x3xf16>, %p: tensor<2x2x4xf32>) -> tensor<2x8x4xf32> {
  // expected-error@+1 {{'hir.depthwise_conv1d_causal' w element type f16 differs from x's f32}}
  %0 = hir.depthwise_conv1d_causal %x, %w, %p kernel_size = 3 : (tensor<2x8x4xf32>, tensor<4x1x1x3xf16>, tensor<2x2x4xf32>) -> tensor<2x8x4xf32>
  func.return %0 : tensor<2x8x4xf32>
}
