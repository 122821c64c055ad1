// A pass that could invalidate a memory plan refuses a planned (LIR) function
// before it runs, at the function's lir.plan, and says what to do; stock xDSL
// passes too. rlx-plan-memory (it re-plans) and rlx-convert-mir-to-linalg (it
// drops the plan) run on it. See docs/lir.md.
// RUN: rlx-opt %s --verify-diagnostics -p 'rlx-amp{policy=always-f16}'
// RUN: not rlx-opt %s -p rlx-dce 2>&1 | filecheck %s --check-prefix=DCE
// RUN: not rlx-opt %s -p 'func.func(cse)' 2>&1 | filecheck %s --check-prefix=STOCK
// RUN: rlx-opt %s -p rlx-plan-memory | filecheck %s --check-prefix=REPLAN
// RUN: rlx-opt %s -p rlx-convert-mir-to-linalg | filecheck %s --check-prefix=LINALG

// DCE:      planned-functions.mlir:[[# @LINE + 11]]:3: error: rlx-dce cannot run on a planned function (@f has an lir.plan); run it before rlx-plan-memory
// DCE-NEXT: {{^}}  lir.plan arena_bytes = 256
// DCE-NEXT: {{^}}  ^
// DCE-NEXT: planned-functions.mlir:[[# @LINE + 8]]:3: note: while running pass 'rlx-dce'
// STOCK:    error: cse cannot run on a planned function (@f has an lir.plan); run it before rlx-plan-memory
// REPLAN:   lir.plan arena_bytes = 256 naive_bytes = 320
// REPLAN:   %d = mir.exp %a {lir.slot = #lir.slot<offset = 192, size = 16>
// LINALG-NOT: lir.
// LINALG:   linalg.generic
func.func @f(%x: tensor<4xf32> {lir.slot = #lir.slot<offset = 0, size = 16>}, %y: tensor<4xf32> {lir.slot = #lir.slot<offset = 64, size = 16>}) -> (tensor<4xf32> {lir.slot = #lir.slot<offset = 128, size = 16, in_place>}) {
  // expected-error@+1 {{rlx-amp cannot run on a planned function (@f has an lir.plan); run it before rlx-plan-memory}}
  lir.plan arena_bytes = 256 naive_bytes = 320 lower_bound_bytes = 256 alignment = 64 strategy = "first-fit"
  %a = mir.add %x, %y {lir.slot = #lir.slot<offset = 128, size = 16>, lir.phase = #lir.phase<steady>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = mir.exp %a {lir.slot = #lir.slot<offset = 192, size = 16>, lir.phase = #lir.phase<steady>} : (tensor<4xf32>) -> tensor<4xf32>
  %b = mir.mul %a, %a {lir.slot = #lir.slot<offset = 128, size = 16, in_place>, lir.phase = #lir.phase<steady>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
