// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @reshape
// GENERIC-LABEL: "func.func"() <{sym_name = "reshape"
func.func @reshape(%x: tensor<2x3x4xf32>, %d: tensor<?x4xf16>) -> tensor<6x4xf32> {
  // CHECK-NEXT: %0 = mir.reshape %x new_shape = [6, 4] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // GENERIC: "mir.reshape"(%x) <{new_shape = array<i64: 6, 4>}> : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %0 = mir.reshape %x new_shape = [6, 4] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK-NEXT: %1 = mir.reshape %x new_shape = [-1] : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %1 = mir.reshape %x new_shape = [-1] : (tensor<2x3x4xf32>) -> tensor<24xf32>
  // With a `?` input the -1 dim stays dynamic.
  // CHECK-NEXT: %2 = mir.reshape %d new_shape = [-1, 2, 2] : (tensor<?x4xf16>) -> tensor<?x2x2xf16>
  %2 = mir.reshape %d new_shape = [-1, 2, 2] : (tensor<?x4xf16>) -> tensor<?x2x2xf16>
  func.return %0 : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<2x3xf32>, %d: tensor<?x3x5xi32>) -> tensor<3x2xf32> {
  // CHECK-NEXT: %0 = mir.transpose %x perm = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // GENERIC: "mir.transpose"(%x) <{perm = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %0 = mir.transpose %x perm = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // CHECK-NEXT: %1 = mir.transpose %d perm = [2, 0, 1] : (tensor<?x3x5xi32>) -> tensor<5x?x3xi32>
  %1 = mir.transpose %d perm = [2, 0, 1] : (tensor<?x3x5xi32>) -> tensor<5x?x3xi32>
  func.return %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @narrow
func.func @narrow(%x: tensor<4x6xf32>, %d: tensor<?x6xf32>) -> tensor<4x2xf32> {
  // CHECK-NEXT: %0 = mir.narrow %x axis = 1 start = 3 len = 2 : (tensor<4x6xf32>) -> tensor<4x2xf32>
  // GENERIC: "mir.narrow"(%x) <{axis = 1 : i64, start = 3 : i64, len = 2 : i64}> : (tensor<4x6xf32>) -> tensor<4x2xf32>
  %0 = mir.narrow %x axis = 1 start = 3 len = 2 : (tensor<4x6xf32>) -> tensor<4x2xf32>
  // A negative axis counts from the end; narrowing a `?` dim gives a static one.
  // CHECK-NEXT: %1 = mir.narrow %d axis = -2 start = 1 len = 3 : (tensor<?x6xf32>) -> tensor<3x6xf32>
  %1 = mir.narrow %d axis = -2 start = 1 len = 3 : (tensor<?x6xf32>) -> tensor<3x6xf32>
  func.return %0 : tensor<4x2xf32>
}

// -----

// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %d: tensor<?x3xf32>) -> tensor<2x8xf32> {
  // CHECK-NEXT: %0 = mir.concat %a, %b axis = 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  // GENERIC: "mir.concat"(%a, %b) <{axis = 1 : i64}> : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %0 = mir.concat %a, %b axis = 1 : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = mir.concat %a axis = 0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = mir.concat %a axis = 0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // A `?` on the axis makes the sum dynamic.
  // CHECK-NEXT: %2 = mir.concat %a, %d, %a axis = -2 : (tensor<2x3xf32>, tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  %2 = mir.concat %a, %d, %a axis = -2 : (tensor<2x3xf32>, tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @expand
func.func @expand(%x: tensor<3x1xf32>, %d: tensor<?x1xi1>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %0 = mir.expand %x target_shape = [2, 3, 4] : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // GENERIC: "mir.expand"(%x) <{target_shape = array<i64: 2, 3, 4>}> : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %0 = mir.expand %x target_shape = [2, 3, 4] : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // -1 keeps the input dim, here a `?`.
  // CHECK-NEXT: %1 = mir.expand %d target_shape = [5, -1, 7] : (tensor<?x1xi1>) -> tensor<5x?x7xi1>
  %1 = mir.expand %d target_shape = [5, -1, 7] : (tensor<?x1xi1>) -> tensor<5x?x7xi1>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

// A dim of 1 (and a new leading dim) broadcast to a size read at run time from `like`.
// CHECK-LABEL: func.func @expand_like
func.func @expand_like(%b: tensor<1x8xf32>, %c: tensor<32xf32>, %ids: tensor<?x8xi64>) -> (tensor<?x8xf32>, tensor<?x1x32xf32>) {
  // CHECK-NEXT: %0 = mir.expand %b target_shape = [-1, 8] like %ids like_dims = [0, -1] : (tensor<1x8xf32>, tensor<?x8xi64>) -> tensor<?x8xf32>
  // GENERIC: "mir.expand"(%b, %ids) <{target_shape = array<i64: -1, 8>, like_dims = array<i64: 0, -1>}> : (tensor<1x8xf32>, tensor<?x8xi64>) -> tensor<?x8xf32>
  %0 = mir.expand %b target_shape = [-1, 8] like %ids like_dims = [0, -1] : (tensor<1x8xf32>, tensor<?x8xi64>) -> tensor<?x8xf32>
  // CHECK-NEXT: %1 = mir.expand %c target_shape = [-1, 1, 32] like %ids like_dims = [0, -1, -1] : (tensor<32xf32>, tensor<?x8xi64>) -> tensor<?x1x32xf32>
  %1 = mir.expand %c target_shape = [-1, 1, 32] like %ids like_dims = [0, -1, -1] : (tensor<32xf32>, tensor<?x8xi64>) -> tensor<?x1x32xf32>
  func.return %0, %1 : tensor<?x8xf32>, tensor<?x1x32xf32>
}

// -----

// Several ? dims of a reshape, and a narrow's length, read at run time from `like`.
// CHECK-LABEL: func.func @reshape_narrow_like
func.func @reshape_narrow_like(%x: tensor<?x32xf32>, %pos: tensor<1x32xi64>, %ids: tensor<?x?xi64>) -> (tensor<?x?x4x8xf32>, tensor<1x?xi64>) {
  // CHECK-NEXT: %0 = mir.reshape %x new_shape = [-1, -1, 4, 8] like %ids like_dims = [0, 1, -1, -1] : (tensor<?x32xf32>, tensor<?x?xi64>) -> tensor<?x?x4x8xf32>
  // GENERIC: "mir.reshape"(%x, %ids) <{new_shape = array<i64: -1, -1, 4, 8>, like_dims = array<i64: 0, 1, -1, -1>}> : (tensor<?x32xf32>, tensor<?x?xi64>) -> tensor<?x?x4x8xf32>
  %0 = mir.reshape %x new_shape = [-1, -1, 4, 8] like %ids like_dims = [0, 1, -1, -1] : (tensor<?x32xf32>, tensor<?x?xi64>) -> tensor<?x?x4x8xf32>
  // CHECK-NEXT: %1 = mir.narrow %pos axis = 1 start = 1 len = -1 like %ids like_dims = [-1, 1] : (tensor<1x32xi64>, tensor<?x?xi64>) -> tensor<1x?xi64>
  %1 = mir.narrow %pos axis = 1 start = 1 len = -1 like %ids like_dims = [-1, 1] : (tensor<1x32xi64>, tensor<?x?xi64>) -> tensor<1x?xi64>
  func.return %0, %1 : tensor<?x?x4x8xf32>, tensor<1x?xi64>
}
