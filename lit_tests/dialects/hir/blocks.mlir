// RUN: RLX_ROUNDTRIP
// RUN: RLX_GENERIC_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// One layer: dim 16, 4 query heads of 4, 2 kv heads, ffn 24.
// CHECK-LABEL: func.func @layer
// GENERIC-LABEL: "func.func"() <{sym_name = "layer"
func.func @layer(%x: tensor<1x8x16xf32>, %g1: tensor<16xf32>, %b1: tensor<16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x8xf32>, %wv: tensor<16x8xf32>, %wo: tensor<16x16xf32>, %g2: tensor<16xf32>, %b2: tensor<16xf32>, %wg: tensor<16x24xf32>, %wu: tensor<16x24xf32>, %wd: tensor<24x16xf32>, %cos: tensor<8x2xf32>, %sin: tensor<8x2xf32>, %keep: tensor<1x8xf32>) -> (tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>) {
  // CHECK-NEXT: %0 = hir.llama_decoder_block %x, %g1, %b1, %wq, %wk, %wv, %wo, %g2, %b2, %wg, %wu, %wd, %cos, %sin num_heads = 4 head_dim = 4 num_kv_heads = 2 eps = 1.000000e-06 mask_kind = causal : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x24xf32>, tensor<16x24xf32>, tensor<24x16xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<1x8x16xf32>
  // GENERIC: "hir.llama_decoder_block"(%x, %g1, %b1, %wq, %wk, %wv, %wo, %g2, %b2, %wg, %wu, %wd, %cos, %sin) <{num_heads = 4 : i64, head_dim = 4 : i64, num_kv_heads = 2 : i64, eps = 1.000000e-06 : f32, mask_kind = #mir<mask_kind causal>}>
  %0 = hir.llama_decoder_block %x, %g1, %b1, %wq, %wk, %wv, %wo, %g2, %b2, %wg, %wu, %wd, %cos, %sin num_heads = 4 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = causal : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x24xf32>, tensor<16x24xf32>, tensor<24x16xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<1x8x16xf32>
  // CHECK-NEXT: %1 = hir.llama_decoder_block %0, %g1, %b1, %wq, %wk, %wv, %wo, %g2, %b2, %wg, %wu, %wd, %cos, %sin, %keep num_heads = 4 head_dim = 4 num_kv_heads = 2 eps = 1.000000e-05 mask_kind = custom {rlx.label = "layers.1"} : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x24xf32>, tensor<16x24xf32>, tensor<24x16xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<1x8xf32>) -> tensor<1x8x16xf32>
  // GENERIC: "hir.llama_decoder_block"(%0, %g1, %b1, %wq, %wk, %wv, %wo, %g2, %b2, %wg, %wu, %wd, %cos, %sin, %keep) <{num_heads = 4 : i64, head_dim = 4 : i64, num_kv_heads = 2 : i64, eps = 1.000000e-05 : f32, mask_kind = #mir<mask_kind custom>}> {rlx.label = "layers.1"}
  %1 = hir.llama_decoder_block %0, %g1, %b1, %wq, %wk, %wv, %wo, %g2, %b2, %wg, %wu, %wd, %cos, %sin, %keep num_heads = 4 head_dim = 4 num_kv_heads = 2 eps = 1.0e-5 mask_kind = custom {rlx.label = "layers.1"} : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x24xf32>, tensor<16x24xf32>, tensor<24x16xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<1x8xf32>) -> tensor<1x8x16xf32>
  // CHECK-NEXT: %2 = hir.llama_decoder_block %1, %g1, %b1, %wq, %wk, %wv, %wo, %g2, %b2, %wg, %wu, %wd, %cos, %sin num_heads = 4 head_dim = 4 num_kv_heads = 2 eps = 1.000000e-06 mask_kind = sliding_window window = 3 : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x24xf32>, tensor<16x24xf32>, tensor<24x16xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<1x8x16xf32>
  %2 = hir.llama_decoder_block %1, %g1, %b1, %wq, %wk, %wv, %wo, %g2, %b2, %wg, %wu, %wd, %cos, %sin num_heads = 4 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = sliding_window window = 3 : (tensor<1x8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x24xf32>, tensor<16x24xf32>, tensor<24x16xf32>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<1x8x16xf32>
  func.return %0, %1, %2 : tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>
}

// -----

// A dynamic sequence (one dynamic dim among batch and sequence is allowed).
// CHECK-LABEL: func.func @dynamic_seq
func.func @dynamic_seq(%x: tensor<2x?x8xf32>, %g: tensor<8xf32>, %w: tensor<8x8xf32>, %wf: tensor<8x4xf32>, %wd: tensor<4x8xf32>, %cos: tensor<?x2xf32>) -> tensor<2x?x8xf32> {
  // CHECK-NEXT: %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %wf, %wf, %wd, %cos, %cos num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.000000e-06 mask_kind = none : (tensor<2x?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<2x?x8xf32>
  %0 = hir.llama_decoder_block %x, %g, %g, %w, %w, %w, %w, %g, %g, %wf, %wf, %wd, %cos, %cos num_heads = 2 head_dim = 4 num_kv_heads = 2 eps = 1.0e-6 mask_kind = none : (tensor<2x?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<2x?x8xf32>
  func.return %0 : tensor<2x?x8xf32>
}
