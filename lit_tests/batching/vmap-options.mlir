// rlx-vmap's option errors are located at the function (or the module, for an unknown one).
// RUN: not rlx-opt %s -p 'rlx-vmap{func=g batched=x size=4}' 2>&1 | filecheck %s --check-prefix=FUNC
// RUN: not rlx-opt %s -p 'rlx-vmap{func=f batched=x size=0}' 2>&1 | filecheck %s --check-prefix=SIZE
// RUN: not rlx-opt %s -p 'rlx-vmap{func=f batched=x size=4},rlx-vmap{func=f batched=x size=3}' 2>&1 | filecheck %s --check-prefix=AGAIN
// RUN: rlx-opt %s -p 'rlx-vmap{func=f batched=x size=4},rlx-vmap{func=f batched=0 size=4}' | filecheck %s --check-prefix=SAME
// RUN: not rlx-opt %s -p 'rlx-vmap{func=f}' 2>&1 | filecheck %s --check-prefix=NONE

// FUNC: vmap-options.mlir:1:1: error: 'rlx-vmap' no function named @g (functions: @f)
// FUNC-NOT: Traceback
// SIZE: vmap-options.mlir:18:1: error: 'rlx-vmap' size must be at least 1, got 0
// SIZE-NOT: Traceback
// AGAIN: vmap-options.mlir:18:1: error: 'rlx-vmap' cannot add @f_vmap: the symbol already exists and differs (another batch size or batched arguments: (tensor<4x3xf32>) here, (tensor<3x3xf32>) asked)
// AGAIN-NOT: Traceback
// NONE: vmap-options.mlir:18:1: error: 'rlx-vmap' batched= names no argument: name the arguments to batch
// The same options again (here naming x by position) leave the module as it is.
// SAME-COUNT-1: func.func @f_vmap(
// SAME-NOT: func.func @f_vmap(
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = mir.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
