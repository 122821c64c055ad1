// RUN: RLX_ROUNDTRIP
// RUN: RLX_GENERIC_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @affine
// GENERIC-LABEL: "func.func"() <{sym_name = "affine"
func.func @affine(%x: tensor<2x3xf32>, %h: tensor<?x3xbf16>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x3xui8>) {
  // Per tensor: i8.
  // CHECK-NEXT: %0 = mir.quantize %x scales = [5.000000e-01] zero_points = [-3] : (tensor<2x3xf32>) -> tensor<2x3xi8>
  // GENERIC: "mir.quantize"(%x) <{scales = array<f32: 5.000000e-01>, zero_points = array<i64: -3>}> : (tensor<2x3xf32>) -> tensor<2x3xi8>
  %0 = mir.quantize %x scales = [5.000000e-01] zero_points = [-3] : (tensor<2x3xf32>) -> tensor<2x3xi8>
  // CHECK-NEXT: %1 = mir.dequantize %0 scales = [5.000000e-01] zero_points = [-3] : (tensor<2x3xi8>) -> tensor<2x3xf32>
  %1 = mir.dequantize %0 scales = [5.000000e-01] zero_points = [-3] : (tensor<2x3xi8>) -> tensor<2x3xf32>
  // Per channel along axis 1; a zero point past 127 makes the type ui8.
  // CHECK-NEXT: %2 = mir.quantize %x scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = 1 : (tensor<2x3xf32>) -> tensor<2x3xui8>
  // GENERIC: "mir.quantize"(%x) <{scales = array<f32: 1.000000e+00, 2.500000e-01, 2.000000e+00>, zero_points = array<i64: 0, 128, 255>, axis = 1 : i64}> : (tensor<2x3xf32>) -> tensor<2x3xui8>
  %2 = mir.quantize %x scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = 1 : (tensor<2x3xf32>) -> tensor<2x3xui8>
  // CHECK-NEXT: %3 = mir.dequantize %2 scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = -1 : (tensor<2x3xui8>) -> tensor<2x3xf32>
  %3 = mir.dequantize %2 scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = -1 : (tensor<2x3xui8>) -> tensor<2x3xf32>
  // A dynamic batch and a bf16 operand.
  // CHECK-NEXT: %4 = mir.quantize %h scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = 1 : (tensor<?x3xbf16>) -> tensor<?x3xui8>
  %4 = mir.quantize %h scales = [1.000000e+00, 2.500000e-01, 2.000000e+00] zero_points = [0, 128, 255] axis = 1 : (tensor<?x3xbf16>) -> tensor<?x3xui8>
  func.return %1, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<?x3xui8>
}
