// rlx-amp chooses a precision per MIR op, so it refuses HIR blocks (a block holds ops the
// policy treats differently, matmuls and norms); after rlx-lower-hir it runs.
// RUN: not rlx-opt %s -p 'rlx-amp{policy=auto-mixed-conservative}' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not rlx-opt %s -p 'rlx-amp' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: rlx-opt %s -p 'rlx-lower-hir,rlx-amp{policy=auto-mixed-conservative}' | filecheck %s --check-prefix=LOWERED

// ERR: amp-hir.mlir:[[# @LINE + 7]]:3: error: 'rlx-amp' chooses a precision per MIR op, and 'hir.rms_norm' is an HIR block (its ops may need different precisions): run rlx-lower-hir first (-p 'rlx-lower-hir,rlx-amp{...}')
// ERR-NOT: Traceback

// LOWERED: mir.rms_norm {{.*}} -> tensor<2x8xf32>
// LOWERED: mir.matmul {{.*}} -> tensor<2x4xf16>
func.func @block(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<1xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %n = mir.exp %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %h = hir.rms_norm %n, %g, %b eps = 1.0e-05 : (tensor<2x8xf32>, tensor<8xf32>, tensor<1xf32>) -> tensor<2x8xf32>
  %y = hir.linear %h, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
