// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// A scan is an scf.for: the body runs on the carry and the step's slice xs[t]; the
// trajectory is filled row by row. Both are written into the loop's iter_args (the
// carry by a copy), as one-shot bufferization needs.
// CHECK-LABEL: func.func @scan
// CHECK:         scf.for [[T:%[0-9a-z_]+]] = {{%.*}} to {{%.*}} step {{%.*}} iter_args([[C:%[0-9a-z_]+]] = %h, [[TR:%[0-9a-z_]+]] = {{%.*}}) -> (tensor<4xf32>, tensor<7x4xf32>) {
// CHECK:           [[X:%.*]] = tensor.extract_slice %xs{{\[}}[[T]], 0] [1, 4] [1, 1] : tensor<7x4xf32> to tensor<1x4xf32>
// CHECK:           [[N:%[0-9a-z_]+]] = linalg.generic
// CHECK:           arith.addf
// CHECK:           [[ROWS:%.*]] = tensor.insert_slice {{%.*}} into [[TR]]{{\[}}[[T]], 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<7x4xf32>
// CHECK-NEXT:      [[NEXT:%.*]] = linalg.copy ins([[N]] : tensor<4xf32>) outs([[C]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:      scf.yield [[NEXT]], [[ROWS]] : tensor<4xf32>, tensor<7x4xf32>
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

// -----

// Carries written into their iter_args: carries that swap values are copied out first
// (a carry is read after the other one was overwritten otherwise); a new value is copied in.
// CHECK-LABEL: func.func @scan_carries
// CHECK:         scf.for {{%.*}} = {{%.*}} to {{%.*}} step {{%.*}} iter_args([[P:%[0-9a-z_]+]] = %a, [[Q:%[0-9a-z_]+]] = %b, [[R:%[0-9a-z_]+]] = %c)
// CHECK:           [[S:%[0-9a-z_]+]] = linalg.generic
// CHECK:           arith.addf
// CHECK:           [[OLD_Q:%.*]] = linalg.copy ins([[Q]] : tensor<2xf32>) outs({{%.*}} : tensor<2xf32>) -> tensor<2xf32>
// CHECK:           [[OLD_P:%.*]] = linalg.copy ins([[P]] : tensor<2xf32>) outs({{%.*}} : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      [[NEXT_P:%.*]] = linalg.copy ins([[OLD_Q]] : tensor<2xf32>) outs([[P]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      [[NEXT_Q:%.*]] = linalg.copy ins([[OLD_P]] : tensor<2xf32>) outs([[Q]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      [[NEXT_R:%.*]] = linalg.copy ins([[S]] : tensor<2xf32>) outs([[R]] : tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      scf.yield [[NEXT_P]], [[NEXT_Q]], [[NEXT_R]] : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
func.func @scan_carries(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>, %xs: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %p, %q, %r = mir.scan init(%a, %b, %c : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) xs(%xs : tensor<3x2xf32>) length = 3 -> tensor<2xf32>, tensor<2xf32>, tensor<2xf32> {
  ^bb0(%p0: tensor<2xf32>, %q0: tensor<2xf32>, %r0: tensor<2xf32>, %x: tensor<2xf32>):
    %s = mir.add %r0, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    mir.yield %q0, %p0, %s : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  func.return %p, %q, %r : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
