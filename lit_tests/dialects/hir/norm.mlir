// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @norms
// GENERIC-LABEL: "func.func"() <{sym_name = "norms"
func.func @norms(%x: tensor<?x8x16xf32>, %r: tensor<?x8x16xf32>, %g: tensor<16xf32>, %b: tensor<1xf32>) -> (tensor<?x8x16xf32>, tensor<?x8x16xf32>) {
  // CHECK-NEXT: %0 = hir.rms_norm %x, %g, %b eps = 1.000000e-06 : (tensor<?x8x16xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<?x8x16xf32>
  // GENERIC: "hir.rms_norm"(%x, %g, %b) <{eps = 1.000000e-06 : f32}> : (tensor<?x8x16xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<?x8x16xf32>
  %0 = hir.rms_norm %x, %g, %b eps = 1.0e-6 : (tensor<?x8x16xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<?x8x16xf32>
  // CHECK-NEXT: %1 = hir.residual_rms_norm %x, %r, %g, %b eps = 1.000000e-05 {rlx.label = "layers.0.ffn_norm"} : (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<?x8x16xf32>
  // GENERIC: "hir.residual_rms_norm"(%x, %r, %g, %b) <{eps = 1.000000e-05 : f32}> {rlx.label = "layers.0.ffn_norm"}
  %1 = hir.residual_rms_norm %x, %r, %g, %b eps = 1.0e-5 {rlx.label = "layers.0.ffn_norm"} : (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<16xf32>, tensor<1xf32>) -> tensor<?x8x16xf32>
  func.return %0, %1 : tensor<?x8x16xf32>, tensor<?x8x16xf32>
}

// -----

// The residual broadcasts against x (here over the batch), as the `mir.add` it lowers to.
// CHECK-LABEL: func.func @broadcast_residual
func.func @broadcast_residual(%x: tensor<2x4xf16>, %r: tensor<4xf16>, %g: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<2x4xf16> {
  // CHECK-NEXT: %0 = hir.residual_rms_norm %x, %r, %g, %b eps = 1.000000e-06 : (tensor<2x4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
  %0 = hir.residual_rms_norm %x, %r, %g, %b eps = 1.0e-6 : (tensor<2x4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
  func.return %0 : tensor<2x4xf16>
}
