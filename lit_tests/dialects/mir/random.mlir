// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @rng
// GENERIC-LABEL: "func.func"() <{sym_name = "rng"
func.func @rng(%o: tensor<i64>) -> (tensor<2x3xf32>, tensor<4xbf16>) {
  // CHECK-NEXT: %0 = mir.rng_uniform offset %o seed = 7 low = -1.000000e+00 high = 2.000000e+00 : (tensor<i64>) -> tensor<2x3xf32>
  // GENERIC: "mir.rng_uniform"(%o) <{seed = 7 : i64, low = -1.000000e+00 : f64, high = 2.000000e+00 : f64}> : (tensor<i64>) -> tensor<2x3xf32>
  %0 = mir.rng_uniform offset %o seed = 7 low = -1.0 high = 2.0 : (tensor<i64>) -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = mir.rng_normal seed = -3 mean = 5.000000e-01 std = 2.000000e+00 : () -> tensor<4xbf16>
  // GENERIC: "mir.rng_normal"() <{seed = -3 : i64, mean = 5.000000e-01 : f64, std = 2.000000e+00 : f64}> : () -> tensor<4xbf16>
  %1 = mir.rng_normal seed = -3 mean = 0.5 std = 2.0 : () -> tensor<4xbf16>
  func.return %0, %1 : tensor<2x3xf32>, tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @sample
func.func @sample(%l: tensor<?x8xf16>, %o: tensor<i64>) -> (tensor<?xi64>, tensor<?xi64>) {
  // CHECK-NEXT: %0 = mir.sample %l offset %o top_k = 3 top_p = 9.000000e-01 temperature = 7.000000e-01 seed = 1 : (tensor<?x8xf16>, tensor<i64>) -> tensor<?xi64>
  %0 = mir.sample %l offset %o top_k = 3 top_p = 0.9 temperature = 0.7 seed = 1 : (tensor<?x8xf16>, tensor<i64>) -> tensor<?xi64>
  // CHECK-NEXT: %1 = mir.sample %l top_k = 0 top_p = 1.000000e+00 temperature = 0.000000e+00 seed = 0 : (tensor<?x8xf16>) -> tensor<?xi64>
  %1 = mir.sample %l top_k = 0 top_p = 1.0 temperature = 0.0 seed = 0 : (tensor<?x8xf16>) -> tensor<?xi64>
  func.return %0, %1 : tensor<?xi64>, tensor<?xi64>
}
