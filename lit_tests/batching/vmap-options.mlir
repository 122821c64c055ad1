// rlx-vmap's option errors are located at the function (or the module, for an unknown one).
// RUN: not rlx-opt %s -p 'rlx-vmap{func=g batched=x size=4}' 2>&1 | filecheck %s --check-prefix=FUNC
// RUN: not rlx-opt %s -p 'rlx-vmap{func=f batched=x size=0}' 2>&1 | filecheck %s --check-prefix=SIZE
// RUN: not rlx-opt %s -p 'rlx-vmap{func=f batched=x size=4},rlx-vmap{func=f batched=x size=3}' 2>&1 | filecheck %s --check-prefix=AGAIN
// RUN: rlx-opt %s -p 'rlx-vmap{func=f batched=x size=4},rlx-vmap{func=f batched=0 size=4}' | filecheck %s --check-prefix=SAME
// RUN: not rlx-opt %s -p 'rlx-vmap{func=f}' 2>&1 | filecheck %s --check-prefix=NONE

// FUNC: vmap-options.mlir:1:1: error: 'rlx-vmap' no function named @g (functions: @f)
// FUNC-NOT: Traceback
// A size below 1 is refused with the other option checks, before any IR is read.
// SIZE: rlx-opt: error: invalid options for pass 'rlx-vmap': size=0: 0 is out of range (an integer in [1, 9223372036854775807])
// SIZE-NOT: Traceback
// AGAIN: vmap-options.mlir:19:1: error: 'rlx-vmap' cannot add @f_vmap: the symbol already exists and differs (another batch size or batched arguments: (tensor<4x3xf32>) here, (tensor<3x3xf32>) asked)
// AGAIN-NOT: Traceback
// NONE: vmap-options.mlir:19:1: error: 'rlx-vmap' batched= names no argument: name the arguments to batch
// The same options again (here naming x by position) leave the module as it is.
// SAME-COUNT-1: func.func @f_vmap(
// SAME-NOT: func.func @f_vmap(
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = mir.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
