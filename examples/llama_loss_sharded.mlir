// A one-layer LLaMA (dim 16, 4 heads, 2 KV heads, FFN 32, sequences of 4, vocabulary 8) whose
// scalar loss is the mean softmax cross-entropy of its logits against fixed labels, sharded for
// data parallelism over a mesh of 2 devices: the batch of `x` is split over `data`, every weight
// replicated. docs/distributed.md differentiates it into a data-parallel training step:
//
//   rlx-opt examples/llama_loss_sharded.mlir \
//       -p 'rlx-prepare-ad,rlx-grad{func=llama},rlx-lower-softmax-cross-entropy,rlx-decompose-backward' \
//     | rlx-run - --func llama_grad --backend=xla --device=gpu
//
// Made by rlx_xdsl.testing.training.build_llama_loss(1, batch=4, vocab=8, seq=4, dim=16, n_heads=4,
// n_kv_heads=2, ffn=32) and rlx_xdsl.ir.sharding.annotate(module, f, {"data": 2}, {"x": ["data", None, None]}).
builtin.module attributes {rlx.mesh = {data = 2 : i64}} {
  func.func @llama(%x: tensor<4x4x16xf32> {rlx.name = "x", rlx.sharding = ["data", unit, unit]}, %cos: tensor<4x2xf32> {rlx.name = "cos"}, %sin: tensor<4x2xf32> {rlx.name = "sin"}, %layers.0.attn_norm.gamma: tensor<16xf32> {rlx.name = "layers.0.attn_norm.gamma", rlx.param}, %layers.0.attn_norm.beta: tensor<16xf32> {rlx.name = "layers.0.attn_norm.beta", rlx.param}, %layers.0.wq: tensor<16x16xf32> {rlx.name = "layers.0.wq", rlx.param}, %layers.0.wk: tensor<16x8xf32> {rlx.name = "layers.0.wk", rlx.param}, %layers.0.wv: tensor<16x8xf32> {rlx.name = "layers.0.wv", rlx.param}, %layers.0.wo: tensor<16x16xf32> {rlx.name = "layers.0.wo", rlx.param}, %layers.0.ffn_norm.gamma: tensor<16xf32> {rlx.name = "layers.0.ffn_norm.gamma", rlx.param}, %layers.0.ffn_norm.beta: tensor<16xf32> {rlx.name = "layers.0.ffn_norm.beta", rlx.param}, %layers.0.w_gate: tensor<16x32xf32> {rlx.name = "layers.0.w_gate", rlx.param}, %layers.0.w_up: tensor<16x32xf32> {rlx.name = "layers.0.w_up", rlx.param}, %layers.0.w_down: tensor<32x16xf32> {rlx.name = "layers.0.w_down", rlx.param}, %norm.gamma: tensor<16xf32> {rlx.name = "norm.gamma", rlx.param}, %norm.beta: tensor<16xf32> {rlx.name = "norm.beta", rlx.param}, %lm_head: tensor<16x8xf32> {rlx.name = "lm_head", rlx.param}) -> tensor<f32> {
    %0 = mir.rms_norm %x, %layers.0.attn_norm.gamma, %layers.0.attn_norm.beta axis = -1 eps = 1.000000e-06 : (tensor<4x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x4x16xf32>
    %1 = mir.matmul %0, %layers.0.wq : (tensor<4x4x16xf32>, tensor<16x16xf32>) -> tensor<4x4x16xf32>
    %2 = mir.matmul %0, %layers.0.wk : (tensor<4x4x16xf32>, tensor<16x8xf32>) -> tensor<4x4x8xf32>
    %3 = mir.matmul %0, %layers.0.wv : (tensor<4x4x16xf32>, tensor<16x8xf32>) -> tensor<4x4x8xf32>
    %4 = mir.reshape %1 new_shape = [4, 4, 4, 4] : (tensor<4x4x16xf32>) -> tensor<4x4x4x4xf32>
    %5 = mir.transpose %4 perm = [0, 2, 1, 3] : (tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32>
    %6 = mir.rope %5, %cos, %sin head_dim = 4 n_rot = 4 : (tensor<4x4x4x4xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4x4x4xf32>
    %7 = mir.reshape %2 new_shape = [4, 4, 2, 4] : (tensor<4x4x8xf32>) -> tensor<4x4x2x4xf32>
    %8 = mir.transpose %7 perm = [0, 2, 1, 3] : (tensor<4x4x2x4xf32>) -> tensor<4x2x4x4xf32>
    %9 = mir.rope %8, %cos, %sin head_dim = 4 n_rot = 4 : (tensor<4x2x4x4xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2x4x4xf32>
    %10 = mir.reshape %3 new_shape = [4, 4, 2, 4] : (tensor<4x4x8xf32>) -> tensor<4x4x2x4xf32>
    %11 = mir.transpose %10 perm = [0, 2, 1, 3] : (tensor<4x4x2x4xf32>) -> tensor<4x2x4x4xf32>
    %12 = mir.narrow %9 axis = 1 start = 0 len = 1 : (tensor<4x2x4x4xf32>) -> tensor<4x1x4x4xf32>
    %13 = mir.narrow %9 axis = 1 start = 1 len = 1 : (tensor<4x2x4x4xf32>) -> tensor<4x1x4x4xf32>
    %14 = mir.concat %12, %12, %13, %13 axis = 1 : (tensor<4x1x4x4xf32>, tensor<4x1x4x4xf32>, tensor<4x1x4x4xf32>, tensor<4x1x4x4xf32>) -> tensor<4x4x4x4xf32>
    %15 = mir.narrow %11 axis = 1 start = 0 len = 1 : (tensor<4x2x4x4xf32>) -> tensor<4x1x4x4xf32>
    %16 = mir.narrow %11 axis = 1 start = 1 len = 1 : (tensor<4x2x4x4xf32>) -> tensor<4x1x4x4xf32>
    %17 = mir.concat %15, %15, %16, %16 axis = 1 : (tensor<4x1x4x4xf32>, tensor<4x1x4x4xf32>, tensor<4x1x4x4xf32>, tensor<4x1x4x4xf32>) -> tensor<4x4x4x4xf32>
    %18 = mir.attention %6, %14, %17 num_heads = 4 head_dim = 4 mask_kind = causal : (tensor<4x4x4x4xf32>, tensor<4x4x4x4xf32>, tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32>
    %19 = mir.transpose %18 perm = [0, 2, 1, 3] : (tensor<4x4x4x4xf32>) -> tensor<4x4x4x4xf32>
    %20 = mir.reshape %19 new_shape = [4, 4, 16] : (tensor<4x4x4x4xf32>) -> tensor<4x4x16xf32>
    %21 = mir.matmul %20, %layers.0.wo : (tensor<4x4x16xf32>, tensor<16x16xf32>) -> tensor<4x4x16xf32>
    %22 = mir.add %x, %21 : (tensor<4x4x16xf32>, tensor<4x4x16xf32>) -> tensor<4x4x16xf32>
    %23 = mir.rms_norm %22, %layers.0.ffn_norm.gamma, %layers.0.ffn_norm.beta axis = -1 eps = 1.000000e-06 : (tensor<4x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x4x16xf32>
    %24 = mir.matmul %23, %layers.0.w_gate : (tensor<4x4x16xf32>, tensor<16x32xf32>) -> tensor<4x4x32xf32>
    %25 = mir.matmul %23, %layers.0.w_up : (tensor<4x4x16xf32>, tensor<16x32xf32>) -> tensor<4x4x32xf32>
    %26 = mir.silu %24 : (tensor<4x4x32xf32>) -> tensor<4x4x32xf32>
    %27 = mir.mul %26, %25 : (tensor<4x4x32xf32>, tensor<4x4x32xf32>) -> tensor<4x4x32xf32>
    %28 = mir.matmul %27, %layers.0.w_down : (tensor<4x4x32xf32>, tensor<32x16xf32>) -> tensor<4x4x16xf32>
    %29 = mir.add %22, %28 : (tensor<4x4x16xf32>, tensor<4x4x16xf32>) -> tensor<4x4x16xf32>
    %30 = mir.rms_norm %29, %norm.gamma, %norm.beta axis = -1 eps = 1.000000e-06 : (tensor<4x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x4x16xf32>
    %31 = mir.matmul %30, %lm_head : (tensor<4x4x16xf32>, tensor<16x8xf32>) -> tensor<4x4x8xf32>
    %32 = mir.reshape %31 new_shape = [-1, 8] : (tensor<4x4x8xf32>) -> tensor<16x8xf32>
    %33 = mir.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]> : tensor<16xi64>
    %34 = mir.softmax_cross_entropy_with_logits %32, %33 : (tensor<16x8xf32>, tensor<16xi64>) -> tensor<16xf32>
    %35 = mir.reduce mean %34 axes = [0] : (tensor<16xf32>) -> tensor<f32>
    func.return %35 : tensor<f32>
  }
}

