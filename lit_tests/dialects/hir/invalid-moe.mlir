// RUN: rlx-opt %s --split-input-file --verify-diagnostics

// Operands: x [2, 3, 4], router [4, 3], gate/up [3, 4, 5], down [3, 5, 4] unless a chunk says otherwise.

func.func @four_operands(%x: tensor<2x3x4xf32>, %r: tensor<4x3xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.moe_swiglu' expects 5 operands (x, router_w, w_gate, w_up, w_down), got 4: missing w_down}}
  %0 = "hir.moe_swiglu"(%x, %r, %g, %u) <{num_experts = 3 : i64, top_k = 2 : i64}> : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @top_k_exceeds_experts(%x: tensor<2x3x4xf32>, %r: tensor<4x3xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.moe_swiglu' top_k 4 exceeds num_experts 3}}
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 4 : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @zero_top_k(%x: tensor<2x3x4xf32>, %r: tensor<4x3xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.moe_swiglu' top_k must be >= 1, got 0}}
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 0 : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @expert_count_mismatch(%x: tensor<2x3x4xf32>, %r: tensor<4x3xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.moe_swiglu' router_w shape [4, 3] must be [4, 2]}}
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 2 top_k = 1 : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @gate_experts_mismatch(%x: tensor<2x3x4xf32>, %r: tensor<4x3xf32>, %g: tensor<2x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.moe_swiglu' w_gate shape [2, 4, 5] must be [3, 4, 5]}}
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 1 : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<2x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @k_mismatch(%x: tensor<2x3x4xf32>, %r: tensor<4x3xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x6x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.moe_swiglu' w_up shape [3, 6, 5] must be [3, 4, 5]}}
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 1 : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x6x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @down_mismatch(%x: tensor<2x3x4xf32>, %r: tensor<4x3xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x4x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.moe_swiglu' w_down shape [3, 4, 4] must be [3, 5, 4]}}
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 1 : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x4x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @rank_two_x(%x: tensor<3x4xf32>, %r: tensor<4x3xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.moe_swiglu' x must have rank 3, got [3, 4]}}
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 1 : (tensor<3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @dynamic_hidden(%x: tensor<2x3x?xf32>, %r: tensor<4x3xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.moe_swiglu' the hidden dim of x must be static (the lowering flattens the tokens)}}
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 1 : (tensor<2x3x?xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @f16_router(%x: tensor<2x3x4xf32>, %r: tensor<4x3xf16>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'hir.moe_swiglu' router_w element type f16 differs from x's f32}}
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 1 : (tensor<2x3x4xf32>, tensor<4x3xf16>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
