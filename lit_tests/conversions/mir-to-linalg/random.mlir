// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// Philox-4x64-10 on i64: counter offset * 6 + (row-major position), ten rounds of two
// 64x64->128-bit products, then (w >> 11) * 2^-53 in f64, scaled and rounded once.
// CHECK-LABEL: func.func @rng_uniform
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%o : tensor<i64>)
// CHECK:           [[N:%.*]] = arith.constant 6 : i64
// CHECK:           [[BASE:%.*]] = arith.muli %{{.*}}, [[N]] : i64
// CHECK:           [[CTR:%.*]] = arith.addi [[BASE]], %{{.*}} : i64
// CHECK-COUNT-20:  arith.mului_extended
// CHECK:           [[TOP:%.*]] = arith.shrui %{{.*}}, %{{.*}} : i64
// CHECK:           arith.uitofp [[TOP]] : i64 to f64
// CHECK:           arith.truncf %{{.*}} : f64 to f32
// CHECK-NOT:       arith.mului_extended
func.func @rng_uniform(%o: tensor<i64>) -> tensor<2x3xf32> {
  %0 = mir.rng_uniform offset %o seed = 7 low = -1.0 high = 2.0 : (tensor<i64>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// Box-Muller: log1p for the radius, a polynomial for the cosine (no f64 libm cos on IREE's CPU).
// CHECK-LABEL: func.func @rng_normal
// CHECK:           math.log1p %{{.*}} : f64
// CHECK:           math.sqrt %{{.*}} : f64
// CHECK:           math.floor %{{.*}} : f64
// CHECK-NOT:       math.cos
// CHECK:           arith.truncf %{{.*}} : f64 to f32
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @rng_normal() -> tensor<4xf16> {
  %0 = mir.rng_normal seed = 3 mean = 0.0 std = 1.0 : () -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

// sample ranks the row (O(V^2), as topk), filters in f64, and counts the cumulative
// probabilities at or below the row's draw; greedy sampling is the id ranked 0.
// CHECK-LABEL: func.func @sample
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           math.exp %{{.*}} : f64
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK:           arith.mului_extended
// CHECK:         arith.minsi
// CHECK-LABEL: func.func @greedy
// CHECK-NOT:       math.exp
// CHECK-NOT:       arith.mului_extended
// CHECK:         func.return
func.func @sample(%l: tensor<2x5xf32>, %o: tensor<i64>) -> tensor<2xi64> {
  %0 = mir.sample %l offset %o top_k = 3 top_p = 0.9 temperature = 0.7 seed = 1 : (tensor<2x5xf32>, tensor<i64>) -> tensor<2xi64>
  func.return %0 : tensor<2xi64>
}
func.func @greedy(%l: tensor<2x5xf32>) -> tensor<2xi64> {
  %0 = mir.sample %l top_k = 0 top_p = 1.0 temperature = 0.0 seed = 1 : (tensor<2x5xf32>) -> tensor<2xi64>
  func.return %0 : tensor<2xi64>
}
