// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-lower-group-norm,rlx-lower-resize-nearest-2x | filecheck %s
// RUN: not rlx-opt %s --split-input-file -p rlx-lower-resize-nearest-2x 2>&1 | filecheck %s --check-prefix=ERR

// Each pixel becomes a 2x2 block: a unit dim after H and W, expanded to 2, merged back.
// CHECK-LABEL: func.func @resize
// CHECK-NEXT:    %0 = mir.reshape %x new_shape = [-1, 2, 3, 1, 4, 1] : (tensor<?x2x3x4xbf16>) -> tensor<?x2x3x1x4x1xbf16>
// CHECK-NEXT:    %1 = mir.expand %0 target_shape = [-1, -1, -1, 2, -1, 2] : (tensor<?x2x3x1x4x1xbf16>) -> tensor<?x2x3x2x4x2xbf16>
// CHECK-NEXT:    %2 = mir.reshape %1 new_shape = [-1, 2, 6, 8] : (tensor<?x2x3x2x4x2xbf16>) -> tensor<?x2x6x8xbf16>
// CHECK-NEXT:    func.return %2
func.func @resize(%x: tensor<?x2x3x4xbf16>) -> tensor<?x2x6x8xbf16> {
  %0 = mir.resize_nearest_2x %x : (tensor<?x2x3x4xbf16>) -> tensor<?x2x6x8xbf16>
  func.return %0 : tensor<?x2x6x8xbf16>
}

// -----

// Groups as rows of a layer_norm (gamma 1, beta 0), then the per-channel affine.
// CHECK-LABEL: func.func @group_norm
// CHECK-NEXT:    %0 = mir.reshape %x new_shape = [2, 3, -1] : (tensor<2x6x3x?xf32>) -> tensor<2x3x?xf32>
// CHECK-NEXT:    %1 = mir.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK-NEXT:    %2 = mir.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK-NEXT:    %3 = mir.layer_norm %0, %1, %2 axis = 2 eps = 1.000000e-05 : (tensor<2x3x?xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x?xf32>
// CHECK-NEXT:    %4 = mir.reshape %3 new_shape = [2, 6, 3, -1] : (tensor<2x3x?xf32>) -> tensor<2x6x3x?xf32>
// CHECK-NEXT:    %5 = mir.reshape %g new_shape = [-1, 1, 1] : (tensor<6xf32>) -> tensor<6x1x1xf32>
// CHECK-NEXT:    %6 = mir.reshape %b new_shape = [-1, 1, 1] : (tensor<6xf32>) -> tensor<6x1x1xf32>
// CHECK-NEXT:    %7 = mir.mul %4, %5 : (tensor<2x6x3x?xf32>, tensor<6x1x1xf32>) -> tensor<2x6x3x?xf32>
// CHECK-NEXT:    %8 = mir.add %7, %6 : (tensor<2x6x3x?xf32>, tensor<6x1x1xf32>) -> tensor<2x6x3x?xf32>
// CHECK-NEXT:    func.return %8
func.func @group_norm(%x: tensor<2x6x3x?xf32>, %g: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6x3x?xf32> {
  %0 = mir.group_norm %x, %g, %b num_groups = 3 eps = 1.000000e-05 : (tensor<2x6x3x?xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x3x?xf32>
  func.return %0 : tensor<2x6x3x?xf32>
}

// -----

// ERR: lower-logical-kernels.mlir:[[# @LINE + 3]]:3: error: 'mir.resize_nearest_2x' cannot be lowered: shape [?, 2, ?, 1, 3, 1] has more than one dynamic dim
func.func @two_dynamic(%x: tensor<?x2x?x3xf32>) -> tensor<?x2x?x6xf32> {
  // expected-error@+1 {{'mir.resize_nearest_2x' cannot be lowered: shape [?, 2, ?, 1, 3, 1] has more than one dynamic dim}}
  %0 = mir.resize_nearest_2x %x : (tensor<?x2x?x3xf32>) -> tensor<?x2x?x6xf32>
  func.return %0 : tensor<?x2x?x6xf32>
}
