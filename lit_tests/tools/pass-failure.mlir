// A failing pass is reported at the op it ran on: each function for passes
// nested in func.func(...), the module otherwise; never with a traceback.
// RUN: not rlx-opt %s -p 'func.func(mlir-opt{executable="false"})' 2>&1 | filecheck %s --check-prefix=FUNC
// RUN: not rlx-opt %s -p 'mlir-opt{executable="/nonexistent/mlir-opt"}' 2>&1 | filecheck %s --check-prefix=MODULE
// RUN: rlx-opt %s --verify-diagnostics -p 'func.func(mlir-opt{executable="false"})'

// FUNC:      pass-failure.mlir:[[# @LINE + 5]]:1: error: Error executing mlir-opt pass
// FUNC-NEXT: {{^}}func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
// FUNC-NEXT: {{^}}^
// FUNC-NEXT: pass-failure.mlir:[[# @LINE + 2]]:1: note: while running pass 'mlir-opt'
// FUNC-NEXT: pass-failure.mlir:[[# @LINE + 1]]:1: note: see current operation: "func.func"() <{sym_name = "f"
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> { // expected-error {{Error executing mlir-opt pass}}
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// MODULE:      pass-failure.mlir:1:1: error: ValueError: /nonexistent/mlir-opt is not available
// MODULE:      pass-failure.mlir:1:1: note: see current operation: "builtin.module"() ({
// MODULE-NOT:  Traceback
