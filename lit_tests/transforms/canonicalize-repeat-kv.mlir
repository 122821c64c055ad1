// RUN: rlx-opt %s -p rlx-canonicalize | filecheck %s
// RUN: rlx-opt %s -p rlx-canonicalize | rlx-run - --func gqa --seed 3 > %t.grouped
// RUN: rlx-run %s --func gqa --seed 3 > %t.repeated
// Attention of GQA-repeated keys and values (RLX's repeat_kv: a concat of single-head narrows)
// reads the grouped KV heads itself: the copies are not built, the result is the same.

// CHECK-LABEL: func.func @gqa
// CHECK-NOT: mir.concat
// CHECK-NOT: mir.narrow
// CHECK: mir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = causal : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>)
func.func @gqa(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32> {
  %k0 = mir.narrow %k axis = 1 start = 0 len = 1 : (tensor<1x2x3x8xf32>) -> tensor<1x1x3x8xf32>
  %k1 = mir.narrow %k axis = 1 start = 1 len = 1 : (tensor<1x2x3x8xf32>) -> tensor<1x1x3x8xf32>
  %kr = mir.concat %k0, %k0, %k1, %k1 axis = 1 : (tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>) -> tensor<1x4x3x8xf32>
  %v0 = mir.narrow %v axis = 1 start = 0 len = 1 : (tensor<1x2x3x8xf32>) -> tensor<1x1x3x8xf32>
  %v1 = mir.narrow %v axis = 1 start = 1 len = 1 : (tensor<1x2x3x8xf32>) -> tensor<1x1x3x8xf32>
  %vr = mir.concat %v0, %v0, %v1, %v1 axis = 1 : (tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>) -> tensor<1x4x3x8xf32>
  %o = mir.attention %q, %kr, %vr num_heads = 4 head_dim = 8 mask_kind = causal : (tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  func.return %o : tensor<1x4x3x8xf32>
}

// The heads in another order (k1 before k0) are not GQA's reading: kept.
// CHECK-LABEL: func.func @shuffled
// CHECK: mir.concat
// CHECK: mir.attention %q, %kr, %vr
func.func @shuffled(%q: tensor<1x2x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %k0 = mir.narrow %k axis = 1 start = 0 len = 1 : (tensor<1x2x3x8xf32>) -> tensor<1x1x3x8xf32>
  %k1 = mir.narrow %k axis = 1 start = 1 len = 1 : (tensor<1x2x3x8xf32>) -> tensor<1x1x3x8xf32>
  %kr = mir.concat %k1, %k0 axis = 1 : (tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>) -> tensor<1x2x3x8xf32>
  %v0 = mir.narrow %v axis = 1 start = 0 len = 1 : (tensor<1x2x3x8xf32>) -> tensor<1x1x3x8xf32>
  %v1 = mir.narrow %v axis = 1 start = 1 len = 1 : (tensor<1x2x3x8xf32>) -> tensor<1x1x3x8xf32>
  %vr = mir.concat %v1, %v0 axis = 1 : (tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>) -> tensor<1x2x3x8xf32>
  %o = mir.attention %q, %kr, %vr num_heads = 2 head_dim = 8 mask_kind = causal : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32>
  func.return %o : tensor<1x2x3x8xf32>
}

// RUN: diff %t.grouped %t.repeated
