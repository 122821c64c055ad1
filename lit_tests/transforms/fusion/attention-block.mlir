// RUN: rlx-opt %s --split-input-file -p rlx-fuse-attention-block | filecheck %s

// LLaMA's form: q, k, v matmuls of one input, rope on q and k, grouped-query repeat_kv
// (narrow + concat), causal attention, merged heads, output projection.
// CHECK-LABEL: func.func @llama_attention
// CHECK-NEXT:    %0 = mir.concat %wq, %wk, %wv axis = 1 : (tensor<16x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:    %o = mir.fused_attention_block %h, %0, %wo rope(%cos, %sin) num_heads = 4 head_dim = 4 num_kv_heads = 2 mask_kind = causal n_rot = 4 : (tensor<1x3x16xf32>, tensor<16x32xf32>, tensor<16x16xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<1x3x16xf32>
// CHECK-NEXT:    func.return %o
func.func @llama_attention(%h: tensor<1x3x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x8xf32>, %wv: tensor<16x8xf32>, %wo: tensor<16x16xf32>, %cos: tensor<3x2xf32>, %sin: tensor<3x2xf32>) -> tensor<1x3x16xf32> {
  %q = mir.matmul %h, %wq : (tensor<1x3x16xf32>, tensor<16x16xf32>) -> tensor<1x3x16xf32>
  %k = mir.matmul %h, %wk : (tensor<1x3x16xf32>, tensor<16x8xf32>) -> tensor<1x3x8xf32>
  %v = mir.matmul %h, %wv : (tensor<1x3x16xf32>, tensor<16x8xf32>) -> tensor<1x3x8xf32>
  %q1 = mir.reshape %q new_shape = [1, 3, 4, 4] : (tensor<1x3x16xf32>) -> tensor<1x3x4x4xf32>
  %q2 = mir.transpose %q1 perm = [0, 2, 1, 3] : (tensor<1x3x4x4xf32>) -> tensor<1x4x3x4xf32>
  %q3 = mir.rope %q2, %cos, %sin head_dim = 4 n_rot = 4 : (tensor<1x4x3x4xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<1x4x3x4xf32>
  %k1 = mir.reshape %k new_shape = [1, 3, 2, 4] : (tensor<1x3x8xf32>) -> tensor<1x3x2x4xf32>
  %k2 = mir.transpose %k1 perm = [0, 2, 1, 3] : (tensor<1x3x2x4xf32>) -> tensor<1x2x3x4xf32>
  %k3 = mir.rope %k2, %cos, %sin head_dim = 4 n_rot = 4 : (tensor<1x2x3x4xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<1x2x3x4xf32>
  %v1 = mir.reshape %v new_shape = [1, 3, 2, 4] : (tensor<1x3x8xf32>) -> tensor<1x3x2x4xf32>
  %v2 = mir.transpose %v1 perm = [0, 2, 1, 3] : (tensor<1x3x2x4xf32>) -> tensor<1x2x3x4xf32>
  %k4 = mir.narrow %k3 axis = 1 start = 0 len = 1 : (tensor<1x2x3x4xf32>) -> tensor<1x1x3x4xf32>
  %k5 = mir.narrow %k3 axis = 1 start = 1 len = 1 : (tensor<1x2x3x4xf32>) -> tensor<1x1x3x4xf32>
  %k6 = mir.concat %k4, %k4, %k5, %k5 axis = 1 : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x4x3x4xf32>
  %v4 = mir.narrow %v2 axis = 1 start = 0 len = 1 : (tensor<1x2x3x4xf32>) -> tensor<1x1x3x4xf32>
  %v5 = mir.narrow %v2 axis = 1 start = 1 len = 1 : (tensor<1x2x3x4xf32>) -> tensor<1x1x3x4xf32>
  %v6 = mir.concat %v4, %v4, %v5, %v5 axis = 1 : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x4x3x4xf32>
  %a = mir.attention %q3, %k6, %v6 num_heads = 4 head_dim = 4 mask_kind = causal : (tensor<1x4x3x4xf32>, tensor<1x4x3x4xf32>, tensor<1x4x3x4xf32>) -> tensor<1x4x3x4xf32>
  %m1 = mir.transpose %a perm = [0, 2, 1, 3] : (tensor<1x4x3x4xf32>) -> tensor<1x3x4x4xf32>
  %m2 = mir.reshape %m1 new_shape = [1, 3, 16] : (tensor<1x3x4x4xf32>) -> tensor<1x3x16xf32>
  %o = mir.matmul %m2, %wo : (tensor<1x3x16xf32>, tensor<16x16xf32>) -> tensor<1x3x16xf32>
  func.return %o : tensor<1x3x16xf32>
}

// -----

// Newer RLX's form: one qkv projection (here with a bias), three narrows, attention with a custom
// mask, an output projection with a bias.
// CHECK-LABEL: func.func @qkv_projection
// CHECK-NEXT:    %ob = mir.fused_attention_block %h, %wqkv, %wo mask %m qkv_bias %bqkv out_bias %bo num_heads = 2 head_dim = 4 num_kv_heads = 2 mask_kind = custom : (tensor<2x3x8xf32>, tensor<8x24xf32>, tensor<8x8xf32>, tensor<2x3xf32>, tensor<24xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    func.return %ob
func.func @qkv_projection(%h: tensor<2x3x8xf32>, %wqkv: tensor<8x24xf32>, %bqkv: tensor<24xf32>, %wo: tensor<8x8xf32>, %bo: tensor<8xf32>, %m: tensor<2x3xf32>) -> tensor<2x3x8xf32> {
  %p = mir.matmul %h, %wqkv : (tensor<2x3x8xf32>, tensor<8x24xf32>) -> tensor<2x3x24xf32>
  %qkv = mir.add %p, %bqkv : (tensor<2x3x24xf32>, tensor<24xf32>) -> tensor<2x3x24xf32>
  %q = mir.narrow %qkv axis = 2 start = 0 len = 8 : (tensor<2x3x24xf32>) -> tensor<2x3x8xf32>
  %k = mir.narrow %qkv axis = 2 start = 8 len = 8 : (tensor<2x3x24xf32>) -> tensor<2x3x8xf32>
  %v = mir.narrow %qkv axis = -1 start = 16 len = 8 : (tensor<2x3x24xf32>) -> tensor<2x3x8xf32>
  %q1 = mir.reshape %q new_shape = [2, 3, 2, 4] : (tensor<2x3x8xf32>) -> tensor<2x3x2x4xf32>
  %q2 = mir.transpose %q1 perm = [0, 2, 1, 3] : (tensor<2x3x2x4xf32>) -> tensor<2x2x3x4xf32>
  %k1 = mir.reshape %k new_shape = [2, 3, 2, 4] : (tensor<2x3x8xf32>) -> tensor<2x3x2x4xf32>
  %k2 = mir.transpose %k1 perm = [0, 2, 1, 3] : (tensor<2x3x2x4xf32>) -> tensor<2x2x3x4xf32>
  %v1 = mir.reshape %v new_shape = [2, 3, 2, 4] : (tensor<2x3x8xf32>) -> tensor<2x3x2x4xf32>
  %v2 = mir.transpose %v1 perm = [0, 2, 1, 3] : (tensor<2x3x2x4xf32>) -> tensor<2x2x3x4xf32>
  %a = mir.attention %q2, %k2, %v2, %m num_heads = 2 head_dim = 4 mask_kind = custom : (tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<2x3xf32>) -> tensor<2x2x3x4xf32>
  %m1 = mir.transpose %a perm = [0, 2, 1, 3] : (tensor<2x2x3x4xf32>) -> tensor<2x3x2x4xf32>
  %m2 = mir.reshape %m1 new_shape = [2, 3, 8] : (tensor<2x3x2x4xf32>) -> tensor<2x3x8xf32>
  %o = mir.matmul %m2, %wo : (tensor<2x3x8xf32>, tensor<8x8xf32>) -> tensor<2x3x8xf32>
  %ob = mir.add %o, %bo : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  func.return %ob : tensor<2x3x8xf32>
}

// -----

// Not fused: the attention output is also returned, so the chain has a second consumer.
// CHECK-LABEL: func.func @attention_is_an_output
// CHECK:         mir.attention
// CHECK-NOT:     mir.fused_attention_block
func.func @attention_is_an_output(%h: tensor<2x3x8xf32>, %wqkv: tensor<8x24xf32>, %wo: tensor<8x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x2x3x4xf32>) {
  %qkv = mir.matmul %h, %wqkv : (tensor<2x3x8xf32>, tensor<8x24xf32>) -> tensor<2x3x24xf32>
  %q = mir.narrow %qkv axis = 2 start = 0 len = 8 : (tensor<2x3x24xf32>) -> tensor<2x3x8xf32>
  %k = mir.narrow %qkv axis = 2 start = 8 len = 8 : (tensor<2x3x24xf32>) -> tensor<2x3x8xf32>
  %v = mir.narrow %qkv axis = 2 start = 16 len = 8 : (tensor<2x3x24xf32>) -> tensor<2x3x8xf32>
  %q1 = mir.reshape %q new_shape = [2, 3, 2, 4] : (tensor<2x3x8xf32>) -> tensor<2x3x2x4xf32>
  %q2 = mir.transpose %q1 perm = [0, 2, 1, 3] : (tensor<2x3x2x4xf32>) -> tensor<2x2x3x4xf32>
  %k1 = mir.reshape %k new_shape = [2, 3, 2, 4] : (tensor<2x3x8xf32>) -> tensor<2x3x2x4xf32>
  %k2 = mir.transpose %k1 perm = [0, 2, 1, 3] : (tensor<2x3x2x4xf32>) -> tensor<2x2x3x4xf32>
  %v1 = mir.reshape %v new_shape = [2, 3, 2, 4] : (tensor<2x3x8xf32>) -> tensor<2x3x2x4xf32>
  %v2 = mir.transpose %v1 perm = [0, 2, 1, 3] : (tensor<2x3x2x4xf32>) -> tensor<2x2x3x4xf32>
  %a = mir.attention %q2, %k2, %v2 num_heads = 2 head_dim = 4 mask_kind = none : (tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>) -> tensor<2x2x3x4xf32>
  %m1 = mir.transpose %a perm = [0, 2, 1, 3] : (tensor<2x2x3x4xf32>) -> tensor<2x3x2x4xf32>
  %m2 = mir.reshape %m1 new_shape = [2, 3, 8] : (tensor<2x3x2x4xf32>) -> tensor<2x3x8xf32>
  %o = mir.matmul %m2, %wo : (tensor<2x3x8xf32>, tensor<8x8xf32>) -> tensor<2x3x8xf32>
  func.return %o, %a : tensor<2x3x8xf32>, tensor<2x2x3x4xf32>
}
