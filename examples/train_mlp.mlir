// A two-layer MLP classifier with a softmax-cross-entropy loss: the training example.
//
//   rlx-opt examples/train_mlp.mlir -p 'rlx-prepare-ad,rlx-grad{func=loss},rlx-dce' | rlx-run - --func loss_grad
//
// rlx-grad adds @loss_grad(x, labels, w1, b1, w2, b2, d_output) returning
// [loss, d_w1, d_b1, d_w2, d_b2]: the gradients of the rlx.param arguments.
// examples/train_mlp.py runs a few steps of gradient descent with it.
func.func @loss(%x: tensor<8x4xf32> {rlx.name = "x"}, %labels: tensor<8xi64> {rlx.name = "labels"},
                %w1: tensor<4x16xf32> {rlx.name = "w1", rlx.param}, %b1: tensor<16xf32> {rlx.name = "b1", rlx.param},
                %w2: tensor<16x3xf32> {rlx.name = "w2", rlx.param}, %b2: tensor<3xf32> {rlx.name = "b2", rlx.param}) -> tensor<f32> {
  %h0 = mir.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %h1 = mir.add %h0, %b1 : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %h = mir.relu %h1 : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %z0 = mir.matmul %h, %w2 : (tensor<8x16xf32>, tensor<16x3xf32>) -> tensor<8x3xf32>
  %logits = mir.add %z0, %b2 : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %per_row = mir.softmax_cross_entropy_with_logits %logits, %labels : (tensor<8x3xf32>, tensor<8xi64>) -> tensor<8xf32>
  %loss = mir.reduce mean %per_row axes = [0] : (tensor<8xf32>) -> tensor<f32>
  func.return %loss : tensor<f32>
}
