// IR dumps around passes (mlir-opt's --mlir-print-ir-* flags) go to stderr, with
// MLIR's headers; the output on stdout stays the IR alone.
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' --mlir-print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' --print-between-passes 2>&1 >/dev/null | filecheck %s --check-prefix=AFTER
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' --mlir-print-ir-after-all 2>/dev/null --verify-roundtrip | filecheck %s --check-prefix=OUT
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' --mlir-print-ir-before-all 2>&1 >/dev/null | filecheck %s --check-prefix=BEFORE
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' --mlir-print-ir-before=rlx-dce --mlir-print-ir-after=cse 2>&1 >/dev/null | filecheck %s --check-prefix=NAMED
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' --mlir-print-ir-after=cse,rlx-dce --mlir-print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE
// RUN: rlx-opt %s -p 'func.func(cse)' --mlir-print-ir-before=cse --mlir-print-ir-module-scope 2>&1 >/dev/null | filecheck %s --check-prefix=SCOPE
// RUN: not rlx-opt %s -p 'func.func(cse,mlir-opt{executable="false"})' --mlir-print-ir-after-failure 2>&1 >/dev/null | filecheck %s --check-prefix=FAILURE

// AFTER:      // -----// IR Dump After cse (cse) //----- //
// AFTER-NEXT: func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
// AFTER-NEXT:   %0 = mir.relu %a
// AFTER-NEXT:   %1 = mir.add %0, %0
// AFTER-NEXT:   func.return %1
// AFTER-NEXT: }
// AFTER-EMPTY:
// AFTER-NEXT: // -----// IR Dump After cse (cse) //----- //
// AFTER-NEXT: func.func @g(
// AFTER:      // -----// IR Dump After rlx-dce (rlx-dce) //----- //
// AFTER-NEXT: builtin.module {
// AFTER-NEXT:   func.func @f(

// OUT:     func.func @f(
// OUT-NOT: IR Dump

// BEFORE:      // -----// IR Dump Before cse (cse) //----- //
// BEFORE-NEXT: func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
// BEFORE-COUNT-2: mir.relu
// BEFORE:      // -----// IR Dump Before cse (cse) //----- //
// BEFORE-NEXT: func.func @g(
// BEFORE:      // -----// IR Dump Before rlx-dce (rlx-dce) //----- //
// BEFORE-NEXT: builtin.module {

// NAMED-NOT:  IR Dump After rlx-dce
// NAMED:      // -----// IR Dump After cse (cse) //----- //
// NAMED-NEXT: func.func @f(
// NAMED:      // -----// IR Dump After cse (cse) //----- //
// NAMED-NEXT: func.func @g(
// NAMED:      // -----// IR Dump Before rlx-dce (rlx-dce) //----- //
// NAMED-NOT:  IR Dump

// cse changes @f only; rlx-dce finds nothing left to do.
// CHANGE:      // -----// IR Dump After cse (cse) //----- //
// CHANGE-NEXT: func.func @f(
// CHANGE-NOT:  IR Dump

// SCOPE:      // -----// IR Dump Before cse (cse) ('func.func' operation: @f) //----- //
// SCOPE-NEXT: builtin.module {
// SCOPE-NEXT:   func.func @f(
// SCOPE:      // -----// IR Dump Before cse (cse) ('func.func' operation: @g) //----- //
// SCOPE-NEXT: builtin.module {

// FAILURE-NOT:  IR Dump After cse
// FAILURE:      // -----// IR Dump After mlir-opt Failed (mlir-opt) //----- //
// FAILURE-NEXT: func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
// FAILURE-NEXT:   %0 = mir.relu %a
// FAILURE-NEXT:   %1 = mir.add %0, %0
// FAILURE:      error: Error executing mlir-opt pass

func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32>
  %1 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32>
  %2 = mir.add %0, %1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %2 : tensor<2xf32>
}

func.func @g(%b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = mir.abs %b : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
