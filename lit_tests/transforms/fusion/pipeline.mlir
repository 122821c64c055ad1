// RUN: rlx-opt %s --split-input-file -p 'rlx-fusion-pipeline{target=cpu}' | filecheck %s --check-prefix=CPU
// RUN: rlx-opt %s --split-input-file -p 'rlx-fusion-pipeline{target=cpu}' --fusion-report -o %t 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: rlx-opt %s --split-input-file -p 'rlx-fusion-pipeline{target=metal}' | filecheck %s --check-prefix=METAL
// RUN: rlx-opt %s --split-input-file -p 'rlx-fusion-pipeline{target=cpu skip-fusion=true}' | filecheck %s --check-prefix=SKIP
// RUN: not rlx-opt %s -p 'rlx-fusion-pipeline{target=gpu}' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: rlx-opt: error: invalid options for pass 'rlx-fusion-pipeline': target=gpu: 'gpu' is not one of cpu, metal, cuda, rocm, tpu, wgpu, best

// RLX report_counts_fused_ops / swiglu_ffn_builder_fuses_end_to_end: one fused_swiglu, fewer nodes.
// REPORT: nodes=9→8 matmul=3→2 fused_mm_act=0 fused_swiglu=1
// CPU-LABEL: func.func @swiglu_ffn
// CPU:         mir.fused_swiglu
// SKIP-LABEL: func.func @swiglu_ffn
// SKIP-NOT:     fused
func.func @swiglu_ffn(%x: tensor<4x16xf32>, %w_up: tensor<16x8xf32>, %w_gate: tensor<16x8xf32>, %w_down: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %up = mir.matmul %x, %w_up : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %gate = mir.matmul %x, %w_gate : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %s = mir.silu %gate : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = mir.mul %up, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = mir.matmul %h, %w_down : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// RLX full_bert_ffn_fusion: linear + bias + gelu, linear + bias, residual add, layer norm
// become two fused_matmul_bias_act and a fused_residual_layer_norm (14 -> 10 nodes).
// REPORT: nodes=14→10 matmul=2→0 fused_mm_act=2
// CPU-LABEL: func.func @bert_ffn
// CPU-NEXT:    %0 = mir.fused_matmul_bias_act %x, %w1, %b1 activation = gelu
// CPU-NEXT:    %1 = mir.fused_matmul_bias_act %0, %w2, %b2 :
// CPU-NEXT:    %n = mir.fused_residual_layer_norm %x, %1, %g, %beta axis = -1 eps = 1.000000e-12
// CPU-NEXT:    func.return %n
func.func @bert_ffn(%x: tensor<2x5x16xf32>, %w1: tensor<16x64xf32>, %b1: tensor<64xf32>, %w2: tensor<64x16xf32>, %b2: tensor<16xf32>, %g: tensor<16xf32>, %beta: tensor<16xf32>) -> tensor<2x5x16xf32> {
  %0 = mir.matmul %x, %w1 : (tensor<2x5x16xf32>, tensor<16x64xf32>) -> tensor<2x5x64xf32>
  %1 = mir.add %0, %b1 : (tensor<2x5x64xf32>, tensor<64xf32>) -> tensor<2x5x64xf32>
  %2 = mir.gelu %1 : (tensor<2x5x64xf32>) -> tensor<2x5x64xf32>
  %3 = mir.matmul %2, %w2 : (tensor<2x5x64xf32>, tensor<64x16xf32>) -> tensor<2x5x16xf32>
  %4 = mir.add %3, %b2 : (tensor<2x5x16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
  %r = mir.add %x, %4 : (tensor<2x5x16xf32>, tensor<2x5x16xf32>) -> tensor<2x5x16xf32>
  %n = mir.layer_norm %r, %g, %beta axis = -1 eps = 1.0e-12 : (tensor<2x5x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
  func.return %n : tensor<2x5x16xf32>
}

// -----

// RLX cpu_unfuses_elementwise_regions / metal_keeps_elementwise_regions_by_default.
// CPU-LABEL: func.func @regions
// CPU-NOT:     mir.elementwise_region
// METAL-LABEL: func.func @regions
// METAL:         mir.elementwise_region (%a, %b)
func.func @regions(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = mir.add %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = mir.tanh %0 : (tensor<8xf32>) -> tensor<8xf32>
  func.return %1 : tensor<8xf32>
}
