// RUN: rlx-opt %s -p rlx-convert-mir-to-linalg | filecheck %s
// RUN: rlx-opt %s -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// lora_matmul lowers through its rlx-unfuse expansion: x @ a, then @ b, scaled, plus x @ w.
// CHECK-LABEL: func.func @lora
// CHECK:         %[[XA:.*]] = linalg.matmul ins(%x, %a : tensor<3x4xf32>, tensor<4x2xf32>)
// CHECK:         %[[AB:.*]] = linalg.matmul ins(%[[XA]], %b : tensor<3x2xf32>, tensor<2x5xf32>)
// CHECK:         arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK:         arith.mulf
// CHECK:         linalg.matmul ins(%x, %w : tensor<3x4xf32>, tensor<4x5xf32>)
// CHECK:         arith.addf
func.func @lora(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x2xf32>, %b: tensor<2x5xf32>) -> tensor<3x5xf32> {
  %0 = mir.lora_matmul %x, %w, %a, %b scale = 5.000000e-01 : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// grouped_matmul with a dynamic number of rows: one reduction over (m, n, k) reading row m's
// expert weight inside its body; no [?, 4, 5] gather of per-row weights.
// CHECK-LABEL: func.func @grouped
// CHECK-NOT:     tensor<?x4x5xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %e : tensor<?x4xf32>, tensor<?xi64>) outs(%{{.*}} : tensor<?x5xf32>)
// CHECK:           tensor.extract %w[%{{.*}}, %{{.*}}, %{{.*}}] : tensor<3x4x5xf32>
// CHECK-NOT:     tensor<?x4x5xf32>
// CHECK:         func.return
func.func @grouped(%x: tensor<?x4xf32>, %w: tensor<3x4x5xf32>, %e: tensor<?xi64>) -> tensor<?x5xf32> {
  %0 = mir.grouped_matmul %x, %w, %e : (tensor<?x4xf32>, tensor<3x4x5xf32>, tensor<?xi64>) -> tensor<?x5xf32>
  func.return %0 : tensor<?x5xf32>
}

// int4 experts fold into the rows ([3, 4, 5] codes as [12, 5]), decode with dequant_matmul's
// generic, unfold to [3, 8, 5] and feed the grouped matmul's reduction.
// CHECK-LABEL: func.func @int4_experts
// CHECK:         tensor.collapse_shape %q {{.*}} : tensor<3x4x5xi8> into tensor<12x5xi8>
// CHECK:         tensor.collapse_shape %s {{.*}} : tensor<3x2x5xf32> into tensor<6x5xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %z : tensor<6x2x5xi8>, tensor<6x5xf32>, tensor<1xf32>) outs(%{{.*}} : tensor<6x2x2x5xf32>)
// CHECK:         tensor.expand_shape {{.*}} output_shape [3, 8, 5] : tensor<24x5xf32> into tensor<3x8x5xf32>
// CHECK:         linalg.generic {{.*}} ins(%x, %e : tensor<?x8xf32>, tensor<?xi64>) outs(%{{.*}} : tensor<?x5xf32>)
// CHECK:           tensor.extract %{{.*}} : tensor<3x8x5xf32>
func.func @int4_experts(%x: tensor<?x8xf32>, %q: tensor<3x4x5xui8>, %s: tensor<3x2x5xf32>, %z: tensor<1xf32>, %e: tensor<?xi64>) -> tensor<?x5xf32> {
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = int4_block block_size = 4 : (tensor<?x8xf32>, tensor<3x4x5xui8>, tensor<3x2x5xf32>, tensor<1xf32>, tensor<?xi64>) -> tensor<?x5xf32>
  func.return %0 : tensor<?x5xf32>
}

// A GGUF expert stack [E, N, R] reads as E·N rows of bytes; the decoded [E·N, K] rows are
// transposed to [K, E·N], split to [K, E, N] and permuted to [E, K, N].
// CHECK-LABEL: func.func @gguf_experts
// CHECK:         tensor.collapse_shape %q {{.*}} : tensor<2x3x34xi8> into tensor<204xi8>
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<6x1x2x16xf32>)
// CHECK:         linalg.transpose ins(%{{.*}}:tensor<6x32xf32>) outs(%{{.*}}:tensor<32x6xf32>) permutation = [1, 0]
// CHECK:         tensor.expand_shape {{.*}} output_shape [32, 2, 3]
// CHECK:         linalg.transpose ins(%{{.*}}:tensor<32x2x3xf32>) outs(%{{.*}}:tensor<2x32x3xf32>) permutation = [1, 0, 2]
func.func @gguf_experts(%q: tensor<2x3x34xui8>, %s: tensor<1xf32>, %z: tensor<1xf32>) -> tensor<2x32x3xf32> {
  %0 = mir.dequant_moe_weights %q, %s, %z scheme = gguf_q8_0 : (tensor<2x3x34xui8>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x32x3xf32>
  func.return %0 : tensor<2x32x3xf32>
}
