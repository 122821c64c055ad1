// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// GQA without copies: q's 4 heads are split into (2 kv heads, 2 per group), so k and v
// are indexed by the kv-head loop d1. Scores, masking, softmax, then the value product.
// CHECK-LABEL: func.func @causal_gqa
// CHECK:         [[Q:%.*]] = tensor.expand_shape %q {{\[\[}}0 : i64], [1 : i64, 2 : i64], [3 : i64], [4 : i64]] output_shape [1, 2, 2, 3, 8] : tensor<1x4x3x8xf32> into tensor<1x2x2x3x8xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>]
// CHECK-SAME:      ins([[Q]], %k
// The causal mask: key j is kept when j <= i + (Sk - Sq).
// CHECK:           [[I:%.*]] = linalg.index 3 : index
// CHECK-NEXT:      [[POS:%.*]] = arith.addi [[I]], {{%.*}} : index
// CHECK-NEXT:      [[J:%.*]] = linalg.index 4 : index
// CHECK-NEXT:      [[KEEP:%.*]] = arith.cmpi sle, [[J]], [[POS]] : index
// CHECK:           arith.select [[KEEP]]
// CHECK:         arith.maximumf
// CHECK:         math.exp
// CHECK:         arith.divf
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>]
// CHECK-SAME:      %v
// CHECK:         tensor.collapse_shape {{.*}} : tensor<1x2x2x3x8xf32> into tensor<1x4x3x8xf32>
func.func @causal_gqa(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32> {
  %0 = mir.attention %q, %k, %v num_heads = 4 head_dim = 8 mask_kind = causal : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x3x8xf32>
  func.return %0 : tensor<1x4x3x8xf32>
}

// -----

// A per-head bias is split like q's heads; the soft cap is cap * tanh(x / cap).
// CHECK-LABEL: func.func @bias_softcap
// CHECK:         tensor.expand_shape %m {{.*}} output_shape [2, 2, 1, 5] : tensor<4x1x5xf32> into tensor<2x2x1x5xf32>
// CHECK:         affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, 0, d4)>
// CHECK:           math.tanh
// CHECK:           arith.addf
func.func @bias_softcap(%q: tensor<2x4x3x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>, %m: tensor<4x1x5xf32>) -> tensor<2x4x3x4xf32> {
  %0 = mir.attention %q, %k, %v, %m num_heads = 4 head_dim = 4 mask_kind = bias attn_logit_softcap = 3.000000e+01 : (tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<4x1x5xf32>) -> tensor<2x4x3x4xf32>
  func.return %0 : tensor<2x4x3x4xf32>
}

// -----

// rope: the two rotated halves are slices combined with cos/sin; the tail is copied.
// CHECK-LABEL: func.func @rope
// CHECK:         [[X1:%.*]] = tensor.extract_slice %x[0, 0, 0] [2, 5, 3] [1, 1, 1]
// CHECK:         [[X2:%.*]] = tensor.extract_slice %x[0, 0, 3] [2, 5, 3] [1, 1, 1]
// CHECK:         [[A:%.*]] = linalg.generic {{.*}} ins([[X1]], [[X2]], %c, %s :
// CHECK:         [[B:%.*]] = linalg.generic {{.*}} ins([[X1]], [[X2]], %c, %s :
// CHECK:         [[T:%.*]] = tensor.extract_slice %x[0, 0, 6] [2, 5, 2] [1, 1, 1]
// CHECK:         tensor.concat dim(2) [[A]], [[B]], [[T]] : (tensor<2x5x3xf32>, tensor<2x5x3xf32>, tensor<2x5x2xf32>) -> tensor<2x5x8xf32>
func.func @rope(%x: tensor<2x5x8xf32>, %c: tensor<5x3xf32>, %s: tensor<5x3xf32>) -> tensor<2x5x8xf32> {
  %0 = mir.rope %x, %c, %s head_dim = 8 n_rot = 6 : (tensor<2x5x8xf32>, tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<2x5x8xf32>
  func.return %0 : tensor<2x5x8xf32>
}
