// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p 'rlx-legalize{supported=mir.reshape,mir.expand,mir.transpose,mir.layer_norm,mir.constant}' | filecheck %s
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-legalize | filecheck %s --check-prefix=PRIM
// RUN: not rlx-opt %s --split-input-file -p 'rlx-legalize{supported=mir.reshape,mir.expand,mir.transpose}' 2>&1 | filecheck %s --check-prefix=ERR

// layer_norm_2d becomes a layer_norm between transposes, resize_nearest_2x reshape/expand/reshape;
// the rules' outputs are all supported, so one round suffices.
// CHECK-LABEL: func.func @vision
// CHECK-NEXT:    %0 = mir.transpose %x perm = [0, 2, 3, 1]
// CHECK-NEXT:    %1 = mir.layer_norm %0, %g, %g axis = -1
// CHECK-NEXT:    %2 = mir.transpose %1 perm = [0, 3, 1, 2]
// CHECK-NEXT:    %3 = mir.reshape %2 new_shape = [1, 4, 2, 1, 2, 1]
// CHECK-NEXT:    %4 = mir.expand %3 target_shape = [-1, -1, -1, 2, -1, 2]
// CHECK-NEXT:    %5 = mir.reshape %4 new_shape = [1, 4, 4, 4]
// CHECK-NEXT:    func.return %5
// On the primitive target the layer_norm becomes reductions and elementwise ops (a second round).
// PRIM-LABEL: func.func @vision
// PRIM:         mir.reduce mean
// PRIM:         mir.sqrt
// PRIM-NOT:     mir.layer_norm
// PRIM:         func.return
// ERR: legalize.mlir:[[# @LINE + 3]]:3: error: 'mir.reduce' is not supported by the target and no rule rewrites it into supported ops; still unsupported after 2 round(s): mir.add, mir.constant, mir.div, mir.mul, mir.reduce, mir.sqrt, mir.sub
// ERR: note: while running pass 'rlx-legalize'
func.func @vision(%x: tensor<1x4x2x2xf32>, %g: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = mir.layer_norm_2d %x, %g, %g eps = 1.0e-06 : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  %1 = mir.resize_nearest_2x %0 : (tensor<1x4x2x2xf32>) -> tensor<1x4x4x4xf32>
  func.return %1 : tensor<1x4x4x4xf32>
}
