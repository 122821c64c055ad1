// RUN: rlx-opt %s -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// A fused elementwise region lowers to one linalg.generic: its body becomes the generic's
// scalar body, and each input keeps its NumPy broadcast through the indexing maps.
// CHECK-LABEL: func.func @elementwise_region
// CHECK:         tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y, %z
// CHECK:           arith.addf
// CHECK-NEXT:      arith.mulf
// CHECK:           arith.maximumf
// CHECK-NEXT:      linalg.yield
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
 func.func @elementwise_region(%x: tensor<4x8xf32>, %y: tensor<4x1xf32>, %z: tensor<8xf32>) -> tensor<4x8xf32> {
   // NumPy broadcasting inside the body: [4, 1] and [8] both broadcast to [4, 8].
   %0 = mir.elementwise_region (%x, %y, %z) : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
   ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x1xf32>, %c: tensor<8xf32>):
     %1 = mir.add %a, %b : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
     %2 = mir.mul %1, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
     %3 = mir.relu %2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
     mir.yield %3 : tensor<4x8xf32>
   }
   func.return %0 : tensor<4x8xf32>
 }
