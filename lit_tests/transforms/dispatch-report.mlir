// RUN: rlx-opt %s --dispatch-report -p 'rlx-legalize{supported=mir.reshape,mir.expand,mir.transpose,mir.layer_norm,mir.add,mir.constant}' -o /dev/null 2>&1 | filecheck %s
// RUN: rlx-opt %s --dispatch-report=json -o /dev/null 2>&1 | filecheck %s --check-prefix=JSON

// CHECK:      dispatch report:
// CHECK-NEXT:   mir.add                1  native
// CHECK-NEXT:   mir.layer_norm_2d      1  common IR
// CHECK-NEXT:   mir.resize_nearest_2x  1  common IR
// CHECK-NEXT: compile-ready: yes

// Without rlx-legalize in the pipeline: the primitive target, which has no layer_norm.
// JSON:      "op": "mir.layer_norm",
// JSON-NEXT: "count": 0,
// JSON-NEXT: "path": "unsupported"
// JSON:      "compile_ready": false
func.func @f(%x: tensor<1x4x2x2xf32>, %g: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = mir.layer_norm_2d %x, %g, %g eps = 1.0e-06 : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  %1 = mir.resize_nearest_2x %0 : (tensor<1x4x2x2xf32>) -> tensor<1x4x4x4xf32>
  %2 = mir.add %1, %1 : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %2 : tensor<1x4x4x4xf32>
}
