// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @masks
// GENERIC-LABEL: "func.func"() <{sym_name = "masks"
func.func @masks(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x8xf32>, %keep: tensor<2x5xf32>, %bias: tensor<1x4x3x5xf32>) -> tensor<2x4x3x8xf32> {
  // CHECK-NEXT: %0 = hir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = none : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // GENERIC: "hir.attention"(%q, %k, %v) <{num_heads = 4 : i64, head_dim = 8 : i64, mask_kind = #mir<mask_kind none>}> : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  %0 = hir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = none : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // CHECK-NEXT: %1 = hir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = causal : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  %1 = hir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = causal : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // CHECK-NEXT: %2 = hir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = sliding_window window = 2 : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // GENERIC: "hir.attention"(%q, %k, %v) <{num_heads = 4 : i64, head_dim = 8 : i64, mask_kind = #mir<mask_kind sliding_window>, window = 2 : i64}>
  %2 = hir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = sliding_window window = 2 : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // CHECK-NEXT: %3 = hir.attention %q, %k, %v, %keep num_heads = 4 head_dim = 8 mask_kind = custom : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x5xf32>) -> tensor<2x4x3x8xf32>
  // GENERIC: "hir.attention"(%q, %k, %v, %keep) <{num_heads = 4 : i64, head_dim = 8 : i64, mask_kind = #mir<mask_kind custom>}>
  %3 = hir.attention %q, %k, %v, %keep num_heads = 4 head_dim = 8 mask_kind = custom : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x5xf32>) -> tensor<2x4x3x8xf32>
  // CHECK-NEXT: %4 = hir.attention %q, %k, %v, %bias num_heads = 4 head_dim = 8 mask_kind = bias {rlx.label = "layers.3.attn"} : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<1x4x3x5xf32>) -> tensor<2x4x3x8xf32>
  %4 = hir.attention %q, %k, %v, %bias num_heads = 4 head_dim = 8 mask_kind = bias {rlx.label = "layers.3.attn"} : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<1x4x3x5xf32>) -> tensor<2x4x3x8xf32>
  func.return %4 : tensor<2x4x3x8xf32>
}

// -----

// CHECK-LABEL: func.func @rope
func.func @rope(%x: tensor<?x4x6x8xf32>, %cos: tensor<6x2xf32>, %sin: tensor<6x2xf32>) -> tensor<?x4x6x8xf32> {
  // CHECK-NEXT: %0 = hir.rope %x, %cos, %sin head_dim = 8 n_rot = 4 : (tensor<?x4x6x8xf32>, tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<?x4x6x8xf32>
  // GENERIC: "hir.rope"(%x, %cos, %sin) <{head_dim = 8 : i64, n_rot = 4 : i64}> : (tensor<?x4x6x8xf32>, tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<?x4x6x8xf32>
  %0 = hir.rope %x, %cos, %sin head_dim = 8 n_rot = 4 : (tensor<?x4x6x8xf32>, tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<?x4x6x8xf32>
  func.return %0 : tensor<?x4x6x8xf32>
}
