// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// A plain f32 convolution: tensor.pad with zeros, then linalg.conv_2d_nchw_fchw. Equal strides
// print in full: the splat `dense<1>` would read back as one stored stride.
// CHECK-LABEL: func.func @conv
// CHECK:         [[P:%.*]] = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
// CHECK:           tensor.yield {{%.*}} : f32
// CHECK:         } : tensor<1x2x5x5xf32> to tensor<1x2x7x7xf32>
// CHECK:         linalg.conv_2d_nchw_fchw {strides = dense<[1, 1]> : tensor<2xi64>, dilations = dense<[1, 1]> : tensor<2xi64>} ins([[P]], %w : tensor<1x2x7x7xf32>, tensor<3x2x3x3xf32>)
func.func @conv(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32> {
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  func.return %0 : tensor<1x3x5x5xf32>
}

// -----

// Grouped: one generic over (n, g, f, oh, ow | c, kh, kw) reading x at oh * stride + kh * dilation.
// Rows no window reads are cut off first.
// CHECK-LABEL: func.func @grouped
// CHECK:         tensor.extract_slice {{%.*}}[0, 0, 0, 0] [1, 4, 5, 5] [1, 1, 1, 1] : tensor<1x4x6x6xf32> to tensor<1x4x5x5xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, ((d3 * 2) + d6), ((d4 * 2) + d7))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
func.func @grouped(%x: tensor<1x4x6x6xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x2x2xf32> {
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<1x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x2x2xf32>
  func.return %0 : tensor<1x6x2x2xf32>
}

// -----

// Max pooling pads with -inf; a [kh, kw] window operand gives the kernel loops their sizes.
// CHECK-LABEL: func.func @pool_max
// CHECK-DAG:     tensor.empty() : tensor<2x2xf32>
// CHECK-DAG:     arith.constant 0xff800000 : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d4), ((d3 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>]
// CHECK:           arith.maximumf
func.func @pool_max(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %0 = mir.pool %x kind = max kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

// Mean pooling divides by the number of real cells of each window, computed from the loop indices.
// CHECK-LABEL: func.func @pool_mean
// CHECK:         arith.addf
// CHECK:         linalg.index 2
// CHECK:         arith.minsi
// CHECK:         arith.maxsi
// CHECK:         arith.divf
func.func @pool_mean(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  %0 = mir.pool %x kind = mean kernel_size = [3, 3] stride = [2, 2] padding = [1, 1] : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  func.return %0 : tensor<1x1x3x3xf32>
}
