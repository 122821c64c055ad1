// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @axis_norms
// GENERIC-LABEL: "func.func"() <{sym_name = "axis_norms"
func.func @axis_norms(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %g2: tensor<3x4xf32>, %s: tensor<1xf32>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %0 = mir.layer_norm %x, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // GENERIC: "mir.layer_norm"(%x, %g, %b) <{axis = -1 : i64, eps = 1.000000e-05 : f32}> : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %0 = mir.layer_norm %x, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // Normalising over the last two dims; gamma/beta broadcast to [3, 4].
  // CHECK-NEXT: %1 = mir.layer_norm %x, %g2, %s axis = 1 eps = 1.000000e-03 : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<1xf32>) -> tensor<2x3x4xf32>
  %1 = mir.layer_norm %x, %g2, %s axis = 1 eps = 1.000000e-03 : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<1xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %2 = mir.rms_norm %x, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // GENERIC: "mir.rms_norm"(%x, %g, %b) <{axis = -1 : i64, eps = 1.000000e-06 : f32}> : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %2 = mir.rms_norm %x, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %2 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @group_norm
// GENERIC-LABEL: "func.func"() <{sym_name = "group_norm"
func.func @group_norm(%x: tensor<2x6x5x5xbf16>, %g: tensor<6xbf16>, %b: tensor<6xbf16>) -> tensor<2x6x5x5xbf16> {
  // CHECK-NEXT: %0 = mir.group_norm %x, %g, %b num_groups = 3 eps = 1.000000e-05 : (tensor<2x6x5x5xbf16>, tensor<6xbf16>, tensor<6xbf16>) -> tensor<2x6x5x5xbf16>
  // GENERIC: "mir.group_norm"(%x, %g, %b) <{num_groups = 3 : i64, eps = 1.000000e-05 : f32}> : (tensor<2x6x5x5xbf16>, tensor<6xbf16>, tensor<6xbf16>) -> tensor<2x6x5x5xbf16>
  %0 = mir.group_norm %x, %g, %b num_groups = 3 eps = 1.000000e-05 : (tensor<2x6x5x5xbf16>, tensor<6xbf16>, tensor<6xbf16>) -> tensor<2x6x5x5xbf16>
  func.return %0 : tensor<2x6x5x5xbf16>
}

// -----

// Dynamic dims: `?` matches any gamma/beta dim, and an unknown channel count
// defers the divisibility check to run time.
// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%x: tensor<?x?x8xf16>, %g: tensor<8xf16>, %gd: tensor<?xf16>, %y: tensor<?x?x7xf32>, %c: tensor<?xf32>) -> tensor<?x?x8xf16> {
  // CHECK-NEXT: %0 = mir.layer_norm %x, %g, %gd axis = 2 eps = 1.000000e-05 : (tensor<?x?x8xf16>, tensor<8xf16>, tensor<?xf16>) -> tensor<?x?x8xf16>
  %0 = mir.layer_norm %x, %g, %gd axis = 2 eps = 1.000000e-05 : (tensor<?x?x8xf16>, tensor<8xf16>, tensor<?xf16>) -> tensor<?x?x8xf16>
  // CHECK-NEXT: %1 = mir.rms_norm %x, %gd, %g axis = -2 eps = 1.000000e-06 : (tensor<?x?x8xf16>, tensor<?xf16>, tensor<8xf16>) -> tensor<?x?x8xf16>
  %1 = mir.rms_norm %x, %gd, %g axis = -2 eps = 1.000000e-06 : (tensor<?x?x8xf16>, tensor<?xf16>, tensor<8xf16>) -> tensor<?x?x8xf16>
  // CHECK-NEXT: %2 = mir.group_norm %y, %c, %c num_groups = 4 eps = 1.000000e-05 : (tensor<?x?x7xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?x7xf32>
  %2 = mir.group_norm %y, %c, %c num_groups = 4 eps = 1.000000e-05 : (tensor<?x?x7xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?x7xf32>
  func.return %1 : tensor<?x?x8xf16>
}

// -----

// CHECK-LABEL: func.func @batch_norm_inference
// GENERIC-LABEL: "func.func"() <{sym_name = "batch_norm_inference"
func.func @batch_norm_inference(%x: tensor<2x?x5xf32>, %p: tensor<3xf32>) -> tensor<2x?x5xf32> {
  // CHECK-NEXT: %0 = mir.batch_norm_inference %x, %p, %p, %p, %p eps = 1.000000e-03 : (tensor<2x?x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x?x5xf32>
  // GENERIC: "mir.batch_norm_inference"(%x, %p, %p, %p, %p) <{eps = 1.000000e-03 : f32}> : (tensor<2x?x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x?x5xf32>
  %0 = mir.batch_norm_inference %x, %p, %p, %p, %p eps = 1.000000e-03 : (tensor<2x?x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x?x5xf32>
  func.return %0 : tensor<2x?x5xf32>
}
