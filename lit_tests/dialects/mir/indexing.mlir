// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @gather
// GENERIC-LABEL: "func.func"() <{sym_name = "gather"
func.func @gather(%table: tensor<10x4xf32>, %ids: tensor<2x3xf32>, %j: tensor<5xi64>) -> tensor<2x3x4xf32> {
  // RLX's f32-encoded ids.
  // CHECK-NEXT: %0 = mir.gather %table, %ids axis = 0 : (tensor<10x4xf32>, tensor<2x3xf32>) -> tensor<2x3x4xf32>
  // GENERIC: "mir.gather"(%table, %ids) <{axis = 0 : i64}> : (tensor<10x4xf32>, tensor<2x3xf32>) -> tensor<2x3x4xf32>
  %0 = mir.gather %table, %ids axis = 0 : (tensor<10x4xf32>, tensor<2x3xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %1 = mir.gather %table, %j axis = -1 : (tensor<10x4xf32>, tensor<5xi64>) -> tensor<10x5xf32>
  %1 = mir.gather %table, %j axis = -1 : (tensor<10x4xf32>, tensor<5xi64>) -> tensor<10x5xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @gather_dynamic
func.func @gather_dynamic(%table: tensor<?x8xbf16>, %ids: tensor<?xi32>) -> tensor<?x8xbf16> {
  // CHECK-NEXT: %0 = mir.gather %table, %ids axis = 0 : (tensor<?x8xbf16>, tensor<?xi32>) -> tensor<?x8xbf16>
  %0 = mir.gather %table, %ids axis = 0 : (tensor<?x8xbf16>, tensor<?xi32>) -> tensor<?x8xbf16>
  func.return %0 : tensor<?x8xbf16>
}

// -----

// CHECK-LABEL: func.func @scatter_add
// GENERIC-LABEL: "func.func"() <{sym_name = "scatter_add"
func.func @scatter_add(%up: tensor<6x4xf32>, %ids: tensor<6xf32>, %dup: tensor<?x4xf32>, %dids: tensor<?xi64>) -> tensor<10x4xf32> {
  // CHECK-NEXT: %0 = mir.scatter_add %up, %ids dim_size = 10 : (tensor<6x4xf32>, tensor<6xf32>) -> tensor<10x4xf32>
  // GENERIC: "mir.scatter_add"(%up, %ids) <{dim_size = 10 : i64}> : (tensor<6x4xf32>, tensor<6xf32>) -> tensor<10x4xf32>
  %0 = mir.scatter_add %up, %ids dim_size = 10 : (tensor<6x4xf32>, tensor<6xf32>) -> tensor<10x4xf32>
  // CHECK-NEXT: %1 = mir.scatter_add %dup, %dids dim_size = 3 : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<3x4xf32>
  %1 = mir.scatter_add %dup, %dids dim_size = 3 : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<3x4xf32>
  func.return %0 : tensor<10x4xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_update_slice
// GENERIC-LABEL: "func.func"() <{sym_name = "dynamic_update_slice"
func.func @dynamic_update_slice(%cache: tensor<1x2x8x4xbf16>, %new: tensor<1x2x1x4xbf16>, %pos: tensor<i32>, %z: tensor<i64>, %s: tensor<f32>) -> tensor<1x2x8x4xbf16> {
  // CHECK-NEXT: %0 = mir.dynamic_update_slice %cache, %new at [%z, %z, %pos, %z] : (tensor<1x2x8x4xbf16>, tensor<1x2x1x4xbf16>, tensor<i64>, tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<1x2x8x4xbf16>
  // GENERIC: "mir.dynamic_update_slice"(%cache, %new, %z, %z, %pos, %z) : (tensor<1x2x8x4xbf16>, tensor<1x2x1x4xbf16>, tensor<i64>, tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<1x2x8x4xbf16>
  %0 = mir.dynamic_update_slice %cache, %new at [%z, %z, %pos, %z] : (tensor<1x2x8x4xbf16>, tensor<1x2x1x4xbf16>, tensor<i64>, tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<1x2x8x4xbf16>
  // A rank-0 operand takes no start index.
  // CHECK-NEXT: %1 = mir.dynamic_update_slice %s, %s at [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = mir.dynamic_update_slice %s, %s at [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<1x2x8x4xbf16>
}

// -----

// CHECK-LABEL: func.func @dynamic_update_slice_dynamic
func.func @dynamic_update_slice_dynamic(%x: tensor<?x8xf32>, %u: tensor<2x?xf32>, %i: tensor<ui8>) -> tensor<?x8xf32> {
  // CHECK-NEXT: mir.dynamic_update_slice %x, %u at [%i, %i] : (tensor<?x8xf32>, tensor<2x?xf32>, tensor<ui8>, tensor<ui8>) -> tensor<?x8xf32>
  %0 = mir.dynamic_update_slice %x, %u at [%i, %i] : (tensor<?x8xf32>, tensor<2x?xf32>, tensor<ui8>, tensor<ui8>) -> tensor<?x8xf32>
  func.return %0 : tensor<?x8xf32>
}
