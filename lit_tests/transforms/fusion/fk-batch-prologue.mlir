// A batch region with a prologue (RLX's BatchElementwiseRegion{prologue, prologue_input}): image
// slices upsampled, then normalised, become one kernel; without native FK kernels, one
// prologue region per slice and a concat.
// RUN: rlx-opt %s --split-input-file -p 'rlx-fusion-pipeline{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s --split-input-file -p 'rlx-fusion-pipeline{target=cuda native-fk-regions=false}' | filecheck %s --check-prefix=DECOMPOSE
// RUN: rlx-opt %s --split-input-file -p 'rlx-fusion-pipeline{target=cuda fuse-region-prologue=false}' | filecheck %s --check-prefix=NOPRO
// RUN: rlx-opt %s --split-input-file -p 'rlx-fusion-pipeline{target=cuda}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// CUDA-LABEL: func.func @f(
// CUDA-NOT:   mir.resize_nearest_2x
// CUDA:       mir.batch_elementwise_region (%s1, %s0) shared(%m, %k) prologue = resize_nearest_2x on 0 : (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>, tensor<1x2x1x1xf32>, tensor<f32>) -> tensor<4x2x4x6xf32> {
// CUDA-NEXT:  ^bb0(%{{.*}}: tensor<2x2x4x6xf32>, %{{.*}}: tensor<1x2x1x1xf32>, %{{.*}}: tensor<f32>):
// CUDA:       mir.batch_elementwise_region (%s0, %s1) shared() prologue = resize_nearest_2x on 0
// CUDA-NOT:   mir.concat

// DECOMPOSE-LABEL: func.func @f(
// DECOMPOSE-COUNT-2: mir.elementwise_region (%s{{[01]}}, %m, %k) prologue = resize_nearest_2x on 0
// DECOMPOSE:       mir.concat
// DECOMPOSE-COUNT-2: mir.elementwise_region (%s{{[01]}}) prologue = resize_nearest_2x on 0
// DECOMPOSE:       mir.concat
// DECOMPOSE-NOT:   mir.batch_elementwise_region

// Without prologues the resizes stay in front of the slices' regions: no batch region.
// NOPRO-LABEL: func.func @f(
// NOPRO-NOT:   mir.batch_elementwise_region
// NOPRO:       func.return

// REPORT: elementwise_region=0 transform_region=0 batch_region=2 fk_prologue=0

func.func @f(%x: tensor<4x2x2x3xf32>, %m: tensor<1x2x1x1xf32>, %k: tensor<f32>) -> (tensor<4x2x4x6xf32>, tensor<4x2x4x6xf32>) {
  %s0 = mir.narrow %x axis = 0 start = 0 len = 2 : (tensor<4x2x2x3xf32>) -> tensor<2x2x2x3xf32>
  %s1 = mir.narrow %x axis = 0 start = 2 len = 2 : (tensor<4x2x2x3xf32>) -> tensor<2x2x2x3xf32>
  %u0 = mir.resize_nearest_2x %s0 : (tensor<2x2x2x3xf32>) -> tensor<2x2x4x6xf32>
  %u1 = mir.resize_nearest_2x %s1 : (tensor<2x2x2x3xf32>) -> tensor<2x2x4x6xf32>
  %d0 = mir.sub %u0, %m : (tensor<2x2x4x6xf32>, tensor<1x2x1x1xf32>) -> tensor<2x2x4x6xf32>
  %d1 = mir.sub %u1, %m : (tensor<2x2x4x6xf32>, tensor<1x2x1x1xf32>) -> tensor<2x2x4x6xf32>
  %e0 = mir.mul %d0, %k : (tensor<2x2x4x6xf32>, tensor<f32>) -> tensor<2x2x4x6xf32>
  %e1 = mir.mul %d1, %k : (tensor<2x2x4x6xf32>, tensor<f32>) -> tensor<2x2x4x6xf32>
  %t0 = mir.tanh %e0 : (tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32>
  %t1 = mir.tanh %e1 : (tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32>
  %c = mir.concat %t1, %t0 axis = 0 : (tensor<2x2x4x6xf32>, tensor<2x2x4x6xf32>) -> tensor<4x2x4x6xf32>
  %v0 = mir.resize_nearest_2x %s0 : (tensor<2x2x2x3xf32>) -> tensor<2x2x4x6xf32>
  %v1 = mir.resize_nearest_2x %s1 : (tensor<2x2x2x3xf32>) -> tensor<2x2x4x6xf32>
  %r0 = mir.relu %v0 : (tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32>
  %r1 = mir.relu %v1 : (tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32>
  %c2 = mir.concat %r0, %r1 axis = 0 : (tensor<2x2x4x6xf32>, tensor<2x2x4x6xf32>) -> tensor<4x2x4x6xf32>
  func.return %c, %c2 : tensor<4x2x4x6xf32>, tensor<4x2x4x6xf32>
}

// -----

// The prologue on a shared input (a half-resolution mask) while the slice is the regions'
// second input: the slice moves to the front, the prologue follows its input (on 1).
// CUDA-LABEL: func.func @g(
// CUDA:       mir.batch_elementwise_region (%s0, %s1) shared(%y) prologue = resize_nearest_2x on 1 : (tensor<2x2x4x6xf32>, tensor<2x2x4x6xf32>, tensor<2x2x2x3xf32>) -> tensor<4x2x4x6xf32> {
// CUDA-NEXT:  ^bb0(%{{.*}}: tensor<2x2x4x6xf32>, %{{.*}}: tensor<2x2x4x6xf32>):
// DECOMPOSE-LABEL: func.func @g(
// DECOMPOSE-COUNT-2: mir.elementwise_region (%s{{[01]}}, %y) prologue = resize_nearest_2x on 1
// REPORT: elementwise_region=0 transform_region=0 batch_region=1 fk_prologue=0
func.func @g(%x: tensor<4x2x4x6xf32>, %y: tensor<2x2x2x3xf32>) -> tensor<4x2x4x6xf32> {
  %s0 = mir.narrow %x axis = 0 start = 0 len = 2 : (tensor<4x2x4x6xf32>) -> tensor<2x2x4x6xf32>
  %s1 = mir.narrow %x axis = 0 start = 2 len = 2 : (tensor<4x2x4x6xf32>) -> tensor<2x2x4x6xf32>
  %r0 = mir.elementwise_region (%y, %s0) prologue = resize_nearest_2x on 0 : (tensor<2x2x2x3xf32>, tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32> {
  ^bb0(%a: tensor<2x2x4x6xf32>, %b: tensor<2x2x4x6xf32>):
    %p = mir.mul %a, %b : (tensor<2x2x4x6xf32>, tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32>
    mir.yield %p : tensor<2x2x4x6xf32>
  }
  %r1 = mir.elementwise_region (%y, %s1) prologue = resize_nearest_2x on 0 : (tensor<2x2x2x3xf32>, tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32> {
  ^bb0(%a: tensor<2x2x4x6xf32>, %b: tensor<2x2x4x6xf32>):
    %p = mir.mul %a, %b : (tensor<2x2x4x6xf32>, tensor<2x2x4x6xf32>) -> tensor<2x2x4x6xf32>
    mir.yield %p : tensor<2x2x4x6xf32>
  }
  %c = mir.concat %r0, %r1 axis = 0 : (tensor<2x2x4x6xf32>, tensor<2x2x4x6xf32>) -> tensor<4x2x4x6xf32>
  func.return %c : tensor<4x2x4x6xf32>
}
