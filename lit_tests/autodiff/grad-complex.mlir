// rlx-grad through complex and signal ops, in JAX's convention: conjugate conjugates the
// cotangent, complex_norm_sq goes to its backward kernel, fft on complex<f32> pulls back by the
// same transform, and fft on RLX's real layout by the adjoint (inverse, the scale moved).
// RUN: rlx-opt %s -p 'rlx-grad{func=f}' | filecheck %s

// CHECK-LABEL: func.func @f_grad
// CHECK:         %d_x = mir.fft %{{.*}} inverse norm = forward : (tensor<8xf32>) -> tensor<8xf32>
// CHECK:         %[[DS:.*]] = mir.complex_norm_sq_backward %s, %{{.*}} : (tensor<4xcomplex<f32>>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
// CHECK-NEXT:    %[[DC:.*]] = mir.fft %[[DS]] norm = forward : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
// CHECK-NEXT:    %d_z = mir.conjugate %[[DC]] : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
// CHECK-NEXT:    func.return %l, %d_z, %d_x : tensor<f32>, tensor<4xcomplex<f32>>, tensor<8xf32>
func.func @f(%z: tensor<4xcomplex<f32>> {rlx.param}, %x: tensor<8xf32> {rlx.param}) -> tensor<f32> {
  %c = mir.conjugate %z : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %s = mir.fft %c norm = forward : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %p = mir.complex_norm_sq %s : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  %r = mir.fft %x norm = backward : (tensor<8xf32>) -> tensor<8xf32>
  %q = mir.narrow %r axis = 0 start = 0 len = 4 : (tensor<8xf32>) -> tensor<4xf32>
  %m = mir.mul %p, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = mir.reduce sum %m axes = [0] : (tensor<4xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
