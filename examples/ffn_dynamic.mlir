// A pre-norm SwiGLU feed-forward block with dynamic batch and sequence dims:
//   y = x + (silu(rms_norm(x) @ w_gate) * (rms_norm(x) @ w_up)) @ w_down
//
//   rlx-opt examples/ffn_dynamic.mlir -p 'rlx-specialize{shapes=x=2x8x32},rlx-dce' | rlx-run -
//
// rlx-specialize binds the `?` dims of argument "x" and re-infers every type;
// rlx-dce removes the unused %probe; rlx-run executes the static result.
func.func @ffn(%x: tensor<?x?x32xf32> {rlx.name = "x"},
               %gamma: tensor<32xf32> {rlx.name = "norm.gamma", rlx.param},
               %beta: tensor<32xf32> {rlx.name = "norm.beta", rlx.param},
               %w_gate: tensor<32x64xf32> {rlx.name = "w_gate", rlx.param},
               %w_up: tensor<32x64xf32> {rlx.name = "w_up", rlx.param},
               %w_down: tensor<64x32xf32> {rlx.name = "w_down", rlx.param}) -> tensor<?x?x32xf32> {
  %n = mir.rms_norm %x, %gamma, %beta axis = -1 eps = 1.000000e-06 : (tensor<?x?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %gate = mir.matmul %n, %w_gate : (tensor<?x?x32xf32>, tensor<32x64xf32>) -> tensor<?x?x64xf32>
  %up = mir.matmul %n, %w_up : (tensor<?x?x32xf32>, tensor<32x64xf32>) -> tensor<?x?x64xf32>
  %act = mir.silu %gate : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %h = mir.mul %act, %up : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  // Dead code: nothing uses it.
  %probe = mir.reduce max %h axes = [-1] : (tensor<?x?x64xf32>) -> tensor<?x?xf32>
  %down = mir.matmul %h, %w_down : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %y = mir.add %x, %down : (tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  func.return %y : tensor<?x?x32xf32>
}
