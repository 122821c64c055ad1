// RUN: not rlx-opt %s -p rlx-lower-control-flow 2>&1 | filecheck %s

// An unbounded loop (it stops when x reaches 10, but nothing says after how many steps) cannot be
// unrolled: a located error, not a traceback.
// CHECK: control-flow-unbounded.mlir:[[# @LINE + 2]]:3: error: 'mir.while' without max_iterations cannot be unrolled by rlx-lower-control-flow (give the loop a bound)
func.func @unbounded(%x: tensor<1xf32>) -> tensor<1xf32> {
  %r = mir.while (%x) : (tensor<1xf32>) -> tensor<1xf32> cond {
  ^bb0(%a: tensor<1xf32>):
    %ten = mir.constant dense<10.0> : tensor<1xf32>
    %t = mir.compare lt, %a, %ten : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    mir.yield %t : tensor<1xi1>
  } do {
  ^bb0(%a: tensor<1xf32>):
    %one = mir.constant dense<1.0> : tensor<1xf32>
    %n = mir.add %a, %one : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    mir.yield %n : tensor<1xf32>
  }
  func.return %r : tensor<1xf32>
}
