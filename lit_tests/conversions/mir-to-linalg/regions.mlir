// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// mir.if: the one-element predicate becomes an i1; the branches read the captures directly.
// CHECK-LABEL: func.func @if_(%p: tensor<1xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
// CHECK:         [[C:%.*]] = tensor.extract %p[{{%.*}}] : tensor<1xi1>
// CHECK-NEXT:    [[R:%.*]] = scf.if [[C]] -> (tensor<3xf32>) {
// CHECK:           math.exp
// CHECK:           scf.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %x : tensor<3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return [[R]]
func.func @if_(%p: tensor<1xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = mir.if %p (%x) : (tensor<1xi1>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>):
    %1 = mir.exp %a : (tensor<3xf32>) -> tensor<3xf32>
    mir.yield %1 : tensor<3xf32>
  } else {
  ^bb0(%a: tensor<3xf32>):
    mir.yield %a : tensor<3xf32>
  }
  func.return %0 : tensor<3xf32>
}

// -----

// mir.while with max_iterations: an index counter is carried and tested with the condition.
// The body's next value is copied into its block argument (one-shot bufferization needs that).
// CHECK-LABEL: func.func @while_
// CHECK:         [[ZERO:%.*]] = arith.constant 0 : index
// CHECK-NEXT:    {{%.*}}, {{%.*}} = scf.while ({{%.*}} = %x, {{%.*}} = [[ZERO]]) : (tensor<f32>, index) -> (tensor<f32>, index) {
// CHECK:           [[LT:%.*]] = arith.cmpi slt, {{%.*}}, {{%.*}} : index
// CHECK-NEXT:      [[GO:%.*]] = arith.andi {{%.*}}, [[LT]] : i1
// CHECK-NEXT:      scf.condition([[GO]])
// CHECK:         } do {
// CHECK-NEXT:    ^bb0([[A:%[0-9a-z_]+]]: tensor<f32>, {{%.*}}: index):
// CHECK:           [[NEXT:%.*]] = linalg.generic
// CHECK:           arith.addf
// CHECK:           [[CARRIED:%.*]] = linalg.copy ins([[NEXT]] : tensor<f32>) outs([[A]] : tensor<f32>) -> tensor<f32>
// CHECK:           arith.addi {{%.*}}, {{%.*}} : index
// CHECK-NEXT:      scf.yield [[CARRIED]], {{%.*}} : tensor<f32>, index
func.func @while_(%x: tensor<f32>) -> tensor<f32> {
  %0 = mir.while (%x) max_iterations = 5 : (tensor<f32>) -> tensor<f32> cond {
  ^bb0(%a: tensor<f32>):
    %c = mir.constant dense<100.0> : tensor<f32>
    %1 = mir.compare lt, %a, %c : (tensor<f32>, tensor<f32>) -> tensor<i1>
    mir.yield %1 : tensor<i1>
  } do {
  ^bb0(%a: tensor<f32>):
    %c = mir.constant dense<2.0> : tensor<f32>
    %1 = mir.add %a, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
    mir.yield %1 : tensor<f32>
  }
  func.return %0 : tensor<f32>
}
