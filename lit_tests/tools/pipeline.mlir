// Pass pipelines: -p and --pass-pipeline spell the same pipeline, and passes
// nested in func.func(...) run on every function.
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' | filecheck %s
// RUN: rlx-opt %s --pass-pipeline='builtin.module(func.func(cse),rlx-dce)' | filecheck %s
// RUN: rlx-opt %s -p 'builtin.module(func.func(cse),rlx-dce)' | filecheck %s
// RUN: rlx-opt %s -p 'func.func(cse, rlx-dce)' | filecheck %s
// RUN: rlx-opt %s | filecheck %s --check-prefix=NOPASS
// RUN: rlx-opt %s -p ' func.func( cse ), rlx-dce' --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s --check-prefix=DUMP
// RUN: rlx-opt %s --pass-pipeline='builtin.module(func.func(cse),rlx-dce)' --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s --check-prefix=DUMP

// DUMP: builtin.module(func.func(cse),rlx-dce)

// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %0 = mir.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %1 = mir.add %0, %0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %1 : tensor<2x3xf32>
// NOPASS-LABEL: func.func @f
// NOPASS-COUNT-2: mir.relu
// NOPASS: mir.neg
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = mir.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = mir.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %dead = mir.neg %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = mir.add %0, %1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %2 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @g
// CHECK-NEXT:    %0 = mir.abs %b : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %1 = mir.mul %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %1 : tensor<4xf32>
func.func @g(%b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mir.abs %b : (tensor<4xf32>) -> tensor<4xf32>
  %1 = mir.abs %b : (tensor<4xf32>) -> tensor<4xf32>
  %2 = mir.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
