// The SwiGLU + residual + RMSNorm block of benchmarks/fusion.py (other compilers' counts: benchmarks/README.md):
//   out = rms_norm(x + W2(silu(W1 x + b1) * (W3 x)))
// 8 kernels as written; RLX's CPU fusion list leaves 5, target=best 4 (IREE's count):
//   rlx-opt examples/swiglu_block.mlir -p 'rlx-fusion-pipeline{target=best}' --fusion-report
func.func @block(%x: tensor<8x64xf32> {rlx.name = "x"},
                 %w1: tensor<64x128xf32> {rlx.name = "w1", rlx.param},
                 %b1: tensor<128xf32> {rlx.name = "b1", rlx.param},
                 %w3: tensor<64x128xf32> {rlx.name = "w3", rlx.param},
                 %w2: tensor<128x64xf32> {rlx.name = "w2", rlx.param},
                 %g: tensor<64xf32> {rlx.name = "norm.gamma", rlx.param},
                 %beta: tensor<64xf32> {rlx.name = "norm.beta", rlx.param}) -> tensor<8x64xf32> {
  %0 = mir.matmul %x, %w1 : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
  %1 = mir.add %0, %b1 : (tensor<8x128xf32>, tensor<128xf32>) -> tensor<8x128xf32>
  %gate = mir.silu %1 : (tensor<8x128xf32>) -> tensor<8x128xf32>
  %up = mir.matmul %x, %w3 : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
  %h = mir.mul %gate, %up : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
  %down = mir.matmul %h, %w2 : (tensor<8x128xf32>, tensor<128x64xf32>) -> tensor<8x64xf32>
  %r = mir.add %x, %down : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %out = mir.rms_norm %r, %g, %beta axis = -1 eps = 1.000000e-06 : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  func.return %out : tensor<8x64xf32>
}
