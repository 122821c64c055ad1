// RUN: rlx-opt %s --dispatch-report -p 'rlx-legalize{supported=mir.reshape,mir.expand,mir.transpose,mir.layer_norm,mir.add,mir.constant,mir.conv,mir.pool}' -o /dev/null 2>&1 | filecheck %s
// RUN: rlx-opt %s --dispatch-report=json -o /dev/null 2>&1 | filecheck %s --check-prefix=JSON

// CHECK:      dispatch report:
// CHECK-NEXT:   mir.add                1  native
// CHECK-NEXT:   mir.conv               1  native
// CHECK-NEXT:   mir.layer_norm_2d      1  common IR
// CHECK-NEXT:   mir.pool               1  native
// CHECK-NEXT:   mir.resize_nearest_2x  1  common IR
// CHECK-NEXT: compile-ready: yes

// Without rlx-legalize in the pipeline: the primitive target, whose rules rewrite conv and pool.
// JSON:      "op": "mir.conv",
// JSON-NEXT: "count": 1,
// JSON-NEXT: "path": "rewritten"
// JSON:      "op": "mir.layer_norm_2d",
// JSON-NEXT: "count": 1,
// JSON-NEXT: "path": "common IR"
// JSON:      "op": "mir.pool",
// JSON-NEXT: "count": 1,
// JSON-NEXT: "path": "rewritten"
// JSON:      "compile_ready": true
func.func @f(%x: tensor<1x4x2x2xf32>, %g: tensor<4xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32> {
  %c = mir.conv %x, %w kernel_size = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x2x2xf32>
  %0 = mir.layer_norm_2d %c, %g, %g eps = 1.0e-06 : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  %1 = mir.resize_nearest_2x %0 : (tensor<1x4x2x2xf32>) -> tensor<1x4x4x4xf32>
  %p = mir.pool %1 kind = max kernel_size = [1, 1] stride = [1, 1] padding = [0, 0] : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %2 = mir.add %p, %1 : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %2 : tensor<1x4x4x4xf32>
}
