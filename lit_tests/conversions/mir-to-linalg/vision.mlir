// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// Nearest doubling: each pixel broadcast to a 2x2 block, then (H, 2) and (W, 2) merged.
// CHECK-LABEL: func.func @resize
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>]
// CHECK-SAME:      outs(%{{.*}} : tensor<1x2x3x2x4x2xf32>)
// CHECK:         tensor.collapse_shape {{.*}} {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64], [4 : i64, 5 : i64]] : tensor<1x2x3x2x4x2xf32> into tensor<1x2x6x8xf32>
func.func @resize(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  %0 = mir.resize_nearest_2x %x : (tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32>
  func.return %0 : tensor<1x2x6x8xf32>
}

// -----

// Statistics over the channel dim only; gamma and beta indexed by channel.
// CHECK-LABEL: func.func @layer_norm_2d
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]}
// CHECK:         affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @layer_norm_2d(%x: tensor<2x3x4x5xf32>, %g: tensor<3xf32>) -> tensor<2x3x4x5xf32> {
  %0 = mir.layer_norm_2d %x, %g, %g eps = 1.0e-06 : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  func.return %0 : tensor<2x3x4x5xf32>
}

// -----

// Channel pairs of x viewed as [B, H, L, D/2, 2]; cos/sin tables [L, D/2] are constants.
// CHECK-LABEL: func.func @rope
// CHECK:         arith.constant dense<{{.*}}> : tensor<4x2xf32>
// CHECK:         tensor.expand_shape %q {{\[}}[0 : i64], [1 : i64], [2 : i64], [3 : i64, 4 : i64]] output_shape [1, 1, 4, 2, 2]
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, 0)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, 1)>, affine_map<(d0, d1, d2, d3, d4) -> (d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d2, d3)>
// CHECK:         tensor.collapse_shape
func.func @rope(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %0 = mir.axial_rope_2d %q end_x = 2 end_y = 2 head_dim = 4 num_heads = 1 theta = 10000.0 repeat_factor = 1 : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

// Dims other than the batch that are `?` are fixed by the properties (the verifier
// checks them): x is cast to them, the batch stays dynamic (round 4: this was a
// Python TypeError).
// CHECK-LABEL: func.func @rope_dynamic
// CHECK:         arith.constant dense<{{.*}}> : tensor<12x4xf32>
// CHECK:         %[[STATIC:.*]] = tensor.cast %q : tensor<?x2x12x?xf32> to tensor<?x2x12x8xf32>
// CHECK:         tensor.expand_shape %[[STATIC]] {{\[}}[0 : i64], [1 : i64], [2 : i64], [3 : i64, 4 : i64]] output_shape [%{{.*}}, 2, 12, 4, 2]
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape
// CHECK:         tensor.cast %[[FLAT]] : tensor<?x2x12x8xf32> to tensor<?x2x12x?xf32>
func.func @rope_dynamic(%q: tensor<?x2x12x?xf32>) -> tensor<?x2x12x?xf32> {
  %r = mir.axial_rope_2d %q end_x = 3 end_y = 2 head_dim = 8 num_heads = 2 theta = 10000.0 repeat_factor = 2 : (tensor<?x2x12x?xf32>) -> tensor<?x2x12x?xf32>
  func.return %r : tensor<?x2x12x?xf32>
}

// -----

// A transposed convolution is conv's input gradient, lowered as a convolution.
// CHECK-LABEL: func.func @conv_transpose
// CHECK-NOT:     mir.
// CHECK:         linalg.generic
// CHECK:         func.return {{.*}} : tensor<1x3x4x4xf32>
func.func @conv_transpose(%x: tensor<1x2x2x2xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = mir.conv_transpose_2d %x, %w kernel_size = [3, 3] stride = [2, 2] padding = [1, 1] output_padding = [1, 1] dilation = [1, 1] groups = 1 : (tensor<1x2x2x2xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}
