// RUN: rlx-opt %s -p rlx-mark-batch-slice-regions | filecheck %s --check-prefix=SLICE
// RUN: rlx-opt %s -p rlx-mark-elementwise-regions,rlx-mark-transform-regions | filecheck %s --check-prefix=TRANSFORM
// RUN: rlx-opt %s -p rlx-mark-elementwise-regions,rlx-fuse-region-prologue | filecheck %s --check-prefix=PROLOGUE
// RUN: rlx-opt %s -p rlx-mark-batch-slice-regions,rlx-fuse-batch-preprocess | filecheck %s --check-prefix=BATCH
// RUN: rlx-opt %s -p 'rlx-fusion-pipeline{target=cuda}' | filecheck %s --check-prefix=CUDA
// RUN: rlx-opt %s -p 'rlx-fusion-pipeline{target=cuda native-fk-regions=false}' | filecheck %s --check-prefix=DECOMPOSE
// RUN: rlx-opt %s -p 'rlx-fusion-pipeline{target=cuda fk-fusion=false}' | filecheck %s --check-prefix=NOFK
// RUN: rlx-opt %s -p 'rlx-fusion-pipeline{target=cuda fuse-region-prologue=false fuse-batch-preprocess=false}' | filecheck %s --check-prefix=NOPRO
// RUN: rlx-opt %s -p 'rlx-fusion-pipeline{target=cuda}' --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// narrow(axis 0) -> relu slices feeding one concat(axis 0): one-op regions, then one batch region
// in the concat's order (%s1 first).
// SLICE-COUNT-2: mir.elementwise_region (%s{{[01]}})
// SLICE: mir.concat
// BATCH: mir.batch_elementwise_region (%s1, %s0) shared() : (tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>) -> tensor<4x2x3x3xf32>
// BATCH-NOT: mir.concat

// A resize chain whose resizes have one user each: one transform region; the resizes used by an
// elementwise chain or a unary op are left to the prologue pass.
// TRANSFORM-COUNT-2: mir.resize_nearest_2x
// TRANSFORM: mir.transform_region %x steps = ["resize_nearest_2x", "resize_nearest_2x"] : (tensor<1x2x2x2xf32>) -> tensor<1x2x8x8xf32>

// PROLOGUE: mir.elementwise_region (%a, %x) prologue = resize_nearest_2x on 1 : (tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
// PROLOGUE: ^bb0(%{{.*}}: tensor<1x2x4x4xf32>, %{{.*}}: tensor<1x2x4x4xf32>):
// PROLOGUE: mir.elementwise_region (%x) prologue = resize_nearest_2x on 0 : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
// PROLOGUE: mir.relu

// CUDA-COUNT-2: prologue = resize_nearest_2x
// CUDA: mir.transform_region
// CUDA: mir.batch_elementwise_region

// Without native FK kernels: the transform region is resizes again, the batch region a region per slice.
// DECOMPOSE-COUNT-2: prologue = resize_nearest_2x
// DECOMPOSE-NOT: mir.transform_region
// DECOMPOSE-COUNT-2: mir.resize_nearest_2x
// DECOMPOSE-NOT: mir.batch_elementwise_region
// DECOMPOSE: mir.concat

// NOFK-NOT: prologue
// NOFK-NOT: _region {{.*}}steps
// NOFK-NOT: mir.batch_elementwise_region

// NOPRO-NOT: prologue =
// NOPRO: mir.transform_region
// NOPRO-NOT: mir.batch_elementwise_region

// REPORT: elementwise_region=2 transform_region=1 batch_region=1 fk_prologue=2

func.func @f(%x: tensor<1x2x2x2xf32>, %a: tensor<1x2x4x4xf32>, %b: tensor<4x2x3x3xf32>, %m: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<1x2x4x4xf32>) {
  %u = mir.resize_nearest_2x %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  %s = mir.add %a, %u : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = mir.tanh %s : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %u2 = mir.resize_nearest_2x %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  %r2 = mir.relu %u2 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %t1 = mir.resize_nearest_2x %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  %t = mir.resize_nearest_2x %t1 : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  %s0 = mir.narrow %b axis = 0 start = 0 len = 2 : (tensor<4x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %s1 = mir.narrow %b axis = 0 start = 2 len = 2 : (tensor<4x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %e0 = mir.relu %s0 : (tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %e1 = mir.relu %s1 : (tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %c = mir.concat %e1, %e0 axis = 0 : (tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>) -> tensor<4x2x3x3xf32>
  func.return %r, %t, %c, %r2 : tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<1x2x4x4xf32>
}
