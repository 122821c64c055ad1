// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @vision
// GENERIC-LABEL: "func.func"() <{sym_name = "vision"
func.func @vision(%x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>, %w: tensor<4x3x3x2xf32>, %q: tensor<1x2x12x8xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x4x6x6xf32>, tensor<1x2x12x8xf32>, tensor<2x3x6x5xf32>) {
  // CHECK-NEXT: %0 = mir.layer_norm_2d %x, %g, %g eps = 1.000000e-06 : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  // GENERIC: "mir.layer_norm_2d"(%x, %g, %g) <{eps = 1.000000e-06 : f32}> : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  %0 = mir.layer_norm_2d %x, %g, %g eps = 1.0e-06 : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  // CHECK-NEXT: %1 = mir.resize_nearest_2x %x : (tensor<2x4x3x3xf32>) -> tensor<2x4x6x6xf32>
  // GENERIC: "mir.resize_nearest_2x"(%x) : (tensor<2x4x3x3xf32>) -> tensor<2x4x6x6xf32>
  %1 = mir.resize_nearest_2x %x : (tensor<2x4x3x3xf32>) -> tensor<2x4x6x6xf32>
  // CHECK-NEXT: %2 = mir.axial_rope_2d %q end_x = 3 end_y = 2 head_dim = 8 num_heads = 2 theta = 1.000000e+04 repeat_factor = 2 inverse : (tensor<1x2x12x8xf32>) -> tensor<1x2x12x8xf32>
  // GENERIC: "mir.axial_rope_2d"(%q) <{end_x = 3 : i64, end_y = 2 : i64, head_dim = 8 : i64, num_heads = 2 : i64, theta = 1.000000e+04 : f32, repeat_factor = 2 : i64, inverse}> : (tensor<1x2x12x8xf32>) -> tensor<1x2x12x8xf32>
  %2 = mir.axial_rope_2d %q end_x = 3 end_y = 2 head_dim = 8 num_heads = 2 theta = 10000.0 repeat_factor = 2 inverse : (tensor<1x2x12x8xf32>) -> tensor<1x2x12x8xf32>
  // CHECK-NEXT: %3 = mir.conv_transpose_2d %x, %w kernel_size = [3, 2] stride = [2, 1] padding = [1, 0] output_padding = [1, 0] dilation = [1, 2] groups = 1 : (tensor<2x4x3x3xf32>, tensor<4x3x3x2xf32>) -> tensor<2x3x6x5xf32>
  %3 = mir.conv_transpose_2d %x, %w kernel_size = [3, 2] stride = [2, 1] padding = [1, 0] output_padding = [1, 0] dilation = [1, 2] groups = 1 : (tensor<2x4x3x3xf32>, tensor<4x3x3x2xf32>) -> tensor<2x3x6x5xf32>
  func.return %0, %1, %2, %3 : tensor<2x4x3x3xf32>, tensor<2x4x6x6xf32>, tensor<1x2x12x8xf32>, tensor<2x3x6x5xf32>
}

// -----

// Dynamic dims stay dynamic (doubled when known).
// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%x: tensor<?x2x?x3xbf16>, %w: tensor<2x1x2x2xbf16>) -> (tensor<?x2x?x6xbf16>, tensor<?x2x?x4xbf16>) {
  // CHECK-NEXT: %0 = mir.resize_nearest_2x %x : (tensor<?x2x?x3xbf16>) -> tensor<?x2x?x6xbf16>
  %0 = mir.resize_nearest_2x %x : (tensor<?x2x?x3xbf16>) -> tensor<?x2x?x6xbf16>
  // CHECK-NEXT: %1 = mir.conv_transpose_2d %x, %w kernel_size = [2, 2] stride = [1, 1] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<?x2x?x3xbf16>, tensor<2x1x2x2xbf16>) -> tensor<?x2x?x4xbf16>
  %1 = mir.conv_transpose_2d %x, %w kernel_size = [2, 2] stride = [1, 1] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<?x2x?x3xbf16>, tensor<2x1x2x2xbf16>) -> tensor<?x2x?x4xbf16>
  func.return %0, %1 : tensor<?x2x?x6xbf16>, tensor<?x2x?x4xbf16>
}
