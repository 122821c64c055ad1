// Every MIR op produced from a block is located at NameLoc(<label>, <the block's location>).
// RUN: rlx-opt %s -p rlx-lower-hir --print-debuginfo | filecheck %s
// RUN: rlx-opt %s -p 'rlx-lower-hir{policy=fusable}' --print-debuginfo | filecheck %s --check-prefix=FUSABLE

// A later error at a lowered op points at the HIR line and names the block.
// RUN: rlx-opt %s -p 'rlx-lower-hir{policy=fusable}' --print-debuginfo -o %t.mlir
// RUN: not rlx-opt %t.mlir -p 'rlx-specialize{shapes=b=5}' 2>&1 | filecheck %s --check-prefix=LATER

func.func @f(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>, %b: tensor<?xf32> {rlx.name = "b"}, %g: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: mir.fused_matmul_bias_act {{.*}} loc("layers.0.proj"("{{.*}}lower-hir-provenance.mlir":[[# @LINE + 5]]:3))
  // FUSABLE: mir.matmul {{.*}} loc("layers.0.proj"("{{.*}}lower-hir-provenance.mlir":[[# @LINE + 4]]:3))
  // FUSABLE-NEXT: mir.add {{.*}} loc("layers.0.proj"("{{.*}}lower-hir-provenance.mlir":[[# @LINE + 3]]:3))
  // FUSABLE-NEXT: mir.silu {{.*}} loc("layers.0.proj"("{{.*}}lower-hir-provenance.mlir":[[# @LINE + 2]]:3))
  // LATER: lower-hir-provenance.mlir:[[# @LINE + 1]]:3: error: cannot infer the result type of 'mir.add' after binding b=5: 'mir.add' shapes [2, 8], [5] do not broadcast
  %0 = hir.linear %x, %w, %b activation = silu {rlx.label = "layers.0.proj"} : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<?xf32>) -> tensor<2x8xf32>
  // LATER-NEXT: note: while running pass 'rlx-specialize'
  // LATER-NEXT: note: lowered from HIR block 'layers.0.proj'
  // CHECK: mir.rms_norm {{.*}} loc("rms_norm"("{{.*}}lower-hir-provenance.mlir":[[# @LINE + 1]]:3))
  %n = hir.rms_norm %0, %g, %g eps = 1.0e-6 : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: mir.matmul {{.*}} loc("shared_linear_pair[0]"("{{.*}}lower-hir-provenance.mlir":[[# @LINE + 2]]:3))
  // CHECK: mir.matmul {{.*}} loc("shared_linear_pair[1]"("{{.*}}lower-hir-provenance.mlir":[[# @LINE + 1]]:3))
  %1, %2 = hir.shared_linear_pair %n, %w, %w : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  // CHECK: func.return {{.*}} loc("{{.*}}lower-hir-provenance.mlir":[[# @LINE + 1]]:3)
  func.return %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>
}
