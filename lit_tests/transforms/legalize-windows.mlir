// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-legalize | filecheck %s

// Max pooling on the primitive target: padded with -inf (never the maximum), each window
// cell taken with narrow/reshape (stride 2 as a split axis), stacked on axis 2 and reduced.
// CHECK-LABEL: func.func @max
// CHECK-NEXT:    %0 = mir.constant dense<0xFF800000> : tensor<f32>
// CHECK-NEXT:    %1 = mir.expand %0 target_shape = [1, 2, 1, 3]
// CHECK:         %4 = mir.concat %1, %x, %3 axis = 2 : {{.*}} -> tensor<1x2x5x3xf32>
// CHECK-NEXT:    %5 = mir.narrow %4 axis = 2 start = 0 len = 4
// CHECK-NEXT:    %6 = mir.reshape %5 new_shape = [1, 2, 2, 2, 3]
// CHECK-NEXT:    %7 = mir.narrow %6 axis = 3 start = 0 len = 1
// CHECK:         %33 = mir.concat %29, %30, %31, %32 axis = 2 : {{.*}} -> tensor<1x2x4x2x1xf32>
// CHECK-NEXT:    %34 = mir.reduce max %33 axes = [2] : (tensor<1x2x4x2x1xf32>) -> tensor<1x2x2x1xf32>
// CHECK-NEXT:    func.return %34
func.func @max(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x2x1xf32> {
  %0 = mir.pool %x kind = max kernel_size = [2, 2] stride = [2, 2] padding = [1, 0] : (tensor<1x2x3x3xf32>) -> tensor<1x2x2x1xf32>
  func.return %0 : tensor<1x2x2x1xf32>
}

// -----

// Mean pooling: zero padding, a sum over the stacked cells, divided by each window's
// count of real (unpadded) cells.
// CHECK-LABEL: func.func @mean
// CHECK:         %21 = mir.reduce sum %20 axes = [2] : (tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %22 = mir.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 2.000000e+00, 1.000000e+00], [2.000000e+00, 4.000000e+00, 4.000000e+00, 2.000000e+00], [2.000000e+00, 4.000000e+00, 4.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00, 2.000000e+00, 1.000000e+00]]> : tensor<4x4xf32>
// CHECK-NEXT:    %23 = mir.div %21, %22
// CHECK-NEXT:    func.return %23
func.func @mean(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %0 = mir.pool %x kind = mean kernel_size = [2, 2] stride = [1, 1] padding = [1, 1] : (tensor<1x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

// A transposed conv: each window cell's gradient by one matmul, then tap by tap the
// cells placed by concats with zeros and added (no mir.gather, no product with a zero).
// CHECK-LABEL: func.func @convt
// CHECK:         %3 = mir.matmul %1, %2 : (tensor<1x1x4x2xf32>, tensor<1x2x4xf32>) -> tensor<1x1x4x4xf32>
// CHECK-NOT:     mir.gather
// CHECK-NOT:     mir.conv
// CHECK:         %7 = mir.narrow %6 axis = 2 start = 0 len = 1
// CHECK-NEXT:    %8 = mir.narrow %7 axis = 3 start = 0 len = 1
// CHECK:         %14 = mir.concat %9, %13 axis = 2 : {{.*}} -> tensor<1x1x3x2xf32>
// CHECK:         %23 = mir.add %22, %19 : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
// CHECK-COUNT-3: mir.add
// CHECK-NEXT:    func.return
func.func @convt(%x: tensor<1x2x2x2xf32>, %w: tensor<2x1x2x2xf32>) -> tensor<1x1x3x3xf32> {
  %0 = mir.conv_transpose_2d %x, %w kernel_size = [2, 2] stride = [1, 1] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<1x1x3x3xf32>
  func.return %0 : tensor<1x1x3x3xf32>
}
