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

// The sum is also a result (RLX's SAM2 guard stops there) or feeds another op: the fused op
// returns it as its second result, which takes the add's place everywhere else.
// CHECK-LABEL: func.func @sum_used_elsewhere
// CHECK-NEXT:    [[LN:%[0-9]+]], [[SUM1:%[0-9]+]] = mir.fused_residual_layer_norm %x, %res, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK-NEXT:    [[RMS:%[0-9]+]], [[SUM2:%[0-9]+]] = mir.fused_residual_rms_norm %x, %res, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK-NEXT:    [[NEG:%[0-9]+]] = mir.neg [[SUM2]]
// CHECK-NEXT:    func.return [[LN]], [[SUM1]], [[RMS]], [[NEG]]
// REPORT: nodes=9→7
func.func @sum_used_elsewhere(%x: tensor<4x16xf32>, %res: tensor<4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = mir.add %x, %res : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = mir.layer_norm %0, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = mir.add %x, %res : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = mir.rms_norm %2, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %4 = mir.neg %2 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %1, %0, %3, %4 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A user of the sum before the norm: the fused op takes the add's place, so it dominates that
// user too (gamma and beta are defined before the add).
// CHECK-LABEL: func.func @sum_used_before_the_norm
// CHECK-NEXT:    [[N:%[0-9]+]], [[SUM:%[0-9]+]] = mir.fused_residual_rms_norm %x, %res, %g, %b axis = -1
// CHECK-NEXT:    [[NEG:%[0-9]+]] = mir.neg [[SUM]]
// CHECK-NEXT:    func.return [[N]], [[NEG]]
func.func @sum_used_before_the_norm(%x: tensor<4x16xf32>, %res: tensor<4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = mir.add %x, %res : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = mir.neg %0 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = mir.rms_norm %0, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return %2, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A user before the norm and gamma computed after the add: no single place sees both, no fusion.
// CHECK-LABEL: func.func @no_place_for_the_fused_op
// CHECK-NEXT:    %0 = mir.add
// CHECK-NEXT:    %1 = mir.neg %0
// CHECK-NEXT:    %2 = mir.exp %g
// CHECK-NEXT:    %3 = mir.rms_norm %0, %2, %b
func.func @no_place_for_the_fused_op(%x: tensor<4x16xf32>, %res: tensor<4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = mir.add %x, %res : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = mir.neg %0 : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = mir.exp %g : (tensor<16xf32>) -> tensor<16xf32>
  %3 = mir.rms_norm %0, %2, %b axis = -1 eps = 1.000000e-06 : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  func.return %3, %1 : tensor<4x16xf32>, tensor<4x16xf32>
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
