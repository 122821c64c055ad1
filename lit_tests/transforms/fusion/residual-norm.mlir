// RUN: rlx-opt %s --split-input-file -p rlx-fuse-residual-layer-norm,rlx-fuse-residual-rms-norm | filecheck %s
// RUN: rlx-opt %s --split-input-file -p rlx-fuse-residual-layer-norm,rlx-fuse-residual-rms-norm --fusion-report -o %t 2>&1 | filecheck %s --check-prefix=REPORT

// RLX fuse_residual_layer_norm: x, res, gamma, beta, add, layer_norm -> 5 nodes.
// CHECK-LABEL: func.func @residual_layer_norm
// CHECK-NEXT:    %0 = mir.fused_residual_layer_norm %x, %res, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    func.return %0
// REPORT: nodes=6→5
func.func @residual_layer_norm(%x: tensor<2x8x16xf32>, %res: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  %0 = mir.add %x, %res : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %1 = mir.layer_norm %0, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  func.return %1 : tensor<2x8x16xf32>
}

// -----

// RLX fuse_residual_rms_norm: 6 -> 5 nodes.
// CHECK-LABEL: func.func @residual_rms_norm
// CHECK-NEXT:    %0 = mir.fused_residual_rms_norm %x, %res, %g, %b axis = -1 eps = 1.000000e-06
// REPORT: nodes=6→5
func.func @residual_rms_norm(%x: tensor<2x8x16xf32>, %res: tensor<2x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  %0 = mir.add %x, %res : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %1 = mir.rms_norm %0, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
  func.return %1 : tensor<2x8x16xf32>
}

// -----

// The norm's axis is kept (RLX assumes -1), and a rank-1 bias added to the sum gives the bias form.
// CHECK-LABEL: func.func @bias_and_axis
// CHECK-NEXT:    %0 = mir.fused_residual_rms_norm %x, %res, bias %c, %g, %b axis = 1 eps = 1.000000e-06 : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<2x8x16xf32>
// REPORT: nodes=8→6
func.func @bias_and_axis(%x: tensor<2x8x16xf32>, %res: tensor<2x8x16xf32>, %c: tensor<16xf32>, %g: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<2x8x16xf32> {
  %0 = mir.add %x, %res : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %1 = mir.add %c, %0 : (tensor<16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %2 = mir.rms_norm %1, %g, %b axis = 1 eps = 1.000000e-06 : (tensor<2x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<2x8x16xf32>
  func.return %2 : tensor<2x8x16xf32>
}

// -----

// The sum is also a result (RLX's SAM2 guard) or feeds another op: no fusion.
// CHECK-LABEL: func.func @sum_used_elsewhere
// CHECK-NEXT:    %0 = mir.add
// CHECK-NEXT:    %1 = mir.layer_norm %0
// CHECK-NEXT:    %2 = mir.add
// CHECK-NEXT:    %3 = mir.rms_norm %2
// CHECK-NEXT:    %4 = mir.neg %2
// REPORT: nodes=9→9
func.func @sum_used_elsewhere(%x: tensor<4x16xf32>, %res: tensor<4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = mir.add %x, %res : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = mir.layer_norm %0, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = mir.add %x, %res : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = mir.rms_norm %2, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %4 = mir.neg %2 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %1, %0, %3, %4 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Mixed dtypes would need a promotion the fused op does not hide: no fusion.
// CHECK-LABEL: func.func @promoting_sum
// CHECK-NEXT:    %0 = mir.add
// CHECK-NEXT:    %1 = mir.rms_norm
func.func @promoting_sum(%x: tensor<4x16xbf16>, %res: tensor<4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = mir.add %x, %res : (tensor<4x16xbf16>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = mir.rms_norm %0, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return %1 : tensor<4x16xf32>
}
