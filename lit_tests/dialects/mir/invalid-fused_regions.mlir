// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @region_not_elementwise(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'mir.elementwise_region' body op 'mir.matmul' is not elementwise (only ops with the Elementwise trait fuse)}}
  %0 = mir.elementwise_region (%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %1 = mir.matmul %a, %a : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    mir.yield %1 : tensor<4x4xf32>
  }
  func.return %0 : tensor<4x4xf32>
}

// -----

func.func @region_args(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.elementwise_region' body region argument types (tensor<4xf16>) do not match the input types (tensor<4xf32>)}}
  %0 = mir.elementwise_region (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf16>):
    %1 = mir.cast %a : (tensor<4xf16>) -> tensor<4xf32>
    mir.yield %1 : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}

// -----

func.func @region_shapes(%x: tensor<4xf32>, %y: tensor<2x4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  // expected-error@+1 {{'mir.elementwise_region' yielded values (tensor<4xf32>, tensor<2x4xf32>) must share one shape}}
  %0, %1 = mir.elementwise_region (%x, %y) : (tensor<4xf32>, tensor<2x4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<2x4xf32>):
    %2 = mir.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    %3 = mir.add %2, %b : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    mir.yield %2, %3 : tensor<4xf32>, tensor<2x4xf32>
  }
  func.return %0, %1 : tensor<4xf32>, tensor<2x4xf32>
}

// -----

func.func @region_input_larger(%x: tensor<4xf32>, %y: tensor<2x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.elementwise_region' input #1 shape [2, 4] does not broadcast to the region's shape [4]}}
  %0 = mir.elementwise_region (%x, %y) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<2x4xf32>):
    %1 = mir.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %1 : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}

// -----

func.func @region_terminator(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.elementwise_region' body region must end with 'mir.yield'}}
  %0 = "mir.elementwise_region"(%x) ({
  ^bb0(%a: tensor<4xf32>):
    %1 = "mir.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    "llvm.unreachable"() : () -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @region_yields_nothing(%x: tensor<4xf32>) {
  // expected-error@+1 {{'mir.elementwise_region' body must yield at least one value}}
  mir.elementwise_region (%x) : (tensor<4xf32>) -> () {
  ^bb0(%a: tensor<4xf32>):
    mir.yield
  }
  func.return
}

// -----

func.func @region_result(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{'mir.elementwise_region' inferred result type tensor<4xf32> does not match declared type tensor<4xf16>}}
  %0 = mir.elementwise_region (%x) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf32>):
    %1 = mir.neg %a : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %1 : tensor<4xf32>
  }
  func.return %0 : tensor<4xf16>
}

// -----

func.func @region_captures(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{Operation using value defined out of its IsolatedFromAbove parent}}
  %0 = mir.elementwise_region (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %1 : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}

// -----

func.func @yield_outside(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.yield' expects parent op to be one of 'mir.if', 'mir.while', 'mir.scan', 'mir.scan_backward', 'mir.custom_fn', 'mir.elementwise_region', 'mir.fused_matmul_epilogue', 'mir.batch_elementwise_region'}}
  mir.yield %x : tensor<4xf32>
}

// -----

func.func @epilogue_args(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.fused_matmul_epilogue' body argument types (tensor<3x4xf32>) do not match the matmul result and extras (tensor<3x5xf32>)}}
  %0 = mir.fused_matmul_epilogue %x, %w () : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32> {
  ^bb0(%acc: tensor<3x4xf32>):
    mir.yield %acc : tensor<3x4xf32>
  }
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @epilogue_contraction(%x: tensor<3x4xf32>, %w: tensor<6x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.fused_matmul_epilogue' contraction dims 4 and 6 differ}}
  %0 = mir.fused_matmul_epilogue %x, %w () : (tensor<3x4xf32>, tensor<6x5xf32>) -> tensor<3x5xf32> {
  ^bb0(%acc: tensor<3x5xf32>):
    mir.yield %acc : tensor<3x5xf32>
  }
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @epilogue_not_elementwise(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.fused_matmul_epilogue' body op 'mir.softmax' is not elementwise}}
  %0 = mir.fused_matmul_epilogue %x, %w () : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32> {
  ^bb0(%acc: tensor<3x5xf32>):
    %1 = mir.softmax %acc axis = -1 : (tensor<3x5xf32>) -> tensor<3x5xf32>
    mir.yield %1 : tensor<3x5xf32>
  }
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @epilogue_two_values(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.fused_matmul_epilogue' body must yield one value, got 2}}
  %0 = mir.fused_matmul_epilogue %x, %w () : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32> {
  ^bb0(%acc: tensor<3x5xf32>):
    mir.yield %acc, %acc : tensor<3x5xf32>, tensor<3x5xf32>
  }
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @epilogue_enlarges(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %r: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  // expected-error@+1 {{'mir.fused_matmul_epilogue' epilogue result shape [2, 3, 5] differs from the matmul result shape [3, 5]}}
  %0 = mir.fused_matmul_epilogue %x, %w (%r) : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  ^bb0(%acc: tensor<3x5xf32>, %res: tensor<2x3x5xf32>):
    %1 = mir.add %acc, %res : (tensor<3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
    mir.yield %1 : tensor<2x3x5xf32>
  }
  func.return %0 : tensor<2x3x5xf32>
}

// -----

func.func @epilogue_unused_extra(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %r: tensor<7xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.fused_matmul_epilogue' extra #0 shape [7] does not broadcast to the region's shape [3, 5]}}
  %0 = mir.fused_matmul_epilogue %x, %w (%r) : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<7xf32>) -> tensor<3x5xf32> {
  ^bb0(%acc: tensor<3x5xf32>, %res: tensor<7xf32>):
    mir.yield %acc : tensor<3x5xf32>
  }
  func.return %0 : tensor<3x5xf32>
}
