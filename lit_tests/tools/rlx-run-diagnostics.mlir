// rlx-run reports errors in its input exactly as rlx-opt does, and a kernel
// failing while the graph runs at the op whose kernel failed (here a gather
// index out of range, inside a mir.if region), with exit status 1.
// RUN: not rlx-run %s 2>&1 | filecheck %s
// RUN: not rlx-run - < %s 2>&1 | filecheck %s --check-prefix=STDIN
// RUN: not rlx-run %S/Inputs/invalid.mlir 2> %t.run
// RUN: not rlx-opt %S/Inputs/invalid.mlir 2> %t.opt
// RUN: diff %t.run %t.opt
// RUN: filecheck %s --check-prefix=VERIFY < %t.run

// VERIFY:      invalid.mlir:2:3: error: 'mir.relu' inferred result type tensor<2xf32> does not match declared type tensor<2xi32>
// VERIFY-NEXT: {{^}}  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xi32>{{$}}
// VERIFY-NEXT: {{^}}  ^{{$}}
// VERIFY-NEXT: invalid.mlir:2:3: note: see current operation: %0 = "mir.relu"(%a) : (tensor<2xf32>) -> tensor<2xi32>

// CHECK-NOT: Traceback
// STDIN: <stdin>:[[# @LINE + 12]]:5: error: interpretation failed: 'mir.gather' index 7 is out of range [-4, 4)
func.func @f(%t: tensor<4x2xf32>) -> tensor<3x2xf32> {
  %p = mir.constant dense<true> : tensor<1xi1>
  %ids = mir.constant dense<[0, 7, 1]> : tensor<3xi64>
  %r = mir.if %p (%t, %ids) : (tensor<1xi1>, tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32> {
  ^bb0(%a: tensor<4x2xf32>, %i: tensor<3xi64>):
    %n = mir.neg %a : (tensor<4x2xf32>) -> tensor<4x2xf32>
    // CHECK:      rlx-run-diagnostics.mlir:[[# @LINE + 5]]:5: error: interpretation failed: 'mir.gather' index 7 is out of range [-4, 4)
    // CHECK-NEXT: {{^}}    %g = mir.gather %n, %i axis = 0 : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>{{$}}
    // CHECK-NEXT: {{^}}    ^{{$}}
    // CHECK-NEXT: rlx-run-diagnostics.mlir:[[# @LINE + 2]]:5: note: while running @f
    // CHECK-NEXT: rlx-run-diagnostics.mlir:[[# @LINE + 1]]:5: note: see current operation: %g = "mir.gather"(%n, %i) <{axis = 0 : i64}> : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
    %g = mir.gather %n, %i axis = 0 : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
    mir.yield %g : tensor<3x2xf32>
  } else {
  ^bb0(%a: tensor<4x2xf32>, %i: tensor<3xi64>):
    %z = mir.gather %a, %i axis = 0 : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
    mir.yield %z : tensor<3x2xf32>
  }
  func.return %r : tensor<3x2xf32>
}
