// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @binary
// GENERIC-LABEL: "func.func"() <{sym_name = "binary"
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<3xi32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %0 = mir.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // GENERIC: "mir.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = mir.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = mir.sub %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = mir.sub %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %2 = mir.mul %1, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = mir.mul %1, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %3 = mir.div %2, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = mir.div %2, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %4 = mir.max %3, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = mir.max %3, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %5 = mir.min %4, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = mir.min %4, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %6 = mir.pow %5, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = mir.pow %5, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // Promotion: i32 with f32 gives f64 (f32 cannot hold every i32 exactly).
  // CHECK-NEXT: %7 = mir.add %b, %i : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf64>
  %7 = mir.add %b, %i : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf64>
  func.return %6 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @values
func.func @values(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // CHECK-NEXT: %c = mir.constant dense<5.000000e-01> : tensor<4xf32>
  %c = mir.constant dense<0.5> : tensor<4xf32>
  // CHECK-NEXT: %p = mir.compare ge, %x, %c : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
  // GENERIC: "mir.compare"(%x, %c) <{predicate = #mir<predicate ge>}> : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
  %p = mir.compare ge, %x, %c : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
  // CHECK-NEXT: %w = mir.where %p, %x, %c : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %w = mir.where %p, %x, %c : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK-NEXT: %h = mir.cast %w : (tensor<?x4xf32>) -> tensor<?x4xbf16>
  %h = mir.cast %w : (tensor<?x4xf32>) -> tensor<?x4xbf16>
  func.return %w : tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @activations
func.func @activations(%x: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK-NEXT: %0 = mir.gelu %x : (tensor<8xf32>) -> tensor<8xf32>
  %0 = mir.gelu %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %1 = mir.gelu_approx %0 : (tensor<8xf32>) -> tensor<8xf32>
  %1 = mir.gelu_approx %0 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %2 = mir.silu %1 : (tensor<8xf32>) -> tensor<8xf32>
  %2 = mir.silu %1 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %3 = mir.relu %2 : (tensor<8xf32>) -> tensor<8xf32>
  %3 = mir.relu %2 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %4 = mir.sigmoid %3 : (tensor<8xf32>) -> tensor<8xf32>
  %4 = mir.sigmoid %3 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %5 = mir.tanh %4 : (tensor<8xf32>) -> tensor<8xf32>
  %5 = mir.tanh %4 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %6 = mir.exp %5 : (tensor<8xf32>) -> tensor<8xf32>
  %6 = mir.exp %5 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %7 = mir.log %6 : (tensor<8xf32>) -> tensor<8xf32>
  %7 = mir.log %6 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %8 = mir.sqrt %7 : (tensor<8xf32>) -> tensor<8xf32>
  %8 = mir.sqrt %7 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %9 = mir.rsqrt %8 : (tensor<8xf32>) -> tensor<8xf32>
  %9 = mir.rsqrt %8 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %10 = mir.neg %9 : (tensor<8xf32>) -> tensor<8xf32>
  %10 = mir.neg %9 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %11 = mir.abs %10 : (tensor<8xf32>) -> tensor<8xf32>
  %11 = mir.abs %10 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %12 = mir.sin %11 : (tensor<8xf32>) -> tensor<8xf32>
  %12 = mir.sin %11 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %13 = mir.cos %12 : (tensor<8xf32>) -> tensor<8xf32>
  %13 = mir.cos %12 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %14 = mir.tan %13 : (tensor<8xf32>) -> tensor<8xf32>
  %14 = mir.tan %13 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %15 = mir.atan %14 : (tensor<8xf32>) -> tensor<8xf32>
  %15 = mir.atan %14 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %16 = mir.round %15 : (tensor<8xf32>) -> tensor<8xf32>
  %16 = mir.round %15 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %17 = mir.log1p %16 : (tensor<8xf32>) -> tensor<8xf32>
  %17 = mir.log1p %16 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %18 = mir.expm1 %17 : (tensor<8xf32>) -> tensor<8xf32>
  %18 = mir.expm1 %17 : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %19 = mir.erf %18 : (tensor<8xf32>) -> tensor<8xf32>
  %19 = mir.erf %18 : (tensor<8xf32>) -> tensor<8xf32>
  func.return %19 : tensor<8xf32>
}

// -----

// RLX's CastConfig on a cast: blocked scaling factors ([rows, cols] over the last two dims),
// optionally rounded to powers of two. A plain cast prints without it.
// CHECK-LABEL: func.func @blocked_cast
// GENERIC-LABEL: "func.func"() <{sym_name = "blocked_cast"
func.func @blocked_cast(%x: tensor<2x8x128xf32>) -> (tensor<2x8x128xbf16>, tensor<2x8x128xf16>, tensor<2x8x128xf16>) {
  // CHECK-NEXT: %0 = mir.cast %x config <sf_block = [1, 32]> : (tensor<2x8x128xf32>) -> tensor<2x8x128xbf16>
  // GENERIC: "mir.cast"(%x) <{config = #mir.cast_config<sf_block = [1, 32]>}> : (tensor<2x8x128xf32>) -> tensor<2x8x128xbf16>
  %0 = mir.cast %x config <sf_block = [1, 32]> : (tensor<2x8x128xf32>) -> tensor<2x8x128xbf16>
  // CHECK-NEXT: %1 = mir.cast %x config <sf_block = [8, 128], round_sf> : (tensor<2x8x128xf32>) -> tensor<2x8x128xf16>
  // GENERIC: "mir.cast"(%x) <{config = #mir.cast_config<sf_block = [8, 128], round_sf>}> : (tensor<2x8x128xf32>) -> tensor<2x8x128xf16>
  %1 = mir.cast %x config <sf_block = [8, 128], round_sf> : (tensor<2x8x128xf32>) -> tensor<2x8x128xf16>
  // CHECK-NEXT: %2 = mir.cast %x : (tensor<2x8x128xf32>) -> tensor<2x8x128xf16>
  // GENERIC: "mir.cast"(%x) : (tensor<2x8x128xf32>) -> tensor<2x8x128xf16>
  %2 = mir.cast %x : (tensor<2x8x128xf32>) -> tensor<2x8x128xf16>
  func.return %0, %1, %2 : tensor<2x8x128xbf16>, tensor<2x8x128xf16>, tensor<2x8x128xf16>
}

// -----

// The index ramp: O(1) in IR size whatever its shape.
// CHECK-LABEL: func.func @iota
// GENERIC-LABEL: "func.func"() <{sym_name = "iota"
func.func @iota() -> (tensor<1x50000xi64>, tensor<3x4xf32>, tensor<5xbf16>) {
  // CHECK-NEXT: %ramp = mir.iota dimension = 1 : tensor<1x50000xi64>
  // GENERIC: %ramp = "mir.iota"() <{dimension = 1 : i64}> : () -> tensor<1x50000xi64>
  %ramp = mir.iota dimension = 1 : tensor<1x50000xi64>
  // CHECK-NEXT: %rows = mir.iota dimension = -2 : tensor<3x4xf32>
  %rows = mir.iota dimension = -2 : tensor<3x4xf32>
  // CHECK-NEXT: %v = mir.iota dimension = 0 : tensor<5xbf16>
  %v = mir.iota dimension = 0 : tensor<5xbf16>
  func.return %ramp, %rows, %v : tensor<1x50000xi64>, tensor<3x4xf32>, tensor<5xbf16>
}

// A `?` dim sized at run time by a dim of `like` (here %x's dim 0).
// CHECK-LABEL: func.func @iota_like
// GENERIC-LABEL: "func.func"() <{sym_name = "iota_like"
func.func @iota_like(%x: tensor<?x8xi64>) -> (tensor<?xi64>, tensor<?x8xf32>) {
  // CHECK-NEXT: %b = mir.iota dimension = 0 like %x like_dims = [0] : tensor<?x8xi64> : tensor<?xi64>
  // GENERIC: %b = "mir.iota"(%x) <{dimension = 0 : i64, like_dims = array<i64: 0>}> : (tensor<?x8xi64>) -> tensor<?xi64>
  %b = mir.iota dimension = 0 like %x like_dims = [0] : tensor<?x8xi64> : tensor<?xi64>
  // CHECK-NEXT: %c = mir.iota dimension = 1 like %x like_dims = [0, -1] : tensor<?x8xi64> : tensor<?x8xf32>
  %c = mir.iota dimension = 1 like %x like_dims = [0, -1] : tensor<?x8xi64> : tensor<?x8xf32>
  func.return %b, %c : tensor<?xi64>, tensor<?x8xf32>
}
