// RUN: not rlx-opt %s -p rlx-lower-control-flow 2>&1 | filecheck %s

// An unbounded loop cannot be unrolled: a located error, not a traceback.
// CHECK: control-flow-unbounded.mlir:[[# @LINE + 2]]:3: error: 'mir.while' without max_iterations cannot be unrolled by rlx-lower-control-flow (give the loop a bound)
func.func @unbounded(%x: tensor<1xf32>) -> tensor<1xf32> {
  %r = mir.while (%x) : (tensor<1xf32>) -> tensor<1xf32> cond {
  ^bb0(%a: tensor<1xf32>):
    %t = mir.constant dense<true> : tensor<i1>
    mir.yield %t : tensor<i1>
  } do {
  ^bb0(%a: tensor<1xf32>):
    mir.yield %a : tensor<1xf32>
  }
  func.return %r : tensor<1xf32>
}
