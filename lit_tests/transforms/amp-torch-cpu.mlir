// policy=torch-cpu as torch.autocast("cpu") runs these ops: a norm computes in its input's
// precision (its f32 weights join a bf16 input), reduce prod and dense_solve in f32.
// RUN: rlx-opt %s -p 'rlx-amp{policy=torch-cpu}' | filecheck %s

// CHECK-LABEL: func.func @f
// CHECK:       %g_bf16 = mir.cast %g : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK:       %h = mir.matmul {{.*}} -> tensor<2x4xbf16>
// CHECK:       %n = mir.layer_norm %h, %g_bf16, %s_bf16 {{.*}} -> tensor<2x4xbf16>
// CHECK:       %n_f32 = mir.cast %n : (tensor<2x4xbf16>) -> tensor<2x4xf32>
// CHECK:       %m = mir.layer_norm %x, %g, %s {{.*}} -> tensor<2x4xf32>
// CHECK:       %p = mir.reduce prod %n_f32 {{.*}} -> tensor<2xf32>
// CHECK:       %a_f32 = mir.cast %a : (tensor<4x4xbf16>) -> tensor<4x4xf32>
// CHECK:       %sol = mir.dense_solve %a_f32, %r {{.*}} -> tensor<4x2xf32>
func.func @f(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %g: tensor<4xf32>, %s: tensor<4xf32>, %r: tensor<4x2xf32>)
    -> (tensor<2x4xf32>, tensor<2xf32>, tensor<4x2xf32>) {
  %h = mir.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %n = mir.layer_norm %h, %g, %s axis = -1 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %m = mir.layer_norm %x, %g, %s axis = -1 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %p = mir.reduce prod %n axes = [1] : (tensor<2x4xf32>) -> tensor<2xf32>
  %a = mir.matmul %w, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %sol = mir.dense_solve %a, %r : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %m, %p, %sol : tensor<2x4xf32>, tensor<2xf32>, tensor<4x2xf32>
}
