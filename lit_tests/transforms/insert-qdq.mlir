// A quantize -> dequantize pair after each calibrated value: arguments by rlx.name,
// results by location label; every other use (the function's results too) reads the
// dequantised value. Running the pass twice changes nothing more.
// RUN: rlx-opt %s -p 'rlx-insert-qdq{calibration=%S/Inputs/qdq-calibration.json}' | filecheck %s
// RUN: rlx-opt %s -p 'rlx-insert-qdq{calibration=%S/Inputs/qdq-calibration.json},rlx-insert-qdq{calibration=%S/Inputs/qdq-calibration.json}' | filecheck %s
// Errors: a name no function has; a calibration that does not fit its value (located at
// the op, here the function: loc("h1") has no file position).
// RUN: not rlx-opt %s -p 'rlx-insert-qdq{calibration=%S/Inputs/qdq-unknown.json}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not rlx-opt %s -p 'rlx-insert-qdq{calibration=%S/Inputs/qdq-channels.json}' 2>&1 | filecheck %s --check-prefix=CHANNELS
// RUN: not rlx-opt %s -p 'rlx-insert-qdq{calibration=%S/Inputs/missing.json}' 2>&1 | filecheck %s --check-prefix=MISSING

// CHECK-LABEL: func.func @f
// CHECK-NEXT:    %[[Q:.*]] = mir.quantize %x scales = [5.000000e-02] zero_points = [0] : (tensor<2x3xf32>) -> tensor<2x3xi8>
// CHECK-NEXT:    %[[X:.*]] = mir.dequantize %[[Q]] scales = [5.000000e-02] zero_points = [0] : (tensor<2x3xi8>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[M:.*]] = mir.matmul %[[X]], %w
// CHECK-NEXT:    %[[Q2:.*]] = mir.quantize %[[M]] scales = [1.000000e-01, 2.000000e-01, 3.000000e-01] zero_points = [0, 3, -2] axis = 1 : (tensor<2x3xf32>) -> tensor<2x3xi8>
// CHECK-NEXT:    %[[H:.*]] = mir.dequantize %[[Q2]] scales = [1.000000e-01, 2.000000e-01, 3.000000e-01] zero_points = [0, 3, -2] axis = 1 : (tensor<2x3xi8>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[R:.*]] = mir.relu %[[H]]
// CHECK-NEXT:    func.return %[[R]], %[[H]] : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK-NOT:     mir.quantize
func.func @f(%x: tensor<2x3xf32> {rlx.name = "x"}, %w: tensor<3x3xf32> {rlx.param, rlx.name = "w"}) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = mir.matmul %x, %w : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32> loc("h1")
  %1 = mir.relu %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1, %0 : tensor<2x3xf32>, tensor<2x3xf32>
}

// UNKNOWN: insert-qdq.mlir:[[# @LINE - 6]]:1: error: 'rlx-insert-qdq' the calibration names 'nope', which no function has (arguments by rlx.name or argN, results by location label)
// CHANNELS: insert-qdq.mlir:[[# @LINE - 7]]:1: error: 'rlx-insert-qdq' calibration does not fit: 'mir.quantize' has 2 scales but dim 1 of the operand has 3 channels
// MISSING: error: cannot read calibration file '{{.*}}missing.json'
