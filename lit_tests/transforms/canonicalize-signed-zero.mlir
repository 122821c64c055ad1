// IEEE 754: -0.0 + 0.0 = +0.0, so `x + 0.0` is not `x`; 1 / (x + 0.0) at x = -0.0
// is +inf (numpy: np.float32(1) / (np.float32(-0.0) + np.float32(0.0))), before
// and after rlx-canonicalize and rlx-constant-fold.
// RUN: rlx-run %s --func recip --input x=0x80000000 | filecheck %s
// RUN: rlx-opt %s -p rlx-canonicalize | rlx-run - --func recip --input x=0x80000000 | filecheck %s
// RUN: rlx-opt %s -p rlx-constant-fold | rlx-run - --func recip --input x=0x80000000 | filecheck %s
// CHECK: values: [inf]

func.func @recip(%x: tensor<f32> {rlx.name = "x"}) -> tensor<f32> {
  %z = mir.constant dense<0.0> : tensor<f32>
  %one = mir.constant dense<1.0> : tensor<f32>
  %y = mir.add %x, %z : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = mir.div %one, %y : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %r : tensor<f32>
}
