// A complex graph differentiated end to end: the spectrum of a real signal (cast to
// complex<f32>), a learnable complex filter `h` on its first 8 bins, the inverse transform,
// and the power |.|^2 summed into a real loss. `rlx-grad` pulls the cotangents back in JAX's
// convention (the gradient of `h` is what `jax.grad` returns: the conjugate of PyTorch's).
func.func @loss(%x: tensor<4x16xf32> {rlx.name = "x"}, %h: tensor<8xcomplex<f32>> {rlx.param, rlx.name = "h"}) -> tensor<f32> {
  %z = mir.cast %x : (tensor<4x16xf32>) -> tensor<4x16xcomplex<f32>>
  %spectrum = mir.fft %z norm = ortho : (tensor<4x16xcomplex<f32>>) -> tensor<4x16xcomplex<f32>>
  %low = mir.narrow %spectrum axis = 1 start = 0 len = 8 : (tensor<4x16xcomplex<f32>>) -> tensor<4x8xcomplex<f32>>
  %filtered = mir.mul %low, %h : (tensor<4x8xcomplex<f32>>, tensor<8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>>
  %signal = mir.fft %filtered inverse norm = ortho : (tensor<4x8xcomplex<f32>>) -> tensor<4x8xcomplex<f32>>
  %power = mir.complex_norm_sq %signal : (tensor<4x8xcomplex<f32>>) -> tensor<4x8xf32>
  %loss = mir.reduce sum %power axes = [0, 1] : (tensor<4x8xf32>) -> tensor<f32>
  func.return %loss : tensor<f32>
}
