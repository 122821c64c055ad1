// A PyTorch nn.Linear imports as `x @ transpose(w[out, in])`: the weight is quantised as
// the [in, out] matrix the matmul reads (its parameters are pack(w.T)) and the transpose
// goes. A run that quantises nothing says so in a note (exit 0) and under
// --mlir-pass-statistics; `ops` naming no parameter is an error.
// RUN: rlx-opt %s --split-input-file -p 'rlx-quantize-weights{block-size=16}' --mlir-pass-statistics 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=STATS < %t.err
// RUN: not rlx-opt %s --split-input-file -p 'rlx-quantize-weights{ops=nope}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// A block size the scheme cannot use is an error even where no weight would be quantised.
// RUN: not rlx-opt %s --split-input-file -p 'rlx-quantize-weights{scheme=int4_block block-size=3}' 2>&1 | filecheck %s --check-prefix=ODD
// ODD-COUNT-2: error: 'rlx-quantize-weights' block-size=3: int4_block needs an even block size, got 3

// CHECK-LABEL: func.func @linear
// CHECK-SAME:    (%w_q: tensor<64x8xi8> {rlx.name = "0.weight.q", rlx.param}, %w_scale: tensor<4x8xf32> {rlx.name = "0.weight.scale", rlx.param}, %w_zp: tensor<1xf32> {rlx.name = "0.weight.zp", rlx.param}, %b: tensor<8xf32>
// CHECK-NOT:     mir.transpose
// CHECK:         mir.dequant_matmul %x, %w_q, %w_scale, %w_zp scheme = int8_block block_size = 16 : (tensor<2x64xf32>, tensor<64x8xi8>, tensor<4x8xf32>, tensor<1xf32>) -> tensor<2x8xf32>
// UNKNOWN: quantize-weights-transposed.mlir:[[# @LINE + 1]]:1: error: 'rlx-quantize-weights' ops=nope: no function has a parameter 'nope' (parameters: 0.bias, 0.weight)
func.func @linear(%w: tensor<8x64xf32> {rlx.name = "0.weight", rlx.param}, %b: tensor<8xf32> {rlx.name = "0.bias", rlx.param}, %x: tensor<2x64xf32> {rlx.name = "input"}) -> tensor<2x8xf32> {
  %0 = mir.transpose %w perm = [1, 0] : (tensor<8x64xf32>) -> tensor<64x8xf32>
  %1 = mir.matmul %x, %0 : (tensor<2x64xf32>, tensor<64x8xf32>) -> tensor<2x8xf32>
  %2 = mir.add %1, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %2 : tensor<2x8xf32>
}

// -----

// A weight also read by something else than a matmul is kept; nothing else to quantise.
// CHECK-LABEL: func.func @kept
// CHECK:         mir.matmul %x, %w
// STATS:       quantize-weights-transposed.mlir:[[# @LINE + 1]]:1: note: 'rlx-quantize-weights' quantised nothing: no parameter is a static 2-D weight read only as a mir.matmul's rhs (directly or through mir.transpose perm = [1, 0])
func.func @kept(%x: tensor<2x32xf32> {rlx.name = "x"}, %w: tensor<32x8xf32> {rlx.param, rlx.name = "w"}) -> (tensor<2x8xf32>, tensor<32x8xf32>) {
  %0 = mir.matmul %x, %w : (tensor<2x32xf32>, tensor<32x8xf32>) -> tensor<2x8xf32>
  %1 = mir.relu %w : (tensor<32x8xf32>) -> tensor<32x8xf32>
  func.return %0, %1 : tensor<2x8xf32>, tensor<32x8xf32>
}

// STATS:      rlx-quantize-weights
// STATS-NEXT:   (S) 1 QuantizeWeights
// STATS-NEXT:   (S) 1 num-quantized-weights  - Number of weights quantised
// STATS-NEXT:   (S) 1 num-transposed-weights - Number of quantised weights read through mir.transpose
