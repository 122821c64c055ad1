// Each matmul reading a 2-D rlx.param weight becomes a dequant_matmul; the parameter is
// replaced by <name>.q/.scale/.zp (for GGUF schemes <name>.q alone); a rank-3 lhs is
// flattened and the result reshaped back; a parameter read by anything else is kept.
// RUN: rlx-opt %s -p 'rlx-quantize-weights{scheme=int4_block block-size=8}' | filecheck %s
// RUN: rlx-opt %s -p 'rlx-quantize-weights{scheme=gguf_q8_0 ops=w}' | filecheck %s --check-prefix=GGUF
// RUN: not rlx-opt %s -p 'rlx-quantize-weights{scheme=int8_block block-size=5}' 2>&1 | filecheck %s --check-prefix=BLOCK
// RUN: not rlx-opt %s -p 'rlx-quantize-weights{scheme=gguf_q4_k}' 2>&1 | filecheck %s --check-prefix=SUPER
// RUN: not rlx-opt %s -p 'rlx-quantize-weights{scheme=int9}' 2>&1 | filecheck %s --check-prefix=SCHEME

// CHECK-LABEL: func.func @f
// CHECK-SAME:    %w_q: tensor<16x8xui8> {rlx.name = "w.q", rlx.param}, %w_scale: tensor<4x8xf32> {rlx.name = "w.scale", rlx.param}, %w_zp: tensor<1xf32> {rlx.name = "w.zp", rlx.param}
// CHECK-SAME:    %u: tensor<32x8xf32> {rlx.param, rlx.name = "u"}
// CHECK-NEXT:    %[[X:.*]] = mir.reshape %x new_shape = [-1, 32] : (tensor<2x4x32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT:    %[[Y:.*]] = mir.dequant_matmul %[[X]], %w_q, %w_scale, %w_zp scheme = int4_block block_size = 8
// CHECK-NEXT:    %[[R:.*]] = mir.reshape %[[Y]] new_shape = [2, 4, 8] : (tensor<8x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    mir.matmul %x, %u
// CHECK:         func.return

// GGUF-LABEL: func.func @f
// GGUF-SAME:    %w_q: tensor<272xui8> {rlx.name = "w.q", rlx.param}
// GGUF:         mir.dequant_matmul %{{.*}}, %w_q scheme = gguf_q8_0 : (tensor<8x32xf32>, tensor<272xui8>) -> tensor<8x8xf32>

// BLOCK: quantize-weights.mlir:[[# @LINE + 4]]:3: error: 'rlx-quantize-weights' cannot pack 'w': K = 32 is not a multiple of the block size 5
// SCHEME: error: unknown scheme 'int9'
// SUPER: quantize-weights.mlir:[[# @LINE + 2]]:3: error: 'rlx-quantize-weights' cannot pack 'w': K = 32 is not a multiple of gguf_q4_k's block of 256 values
func.func @f(%x: tensor<2x4x32xf32> {rlx.name = "x"}, %w: tensor<32x8xf32> {rlx.param, rlx.name = "w"}, %u: tensor<32x8xf32> {rlx.param, rlx.name = "u"}) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<32x8xf32>) {
  %0 = mir.matmul %x, %w : (tensor<2x4x32xf32>, tensor<32x8xf32>) -> tensor<2x4x8xf32>
  %1 = mir.matmul %x, %u : (tensor<2x4x32xf32>, tensor<32x8xf32>) -> tensor<2x4x8xf32>
  %2 = mir.relu %u : (tensor<32x8xf32>) -> tensor<32x8xf32>
  func.return %0, %1, %2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<32x8xf32>
}
