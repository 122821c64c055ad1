// An Elman RNN over a sequence as one mir.scan, and a squared-error loss on its last state:
//
//   h_t  = tanh(h_{t-1} @ w_h + x_t @ w_x)        for t = 0 .. 7 (the scan body)
//   loss = mean((h_8 @ w_o - target)^2)
//
//   rlx-run examples/rnn_scan.mlir                     # the loss on seeded random inputs and weights
//   python examples/train_rnn_scan.py                  # a few steps of gradient descent on it
//
// The weights w_h and w_x are the same at every step: they enter the body as bcasts.
// xs is the sequence [steps, batch, features]; step t sees xs[t].
func.func @rnn_loss(%h0: tensor<2x4xf32> {rlx.name = "h0"},
                    %xs: tensor<8x2x3xf32> {rlx.name = "xs"},
                    %target: tensor<2x2xf32> {rlx.name = "target"},
                    %w_h: tensor<4x4xf32> {rlx.name = "rnn.w_h", rlx.param},
                    %w_x: tensor<3x4xf32> {rlx.name = "rnn.w_x", rlx.param},
                    %w_o: tensor<4x2xf32> {rlx.name = "head.w_o", rlx.param}) -> tensor<f32> {
  %h = mir.scan init(%h0 : tensor<2x4xf32>) bcasts(%w_h, %w_x : tensor<4x4xf32>, tensor<3x4xf32>) xs(%xs : tensor<8x2x3xf32>) length = 8 -> tensor<2x4xf32> {
  ^bb0(%prev: tensor<2x4xf32>, %wh: tensor<4x4xf32>, %wx: tensor<3x4xf32>, %x: tensor<2x3xf32>):
    %recur = mir.matmul %prev, %wh : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %input = mir.matmul %x, %wx : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %pre = mir.add %recur, %input : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %next = mir.tanh %pre : (tensor<2x4xf32>) -> tensor<2x4xf32>
    mir.yield %next : tensor<2x4xf32>
  }
  %pred = mir.matmul %h, %w_o : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  %err = mir.sub %pred, %target : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %sq = mir.mul %err, %err : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %loss = mir.reduce mean %sq axes = [0, 1] : (tensor<2x2xf32>) -> tensor<f32>
  func.return %loss : tensor<f32>
}
