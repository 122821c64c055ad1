// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @masks
// GENERIC-LABEL: "func.func"() <{sym_name = "masks"
func.func @masks(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x8xf32>, %keep: tensor<2x5xf32>, %bias: tensor<1x4x3x5xf32>) -> tensor<2x4x3x8xf32> {
  // CHECK-NEXT: %0 = mir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = none : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // GENERIC: "mir.attention"(%q, %k, %v) <{num_heads = 4 : i64, head_dim = 8 : i64, mask_kind = #mir<mask_kind none>}> : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  %0 = mir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = none : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // CHECK-NEXT: %1 = mir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = causal : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // GENERIC: "mir.attention"(%q, %k, %v) <{num_heads = 4 : i64, head_dim = 8 : i64, mask_kind = #mir<mask_kind causal>}>
  %1 = mir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = causal : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // CHECK-NEXT: %2 = mir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = sliding_window window = 2 : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // GENERIC: "mir.attention"(%q, %k, %v) <{num_heads = 4 : i64, head_dim = 8 : i64, mask_kind = #mir<mask_kind sliding_window>, window = 2 : i64}>
  %2 = mir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = sliding_window window = 2 : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x4x3x8xf32>
  // CHECK-NEXT: %3 = mir.attention %q, %k, %v, %keep num_heads = 4 head_dim = 8 mask_kind = custom : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x5xf32>) -> tensor<2x4x3x8xf32>
  // GENERIC: "mir.attention"(%q, %k, %v, %keep) <{num_heads = 4 : i64, head_dim = 8 : i64, mask_kind = #mir<mask_kind custom>}>
  %3 = mir.attention %q, %k, %v, %keep num_heads = 4 head_dim = 8 mask_kind = custom : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x5xf32>) -> tensor<2x4x3x8xf32>
  // CHECK-NEXT: %4 = mir.attention %q, %k, %v, %bias num_heads = 4 head_dim = 8 mask_kind = bias : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<1x4x3x5xf32>) -> tensor<2x4x3x8xf32>
  // GENERIC: "mir.attention"(%q, %k, %v, %bias) <{num_heads = 4 : i64, head_dim = 8 : i64, mask_kind = #mir<mask_kind bias>}>
  %4 = mir.attention %q, %k, %v, %bias num_heads = 4 head_dim = 8 mask_kind = bias : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<1x4x3x5xf32>) -> tensor<2x4x3x8xf32>
  func.return %4 : tensor<2x4x3x8xf32>
}

// -----

// Optional scale and soft-cap, a `?` batch and sequence, and bf16.
// CHECK-LABEL: func.func @options
func.func @options(%q: tensor<?x2x?x4xbf16>, %k: tensor<?x1x?x4xbf16>, %v: tensor<?x1x?x4xbf16>) -> tensor<?x2x?x4xbf16> {
  // CHECK-NEXT: %0 = mir.attention %q, %k, %v num_heads = 2 head_dim = 4 mask_kind = causal score_scale = 1.250000e-01 attn_logit_softcap = 5.000000e+01 : (tensor<?x2x?x4xbf16>, tensor<?x1x?x4xbf16>, tensor<?x1x?x4xbf16>) -> tensor<?x2x?x4xbf16>
  // GENERIC: "mir.attention"(%q, %k, %v) <{num_heads = 2 : i64, head_dim = 4 : i64, mask_kind = #mir<mask_kind causal>, score_scale = 1.250000e-01 : f32, attn_logit_softcap = 5.000000e+01 : f32}>
  %0 = mir.attention %q, %k, %v num_heads = 2 head_dim = 4 mask_kind = causal score_scale = 0.125 attn_logit_softcap = 50.0 : (tensor<?x2x?x4xbf16>, tensor<?x1x?x4xbf16>, tensor<?x1x?x4xbf16>) -> tensor<?x2x?x4xbf16>
  // CHECK-NEXT: %1 = mir.attention %q, %k, %v num_heads = 2 head_dim = 4 mask_kind = none score_scale = 5.000000e-01 : (tensor<?x2x?x4xbf16>, tensor<?x1x?x4xbf16>, tensor<?x1x?x4xbf16>) -> tensor<?x2x?x4xbf16>
  %1 = mir.attention %q, %k, %v num_heads = 2 head_dim = 4 mask_kind = none score_scale = 0.5 : (tensor<?x2x?x4xbf16>, tensor<?x1x?x4xbf16>, tensor<?x1x?x4xbf16>) -> tensor<?x2x?x4xbf16>
  // CHECK-NEXT: %2 = mir.attention %q, %k, %v num_heads = 2 head_dim = 4 mask_kind = none attn_logit_softcap = 3.000000e+01 : (tensor<?x2x?x4xbf16>, tensor<?x1x?x4xbf16>, tensor<?x1x?x4xbf16>) -> tensor<?x2x?x4xbf16>
  %2 = mir.attention %q, %k, %v num_heads = 2 head_dim = 4 mask_kind = none attn_logit_softcap = 30.0 : (tensor<?x2x?x4xbf16>, tensor<?x1x?x4xbf16>, tensor<?x1x?x4xbf16>) -> tensor<?x2x?x4xbf16>
  func.return %0 : tensor<?x2x?x4xbf16>
}

// -----

// CHECK-LABEL: func.func @rope
// GENERIC-LABEL: "func.func"() <{sym_name = "rope"
func.func @rope(%x: tensor<?x4x6x8xf32>, %cos: tensor<6x3xf32>, %sin: tensor<6x3xf32>, %cos_b: tensor<?x1x6x4xf32>, %sin_b: tensor<?x1x6x4xf32>) -> tensor<?x4x6x8xf32> {
  // CHECK-NEXT: %0 = mir.rope %x, %cos, %sin head_dim = 8 n_rot = 6 : (tensor<?x4x6x8xf32>, tensor<6x3xf32>, tensor<6x3xf32>) -> tensor<?x4x6x8xf32>
  // GENERIC: "mir.rope"(%x, %cos, %sin) <{head_dim = 8 : i64, n_rot = 6 : i64}> : (tensor<?x4x6x8xf32>, tensor<6x3xf32>, tensor<6x3xf32>) -> tensor<?x4x6x8xf32>
  %0 = mir.rope %x, %cos, %sin head_dim = 8 n_rot = 6 : (tensor<?x4x6x8xf32>, tensor<6x3xf32>, tensor<6x3xf32>) -> tensor<?x4x6x8xf32>
  // Per-batch tables broadcast over heads; full rotation.
  // CHECK-NEXT: %1 = mir.rope %0, %cos_b, %sin_b head_dim = 8 n_rot = 8 : (tensor<?x4x6x8xf32>, tensor<?x1x6x4xf32>, tensor<?x1x6x4xf32>) -> tensor<?x4x6x8xf32>
  %1 = mir.rope %0, %cos_b, %sin_b head_dim = 8 n_rot = 8 : (tensor<?x4x6x8xf32>, tensor<?x1x6x4xf32>, tensor<?x1x6x4xf32>) -> tensor<?x4x6x8xf32>
  func.return %1 : tensor<?x4x6x8xf32>
}
