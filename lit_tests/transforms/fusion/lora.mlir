// RUN: rlx-opt %s --split-input-file -p rlx-fuse-lora | filecheck %s

// x @ w + s * ((x @ a) @ b), the base matmul first and the scale on the right.
// CHECK-LABEL: func.func @lora
// CHECK-NEXT:    %{{.*}} = mir.constant
// CHECK-NEXT:    %[[F:.*]] = mir.lora_matmul %x, %w, %a, %b scale = 5.000000e-01 : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:    func.return %[[F]]
func.func @lora(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x2xf32>, %b: tensor<2x5xf32>) -> tensor<2x3x5xf32> {
  %s = mir.constant dense<5.000000e-01> : tensor<f32>
  %0 = mir.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %1 = mir.matmul %x, %a : (tensor<2x3x4xf32>, tensor<4x2xf32>) -> tensor<2x3x2xf32>
  %2 = mir.matmul %1, %b : (tensor<2x3x2xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
  %3 = mir.mul %2, %s : (tensor<2x3x5xf32>, tensor<f32>) -> tensor<2x3x5xf32>
  %4 = mir.add %0, %3 : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  func.return %4 : tensor<2x3x5xf32>
}

// -----

// The adapter first, the scale on the left of the mul.
// CHECK-LABEL: func.func @lora_swapped
// CHECK:         %[[F:.*]] = mir.lora_matmul %x, %w, %a, %b scale = 2.000000e+00 : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<4x1xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    func.return %[[F]]
func.func @lora_swapped(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x1xf32>, %b: tensor<1x5xf32>) -> tensor<3x5xf32> {
  %s = mir.constant dense<2.000000e+00> : tensor<f32>
  %1 = mir.matmul %x, %a : (tensor<3x4xf32>, tensor<4x1xf32>) -> tensor<3x1xf32>
  %2 = mir.matmul %1, %b : (tensor<3x1xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %3 = mir.mul %s, %2 : (tensor<f32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %0 = mir.matmul %x, %w : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %4 = mir.add %3, %0 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %4 : tensor<3x5xf32>
}

// -----

// Without a mul the scale is 1.
// CHECK-LABEL: func.func @lora_unscaled
// CHECK-NEXT:    %[[F:.*]] = mir.lora_matmul %x, %w, %a, %b scale = 1.000000e+00
// CHECK-NEXT:    func.return %[[F]]
func.func @lora_unscaled(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x1xf32>, %b: tensor<1x5xf32>) -> tensor<3x5xf32> {
  %0 = mir.matmul %x, %w : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = mir.matmul %x, %a : (tensor<3x4xf32>, tensor<4x1xf32>) -> tensor<3x1xf32>
  %2 = mir.matmul %1, %b : (tensor<3x1xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %4 = mir.add %0, %2 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %4 : tensor<3x5xf32>
}

// -----

// Near misses stay unfused: the adapter reads another input; x @ a is also returned.
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT:     mir.lora_matmul
// CHECK:         func.return
func.func @near_misses(%x: tensor<3x4xf32>, %y: tensor<3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x1xf32>, %b: tensor<1x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x1xf32>) {
  %0 = mir.matmul %x, %w : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = mir.matmul %y, %a : (tensor<3x4xf32>, tensor<4x1xf32>) -> tensor<3x1xf32>
  %2 = mir.matmul %1, %b : (tensor<3x1xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %3 = mir.add %0, %2 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %4 = mir.matmul %x, %w : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %5 = mir.matmul %x, %a : (tensor<3x4xf32>, tensor<4x1xf32>) -> tensor<3x1xf32>
  %6 = mir.matmul %5, %b : (tensor<3x1xf32>, tensor<1x5xf32>) -> tensor<3x5xf32>
  %7 = mir.add %4, %6 : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %3, %7, %5 : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x1xf32>
}
