// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @reduce
// GENERIC-LABEL: "func.func"() <{sym_name = "reduce"
func.func @reduce(%x: tensor<2x3x4xf32>, %i: tensor<5x6xi32>) -> tensor<3xf32> {
  // CHECK-NEXT: %0 = mir.reduce sum %x axes = [0, 2] : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // GENERIC: "mir.reduce"(%x) <{kind = #mir<reduce_kind sum>, axes = array<i64: 0, 2>}> : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %0 = mir.reduce sum %x axes = [0, 2] : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // Negative axes count from the end; keep_dim leaves size-1 dims.
  // CHECK-NEXT: %1 = mir.reduce mean %x axes = [-1] keep_dim : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  // GENERIC: "mir.reduce"(%x) <{kind = #mir<reduce_kind mean>, axes = array<i64: -1>, keep_dim}> : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %1 = mir.reduce mean %x axes = [-1] keep_dim : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  // CHECK-NEXT: %2 = mir.reduce max %x axes = [1] : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %2 = mir.reduce max %x axes = [1] : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %3 = mir.reduce min %i axes = [0, 1] : (tensor<5x6xi32>) -> tensor<i32>
  %3 = mir.reduce min %i axes = [0, 1] : (tensor<5x6xi32>) -> tensor<i32>
  // CHECK-NEXT: %4 = mir.reduce prod %i axes = [1, 0] keep_dim : (tensor<5x6xi32>) -> tensor<1x1xi32>
  %4 = mir.reduce prod %i axes = [1, 0] keep_dim : (tensor<5x6xi32>) -> tensor<1x1xi32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @scans
// GENERIC-LABEL: "func.func"() <{sym_name = "scans"
func.func @scans(%x: tensor<2x8xf32>, %h: tensor<4xbf16>) -> tensor<2x8xf32> {
  // CHECK-NEXT: %0 = mir.softmax %x axis = -1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: "mir.softmax"(%x) <{axis = -1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = mir.softmax %x axis = -1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = mir.softmax %h axis = 0 : (tensor<4xbf16>) -> tensor<4xbf16>
  %1 = mir.softmax %h axis = 0 : (tensor<4xbf16>) -> tensor<4xbf16>
  // CHECK-NEXT: %2 = mir.cumsum %0 axis = 1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: "mir.cumsum"(%0) <{axis = 1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = mir.cumsum %0 axis = 1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %3 = mir.cumsum %2 axis = -2 exclusive : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // GENERIC: "mir.cumsum"(%2) <{axis = -2 : i64, exclusive}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = mir.cumsum %2 axis = -2 exclusive : (tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %values, %indices = mir.topk %3 k = 3 : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  // GENERIC: %values, %indices = "mir.topk"(%3) <{k = 3 : i64}> : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  %values, %indices = mir.topk %3 k = 3 : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  func.return %3 : tensor<2x8xf32>
}

// -----

// Dynamic dims pass through; a reduced `?` dim disappears (or becomes 1), and
// top-k over a dynamic last dim cannot be range-checked until run time.
// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%x: tensor<?x4x?xf32>) -> tensor<?x4xf32> {
  // CHECK-NEXT: %0 = mir.reduce sum %x axes = [2] : (tensor<?x4x?xf32>) -> tensor<?x4xf32>
  %0 = mir.reduce sum %x axes = [2] : (tensor<?x4x?xf32>) -> tensor<?x4xf32>
  // CHECK-NEXT: %1 = mir.reduce max %x axes = [0] keep_dim : (tensor<?x4x?xf32>) -> tensor<1x4x?xf32>
  %1 = mir.reduce max %x axes = [0] keep_dim : (tensor<?x4x?xf32>) -> tensor<1x4x?xf32>
  // CHECK-NEXT: %2 = mir.softmax %x axis = 2 : (tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  %2 = mir.softmax %x axis = 2 : (tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  // CHECK-NEXT: %3 = mir.cumsum %x axis = 0 : (tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  %3 = mir.cumsum %x axis = 0 : (tensor<?x4x?xf32>) -> tensor<?x4x?xf32>
  // CHECK-NEXT: %4, %5 = mir.topk %x k = 5 : (tensor<?x4x?xf32>) -> (tensor<?x4x5xf32>, tensor<?x4x5xi64>)
  %4, %5 = mir.topk %x k = 5 : (tensor<?x4x?xf32>) -> (tensor<?x4x5xf32>, tensor<?x4x5xi64>)
  func.return %0 : tensor<?x4xf32>
}
