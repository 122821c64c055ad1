// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg | rlx-opt --split-input-file | filecheck %s

// A scan is an scf.for: the body runs on the carry and the step's slice xs[t]; the
// trajectory is filled row by row.
// CHECK-LABEL: func.func @scan
// CHECK:         scf.for [[T:%.*]] = {{%.*}} to {{%.*}} step {{%.*}} iter_args([[C:%.*]] = %h, [[TR:%.*]] = {{%.*}}) -> (tensor<4xf32>, tensor<7x4xf32>) {
// CHECK:           [[X:%.*]] = tensor.extract_slice %xs{{\[}}[[T]], 0] [1, 4] [1, 1] : tensor<7x4xf32> to tensor<1x4xf32>
// CHECK:           arith.addf
// CHECK:           tensor.insert_slice {{%.*}} into [[TR]]{{\[}}[[T]], 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<7x4xf32>
// CHECK:           scf.yield
// CHECK-NOT:     mir.
func.func @scan(%h: tensor<4xf32>, %xs: tensor<7x4xf32>) -> tensor<7x4xf32> {
  %r = mir.scan init(%h : tensor<4xf32>) xs(%xs : tensor<7x4xf32>) length = 7 save_trajectory -> tensor<7x4xf32> {
  ^bb0(%c: tensor<4xf32>, %x: tensor<4xf32>):
    %n = mir.add %c, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %n : tensor<4xf32>
  }
  func.return %r : tensor<7x4xf32>
}

// -----

// A custom function runs its forward body inline; its vjp is dropped.
// CHECK-LABEL: func.func @custom_fn
// CHECK-NEXT:    tensor.empty
// CHECK-NEXT:    linalg.generic
// CHECK:           arith.mulf
// CHECK-NOT:     mir.
func.func @custom_fn(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mir.custom_fn (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = mir.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    mir.yield %s : tensor<4xf32>
  } vjp {
  ^bb0(%a: tensor<4xf32>, %y0: tensor<4xf32>, %dy: tensor<4xf32>):
    mir.yield %dy : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

// Backward kernels, fused and state-space ops lower through their expansions into primitives.
// CHECK-LABEL: func.func @expanded
// CHECK-NOT:     mir.
// CHECK:         func.return
func.func @expanded(%x: tensor<2x3xf32>, %dy: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>) {
  %0 = mir.activation_backward gelu %x, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = mir.fused_matmul_bias_act %x, %w, %b activation = silu : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = mir.stop_gradient %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0, %1, %2 : tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>
}
