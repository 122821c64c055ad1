// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @elementwise_region
// GENERIC-LABEL: "func.func"() <{sym_name = "elementwise_region"
func.func @elementwise_region(%x: tensor<4x8xf32>, %y: tensor<4x1xf32>, %z: tensor<8xf32>) -> tensor<4x8xf32> {
  // NumPy broadcasting inside the body: [4, 1] and [8] both broadcast to [4, 8].
  // CHECK-NEXT: %0 = mir.elementwise_region (%x, %y, %z) : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x1xf32>, %c: tensor<8xf32>):
  // CHECK-NEXT:   %1 = mir.add %a, %b : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT:   %2 = mir.mul %1, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT:   %3 = mir.relu %2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT:   mir.yield %3 : tensor<4x8xf32>
  // CHECK-NEXT: }
  // GENERIC: %0 = "mir.elementwise_region"(%x, %y, %z) ({
  // GENERIC: "mir.yield"(%3) : (tensor<4x8xf32>) -> ()
  // GENERIC-NEXT: }) : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = mir.elementwise_region (%x, %y, %z) : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x1xf32>, %c: tensor<8xf32>):
    %1 = mir.add %a, %b : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %2 = mir.mul %1, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %3 = mir.relu %2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    mir.yield %3 : tensor<4x8xf32>
  }
  func.return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @elementwise_region_results
func.func @elementwise_region_results(%x: tensor<3xf32>, %t: tensor<f32>) -> (tensor<3xi1>, tensor<3xbf16>) {
  // Several results; a compare step keeps its i1 type, a cast step changes the dtype.
  // CHECK-NEXT: %0, %1 = mir.elementwise_region (%x, %t) : (tensor<3xf32>, tensor<f32>) -> (tensor<3xi1>, tensor<3xbf16>) {
  // CHECK-NEXT: ^bb0(%a: tensor<3xf32>, %b: tensor<f32>):
  // CHECK-NEXT:   %2 = mir.compare gt, %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  // CHECK-NEXT:   %3 = mir.where %2, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  // CHECK-NEXT:   %4 = mir.cast %3 : (tensor<3xf32>) -> tensor<3xbf16>
  // CHECK-NEXT:   mir.yield %2, %4 : tensor<3xi1>, tensor<3xbf16>
  // CHECK-NEXT: }
  %0, %1 = mir.elementwise_region (%x, %t) : (tensor<3xf32>, tensor<f32>) -> (tensor<3xi1>, tensor<3xbf16>) {
  ^bb0(%a: tensor<3xf32>, %b: tensor<f32>):
    %2 = mir.compare gt, %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
    %3 = mir.where %2, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    %4 = mir.cast %3 : (tensor<3xf32>) -> tensor<3xbf16>
    mir.yield %2, %4 : tensor<3xi1>, tensor<3xbf16>
  }
  func.return %0, %1 : tensor<3xi1>, tensor<3xbf16>
}

// -----

// CHECK-LABEL: func.func @fused_matmul_epilogue
// GENERIC-LABEL: "func.func"() <{sym_name = "fused_matmul_epilogue"
func.func @fused_matmul_epilogue(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>, %b: tensor<5xf32>, %r: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  // CHECK-NEXT: %0 = mir.fused_matmul_epilogue %x, %w (%b, %r) : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  // CHECK-NEXT: ^bb0(%acc: tensor<2x3x5xf32>, %bias: tensor<5xf32>, %res: tensor<2x3x5xf32>):
  // CHECK-NEXT:   %1 = mir.add %acc, %bias : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  // CHECK-NEXT:   %2 = mir.gelu %1 : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  // CHECK-NEXT:   %3 = mir.add %2, %res : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  // CHECK-NEXT:   mir.yield %3 : tensor<2x3x5xf32>
  // CHECK-NEXT: }
  // GENERIC: %0 = "mir.fused_matmul_epilogue"(%x, %w, %b, %r) ({
  %0 = mir.fused_matmul_epilogue %x, %w (%b, %r) : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%acc: tensor<2x3x5xf32>, %bias: tensor<5xf32>, %res: tensor<2x3x5xf32>):
    %1 = mir.add %acc, %bias : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
    %2 = mir.gelu %1 : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
    %3 = mir.add %2, %res : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
    mir.yield %3 : tensor<2x3x5xf32>
  }
  // No extras; the epilogue only scales and casts.
  // CHECK: = mir.fused_matmul_epilogue %x, %w () : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xbf16> {
  // CHECK-NEXT: ^bb0(%acc: tensor<2x3x5xf32>):
  // CHECK-NEXT:   %s = mir.constant dense<5.000000e-01> : tensor<f32>
  %4 = mir.fused_matmul_epilogue %x, %w () : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xbf16> {
  ^bb0(%acc: tensor<2x3x5xf32>):
    %s = mir.constant dense<0.5> : tensor<f32>
    %5 = mir.mul %acc, %s : (tensor<2x3x5xf32>, tensor<f32>) -> tensor<2x3x5xf32>
    %6 = mir.cast %5 : (tensor<2x3x5xf32>) -> tensor<2x3x5xbf16>
    mir.yield %6 : tensor<2x3x5xbf16>
  }
  func.return %0 : tensor<2x3x5xf32>
}
