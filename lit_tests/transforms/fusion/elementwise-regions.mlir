// RUN: rlx-opt %s --split-input-file -p rlx-mark-elementwise-regions | filecheck %s
// RUN: rlx-opt %s --split-input-file -p rlx-mark-elementwise-regions,rlx-unfuse-elementwise-regions | filecheck %s --check-prefix=UNFUSE
// RUN: rlx-opt %s --split-input-file -p 'rlx-mark-elementwise-regions{max-steps=0 max-inputs=0},rlx-clip-elementwise-regions{max-steps=2 max-inputs=0}' | filecheck %s --check-prefix=CLIP
// RUN: rlx-opt %s --split-input-file -p 'rlx-mark-elementwise-regions{max-steps=2}' | filecheck %s --check-prefix=CAP

// RLX region_collapses_add_mul_relu_chain: one region, 3 inputs, 3 steps.
// RLX unfuse_decomposes_region_back_to_atomic_ops: 2 binaries and a relu again.
// CHECK-LABEL: func.func @add_mul_relu
// CHECK-NEXT:    %0 = mir.elementwise_region (%a, %b, %c) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%a_1: tensor<4x8xf32>, %b_1: tensor<4x8xf32>, %c_1: tensor<8xf32>):
// CHECK-NEXT:      %1 = mir.add %a_1, %b_1
// CHECK-NEXT:      %2 = mir.mul %1, %c_1
// CHECK-NEXT:      %3 = mir.relu %2
// CHECK-NEXT:      mir.yield %3 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0
// UNFUSE-LABEL: func.func @add_mul_relu
// UNFUSE-NEXT:    %0 = mir.add %a, %b
// UNFUSE-NEXT:    %1 = mir.mul %0, %c
// UNFUSE-NEXT:    %2 = mir.relu %1
// UNFUSE-NEXT:    func.return %2
// CLIP-LABEL: func.func @add_mul_relu
// CLIP-NOT:      elementwise_region
// CAP-LABEL: func.func @add_mul_relu
// CAP-NEXT:      %0 = mir.add %a, %b
// CAP-NEXT:      %1 = mir.elementwise_region (%0, %c)
func.func @add_mul_relu(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = mir.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = mir.mul %0, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = mir.relu %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// -----

// RLX region_does_not_fuse_when_intermediate_has_multiple_consumers: the add is used twice, so two
// regions meet at it; a value the function returns counts as a consumer too.
// CHECK-LABEL: func.func @multi_consumer
// CLIP-LABEL: func.func @multi_consumer
// CHECK-NEXT:    %0 = mir.add %a, %b
// CHECK-NEXT:    %1 = mir.elementwise_region (%0)
// CHECK:           mir.neg
// CHECK-NEXT:      mir.exp
// CHECK:         %2 = mir.elementwise_region (%0)
// CHECK:           mir.tanh
// CHECK-NEXT:      mir.abs
// CHECK:         func.return %1, %2, %0
func.func @multi_consumer(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = mir.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = mir.neg %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = mir.exp %1 : (tensor<4xf32>) -> tensor<4xf32>
  %3 = mir.tanh %0 : (tensor<4xf32>) -> tensor<4xf32>
  %4 = mir.abs %3 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %2, %4, %0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// RLX region_skips_chains_of_length_one; unfuse_is_noop_when_no_region_present.
// CHECK-LABEL: func.func @single
// CHECK-NEXT:    %0 = mir.exp %a
// CHECK-NEXT:    %1 = mir.matmul %0, %0
// CHECK-NEXT:    %2 = mir.neg %1
// CHECK-NEXT:    func.return %2
// UNFUSE-LABEL: func.func @single
// UNFUSE-NEXT:    %0 = mir.exp %a
func.func @single(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = mir.exp %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = mir.matmul %0, %0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = mir.neg %1 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %2 : tensor<4x4xf32>
}

// -----

// RLX region_includes_where_step / unfuse_decomposes_where_step_back_to_op_where; the compare step
// stays i1 when unfused and when clipped (RLX's clip re-types it u8). A [4, 1] input broadcasts as
// NumPy says (RLX's i % 4 reading would not).
// CHECK-LABEL: func.func @where_step
// CHECK-NEXT:    %0 = mir.elementwise_region (%a, %t, %z) : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<f32>) -> tensor<4x8xf32> {
// CHECK:           mir.compare gt
// CHECK-NEXT:      mir.where
// CHECK-NEXT:      mir.exp
// UNFUSE-LABEL: func.func @where_step
// UNFUSE-NEXT:    %0 = mir.compare gt, %a, %t : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xi1>
// UNFUSE-NEXT:    %1 = mir.where %0, %a, %z
// CLIP-LABEL: func.func @where_step
// CLIP-NEXT:    %0 = mir.compare gt, %a, %t : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xi1>
func.func @where_step(%a: tensor<4x8xf32>, %t: tensor<4x1xf32>, %z: tensor<f32>) -> tensor<4x8xf32> {
  %0 = mir.compare gt, %a, %t : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xi1>
  %1 = mir.where %0, %a, %z : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = mir.exp %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// -----

// RLX clip_unfuses_region_over_step_cap: a 3-step region is over a 2-step cap, a 2-step one is not.
// CLIP-LABEL: func.func @clip
// CLIP-NEXT:    %0 = mir.neg %a
// CLIP-NEXT:    %1 = mir.abs %0
// CLIP-NEXT:    %2 = mir.exp %1
// CLIP-NEXT:    %3 = mir.elementwise_region (%a)
// CLIP-NEXT:    ^bb0
// CLIP-NEXT:      mir.sin
// CLIP-NEXT:      mir.cos
func.func @clip(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = mir.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %1 = mir.abs %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = mir.exp %1 : (tensor<4xf32>) -> tensor<4xf32>
  %3 = mir.sin %a : (tensor<4xf32>) -> tensor<4xf32>
  %4 = mir.cos %3 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %2, %4 : tensor<4xf32>, tensor<4xf32>
}
