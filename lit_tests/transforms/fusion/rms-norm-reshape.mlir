// RUN: rlx-opt %s --split-input-file -p rlx-fuse-rms-norm-reshape | filecheck %s

// RLX fuse_rms_norm_reshape: the norm produces the leading-dims flatten [8, 512] itself; the flatten
// moves to its input, where it is a view (RLX gives the RmsNorm node the 2-D shape instead).
// CHECK-LABEL: func.func @flatten
// CHECK-NEXT:    %0 = mir.reshape %x new_shape = [8, 512] : (tensor<2x4x512xf32>) -> tensor<8x512xf32>
// CHECK-NEXT:    %1 = mir.rms_norm %0, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<8x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<8x512xf32>
// CHECK-NEXT:    func.return %1 : tensor<8x512xf32>
func.func @flatten(%x: tensor<2x4x512xf32>, %g: tensor<512xf32>, %b: tensor<512xf32>) -> tensor<8x512xf32> {
  %0 = mir.rms_norm %x, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<2x4x512xf32>
  %1 = mir.reshape %0 new_shape = [8, 512] : (tensor<2x4x512xf32>) -> tensor<8x512xf32>
  func.return %1 : tensor<8x512xf32>
}

// -----

// A dynamic leading dim flattens with -1.
// CHECK-LABEL: func.func @dynamic
// CHECK-NEXT:    %0 = mir.reshape %x new_shape = [-1, 16] : (tensor<?x4x16xf32>) -> tensor<?x16xf32>
// CHECK-NEXT:    %1 = mir.rms_norm %0
func.func @dynamic(%x: tensor<?x4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %0 = mir.rms_norm %x, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<?x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x4x16xf32>
  %1 = mir.reshape %0 new_shape = [-1, 16] : (tensor<?x4x16xf32>) -> tensor<?x16xf32>
  func.return %1 : tensor<?x16xf32>
}

// -----

// Not fused: a norm over the last two dims, a reshape that is not a leading flatten, a norm also returned.
// CHECK-LABEL: func.func @misses
// CHECK-NEXT:    %0 = mir.rms_norm %x, %g2
// CHECK-NEXT:    %1 = mir.reshape %0
// CHECK-NEXT:    %2 = mir.rms_norm %x, %g
// CHECK-NEXT:    %3 = mir.reshape %2 new_shape = [2, 2048]
// CHECK-NEXT:    %4 = mir.rms_norm %x, %g
// CHECK-NEXT:    %5 = mir.reshape %4 new_shape = [8, 512]
func.func @misses(%x: tensor<2x4x512xf32>, %g: tensor<512xf32>, %g2: tensor<4x512xf32>) -> (tensor<8x512xf32>, tensor<2x2048xf32>, tensor<8x512xf32>, tensor<2x4x512xf32>) {
  %0 = mir.rms_norm %x, %g2, %g2 axis = 1 eps = 1.000000e-06 : (tensor<2x4x512xf32>, tensor<4x512xf32>, tensor<4x512xf32>) -> tensor<2x4x512xf32>
  %1 = mir.reshape %0 new_shape = [8, 512] : (tensor<2x4x512xf32>) -> tensor<8x512xf32>
  %2 = mir.rms_norm %x, %g, %g axis = -1 eps = 1.000000e-06 : (tensor<2x4x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<2x4x512xf32>
  %3 = mir.reshape %2 new_shape = [2, 2048] : (tensor<2x4x512xf32>) -> tensor<2x2048xf32>
  %4 = mir.rms_norm %x, %g, %g axis = -1 eps = 1.000000e-06 : (tensor<2x4x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<2x4x512xf32>
  %5 = mir.reshape %4 new_shape = [8, 512] : (tensor<2x4x512xf32>) -> tensor<8x512xf32>
  func.return %1, %3, %5, %4 : tensor<8x512xf32>, tensor<2x2048xf32>, tensor<8x512xf32>, tensor<2x4x512xf32>
}
