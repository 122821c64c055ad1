// rlx-grad's errors point at the op (or the function) that explains them.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p 'rlx-grad{func=f}'
// RUN: not rlx-opt %s --split-input-file -p 'rlx-grad{func=f}' 2>&1 | filecheck %s
// CHECK-NOT: Traceback

func.func @f(%x: tensor<3xf32> {rlx.param}) -> tensor<3xf32> {
  // expected-error@+1 {{'rlx-grad' no gradient reaches argument 'arg0' (%x) of @f: its paths to the loss are cut by 'mir.stop_gradient' (mode=training returns zeros instead)}}
  %0 = mir.stop_gradient %x : (tensor<3xf32>) -> tensor<3xf32>
  %1 = mir.exp %0 : (tensor<3xf32>) -> tensor<3xf32>
  func.return %1 : tensor<3xf32>
}

// -----

func.func @f(%t: tensor<4x2xf32>, %ids: tensor<3xf32> {rlx.name = "ids", rlx.param}) -> tensor<3x2xf32> {
  // expected-error@+1 {{'rlx-grad' no gradient reaches argument 'ids' of @f: its paths to the loss are cut by the index operand of 'mir.gather' (mode=training returns zeros instead)}}
  %0 = mir.gather %t, %ids axis = 0 : (tensor<4x2xf32>, tensor<3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @f(%x: tensor<3xf32> {rlx.name = "x", rlx.param}) -> tensor<3xf32> {
  // expected-error@+1 {{'rlx-grad' no gradient reaches argument 'x' of @f: its paths to the loss are cut by 'mir.cast' (its results carry no gradient) (mode=training returns zeros instead)}}
  %0 = mir.cast %x : (tensor<3xf32>) -> tensor<3xi32>
  %1 = mir.cast %0 : (tensor<3xi32>) -> tensor<3xf32>
  func.return %1 : tensor<3xf32>
}

// -----

// expected-error@+1 {{'rlx-grad' no gradient reaches argument 'w' of @f: the loss does not depend on it (mode=training returns zeros instead)}}
func.func @f(%x: tensor<3xf32> {rlx.name = "x", rlx.param}, %w: tensor<3xf32> {rlx.name = "w", rlx.param}) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = mir.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  %1 = mir.exp %w : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// expected-error@+1 {{'rlx-grad' no gradient reaches argument 'k' of @f: its type tensor<3xi32> carries no gradient (mode=training returns zeros instead)}}
func.func @f(%x: tensor<3xf32> {rlx.name = "x", rlx.param}, %k: tensor<3xi32> {rlx.name = "k", rlx.param}) -> tensor<3xf32> {
  %0 = mir.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @f(%h: tensor<4xf32> {rlx.param}) -> tensor<4xf32> {
  // expected-error@+1 {{'rlx-grad' no VJP rule for 'mir.scan'}}
  %r = mir.scan init(%h : tensor<4xf32>) length = 5 -> tensor<4xf32> {
  ^bb0(%c: tensor<4xf32>):
    %n = mir.tanh %c : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %n : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<1x2x3xf32> {rlx.param}, %d: tensor<1x2x3xf32>, %a: tensor<3x4xf32>, %b: tensor<1x2x4xf32>, %c: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  // expected-error@+1 {{'rlx-grad' no VJP rule for 'mir.selective_scan' (the 'unfuse' step of rlx-prepare-ad rewrites it: run rlx-prepare-ad first)}}
  %y = mir.selective_scan %x, %d, %a, %b, %c state_size = 4 : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<3x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x3xf32>
  func.return %y : tensor<1x2x3xf32>
}

// -----

func.func @f(%x: tensor<?x5xf32> {rlx.param}) -> tensor<2x5xf32> {
  // expected-error@+1 {{'rlx-grad' cannot differentiate 'mir.narrow': the narrowed axis 0 must be static to pad the gradient back}}
  %0 = mir.narrow %x axis = 0 start = 1 len = 2 : (tensor<?x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @f(%x: tensor<3xf32> {rlx.param}) -> tensor<3xi32> {
  %0 = mir.cast %x : (tensor<3xf32>) -> tensor<3xi32>
  // expected-error@+1 {{'rlx-grad' the loss (result #0) must be a floating-point tensor, got tensor<3xi32>}}
  func.return %0 : tensor<3xi32>
}

// -----

func.func @f(%x: tensor<3xf32> {rlx.param}) -> tensor<3xf32> {
  func.return %x : tensor<3xf32>
}
// expected-error@+1 {{'rlx-grad' cannot add @f_grad: the symbol already exists}}
func.func @f_grad(%x: tensor<3xf32>) -> tensor<3xf32> {
  func.return %x : tensor<3xf32>
}
