// RUN: rlx-opt %s --split-input-file -p rlx-fuse-matmul-epilogue | filecheck %s

// Bias, activation, residual add and a scale run in the matmul's kernel.
// CHECK-LABEL: func.func @epilogue
// CHECK-NEXT:    %s = mir.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %0 = mir.fused_matmul_epilogue %x, %w (%b, %r, %s) : (tensor<8x64xf32>, tensor<64x32xf32>, tensor<32xf32>, tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32> {
// CHECK-NEXT:    ^bb0(%acc: tensor<8x32xf32>, %b_1: tensor<32xf32>, %r_1: tensor<8x32xf32>, %s_1: tensor<f32>):
// CHECK-NEXT:      %1 = mir.add %acc, %b_1
// CHECK-NEXT:      %2 = mir.gelu %1
// CHECK-NEXT:      %a = mir.add %r_1, %2
// CHECK-NEXT:      %3 = mir.mul %a, %s_1
// CHECK-NEXT:      mir.yield %3 : tensor<8x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0
func.func @epilogue(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>, %r: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = mir.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %1 = mir.add %0, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = mir.gelu %1 : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %s = mir.constant dense<0.5> : tensor<f32>
  %a = mir.add %r, %2 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %3 = mir.mul %a, %s : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  func.return %3 : tensor<8x32xf32>
}

// -----

// The chain stops at a value with a second consumer, and before an op that would enlarge the result.
// CHECK-LABEL: func.func @stops
// CHECK-NEXT:    %0 = mir.fused_matmul_epilogue %x, %w (%b) : {{.*}} {
// CHECK:           mir.add %acc
// CHECK-NEXT:      mir.yield
// CHECK:         %1 = mir.exp %0
// CHECK-NEXT:    %2 = mir.fused_matmul_epilogue %x, %w () : {{.*}} {
// CHECK-NEXT:    ^bb0(%acc: tensor<8x32xf32>):
// CHECK-NEXT:      mir.tanh %acc
// CHECK:         %3 = mir.add %2, %big
func.func @stops(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>, %big: tensor<2x8x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<2x8x32xf32>) {
  %0 = mir.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %1 = mir.add %0, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = mir.exp %1 : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %3 = mir.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %4 = mir.tanh %3 : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %5 = mir.add %4, %big : (tensor<8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  func.return %1, %2, %5 : tensor<8x32xf32>, tensor<8x32xf32>, tensor<2x8x32xf32>
}

// -----

// A matmul without an elementwise consumer is left alone.
// CHECK-LABEL: func.func @no_chain
// CHECK-NEXT:    %0 = mir.matmul
// CHECK-NEXT:    %1 = mir.softmax %0
func.func @no_chain(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> tensor<8x32xf32> {
  %0 = mir.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %1 = mir.softmax %0 axis = -1 : (tensor<8x32xf32>) -> tensor<8x32xf32>
  func.return %1 : tensor<8x32xf32>
}
