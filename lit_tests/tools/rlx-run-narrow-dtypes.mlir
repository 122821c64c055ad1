// The interpreter computes the narrow dtypes through ml_dtypes: an f32 -> f8E4M3FN cast
// rounds to nearest-even (0.3 -> 0.3125), overflows to NaN (the type has no infinities) and
// keeps -0; an integer -> i4 cast wraps (300 -> -4). XLA refuses them at the op.
// RUN: rlx-run %s | filecheck %s
// RUN: not rlx-run --backend xla %s 2>&1 | filecheck %s --check-prefix=XLA

// CHECK: out0: shape [3] dtype f8E4M3FN
// CHECK: values: [0.3125, nan, -0]
// CHECK: out1: shape [2] dtype i4
// CHECK: values: [-4, 7]
// XLA-NOT: Traceback
// XLA: rlx-run-narrow-dtypes.mlir:[[# @LINE + 4]]:3: error: 'mir.cast': tensor<3xf8E4M3FN> has no JAX lowering (interpreter only)
func.func @f() -> (tensor<3xf8E4M3FN>, tensor<2xi4>) {
  %a = mir.constant dense<[0.3, 1000.0, -0.0]> : tensor<3xf32>
  %i = mir.constant dense<[300, -9]> : tensor<2xi32>
  %0 = mir.cast %a : (tensor<3xf32>) -> tensor<3xf8E4M3FN>
  %1 = mir.cast %i : (tensor<2xi32>) -> tensor<2xi4>
  func.return %0, %1 : tensor<3xf8E4M3FN>, tensor<2xi4>
}
