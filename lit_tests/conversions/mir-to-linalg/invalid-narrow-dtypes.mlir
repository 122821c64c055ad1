// The 2- and 4-bit integers and the 8- and 4-bit floats (ONNX's quantised storage
// types) run in the interpreter only: lowering them is a located error.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-convert-mir-to-linalg

func.func @f8(%a: tensor<3xf32>) -> tensor<3xf8E4M3FN> {
  // expected-error@+1 {{cannot lower 'mir.cast': tensor<3xf8E4M3FN> has no linalg lowering (interpreter only)}}
  %0 = mir.cast %a : (tensor<3xf32>) -> tensor<3xf8E4M3FN>
  func.return %0 : tensor<3xf8E4M3FN>
}

// -----

func.func @i4(%a: tensor<3xi4>) -> tensor<3xf32> {
  // expected-error@+1 {{cannot lower 'mir.cast': tensor<3xi4> has no linalg lowering (interpreter only)}}
  %0 = mir.cast %a : (tensor<3xi4>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
