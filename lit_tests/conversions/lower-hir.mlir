// RUN: rlx-opt %s --split-input-file -p rlx-lower-hir | filecheck %s --check-prefixes=CHECK,DIRECT
// RUN: rlx-opt %s --split-input-file -p 'rlx-lower-hir{policy=direct}' | filecheck %s --check-prefixes=CHECK,DIRECT
// RUN: rlx-opt %s --split-input-file -p 'rlx-lower-hir{policy=fusable}' | filecheck %s --check-prefixes=CHECK,FUSABLE
// RUN: rlx-opt %s --split-input-file --pass-pipeline='builtin.module(rlx-lower-hir{policy=fusable})' | filecheck %s --check-prefixes=CHECK,FUSABLE

// A linear layer with a bias: direct fuses it (keeping any activation), fusable writes the chain.
// CHECK-LABEL: func.func @linear_bias
func.func @linear_bias(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // DIRECT-NEXT:  %0 = mir.fused_matmul_bias_act %x, %w, %b activation = exp : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // DIRECT-NEXT:  func.return %0 : tensor<2x4xf32>
  // FUSABLE-NEXT: %0 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  // FUSABLE-NEXT: %1 = mir.add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // FUSABLE-NEXT: %2 = mir.exp %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // FUSABLE-NEXT: func.return %2 : tensor<2x4xf32>
  %0 = hir.linear %x, %w, %b activation = exp : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// Without a bias there is nothing to fuse: both policies write matmul and activation.
// CHECK-LABEL: func.func @linear_no_bias
func.func @linear_no_bias(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>) -> tensor<?x4xf32> {
  // CHECK-NEXT: %0 = mir.matmul %x, %w : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  // CHECK-NEXT: %1 = mir.gelu %0 : (tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK-NEXT: func.return %1 : tensor<?x4xf32>
  %0 = hir.linear %x, %w activation = gelu : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}

// -----

// linear_fused is fused under both policies (RLX's LinearFused).
// CHECK-LABEL: func.func @linear_fused
func.func @linear_fused(%x: tensor<2x8xbf16>, %w: tensor<8x4xbf16>, %b: tensor<4xbf16>) -> tensor<2x4xbf16> {
  // CHECK-NEXT: %0 = mir.fused_matmul_bias_act %x, %w, %b activation = silu : (tensor<2x8xbf16>, tensor<8x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
  // CHECK-NEXT: func.return %0 : tensor<2x4xbf16>
  %0 = hir.linear_fused %x, %w, %b activation = silu : (tensor<2x8xbf16>, tensor<8x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
  func.return %0 : tensor<2x4xbf16>
}

// -----

// CHECK-LABEL: func.func @shared_linear_pair
func.func @shared_linear_pair(%x: tensor<2x8xf32>, %wq: tensor<8x8xf32>, %wk: tensor<8x4xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>) {
  // CHECK-NEXT: %q = mir.matmul %x, %wq : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %k = mir.matmul %x, %wk : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: func.return %q, %k : tensor<2x8xf32>, tensor<2x4xf32>
  %q, %k = hir.shared_linear_pair %x, %wq, %wk : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8x4xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>)
  func.return %q, %k : tensor<2x8xf32>, tensor<2x4xf32>
}

// -----

// Direct: one projection on [up | gate] and the fused SwiGLU. Fusable: RLX's 9-node chain.
// CHECK-LABEL: func.func @swiglu
func.func @swiglu(%x: tensor<2x8xf32>, %up: tensor<8x6xf32>, %gate: tensor<8x6xf32>, %down: tensor<6x8xf32>) -> tensor<2x8xf32> {
  // DIRECT-NEXT:  %0 = mir.concat %up, %gate axis = 1 : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x12xf32>
  // DIRECT-NEXT:  %1 = mir.matmul %x, %0 : (tensor<2x8xf32>, tensor<8x12xf32>) -> tensor<2x12xf32>
  // DIRECT-NEXT:  %2 = mir.fused_swiglu %1 : (tensor<2x12xf32>) -> tensor<2x6xf32>
  // DIRECT-NEXT:  %3 = mir.matmul %2, %down : (tensor<2x6xf32>, tensor<6x8xf32>) -> tensor<2x8xf32>
  // DIRECT-NEXT:  func.return %3 : tensor<2x8xf32>
  // FUSABLE-NEXT: %0 = mir.matmul %x, %up : (tensor<2x8xf32>, tensor<8x6xf32>) -> tensor<2x6xf32>
  // FUSABLE-NEXT: %1 = mir.matmul %x, %gate : (tensor<2x8xf32>, tensor<8x6xf32>) -> tensor<2x6xf32>
  // FUSABLE-NEXT: %2 = mir.silu %1 : (tensor<2x6xf32>) -> tensor<2x6xf32>
  // FUSABLE-NEXT: %3 = mir.mul %0, %2 : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  // FUSABLE-NEXT: %4 = mir.matmul %3, %down : (tensor<2x6xf32>, tensor<6x8xf32>) -> tensor<2x8xf32>
  // FUSABLE-NEXT: func.return %4 : tensor<2x8xf32>
  %0 = hir.swiglu %x, %up, %gate, %down : (tensor<2x8xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<6x8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<2x8xf32>, %r: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK-NEXT:   %0 = mir.rms_norm %x, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // DIRECT-NEXT:  %1 = mir.fused_residual_rms_norm %0, %r, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // DIRECT-NEXT:  func.return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
  // FUSABLE-NEXT: %1 = mir.add %0, %r : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  // FUSABLE-NEXT: %2 = mir.rms_norm %1, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // FUSABLE-NEXT: func.return %0, %2 : tensor<2x8xf32>, tensor<2x8xf32>
  %0 = hir.rms_norm %x, %g, %b eps = 1.0e-5 : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %1 = hir.residual_rms_norm %0, %r, %g, %b eps = 1.0e-6 : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @attention_and_rope
func.func @attention_and_rope(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %cos: tensor<3x2xf32>, %sin: tensor<3x2xf32>, %keep: tensor<1x3xf32>) -> (tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>) {
  // CHECK-NEXT: %0 = mir.rope %q, %cos, %sin head_dim = 8 n_rot = 4 : (tensor<1x4x3x8xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<1x4x3x8xf32>
  // CHECK-NEXT: %1 = mir.attention %0, %k, %k num_heads = 4 head_dim = 8 mask_kind = sliding_window window = 2 : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32>
  // CHECK-NEXT: %2 = mir.attention %0, %k, %k, %keep num_heads = 4 head_dim = 8 mask_kind = custom : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x3xf32>) -> tensor<1x4x3x8xf32>
  // CHECK-NEXT: func.return %1, %2
  %0 = hir.rope %q, %cos, %sin head_dim = 8 n_rot = 4 : (tensor<1x4x3x8xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<1x4x3x8xf32>
  %1 = hir.attention %0, %k, %k num_heads = 4 head_dim = 8 mask_kind = sliding_window window = 2 : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32>
  %2 = hir.attention %0, %k, %k, %keep num_heads = 4 head_dim = 8 mask_kind = custom : (tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x3xf32>) -> tensor<1x4x3x8xf32>
  func.return %1, %2 : tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>
}

// -----

// Both policies: context ++ x, channels first, a [1, K] conv with one group per channel, back.
// CHECK-LABEL: func.func @depthwise_conv1d_causal
func.func @depthwise_conv1d_causal(%x: tensor<2x?x4xf32>, %w: tensor<4x1x1x3xf32>, %pad: tensor<2x2x4xf32>) -> tensor<2x?x4xf32> {
  // CHECK-NEXT: %0 = mir.concat %pad, %x axis = 1 : (tensor<2x2x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  // CHECK-NEXT: %1 = mir.transpose %0 perm = [0, 2, 1] : (tensor<2x?x4xf32>) -> tensor<2x4x?xf32>
  // CHECK-NEXT: %2 = mir.reshape %1 new_shape = [2, 4, 1, -1] : (tensor<2x4x?xf32>) -> tensor<2x4x1x?xf32>
  // CHECK-NEXT: %3 = mir.conv %2, %w kernel_size = [1, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 4 : (tensor<2x4x1x?xf32>, tensor<4x1x1x3xf32>) -> tensor<2x4x1x?xf32>
  // CHECK-NEXT: %4 = mir.reshape %3 new_shape = [2, 4, -1] : (tensor<2x4x1x?xf32>) -> tensor<2x4x?xf32>
  // CHECK-NEXT: %5 = mir.transpose %4 perm = [0, 2, 1] : (tensor<2x4x?xf32>) -> tensor<2x?x4xf32>
  // CHECK-NEXT: func.return %5 : tensor<2x?x4xf32>
  %0 = hir.depthwise_conv1d_causal %x, %w, %pad kernel_size = 3 : (tensor<2x?x4xf32>, tensor<4x1x1x3xf32>, tensor<2x2x4xf32>) -> tensor<2x?x4xf32>
  func.return %0 : tensor<2x?x4xf32>
}

// -----

// Both policies: the primitive chain of one LLaMA layer (2 query heads sharing 1 kv head).
// CHECK-LABEL: func.func @llama_decoder_block
func.func @llama_decoder_block(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>, %wq: tensor<8x8xf32>, %wkv: tensor<8x4xf32>, %wf: tensor<8x6xf32>, %wd: tensor<6x8xf32>, %cos: tensor<4x2xf32>) -> tensor<1x4x8xf32> {
  // CHECK-NEXT: %0 = mir.rms_norm %x, %g, %g axis = -1 eps = 1.000000e-06
  // CHECK-NEXT: %1 = mir.matmul %0, %wq
  // CHECK-NEXT: %2 = mir.matmul %0, %wkv
  // CHECK-NEXT: %3 = mir.matmul %0, %wkv
  // CHECK-NEXT: %4 = mir.reshape %1 new_shape = [1, 4, 2, 4]
  // CHECK-NEXT: %5 = mir.transpose %4 perm = [0, 2, 1, 3]
  // CHECK-NEXT: %6 = mir.rope %5, %cos, %cos head_dim = 4 n_rot = 4
  // CHECK-NEXT: %7 = mir.reshape %2 new_shape = [1, 4, 1, 4]
  // CHECK-NEXT: %8 = mir.transpose %7 perm = [0, 2, 1, 3]
  // CHECK-NEXT: %9 = mir.rope %8, %cos, %cos head_dim = 4 n_rot = 4
  // CHECK-NEXT: %10 = mir.reshape %3 new_shape = [1, 4, 1, 4]
  // CHECK-NEXT: %11 = mir.transpose %10 perm = [0, 2, 1, 3]
  // CHECK-NEXT: %12 = mir.narrow %9 axis = 1 start = 0 len = 1
  // CHECK-NEXT: %13 = mir.concat %12, %12 axis = 1
  // CHECK-NEXT: %14 = mir.narrow %11 axis = 1 start = 0 len = 1
  // CHECK-NEXT: %15 = mir.concat %14, %14 axis = 1
  // CHECK-NEXT: %16 = mir.attention %6, %13, %15 num_heads = 2 head_dim = 4 mask_kind = causal
  // CHECK-NEXT: %17 = mir.transpose %16 perm = [0, 2, 1, 3]
  // CHECK-NEXT: %18 = mir.reshape %17 new_shape = [1, 4, 8]
  // CHECK-NEXT: %19 = mir.matmul %18, %wq
  // CHECK-NEXT: %20 = mir.add %x, %19
  // CHECK-NEXT: %21 = mir.rms_norm %20, %g, %g axis = -1 eps = 1.000000e-06
  // CHECK-NEXT: %22 = mir.matmul %21, %wf
  // CHECK-NEXT: %23 = mir.matmul %21, %wf
  // CHECK-NEXT: %24 = mir.silu %22
  // CHECK-NEXT: %25 = mir.mul %24, %23
  // CHECK-NEXT: %26 = mir.matmul %25, %wd
  // CHECK-NEXT: %27 = mir.add %20, %26 : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  // CHECK-NEXT: func.return %27 : tensor<1x4x8xf32>
  %0 = hir.llama_decoder_block %x, %g, %g, %wq, %wkv, %wkv, %wq, %g, %g, %wf, %wf, %wd, %cos, %cos num_heads = 2 head_dim = 4 num_kv_heads = 1 eps = 1.0e-6 mask_kind = causal : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<6x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<1x4x8xf32>
  func.return %0 : tensor<1x4x8xf32>
}

// -----

// MIR ops in an HIR function (RLX's HirOp::Mir escape hatch) are left as they are.
// CHECK-LABEL: func.func @mixed
func.func @mixed(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>) -> tensor<2x8xf32> {
  // CHECK-NEXT: %0 = mir.tanh %x
  // CHECK-NEXT: %1 = mir.matmul %0, %w
  // CHECK-NEXT: %2 = mir.relu %1
  // CHECK-NEXT: %3 = mir.neg %2
  %0 = mir.tanh %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = hir.linear %0, %w activation = relu : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %2 = mir.neg %1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %2 : tensor<2x8xf32>
}

// -----

// The router picks each token's expert with top-k; the experts run as grouped matmuls,
// weighted by the renormalised router probabilities.
// CHECK-LABEL: func.func @moe_swiglu
func.func @moe_swiglu(%x: tensor<2x3x4xf32>, %r: tensor<4x3xf32>, %g: tensor<3x4x5xf32>, %u: tensor<3x4x5xf32>, %d: tensor<3x5x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT:    %0 = mir.reshape %x new_shape = [-1, 4] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK-NEXT:    %1 = mir.matmul %0, %r : (tensor<6x4xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  // CHECK-NEXT:    %2 = mir.softmax %1 axis = -1 : (tensor<6x3xf32>) -> tensor<6x3xf32>
  // CHECK-NEXT:    %3, %4 = mir.topk %2 k = 1 : (tensor<6x3xf32>) -> (tensor<6x1xf32>, tensor<6x1xi64>)
  // CHECK-NEXT:    %5 = mir.reduce sum %3 axes = [-1] keep_dim : (tensor<6x1xf32>) -> tensor<6x1xf32>
  // CHECK-NEXT:    %6 = mir.div %3, %5 : (tensor<6x1xf32>, tensor<6x1xf32>) -> tensor<6x1xf32>
  // DIRECT-NEXT:   %7 = mir.concat %u, %g axis = 2 : (tensor<3x4x5xf32>, tensor<3x4x5xf32>) -> tensor<3x4x10xf32>
  // DIRECT-NEXT:   %8 = mir.narrow %4 axis = 1 start = 0 len = 1 : (tensor<6x1xi64>) -> tensor<6x1xi64>
  // DIRECT-NEXT:   %9 = mir.reshape %8 new_shape = [-1] : (tensor<6x1xi64>) -> tensor<6xi64>
  // DIRECT-NEXT:   %10 = mir.grouped_matmul %0, %7, %9 : (tensor<6x4xf32>, tensor<3x4x10xf32>, tensor<6xi64>) -> tensor<6x10xf32>
  // DIRECT-NEXT:   %11 = mir.fused_swiglu %10 : (tensor<6x10xf32>) -> tensor<6x5xf32>
  // DIRECT-NEXT:   %12 = mir.grouped_matmul %11, %d, %9 : (tensor<6x5xf32>, tensor<3x5x4xf32>, tensor<6xi64>) -> tensor<6x4xf32>
  // FUSABLE-NEXT:  %7 = mir.narrow %4 axis = 1 start = 0 len = 1 : (tensor<6x1xi64>) -> tensor<6x1xi64>
  // FUSABLE-NEXT:  %8 = mir.reshape %7 new_shape = [-1] : (tensor<6x1xi64>) -> tensor<6xi64>
  // FUSABLE-NEXT:  %9 = mir.grouped_matmul %0, %g, %8 : (tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  // FUSABLE-NEXT:  %10 = mir.grouped_matmul %0, %u, %8 : (tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  // FUSABLE-NEXT:  %11 = mir.silu %9 : (tensor<6x5xf32>) -> tensor<6x5xf32>
  // FUSABLE-NEXT:  %12 = mir.mul %10, %11 : (tensor<6x5xf32>, tensor<6x5xf32>) -> tensor<6x5xf32>
  // FUSABLE-NEXT:  %13 = mir.grouped_matmul %12, %d, %8 : (tensor<6x5xf32>, tensor<3x5x4xf32>, tensor<6xi64>) -> tensor<6x4xf32>
  // CHECK-NEXT:    mir.narrow %6 axis = 1 start = 0 len = 1
  // CHECK-NEXT:    mir.mul
  // CHECK-NEXT:    mir.reshape %{{.*}} new_shape = [2, 3, 4] : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %0 = hir.moe_swiglu %x, %r, %g, %u, %d num_experts = 3 top_k = 1 normalize_top_k : (tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<3x4x5xf32>, tensor<3x4x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
