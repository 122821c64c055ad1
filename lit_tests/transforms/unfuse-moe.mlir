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

// dequant_grouped_matmul splits into the decoded experts and grouped_matmul, in x's
// accumulation dtype (f32 for bf16 x), rounded back to x's dtype.
// CHECK-LABEL: func.func @dequant_grouped
// CHECK-NEXT:    %[[W:.*]] = mir.dequant_moe_weights %q, %s, %z scheme = int4_block block_size = 4 : (tensor<3x4x5xui8>, tensor<3x2x5xf32>, tensor<1xf32>) -> tensor<3x8x5xf32>
// CHECK-NEXT:    %[[X:.*]] = mir.cast %x : (tensor<?x8xbf16>) -> tensor<?x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = mir.grouped_matmul %[[X]], %[[W]], %e : (tensor<?x8xf32>, tensor<3x8x5xf32>, tensor<?xi64>) -> tensor<?x5xf32>
// CHECK-NEXT:    %[[R:.*]] = mir.cast %[[Y]] : (tensor<?x5xf32>) -> tensor<?x5xbf16>
// CHECK-NEXT:    func.return %[[R]]
func.func @dequant_grouped(%x: tensor<?x8xbf16>, %q: tensor<3x4x5xui8>, %s: tensor<3x2x5xf32>, %z: tensor<1xf32>, %e: tensor<?xi64>) -> tensor<?x5xbf16> {
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = int4_block block_size = 4 : (tensor<?x8xbf16>, tensor<3x4x5xui8>, tensor<3x2x5xf32>, tensor<1xf32>, tensor<?xi64>) -> tensor<?x5xbf16>
  func.return %0 : tensor<?x5xbf16>
}

// A GGUF expert stack in f32: no casts.
// CHECK-LABEL: func.func @gguf
// CHECK-NEXT:    %[[W:.*]] = mir.dequant_moe_weights %q, %s, %s scheme = gguf_q8_0 : (tensor<2x3x34xui8>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x32x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = mir.grouped_matmul %x, %[[W]], %e : (tensor<4x32xf32>, tensor<2x32x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @gguf(%x: tensor<4x32xf32>, %q: tensor<2x3x34xui8>, %s: tensor<1xf32>, %e: tensor<4xi32>) -> tensor<4x3xf32> {
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %s, %e scheme = gguf_q8_0 : (tensor<4x32xf32>, tensor<2x3x34xui8>, tensor<1xf32>, tensor<1xf32>, tensor<4xi32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
