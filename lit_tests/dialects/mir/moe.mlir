// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @lora_matmul
// GENERIC-LABEL: "func.func"() <{sym_name = "lora_matmul"
func.func @lora_matmul(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x2xf32>, %b: tensor<2x5xf32>, %xd: tensor<?x4xbf16>, %wd: tensor<4x?xbf16>, %ad: tensor<4x1xbf16>, %bd: tensor<1x6xbf16>) -> tensor<2x3x5xf32> {
  // CHECK-NEXT: %0 = mir.lora_matmul %x, %w, %a, %b scale = 5.000000e-01 : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
  // GENERIC: "mir.lora_matmul"(%x, %w, %a, %b) <{scale = 5.000000e-01 : f32}> : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
  %0 = mir.lora_matmul %x, %w, %a, %b scale = 5.000000e-01 : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
  // A dynamic dim of w is refined by b's columns.
  // CHECK-NEXT: %1 = mir.lora_matmul %xd, %wd, %ad, %bd scale = 2.000000e+00 : (tensor<?x4xbf16>, tensor<4x?xbf16>, tensor<4x1xbf16>, tensor<1x6xbf16>) -> tensor<?x6xbf16>
  %1 = mir.lora_matmul %xd, %wd, %ad, %bd scale = 2.000000e+00 : (tensor<?x4xbf16>, tensor<4x?xbf16>, tensor<4x1xbf16>, tensor<1x6xbf16>) -> tensor<?x6xbf16>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @grouped_matmul
// GENERIC-LABEL: "func.func"() <{sym_name = "grouped_matmul"
func.func @grouped_matmul(%x: tensor<6x4xf32>, %w: tensor<3x4x5xf32>, %e: tensor<6xi64>, %xd: tensor<?x4xf16>, %wd: tensor<2x4x3xf16>, %ed: tensor<?xf32>) -> tensor<6x5xf32> {
  // CHECK-NEXT: %0 = mir.grouped_matmul %x, %w, %e : (tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  // GENERIC: "mir.grouped_matmul"(%x, %w, %e) : (tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  %0 = mir.grouped_matmul %x, %w, %e : (tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  // Dynamic M; RLX's float-encoded expert ids.
  // CHECK-NEXT: %1 = mir.grouped_matmul %xd, %wd, %ed : (tensor<?x4xf16>, tensor<2x4x3xf16>, tensor<?xf32>) -> tensor<?x3xf16>
  %1 = mir.grouped_matmul %xd, %wd, %ed : (tensor<?x4xf16>, tensor<2x4x3xf16>, tensor<?xf32>) -> tensor<?x3xf16>
  func.return %0 : tensor<6x5xf32>
}

// -----

// CHECK-LABEL: func.func @dequant_grouped_matmul
// GENERIC-LABEL: "func.func"() <{sym_name = "dequant_grouped_matmul"
func.func @dequant_grouped_matmul(%x: tensor<6x8xf32>, %q: tensor<3x8x5xi8>, %s: tensor<3x2x5xf32>, %z: tensor<1xf32>, %e: tensor<6xi64>, %xd: tensor<?x8xbf16>, %q4: tensor<2x4x3xui8>, %s4: tensor<2x2x3xf16>, %ed: tensor<?xi32>, %q8: tensor<2x8x3xui8>, %s8: tensor<2x3xf32>) -> tensor<6x5xf32> {
  // CHECK-NEXT: %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = int8_block block_size = 4 : (tensor<6x8xf32>, tensor<3x8x5xi8>, tensor<3x2x5xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  // GENERIC: "mir.dequant_grouped_matmul"(%x, %q, %s, %z, %e) <{scheme = #mir<quant_scheme int8_block>, block_size = 4 : i64}> : (tensor<6x8xf32>, tensor<3x8x5xi8>, tensor<3x2x5xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = int8_block block_size = 4 : (tensor<6x8xf32>, tensor<3x8x5xi8>, tensor<3x2x5xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  // Two 4-bit values per byte along K; dynamic M.
  // CHECK-NEXT: %1 = mir.dequant_grouped_matmul %xd, %q4, %s4, %z, %ed scheme = int4_block block_size = 4 : (tensor<?x8xbf16>, tensor<2x4x3xui8>, tensor<2x2x3xf16>, tensor<1xf32>, tensor<?xi32>) -> tensor<?x3xbf16>
  %1 = mir.dequant_grouped_matmul %xd, %q4, %s4, %z, %ed scheme = int4_block block_size = 4 : (tensor<?x8xbf16>, tensor<2x4x3xui8>, tensor<2x2x3xf16>, tensor<1xf32>, tensor<?xi32>) -> tensor<?x3xbf16>
  // FP8 with a per-column scale for each expert.
  // CHECK-NEXT: %2 = mir.dequant_grouped_matmul %x, %q8, %s8, %z, %e scheme = fp8_e4m3 : (tensor<6x8xf32>, tensor<2x8x3xui8>, tensor<2x3xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x3xf32>
  %2 = mir.dequant_grouped_matmul %x, %q8, %s8, %z, %e scheme = fp8_e4m3 : (tensor<6x8xf32>, tensor<2x8x3xui8>, tensor<2x3xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x3xf32>
  func.return %0 : tensor<6x5xf32>
}

// -----

// CHECK-LABEL: func.func @dequant_moe_weights
func.func @dequant_moe_weights(%q: tensor<3x8x5xi8>, %s: tensor<3x2x5xf16>, %z: tensor<1xf32>, %q4: tensor<2x16x3xui8>, %c: tensor<2x2x3xui8>) -> tensor<3x8x5xf16> {
  // CHECK-NEXT: %0 = mir.dequant_moe_weights %q, %s, %z scheme = int8_block block_size = 4 : (tensor<3x8x5xi8>, tensor<3x2x5xf16>, tensor<1xf32>) -> tensor<3x8x5xf16>
  %0 = mir.dequant_moe_weights %q, %s, %z scheme = int8_block block_size = 4 : (tensor<3x8x5xi8>, tensor<3x2x5xf16>, tensor<1xf32>) -> tensor<3x8x5xf16>
  // NVFP4: K is twice the rows; the result has the per-tensor scale's type.
  // CHECK-NEXT: %1 = mir.dequant_moe_weights %q4, %c, %z scheme = nvfp4_block : (tensor<2x16x3xui8>, tensor<2x2x3xui8>, tensor<1xf32>) -> tensor<2x32x3xf32>
  %1 = mir.dequant_moe_weights %q4, %c, %z scheme = nvfp4_block : (tensor<2x16x3xui8>, tensor<2x2x3xui8>, tensor<1xf32>) -> tensor<2x32x3xf32>
  func.return %0 : tensor<3x8x5xf16>
}

// -----

// GGUF expert stacks: w_q [E, N, row bytes]; K from the row bytes, the dtype from the unused [1] scale.
// CHECK-LABEL: func.func @gguf_experts
func.func @gguf_experts(%x: tensor<?x64xf32>, %q: tensor<4x3x36xui8>, %s: tensor<1xf16>, %z: tensor<1xf32>, %e: tensor<?xi64>, %qk: tensor<2x5x144xui8>) -> tensor<?x3xf32> {
  // CHECK-NEXT: %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = gguf_q4_0 : (tensor<?x64xf32>, tensor<4x3x36xui8>, tensor<1xf16>, tensor<1xf32>, tensor<?xi64>) -> tensor<?x3xf32>
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = gguf_q4_0 : (tensor<?x64xf32>, tensor<4x3x36xui8>, tensor<1xf16>, tensor<1xf32>, tensor<?xi64>) -> tensor<?x3xf32>
  // CHECK-NEXT: %1 = mir.dequant_moe_weights %qk, %s, %z scheme = gguf_q4_k : (tensor<2x5x144xui8>, tensor<1xf16>, tensor<1xf32>) -> tensor<2x256x5xf16>
  %1 = mir.dequant_moe_weights %qk, %s, %z scheme = gguf_q4_k : (tensor<2x5x144xui8>, tensor<1xf16>, tensor<1xf32>) -> tensor<2x256x5xf16>
  func.return %0 : tensor<?x3xf32>
}
