// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-legalize-broadcast | filecheck %s
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p 'rlx-promote-params{names=w}' | filecheck %s --check-prefix=PROMOTE

// A column broadcast becomes an expand; a trailing-suffix bias and a scalar stay.
// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %0 = mir.expand %c target_shape = [3, 4] : (tensor<3x1xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %1 = mir.add %x, %0 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %2 = mir.add %1, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT:    %3 = mir.mul %2, %s : (tensor<3x4xf32>, tensor<1x1xf32>) -> tensor<3x4xf32>
// PROMOTE: func.func @f(%x: tensor<3x4xf32>, %c: tensor<3x1xf32>, %b: tensor<4xf32> {rlx.name = "w"}, %s: tensor<1x1xf32> {rlx.param})
func.func @f(%x: tensor<3x4xf32>, %c: tensor<3x1xf32>, %b: tensor<4xf32> {rlx.param, rlx.name = "w"}, %s: tensor<1x1xf32> {rlx.param}) -> tensor<3x4xf32> {
  %0 = mir.add %x, %c : (tensor<3x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  %1 = mir.add %0, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %2 = mir.mul %1, %s : (tensor<3x4xf32>, tensor<1x1xf32>) -> tensor<3x4xf32>
  func.return %2 : tensor<3x4xf32>
}

// -----

// A `?` dim the operand shares is kept with -1.
// CHECK-LABEL: func.func @dynamic
// CHECK-NEXT:    %0 = mir.expand %c target_shape = [-1, 4] : (tensor<?x1xf32>) -> tensor<?x4xf32>
func.func @dynamic(%x: tensor<?x4xf32>, %c: tensor<?x1xf32>, %w: tensor<4xf32> {rlx.param, rlx.name = "w"}) -> tensor<?x4xf32> {
  %0 = mir.sub %x, %c : (tensor<?x4xf32>, tensor<?x1xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
