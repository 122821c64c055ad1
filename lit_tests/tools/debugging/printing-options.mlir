// mlir-opt's printing and pipeline options.
// --mlir-elide-elementsattrs-if-larger=N: constants of more than N elements (not splats)
// print as dense_resource<__elided__>, in the output and in IR dumps.
// RUN: rlx-opt %s --mlir-elide-elementsattrs-if-larger=2 | filecheck %s --check-prefix=ELIDE
// RUN: rlx-opt %s -p rlx-dce --mlir-print-ir-after-all --mlir-elide-elementsattrs-if-larger=2 2>&1 >/dev/null | filecheck %s --check-prefix=ELIDE
// ELIDE:      %big = arith.constant dense_resource<__elided__> : tensor<4xf32>
// ELIDE-NEXT: %splat = arith.constant dense<1.000000e+00> : tensor<4xf32>
// ELIDE-NEXT: %small = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>

// --mlir-print-op-generic (alias --print-op-generic), --mlir-print-debuginfo (alias --print-debuginfo).
// RUN: rlx-opt %s --mlir-print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: rlx-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// GENERIC: %0 = "mir.relu"(%a) : (tensor<2xf32>) -> tensor<2xf32>
// RUN: rlx-opt %s --mlir-print-debuginfo | filecheck %s --check-prefix=DEBUGINFO
// RUN: rlx-opt %s --print-debuginfo | filecheck %s --check-prefix=DEBUGINFO
// DEBUGINFO: %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32> loc("{{.*}}printing-options.mlir":[[# @LINE + 18]]:3)

// --mlir-print-local-scope (xDSL never prints aliases) and --mlir-disable-threading
// (passes run on one thread) change nothing.
// RUN: rlx-opt %s > %t.plain
// RUN: rlx-opt %s --mlir-print-local-scope --mlir-disable-threading > %t.options
// RUN: diff %t.plain %t.options

// --verify-each=false: no verification after passes, so a pass that breaks the IR
// goes unnoticed (as in mlir-opt); by default the verifier stops it.
// RUN: rlx-opt %s -p 'func.func(mlir-opt{executable="%S/Inputs/break-relu.sh"})' --verify-each=false | filecheck %s --check-prefix=NOVERIFY
// RUN: not rlx-opt %s -p 'func.func(mlir-opt{executable="%S/Inputs/break-relu.sh"})' --verify-each=true 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not rlx-opt %s -p 'func.func(mlir-opt{executable="%S/Inputs/break-relu.sh"})' 2>&1 | filecheck %s --check-prefix=VERIFY
// NOVERIFY: %0 = mir.relu %a : (tensor<2xf32>) -> tensor<3xf32>
// VERIFY: error: 'mir.relu'
// VERIFY: note: the IR became invalid in pass 'mlir-opt{executable=

func.func @f(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>) {
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32>
  %big = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %splat = arith.constant dense<1.0> : tensor<4xf32>
  %small = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  func.return %0, %big, %splat, %small : tensor<2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>
}
