// RUN: rlx-opt %s --split-input-file -p rlx-constant-fold,rlx-dce | filecheck %s

// RLX const_fold: 2 + 3 -> 5; an input-dependent op is not folded.
// CHECK-LABEL: func.func @add
// CHECK-NEXT:    %c = mir.constant dense<5.000000e+00> : tensor<f32>
// CHECK-NEXT:    %d = mir.add %x, %c
// CHECK-NEXT:    func.return %d
func.func @add(%x: tensor<f32>) -> tensor<f32> {
  %a = mir.constant dense<2.0> : tensor<f32>
  %b = mir.constant dense<3.0> : tensor<f32>
  %c = mir.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %d = mir.add %x, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %d : tensor<f32>
}

// -----

// Every dtype folds as itself (RLX reads all constants as f32): i32 wraps, bf16 rounds; binaries
// broadcast; compares fold to i1; a uniform result is a splat.
// CHECK-LABEL: func.func @dtypes
// CHECK-NEXT:    %wrap = mir.constant dense<-2147483648> : tensor<2xi32>
// CHECK-NEXT:    %b = mir.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00]]> : tensor<2x2xbf16>
// CHECK-NEXT:    %e = mir.constant dense<[false, true]> : tensor<2xi1>
// CHECK-NEXT:    func.return %wrap, %b, %e
func.func @dtypes() -> (tensor<2xi32>, tensor<2x2xbf16>, tensor<2xi1>) {
  %max = mir.constant dense<2147483647> : tensor<2xi32>
  %one = mir.constant dense<1> : tensor<i32>
  %wrap = mir.add %max, %one : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  %row = mir.constant dense<[1.0, 2.0]> : tensor<2xbf16>
  %zeros = mir.constant dense<0.0> : tensor<2x1xbf16>
  %b = mir.add %zeros, %row : (tensor<2x1xbf16>, tensor<2xbf16>) -> tensor<2x2xbf16>
  %l = mir.constant dense<[1.0, 5.0]> : tensor<2xbf16>
  %e = mir.compare lt, %row, %l : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xi1>
  func.return %wrap, %b, %e : tensor<2xi32>, tensor<2x2xbf16>, tensor<2xi1>
}

// -----

// Exact gelu (RLX folds 0.5 v (1 + tanh(v / sqrt 2)) = 0.8044): gelu(1) = 0.8413447461, whose
// nearest f32 prints as 0.841344774.
// CHECK-LABEL: func.func @gelu
// CHECK-NEXT:    %g = mir.constant dense<0.841344774> : tensor<f32>
func.func @gelu() -> tensor<f32> {
  %one = mir.constant dense<1.0> : tensor<f32>
  %g = mir.gelu %one : (tensor<f32>) -> tensor<f32>
  func.return %g : tensor<f32>
}

// -----

// Whole chains fold; ops of any group with a kernel do (reshape, matmul here).
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %p = mir.constant dense<{{\[}}[7.000000e+00, 1.000000e+01], [1.500000e+01, 2.200000e+01]]> : tensor<2x2xf32>
// CHECK-NEXT:    func.return %p
func.func @chain() -> tensor<2x2xf32> {
  %a = mir.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %m = mir.reshape %a new_shape = [2, 2] : (tensor<4xf32>) -> tensor<2x2xf32>
  %p = mir.matmul %m, %m : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %p : tensor<2x2xf32>
}

// -----

// A result over max-elements stays an op (so a fold never turns a small constant into a large one;
// the limit is lowered here to show it). Without the limit, the expand folds to a splat.
// CHECK-LABEL: func.func @limit
// CHECK-NEXT:    %e = mir.constant dense<1.000000e+00> : tensor<4xf32>
// RUN: rlx-opt %s --split-input-file -p 'rlx-constant-fold{max-elements=3}' | filecheck %s --check-prefix=LIMIT
// LIMIT-LABEL: func.func @limit
// LIMIT:         mir.expand
func.func @limit() -> tensor<4xf32> {
  %a = mir.constant dense<1.0> : tensor<f32>
  %e = mir.expand %a target_shape = [4] : (tensor<f32>) -> tensor<4xf32>
  func.return %e : tensor<4xf32>
}
