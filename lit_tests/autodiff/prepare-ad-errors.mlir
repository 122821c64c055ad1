// rlx-prepare-ad's errors point at the op it cannot rewrite. The loop stops when run (x reaches
// 10; tests run every lit function), but nothing bounds its steps.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p 'rlx-prepare-ad'
// RUN: not rlx-opt %s --split-input-file -p 'rlx-prepare-ad' 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: prepare-ad-errors.mlir:[[# @LINE + 4]]:3: error: 'mir.while' without max_iterations cannot be unrolled for autodiff (give the loop a bound)

func.func @f(%x: tensor<1xf32>) -> tensor<1xf32> {
  // expected-error@+1 {{'mir.while' without max_iterations cannot be unrolled for autodiff (give the loop a bound)}}
  %r = mir.while (%x) : (tensor<1xf32>) -> tensor<1xf32> cond {
  ^bb0(%a: tensor<1xf32>):
    %ten = mir.constant dense<10.0> : tensor<1xf32>
    %t = mir.compare lt, %a, %ten : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    mir.yield %t : tensor<1xi1>
  } do {
  ^bb0(%a: tensor<1xf32>):
    %one = mir.constant dense<1.0> : tensor<1xf32>
    %s = mir.add %a, %one : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    mir.yield %s : tensor<1xf32>
  }
  func.return %r : tensor<1xf32>
}
