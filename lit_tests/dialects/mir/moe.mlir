// RUN: RLX_ROUNDTRIP
// RUN: RLX_GENERIC_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @lora_matmul
// GENERIC-LABEL: "func.func"() <{sym_name = "lora_matmul"
func.func @lora_matmul(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x2xf32>, %b: tensor<2x5xf32>, %xd: tensor<?x4xbf16>, %wd: tensor<4x?xbf16>, %ad: tensor<4x1xbf16>, %bd: tensor<1x6xbf16>) -> tensor<2x3x5xf32> {
  // CHECK-NEXT: %0 = mir.lora_matmul %x, %w, %a, %b scale = 5.000000e-01 : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
  // GENERIC: "mir.lora_matmul"(%x, %w, %a, %b) <{scale = 5.000000e-01 : f32}> : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
  %0 = mir.lora_matmul %x, %w, %a, %b scale = 5.000000e-01 : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<2x3x5xf32>
  // A dynamic dim of w is refined by b's columns.
  // CHECK-NEXT: %1 = mir.lora_matmul %xd, %wd, %ad, %bd scale = 2.000000e+00 : (tensor<?x4xbf16>, tensor<4x?xbf16>, tensor<4x1xbf16>, tensor<1x6xbf16>) -> tensor<?x6xbf16>
  %1 = mir.lora_matmul %xd, %wd, %ad, %bd scale = 2.000000e+00 : (tensor<?x4xbf16>, tensor<4x?xbf16>, tensor<4x1xbf16>, tensor<1x6xbf16>) -> tensor<?x6xbf16>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @grouped_matmul
// GENERIC-LABEL: "func.func"() <{sym_name = "grouped_matmul"
func.func @grouped_matmul(%x: tensor<6x4xf32>, %w: tensor<3x4x5xf32>, %e: tensor<6xi64>, %xd: tensor<?x4xf16>, %wd: tensor<2x4x3xf16>, %ed: tensor<?xf32>) -> tensor<6x5xf32> {
  // CHECK-NEXT: %0 = mir.grouped_matmul %x, %w, %e : (tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  // GENERIC: "mir.grouped_matmul"(%x, %w, %e) : (tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  %0 = mir.grouped_matmul %x, %w, %e : (tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  // Dynamic M; RLX's float-encoded expert ids.
  // CHECK-NEXT: %1 = mir.grouped_matmul %xd, %wd, %ed : (tensor<?x4xf16>, tensor<2x4x3xf16>, tensor<?xf32>) -> tensor<?x3xf16>
  %1 = mir.grouped_matmul %xd, %wd, %ed : (tensor<?x4xf16>, tensor<2x4x3xf16>, tensor<?xf32>) -> tensor<?x3xf16>
  func.return %0 : tensor<6x5xf32>
}
