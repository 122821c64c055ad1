// Non-finite values print as MLIR's hexadecimal bit patterns and parse back as the
// same bits (NaN payloads and -0.0 included), in both syntaxes; a splat stays a splat.
// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s | rlx-run - | filecheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @non_finite
// CHECK: mir.constant dense<[0x7FC00000, 0xFF800000, 1.000000e+00, -0.000000e+00]> : tensor<4xf32>
// CHECK: mir.constant dense<[0x7E01, 0xFC00, 6.550400e+04]> : tensor<3xf16>
// CHECK: mir.constant dense<[0x7FC1, 0x7F80, 3.389530e+38]> : tensor<3xbf16>
// CHECK: mir.constant dense<0x7FC00001> : tensor<2x3xf32>
// EXEC: @non_finite: 0 arguments, 4 outputs
// EXEC: values: [nan, -inf, 1, -0]
func.func @non_finite() -> (tensor<4xf32>, tensor<3xf16>, tensor<3xbf16>, tensor<2x3xf32>) {
  %a = mir.constant dense<[0x7FC00000, 0xFF800000, 1.0, -0.0]> : tensor<4xf32>
  %b = mir.constant dense<[0x7E01, 0xFC00, 65504.0]> : tensor<3xf16>
  %c = mir.constant dense<[0x7FC1, 0x7F80, 3.3895314e38]> : tensor<3xbf16>
  %d = mir.constant dense<0x7FC00001> : tensor<2x3xf32>
  func.return %a, %b, %c, %d : tensor<4xf32>, tensor<3xf16>, tensor<3xbf16>, tensor<2x3xf32>
}
