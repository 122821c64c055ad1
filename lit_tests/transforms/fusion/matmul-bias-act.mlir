// RUN: rlx-opt %s --split-input-file -p rlx-fuse-matmul-bias-act | filecheck %s
// RUN: rlx-opt %s --split-input-file -p rlx-fuse-matmul-bias-act --fusion-report -o %t 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: rlx-opt %s --split-input-file -p rlx-fuse-matmul-bias-act --print-debuginfo | filecheck %s --check-prefix=LOC

// RLX fuse_matmul_bias_gelu: x, w, b, matmul, add, gelu -> x, w, b, fused (6 -> 4 nodes).
// CHECK-LABEL: func.func @bias_gelu
// CHECK-NEXT:    %0 = mir.fused_matmul_bias_act %x, %w, %b activation = gelu : (tensor<4x15x384xf32>, tensor<384x64xf32>, tensor<64xf32>) -> tensor<4x15x64xf32>
// CHECK-NEXT:    func.return %0
// REPORT: nodes=6→4 matmul=1→0 fused_mm_act=1 fused_swiglu=0 fused_attention_block=0 fused_residual_norm=0 fused_mm_epilogue=0 elementwise_region=0 transform_region=0 batch_region=0 fk_prologue=0 missed_mm_act=0 missed_swiglu=0 missed_shared_mm=0 missed_residual_norm=0
// LOC: mir.fused_matmul_bias_act {{.*}} loc(fused["{{.*}}matmul-bias-act.mlir":[[# @LINE + 3]]:3, "{{.*}}matmul-bias-act.mlir":[[# @LINE + 4]]:3, "{{.*}}matmul-bias-act.mlir":[[# @LINE + 5]]:3])
// LOC: func.return
func.func @bias_gelu(%x: tensor<4x15x384xf32>, %w: tensor<384x64xf32>, %b: tensor<64xf32>) -> tensor<4x15x64xf32> {
  %0 = mir.matmul %x, %w : (tensor<4x15x384xf32>, tensor<384x64xf32>) -> tensor<4x15x64xf32>
  %1 = mir.add %0, %b : (tensor<4x15x64xf32>, tensor<64xf32>) -> tensor<4x15x64xf32>
  %2 = mir.gelu %1 : (tensor<4x15x64xf32>) -> tensor<4x15x64xf32>
  func.return %2 : tensor<4x15x64xf32>
}

// -----

// RLX fuse_matmul_bias_no_act: 5 -> 4 nodes; the bias may be the add's lhs, and silu fuses too.
// CHECK-LABEL: func.func @bias_no_act
// CHECK-NEXT:    %0 = mir.fused_matmul_bias_act %x, %w, %b : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %1 = mir.fused_matmul_bias_act %x, %w, %b activation = silu
// CHECK-NEXT:    func.return %0, %1
// REPORT: nodes=8→5 matmul=2→0 fused_mm_act=2
func.func @bias_no_act(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = mir.add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %3 = mir.add %b, %2 : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = mir.silu %3 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %1, %4 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// RLX fuse_matmul_bias_skips_unsupported_activation_epilogue: exp stays the output (5 nodes);
// the report names the activation it could not fold.
// CHECK-LABEL: func.func @exp_epilogue
// CHECK-NEXT:    %0 = mir.fused_matmul_bias_act %x, %w, %b : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %1 = mir.exp %0
// REPORT: nodes=6→5 matmul=1→0 fused_mm_act=1 {{.*}} missed_mm_act=1
// REPORT: matmul_bias_act @ {{.*}}matmul-bias-act.mlir:[[# @LINE + 2]]:3 — activation exp is not folded → rlx-fuse-matmul-bias-act folds gelu and silu only
func.func @exp_epilogue(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = mir.add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = mir.exp %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %2 : tensor<2x4xf32>
}

// -----

// RLX fuse_matmul_bias_act_with_late_bias_param: a bias computed after the matmul still fuses.
// CHECK-LABEL: func.func @late_bias
// CHECK-NEXT:    %b = mir.neg %p
// CHECK-NEXT:    %0 = mir.fused_matmul_bias_act %x, %w, %b activation = gelu
func.func @late_bias(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %p: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %b = mir.neg %p : (tensor<4xf32>) -> tensor<4xf32>
  %1 = mir.add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = mir.gelu %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %2 : tensor<2x4xf32>
}

// -----

// A matmul the function also returns is never fused away (RLX does not check graph outputs).
// CHECK-LABEL: func.func @matmul_is_an_output
// CHECK-NEXT:    %0 = mir.matmul
// CHECK-NEXT:    %1 = mir.add
// CHECK-NEXT:    %2 = mir.gelu
// REPORT: missed_mm_act=1
// REPORT: matmul_bias_act @ {{.*}}:[[# @LINE + 2]]:3 — the product has 2 users → rlx-fuse-matmul-bias-act needs the product used once
func.func @matmul_is_an_output(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = mir.add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = mir.gelu %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %2, %0 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// An add the function also returns: matmul and add stay, the activation is not folded.
// CHECK-LABEL: func.func @add_is_an_output
// CHECK-NEXT:    %0 = mir.fused_matmul_bias_act %x, %w, %b :
// CHECK-NEXT:    %1 = mir.gelu %0
// CHECK-NEXT:    func.return %1, %0
func.func @add_is_an_output(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = mir.add %0, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = mir.gelu %1 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %2, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A rank-2 bias, a residual (an add of the product's full shape) and a non-add consumer stay
// unfused; the report says why, does not call the residual a bias, and does not count the
// matmul no add follows (it has no bias to fuse; RLX reports NonAddBiasConsumer).
// CHECK-LABEL: func.func @misses
// CHECK-NOT:     fused_matmul_bias_act
// REPORT: missed_mm_act=2
// REPORT: matmul_bias_act @ {{.*}}:[[# @LINE + 4]]:3 — a bias of rank 2 → rlx-fuse-matmul-bias-act takes a bias of rank 0 or 1
// REPORT-NOT: no bias add follows
// REPORT: matmul_bias_act @ {{.*}}:[[# @LINE + 6]]:3 — a residual add of a full-shaped value → not a bias: `rlx-fusion-pipeline{target=best}` fuses it into the matmul as an epilogue
func.func @misses(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<1x4xf32>, %r: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %1 = mir.add %0, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %2 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %3 = mir.mul %2, %b : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  %4 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %5 = mir.add %r, %4 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %1, %3, %5 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
