// rlx-vmap batches the kernels with a body through their unfuse rules' primitives, each by
// its own rule: no mir.scan over the examples.
// RUN: rlx-opt %s --split-input-file -p 'rlx-vmap{func=f batched=x size=4}' | filecheck %s

// A region with a prologue: the resize folds the batch into its N dim.
func.func @f(%a: tensor<1x2x4x6xf32>, %x: tensor<1x2x2x3xf32>) -> tensor<1x2x4x6xf32> {
  %0 = mir.elementwise_region (%a, %x) prologue = resize_nearest_2x on 1 : (tensor<1x2x4x6xf32>, tensor<1x2x2x3xf32>) -> tensor<1x2x4x6xf32> {
  ^bb0(%p: tensor<1x2x4x6xf32>, %q: tensor<1x2x4x6xf32>):
    %s = mir.add %p, %q : (tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
    mir.yield %s : tensor<1x2x4x6xf32>
  }
  func.return %0 : tensor<1x2x4x6xf32>
}

// CHECK-LABEL: func.func @f_vmap(%a: tensor<1x2x4x6xf32>, %x: tensor<4x1x2x2x3xf32>) -> tensor<4x1x2x4x6xf32> {
// CHECK-NOT:     mir.scan
// CHECK:         mir.reshape %x new_shape = [4, 2, 2, 3]
// CHECK-NEXT:    mir.resize_nearest_2x {{.*}} -> tensor<4x2x4x6xf32>
// CHECK-NEXT:    mir.reshape {{.*}} new_shape = [4, 1, 2, 4, 6]
// CHECK-NEXT:    %s = mir.add %a, {{.*}} -> tensor<4x1x2x4x6xf32>
// CHECK-NEXT:    func.return %s

// -----

func.func @f(%x: tensor<1x2x2x3xf32>) -> tensor<1x2x8x12xf32> {
  %0 = mir.transform_region %x steps = ["resize_nearest_2x", "resize_nearest_2x"] : (tensor<1x2x2x3xf32>) -> tensor<1x2x8x12xf32>
  func.return %0 : tensor<1x2x8x12xf32>
}

// CHECK-LABEL: func.func @f_vmap(%x: tensor<4x1x2x2x3xf32>) -> tensor<4x1x2x8x12xf32> {
// CHECK-NOT:     mir.scan
// CHECK-COUNT-2: mir.resize_nearest_2x
// CHECK-NOT:     mir.scan
// CHECK:         func.return

// -----

// A batch region: each slice's body on the batched slice, the shared inputs (a per-channel
// mean, a scalar) unbatched, the concat along the slices' axis past the batch axis.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %m: tensor<1x3xf32>, %k: tensor<f32>) -> tensor<4x3xf32> {
  %0 = mir.batch_elementwise_region (%x, %y) shared (%m, %k) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>, tensor<f32>) -> tensor<4x3xf32> {
  ^bb0(%v: tensor<2x3xf32>, %mean: tensor<1x3xf32>, %scale: tensor<f32>):
    %d = mir.sub %v, %mean : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
    %e = mir.mul %d, %scale : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    mir.yield %e : tensor<2x3xf32>
  }
  func.return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @f_vmap(%x: tensor<4x2x3xf32>, %y: tensor<2x3xf32>, %m: tensor<1x3xf32>, %k: tensor<f32>) -> tensor<4x4x3xf32> {
// CHECK-NOT:     mir.scan
// CHECK:         mir.sub %x, %m : (tensor<4x2x3xf32>, tensor<1x3xf32>) -> tensor<4x2x3xf32>
// CHECK:         mir.concat {{.*}} axis = 1 : (tensor<4x2x3xf32>, tensor<4x2x3xf32>) -> tensor<4x4x3xf32>
// CHECK-NEXT:    func.return

// -----

func.func @f(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %0 = mir.fused_matmul_epilogue %x, %w (%b) : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<3x5xf32> {
  ^bb0(%acc: tensor<3x5xf32>, %bias: tensor<5xf32>):
    %1 = mir.add %acc, %bias : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
    mir.yield %1 : tensor<3x5xf32>
  }
  func.return %0 : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @f_vmap(%x: tensor<4x3x4xf32>, %w: tensor<4x5xf32>, %b: tensor<5xf32>) -> tensor<4x3x5xf32> {
// CHECK-NEXT:    mir.matmul %x, %w : (tensor<4x3x4xf32>, tensor<4x5xf32>) -> tensor<4x3x5xf32>
// CHECK-NEXT:    mir.add {{.*}}, %b : (tensor<4x3x5xf32>, tensor<5xf32>) -> tensor<4x3x5xf32>
// CHECK-NEXT:    func.return
