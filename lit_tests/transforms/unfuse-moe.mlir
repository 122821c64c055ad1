// RUN: rlx-opt %s -p rlx-unfuse | filecheck %s

// lora_matmul expands to its chain; grouped_matmul is a primitive and stays.
// CHECK-LABEL: func.func @lora
// CHECK-NEXT:    %[[XA:.*]] = mir.matmul %x, %a : (tensor<3x4xbf16>, tensor<4x2xbf16>) -> tensor<3x2xbf16>
// CHECK-NEXT:    %[[AB:.*]] = mir.matmul %[[XA]], %b : (tensor<3x2xbf16>, tensor<2x5xbf16>) -> tensor<3x5xbf16>
// CHECK-NEXT:    %[[S:.*]] = mir.constant dense<2.500000e-01> : tensor<bf16>
// CHECK-NEXT:    %[[M:.*]] = mir.mul %[[AB]], %[[S]] : (tensor<3x5xbf16>, tensor<bf16>) -> tensor<3x5xbf16>
// CHECK-NEXT:    %[[XW:.*]] = mir.matmul %x, %w : (tensor<3x4xbf16>, tensor<4x5xbf16>) -> tensor<3x5xbf16>
// CHECK-NEXT:    %[[R:.*]] = mir.add %[[XW]], %[[M]] : (tensor<3x5xbf16>, tensor<3x5xbf16>) -> tensor<3x5xbf16>
// CHECK-NEXT:    %{{.*}} = mir.grouped_matmul %x, %g, %e
func.func @lora(%x: tensor<3x4xbf16>, %w: tensor<4x5xbf16>, %a: tensor<4x2xbf16>, %b: tensor<2x5xbf16>, %g: tensor<2x4x5xbf16>, %e: tensor<3xi64>) -> (tensor<3x5xbf16>, tensor<3x5xbf16>) {
  %0 = mir.lora_matmul %x, %w, %a, %b scale = 2.500000e-01 : (tensor<3x4xbf16>, tensor<4x5xbf16>, tensor<4x2xbf16>, tensor<2x5xbf16>) -> tensor<3x5xbf16>
  %1 = mir.grouped_matmul %x, %g, %e : (tensor<3x4xbf16>, tensor<2x4x5xbf16>, tensor<3xi64>) -> tensor<3x5xbf16>
  func.return %0, %1 : tensor<3x5xbf16>, tensor<3x5xbf16>
}
