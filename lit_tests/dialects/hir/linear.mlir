// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @linear
// GENERIC-LABEL: "func.func"() <{sym_name = "linear"
func.func @linear(%x: tensor<2x8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<2x8x32xf32> {
  // CHECK-NEXT: %0 = hir.linear %x, %w : (tensor<2x8x16xf32>, tensor<16x32xf32>) -> tensor<2x8x32xf32>
  // GENERIC: "hir.linear"(%x, %w) : (tensor<2x8x16xf32>, tensor<16x32xf32>) -> tensor<2x8x32xf32>
  %0 = hir.linear %x, %w : (tensor<2x8x16xf32>, tensor<16x32xf32>) -> tensor<2x8x32xf32>
  // CHECK-NEXT: %1 = hir.linear %x, %w, %b : (tensor<2x8x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %1 = hir.linear %x, %w, %b : (tensor<2x8x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  // CHECK-NEXT: %2 = hir.linear %x, %w, %b activation = gelu : (tensor<2x8x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  // GENERIC: "hir.linear"(%x, %w, %b) <{activation = #mir<activation gelu>}>
  %2 = hir.linear %x, %w, %b activation = gelu : (tensor<2x8x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  // CHECK-NEXT: %3 = hir.linear %x, %w activation = tanh {rlx.label = "layers.0.proj"} : (tensor<2x8x16xf32>, tensor<16x32xf32>) -> tensor<2x8x32xf32>
  // GENERIC: "hir.linear"(%x, %w) <{activation = #mir<activation tanh>}> {rlx.label = "layers.0.proj"}
  %3 = hir.linear %x, %w activation = tanh {rlx.label = "layers.0.proj"} : (tensor<2x8x16xf32>, tensor<16x32xf32>) -> tensor<2x8x32xf32>
  func.return %3 : tensor<2x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @linear_fused
func.func @linear_fused(%x: tensor<?x16xbf16>, %w: tensor<16x4xbf16>, %b: tensor<1x4xbf16>) -> tensor<?x4xbf16> {
  // CHECK-NEXT: %0 = hir.linear_fused %x, %w, %b : (tensor<?x16xbf16>, tensor<16x4xbf16>, tensor<1x4xbf16>) -> tensor<?x4xbf16>
  // GENERIC: "hir.linear_fused"(%x, %w, %b) : (tensor<?x16xbf16>, tensor<16x4xbf16>, tensor<1x4xbf16>) -> tensor<?x4xbf16>
  %0 = hir.linear_fused %x, %w, %b : (tensor<?x16xbf16>, tensor<16x4xbf16>, tensor<1x4xbf16>) -> tensor<?x4xbf16>
  // CHECK-NEXT: %1 = hir.linear_fused %x, %w, %b activation = silu : (tensor<?x16xbf16>, tensor<16x4xbf16>, tensor<1x4xbf16>) -> tensor<?x4xbf16>
  %1 = hir.linear_fused %x, %w, %b activation = silu : (tensor<?x16xbf16>, tensor<16x4xbf16>, tensor<1x4xbf16>) -> tensor<?x4xbf16>
  func.return %1 : tensor<?x4xbf16>
}

// -----

// CHECK-LABEL: func.func @shared_linear_pair
func.func @shared_linear_pair(%x: tensor<3x16xf32>, %wq: tensor<16x16xf32>, %wk: tensor<16x8xf32>) -> (tensor<3x16xf32>, tensor<3x8xf32>) {
  // CHECK-NEXT: %q, %k = hir.shared_linear_pair %x, %wq, %wk : (tensor<3x16xf32>, tensor<16x16xf32>, tensor<16x8xf32>) -> (tensor<3x16xf32>, tensor<3x8xf32>)
  // GENERIC: %q, %k = "hir.shared_linear_pair"(%x, %wq, %wk) : (tensor<3x16xf32>, tensor<16x16xf32>, tensor<16x8xf32>) -> (tensor<3x16xf32>, tensor<3x8xf32>)
  %q, %k = hir.shared_linear_pair %x, %wq, %wk : (tensor<3x16xf32>, tensor<16x16xf32>, tensor<16x8xf32>) -> (tensor<3x16xf32>, tensor<3x8xf32>)
  func.return %q, %k : tensor<3x16xf32>, tensor<3x8xf32>
}

// -----

// CHECK-LABEL: func.func @swiglu
func.func @swiglu(%x: tensor<2x?x16xf32>, %up: tensor<16x24xf32>, %gate: tensor<16x24xf32>, %down: tensor<24x16xf32>) -> tensor<2x?x16xf32> {
  // CHECK-NEXT: %0 = hir.swiglu %x, %up, %gate, %down : (tensor<2x?x16xf32>, tensor<16x24xf32>, tensor<16x24xf32>, tensor<24x16xf32>) -> tensor<2x?x16xf32>
  // GENERIC: "hir.swiglu"(%x, %up, %gate, %down) : (tensor<2x?x16xf32>, tensor<16x24xf32>, tensor<16x24xf32>, tensor<24x16xf32>) -> tensor<2x?x16xf32>
  %0 = hir.swiglu %x, %up, %gate, %down : (tensor<2x?x16xf32>, tensor<16x24xf32>, tensor<16x24xf32>, tensor<24x16xf32>) -> tensor<2x?x16xf32>
  func.return %0 : tensor<2x?x16xf32>
}
