// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// A sparse SwiGLU mixture: dim 4, 3 experts of ffn 5, two per token.
// CHECK-LABEL: func.func @moe
// GENERIC-LABEL: "func.func"() <{sym_name = "moe"
func.func @moe(%x: tensor<2x3x4xf32>, %r: tensor<4x3xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK-NEXT: %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 2 normalize_top_k : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  // GENERIC: "hir.moe_swiglu"(%x, %r, %g, %u, %d) <{num_experts = 3 : i64, top_k = 2 : i64, normalize_top_k}>
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 2 normalize_top_k : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %1 = hir.moe_swiglu %0, %r, %g, %u, %d num_experts = 3 top_k = 1 {rlx.label = "layers.1.moe"} : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  // GENERIC: "hir.moe_swiglu"(%0, %r, %g, %u, %d) <{num_experts = 3 : i64, top_k = 1 : i64}> {rlx.label = "layers.1.moe"}
  %1 = hir.moe_swiglu %0, %r, %g, %u, %d num_experts = 3 top_k = 1 {rlx.label = "layers.1.moe"} : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  func.return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
