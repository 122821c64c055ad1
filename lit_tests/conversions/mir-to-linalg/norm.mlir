// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// rms_norm: mean(x^2) over the normalised dims, then x / sqrt(ms + eps) * gamma + beta in one generic.
// CHECK-LABEL: func.func @rms_norm
// CHECK:         iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x8xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         arith.divf
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK:           arith.constant 1.000000e-06 : f32
// CHECK:           math.sqrt
func.func @rms_norm(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = mir.rms_norm %x, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

// layer_norm computes the mean, then the variance of x - mean.
// CHECK-LABEL: func.func @layer_norm
// CHECK-COUNT-2: iterator_types = ["parallel", "reduction", "reduction"]
// CHECK:         arith.subf
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = mir.layer_norm %x, %g, %b axis = 1 eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

// group_norm views x as [N, G, C/G, spatial] and gamma/beta as [G, C/G].
// CHECK-LABEL: func.func @group_norm
// CHECK:         tensor.expand_shape %x {{.*}} output_shape [2, 3, 2, 3, 2] : tensor<2x6x3x2xf32> into tensor<2x3x2x3x2xf32>
// CHECK:         tensor.expand_shape %g {{.*}} output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK:         tensor.collapse_shape {{.*}} : tensor<2x3x2x3x2xf32> into tensor<2x6x3x2xf32>
func.func @group_norm(%x: tensor<2x6x3x2xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6x3x2xf32> {
  %0 = mir.group_norm %x, %g, %b num_groups = 3 eps = 1.000000e-05 : (tensor<2x6x3x2xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x3x2xf32>
  func.return %0 : tensor<2x6x3x2xf32>
}

// -----

// One elementwise generic reading the [C] operands at the channel loop.
// CHECK-LABEL: func.func @batch_norm_inference
// CHECK:       linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK:         arith.subf
// CHECK:         arith.divf
// CHECK-NOT:   mir.
func.func @batch_norm_inference(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %0 = mir.batch_norm_inference %x, %g, %b, %m, %v eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
