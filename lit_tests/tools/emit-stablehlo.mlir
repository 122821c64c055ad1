// rlx-opt --emit=stablehlo writes the StableHLO module of a function, after the pipeline
// (JAX's lowering of its JAX translation), with f32 products at full precision.

// RUN: rlx-opt %s -p rlx-dce --emit=stablehlo | filecheck %s
// RUN: rlx-opt %s --emit=stablehlo --emit-func=second | filecheck %s --check-prefix=SECOND
// RUN: not rlx-opt %s --emit=stablehlo --emit-func=nope 2>&1 | filecheck %s --check-prefix=NOPE
// RUN: rlx-opt %s --emit=stablehlo --emit-func=ffn | filecheck %s --check-prefix=HIR

// CHECK:      module @jit_first
// CHECK:      func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>) -> (tensor<2x4xf32>
// CHECK-NEXT:   stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST]
// CHECK-NOT:  stablehlo.exponential
// CHECK:      return
func.func @first(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %y = mir.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %dead = mir.exp %y : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// SECOND: module @jit_second
// SECOND: stablehlo.tanh
func.func @second(%x: tensor<5xf32>) -> tensor<5xf32> {
  %y = mir.tanh %x : (tensor<5xf32>) -> tensor<5xf32>
  func.return %y : tensor<5xf32>
}

// NOPE: rlx-opt: error: --emit=stablehlo: no function named 'nope' (functions: 'first', 'second', 'ffn')

// HIR block ops are expanded into MIR first (rlx-lower-hir), as rlx-run --backend=xla runs them.
// HIR: module @jit_ffn
// HIR: stablehlo.dot_general %arg0, %arg1
// HIR: call @silu
// HIR: stablehlo.dot_general {{.*}}, %arg3
func.func @ffn(%x: tensor<2x8xf32>, %up: tensor<8x6xf32>, %gate: tensor<8x6xf32>, %down: tensor<6x8xf32>) -> tensor<2x8xf32> {
  %0 = hir.swiglu %x, %up, %gate, %down : (tensor<2x8xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<6x8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}
