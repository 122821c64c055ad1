// materialize-scan-bcasts (a step of rlx-prepare-ad): each bcast of a mir.scan becomes an
// xs, the bcast expanded along the steps, placed before the other xs; the body is unchanged.
// Any dtype and `?` dims (RLX builds its ones constant in f32/f64 only).
// RUN: rlx-opt %s --split-input-file -p 'rlx-prepare-ad' | filecheck %s

func.func @f(%h0: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: tensor<?xi32>, %xs: tensor<6x2x4xf32>) -> tensor<6x2x4xf32> {
  %t = mir.scan init(%h0 : tensor<2x4xf32>) bcasts(%w, %n : tensor<4x4xf32>, tensor<?xi32>) xs(%xs : tensor<6x2x4xf32>) length = 6 save_trajectory -> tensor<6x2x4xf32> {
  ^bb0(%h: tensor<2x4xf32>, %v: tensor<4x4xf32>, %m: tensor<?xi32>, %x: tensor<2x4xf32>):
    %p = mir.matmul %h, %v : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %q = mir.add %p, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    mir.yield %q : tensor<2x4xf32>
  }
  func.return %t : tensor<6x2x4xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %w_steps = mir.expand %w target_shape = [6, 4, 4] : (tensor<4x4xf32>) -> tensor<6x4x4xf32>
// CHECK-NEXT:    %n_steps = mir.expand %n target_shape = [6, -1] : (tensor<?xi32>) -> tensor<6x?xi32>
// CHECK-NEXT:    %t = mir.scan init(%h0 : tensor<2x4xf32>) xs(%w_steps, %n_steps, %xs : tensor<6x4x4xf32>, tensor<6x?xi32>, tensor<6x2x4xf32>) length = 6 save_trajectory -> tensor<6x2x4xf32> {
// CHECK-NEXT:    ^bb0(%h: tensor<2x4xf32>, %v: tensor<4x4xf32>, %m: tensor<?xi32>, %x: tensor<2x4xf32>):
// CHECK-NEXT:      %p = mir.matmul %h, %v
// CHECK-NEXT:      %q = mir.add %p, %x
// CHECK-NEXT:      mir.yield %q
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %t
