// RUN: not rlx-opt %s -p rlx-unfuse 2>&1 | filecheck %s --check-prefix=ERR
// RUN: rlx-opt %s -p rlx-unfuse --verify-diagnostics

// Unrolling needs the sequence length (and the zero state's shape).
// ERR: unfuse-structured-static.mlir:[[# @LINE + 3]]:3: error: 'mir.selective_scan' can only be unfolded in time with static shapes, got tensor<1x?x2xf32>
func.func @dynamic_seq(%x: tensor<1x?x2xf32>, %a: tensor<2x4xf32>, %b: tensor<1x?x4xf32>) -> tensor<1x?x2xf32> {
  // expected-error@+1 {{'mir.selective_scan' can only be unfolded in time with static shapes, got tensor<1x?x2xf32>}}
  %y = mir.selective_scan %x, %x, %a, %b, %b state_size = 4 : (tensor<1x?x2xf32>, tensor<1x?x2xf32>, tensor<2x4xf32>, tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> tensor<1x?x2xf32>
  func.return %y : tensor<1x?x2xf32>
}
