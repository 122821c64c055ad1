// RUN: rlx-opt %s -p 'rlx-jvp{func=f wrt=0}' --split-input-file --verify-diagnostics

func.func @f(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'rlx-jvp' no JVP rule for 'mir.fused_swiglu' (the 'unfuse' step of rlx-prepare-ad rewrites it: run rlx-prepare-ad first)}}
  %y = mir.fused_swiglu %x gate_first : (tensor<2x8xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

// expected-error @+1 {{'rlx-jvp' argument 'arg0' of @f has type tensor<3xi32>, which carries no tangent (only floating-point tensors do)}}
func.func @f(%x: tensor<3xi32>) -> tensor<3xi32> {
  func.return %x : tensor<3xi32>
}
