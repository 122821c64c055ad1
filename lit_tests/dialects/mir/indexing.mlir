// RUN: RLX_ROUNDTRIP
// RUN: RLX_GENERIC_ROUNDTRIP
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
