// A two-layer MLP classifier head: softmax(relu(x @ fc1.weight + fc1.bias) @ fc2.weight + fc2.bias).
//
//   rlx-run examples/mlp.mlir                 # run it on seeded random inputs and weights
//   rlx-opt examples/mlp.mlir -p rlx-dce      # removes the unused %unused_gate
//
// Weights are function arguments marked `rlx.param`; `rlx.name` gives every
// argument the name rlx-run uses (`--input x=x.npy`).
func.func @mlp(%x: tensor<4x16xf32> {rlx.name = "x"},
               %w1: tensor<16x32xf32> {rlx.name = "fc1.weight", rlx.param},
               %b1: tensor<32xf32> {rlx.name = "fc1.bias", rlx.param},
               %w2: tensor<32x10xf32> {rlx.name = "fc2.weight", rlx.param},
               %b2: tensor<10xf32> {rlx.name = "fc2.bias", rlx.param}) -> tensor<4x10xf32> {
  %h = mir.matmul %x, %w1 : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %hb = mir.add %h, %b1 : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %a = mir.relu %hb : (tensor<4x32xf32>) -> tensor<4x32xf32>
  // Dead code: nothing uses it, so rlx-dce deletes it.
  %unused_gate = mir.sigmoid %hb : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %o = mir.matmul %a, %w2 : (tensor<4x32xf32>, tensor<32x10xf32>) -> tensor<4x10xf32>
  %logits = mir.add %o, %b2 : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  %probs = mir.softmax %logits axis = -1 : (tensor<4x10xf32>) -> tensor<4x10xf32>
  func.return %probs : tensor<4x10xf32>
}
